'use strict';
// Prepared statements and the CQL types that need a JS class: uuid, bigint (Long), decimal,
// inet, date, map and set. `prepare: true` lets the driver type the parameters from the
// statement and route each request to a replica of its partition.
const cassandra = require('weir-cql');
const { Uuid, Long, BigDecimal, InetAddress, LocalDate } = cassandra.types;

const client = new cassandra.Client({
  contactPoints: (process.env.CQL_CONTACT_POINTS || '127.0.0.1').split(','),
  localDataCenter: process.env.CQL_LOCAL_DC || 'datacenter1',
});
const ks = 'examples_prepared';

async function main() {
  await client.connect();
  await client.execute(`CREATE KEYSPACE IF NOT EXISTS ${ks} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
  await client.execute(`CREATE TABLE IF NOT EXISTS ${ks}.accounts (id uuid PRIMARY KEY, name text, balance decimal,
    visits bigint, last_ip inet, opened date, tags set<text>, limits map<text, int>)`);

  const id = Uuid.random();
  await client.execute(`INSERT INTO ${ks}.accounts (id, name, balance, visits, last_ip, opened, tags, limits)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [id, 'Ada', BigDecimal.fromString('1024.50'), Long.fromString('9007199254740993'),
    InetAddress.fromString('10.1.2.3'), LocalDate.fromString('2024-02-29'), ['admin', 'beta'], { daily: 500 }], { prepare: true });

  const rs = await client.execute(`SELECT * FROM ${ks}.accounts WHERE id = ?`, [id], { prepare: true });
  const a = rs.first();
  console.log(`${a.name}: balance ${a.balance}, visits ${a.visits}, from ${a.last_ip}, since ${a.opened},`,
    `tags ${[...a.tags].sort().join('+')}, daily limit ${a.limits.daily}`);
  if (!a.id.equals(id) || a.visits.toString() !== '9007199254740993') throw new Error('read back a different row');
  await client.execute(`DROP KEYSPACE ${ks}`);
}

main()
  .catch((err) => { console.error(err); process.exitCode = 1; })
  .finally(() => client.shutdown());
