'use strict';
// Reading a partition larger than one page: async iteration (pages fetched as needed),
// eachRow with autoPage, and a page state handed back later (e.g. by a web request).
const cassandra = require('weir-cql');

const client = new cassandra.Client({
  contactPoints: (process.env.CQL_CONTACT_POINTS || '127.0.0.1').split(','),
  localDataCenter: process.env.CQL_LOCAL_DC || 'datacenter1',
});
const ks = 'examples_paging';

async function main() {
  await client.connect();
  await client.execute(`CREATE KEYSPACE IF NOT EXISTS ${ks} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
  await client.execute(`CREATE TABLE IF NOT EXISTS ${ks}.events (day text, seq int, what text, PRIMARY KEY (day, seq))`);
  const rows = Array.from({ length: 25 }, (_, i) => ['2024-05-01', i, `event ${i}`]);
  await cassandra.concurrent.executeConcurrent(client, `INSERT INTO ${ks}.events (day, seq, what) VALUES (?, ?, ?)`, rows);

  const query = `SELECT seq, what FROM ${ks}.events WHERE day = ?`;
  const options = { prepare: true, fetchSize: 10 };

  // 1. for await: the driver fetches the next page when the loop reaches it.
  let n = 0;
  for await (const row of await client.execute(query, ['2024-05-01'], options)) n += row.seq >= 0 ? 1 : 0;

  // 2. eachRow with autoPage calls back once per row over every page.
  let m = 0;
  await new Promise((resolve, reject) => client.eachRow(query, ['2024-05-01'], { ...options, autoPage: true },
    () => { m += 1; }, (err) => (err ? reject(err) : resolve())));

  // 3. One page at a time: keep rs.pageState, pass it back to continue where the page ended.
  const first = await client.execute(query, ['2024-05-01'], options);
  const second = await client.execute(query, ['2024-05-01'], { ...options, pageState: first.pageState });

  console.log(`for await: ${n} rows; eachRow: ${m} rows; pages of ${first.rowLength} and ${second.rowLength},`,
    `second page starts at seq ${second.first().seq}`);
  if (n !== 25 || m !== 25 || second.first().seq !== 10) throw new Error('paging returned other rows');
  await client.execute(`DROP KEYSPACE ${ks}`);
}

main()
  .catch((err) => { console.error(err); process.exitCode = 1; })
  .finally(() => client.shutdown());
