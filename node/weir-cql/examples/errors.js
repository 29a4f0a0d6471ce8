'use strict';
// The error classes are cassandra-driver's: a server error is a ResponseError with the CQL
// error code, an unreachable cluster a NoHostAvailableError with one error per host, and an
// option the driver does not implement a NotSupportedError when the Client is built.
const cassandra = require('weir-cql');
const { errors, types } = cassandra;

const contactPoints = (process.env.CQL_CONTACT_POINTS || '127.0.0.1').split(',');
const localDataCenter = process.env.CQL_LOCAL_DC || 'datacenter1';

async function main() {
  const client = new cassandra.Client({ contactPoints, localDataCenter });
  try {
    await client.execute('SELECT * FROM no_such_keyspace.t');
  } catch (err) {
    if (!(err instanceof errors.ResponseError) || err.code !== types.responseErrorCodes.invalid) throw err;
    console.log(`ResponseError, code 0x${err.code.toString(16)}: ${err.message}`);
  } finally {
    await client.shutdown();
  }

  const nowhere = new cassandra.Client({ contactPoints: ['127.0.0.1:1'], localDataCenter, socketOptions: { connectTimeout: 1000 } });
  try {
    await nowhere.connect();
    throw new Error('connected to a closed port');
  } catch (err) {
    if (!(err instanceof errors.NoHostAvailableError)) throw err;
    for (const [host, inner] of Object.entries(err.innerErrors)) console.log(`NoHostAvailableError: ${host}: ${inner.code}`);
  } finally {
    await nowhere.shutdown();
  }

  try {
    new cassandra.Client({ contactPoints, localDataCenter, pooling: { maxRequestsPerConnection: 1024 } });
  } catch (err) {
    if (!(err instanceof errors.NotSupportedError)) throw err;
    console.log(`NotSupportedError: ${err.message}`);
  }
}

main().catch((err) => { console.error(err); process.exitCode = 1; });
