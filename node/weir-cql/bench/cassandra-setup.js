#!/usr/bin/env node
'use strict';
// Makes what client.js's workloads read on a real server: keyspace benchmarks (RF=1),
// table basic (id uuid PRIMARY KEY, val int), 200 rows, among them the row select1 reads.
//
//   node bench/cassandra-setup.js host:port

const cassandra = require('cassandra-driver');

async function main() {
  const [address, port = '9042'] = (process.argv[2] || '127.0.0.1:9042').split(':');
  const client = new cassandra.Client({ contactPoints: [address], protocolOptions: { port: Number(port) },
    localDataCenter: 'datacenter1', socketOptions: { readTimeout: 60000 } });
  await client.connect();
  await client.execute("CREATE KEYSPACE IF NOT EXISTS benchmarks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
  await client.execute('CREATE TABLE IF NOT EXISTS benchmarks.basic (id uuid PRIMARY KEY, val int)');
  const insert = 'INSERT INTO benchmarks.basic (id, val) VALUES (?, ?)';
  await client.execute(insert, [cassandra.types.Uuid.fromString('57656972-2d63-716c-0000-000000000000'), 0], { prepare: true });
  for (let i = 1; i < 200; i++) await client.execute(insert, [cassandra.types.Uuid.random(), i], { prepare: true });
  await client.shutdown();
}

main().catch((e) => { console.error(`cassandra-setup: ${e && e.stack || e}`); process.exit(1); });
