'use strict';
// Connect, run one query, disconnect.
//   CQL_CONTACT_POINTS=10.0.0.1,10.0.0.2 CQL_LOCAL_DC=dc1 node examples/basic.js
const cassandra = require('weir-cql');

const client = new cassandra.Client({
  contactPoints: (process.env.CQL_CONTACT_POINTS || '127.0.0.1').split(','),
  localDataCenter: process.env.CQL_LOCAL_DC || 'datacenter1',
});

async function main() {
  await client.connect();
  const rs = await client.execute('SELECT cluster_name, release_version FROM system.local');
  const row = rs.first();
  console.log(`connected to ${row.cluster_name}, Cassandra ${row.release_version}, ${client.hosts.length} node(s)`);
}

main()
  .catch((err) => { console.error(err); process.exitCode = 1; })
  .finally(() => client.shutdown());
