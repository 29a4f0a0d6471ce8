'use strict';
// Shared set-up for integration tests: the server address from the test command and a
// keyspace unique to each test file (dropped at the end), so files never share state.

const crypto = require('node:crypto');
const path = require('node:path');
const cql = require('../..');

const CONTACT_POINT = process.env.WEIR_CQL_CONTACT_POINT || '127.0.0.1:9042';

function newClient(extra) {
  return new cql.Client({ contactPoints: [CONTACT_POINT], localDataCenter: 'datacenter1', ...extra });
}

function uniqueKeyspace(file) {
  const base = path.basename(file, '.test.js').replace(/[^a-z0-9]/gi, '_').toLowerCase();
  return `weircql_${base}_${crypto.randomBytes(3).toString('hex')}`;
}

/** Creates the file's keyspace and returns {client, ks, drop}. */
async function setupKeyspace(file, clientOptions) {
  const ks = uniqueKeyspace(file);
  const admin = newClient();
  await admin.execute(`CREATE KEYSPACE ${ks} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
  await admin.shutdown();
  const client = newClient({ keyspace: ks, ...clientOptions });
  await client.connect();
  const drop = async () => {
    await client.shutdown();
    const a = newClient();
    await a.execute(`DROP KEYSPACE IF EXISTS ${ks}`);
    await a.shutdown();
  };
  return { client, ks, drop };
}

module.exports = { cql, CONTACT_POINT, newClient, setupKeyspace };
