'use strict';
// TLS: every connection is encrypted and the node's certificate is checked against the CA
// (or the system's roots when `ca` is left out) and against the address connected to.
//   CQL_CA_FILE=/path/to/ca.pem node examples/tls.js
const fs = require('node:fs');
const cassandra = require('weir-cql');

const caFile = process.env.CQL_CA_FILE;
if (!caFile) {
  console.error('tls.js: set CQL_CA_FILE to the PEM file of the CA that signed the nodes\' certificates');
  process.exit(2);
}
const client = new cassandra.Client({
  contactPoints: (process.env.CQL_CONTACT_POINTS || '127.0.0.1').split(','),
  localDataCenter: process.env.CQL_LOCAL_DC || 'datacenter1',
  sslOptions: { ca: [fs.readFileSync(caFile)] },
});

async function main() {
  await client.connect();
  const rs = await client.execute('SELECT release_version FROM system.local');
  console.log(`TLS connection to Cassandra ${rs.first().release_version}`);
}

main()
  .catch((err) => { console.error(err); process.exitCode = 1; })
  .finally(() => client.shutdown());
