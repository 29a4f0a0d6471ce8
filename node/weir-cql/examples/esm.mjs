// The package as an ES module: the default import is the same object `require` gives, and
// every top-level name is also a named export.
import cassandra, { Client, types } from 'weir-cql';

const client = new Client({
  contactPoints: (process.env.CQL_CONTACT_POINTS || '127.0.0.1').split(','),
  localDataCenter: process.env.CQL_LOCAL_DC || 'datacenter1',
});

try {
  await client.connect();
  const rs = await client.execute('SELECT now() AS t FROM system.local');
  const t = rs.first().t;
  console.log(`server time ${t.getDate().toISOString()} (a ${t instanceof types.TimeUuid ? 'TimeUuid' : typeof t}),`,
    `driver ${cassandra.version}`);
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await client.shutdown();
}
