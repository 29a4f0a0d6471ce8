'use strict';
// A logged batch (all or nothing across tables) and executeConcurrent for bulk loads: the
// driver keeps concurrencyLevel requests in flight and reports errors per item.
const cassandra = require('weir-cql');

const client = new cassandra.Client({
  contactPoints: (process.env.CQL_CONTACT_POINTS || '127.0.0.1').split(','),
  localDataCenter: process.env.CQL_LOCAL_DC || 'datacenter1',
});
const ks = 'examples_batch';

async function main() {
  await client.connect();
  await client.execute(`CREATE KEYSPACE IF NOT EXISTS ${ks} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
  await client.execute(`CREATE TABLE IF NOT EXISTS ${ks}.users (id int PRIMARY KEY, email text)`);
  await client.execute(`CREATE TABLE IF NOT EXISTS ${ks}.users_by_email (email text PRIMARY KEY, id int)`);

  await client.batch([
    { query: `INSERT INTO ${ks}.users (id, email) VALUES (?, ?)`, params: [1, 'ada@example.com'] },
    { query: `INSERT INTO ${ks}.users_by_email (email, id) VALUES (?, ?)`, params: ['ada@example.com', 1] },
  ], { prepare: true });

  const params = Array.from({ length: 2000 }, (_, i) => [i + 2, `user${i + 2}@example.com`]);
  const result = await cassandra.concurrent.executeConcurrent(client,
    `INSERT INTO ${ks}.users (id, email) VALUES (?, ?)`, params, { concurrencyLevel: 64 });
  const count = (await client.execute(`SELECT COUNT(*) AS n FROM ${ks}.users`)).first().n;
  const byEmail = (await client.execute(`SELECT id FROM ${ks}.users_by_email WHERE email = ?`, ['ada@example.com'], { prepare: true })).first();
  console.log(`batch: ada has id ${byEmail.id}; executeConcurrent: ${result.totalExecuted} inserts,`,
    `${result.errors.length} errors; ${count} users`);
  if (count.toString() !== '2001' || result.errors.length) throw new Error('rows missing');
  await client.execute(`DROP KEYSPACE ${ks}`);
}

main()
  .catch((err) => { console.error(err); process.exitCode = 1; })
  .finally(() => client.shutdown());
