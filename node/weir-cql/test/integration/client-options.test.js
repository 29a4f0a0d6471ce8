'use strict';
// Client options observed on a real server: TLS (system_views.clients shows every
// connection of the client encrypted), certificate refusal, localDataCenter checked at
// connect, pool size, execution profiles, timestamp generators and the allow list.
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { cql, newClient, setupKeyspace, CONTACT_POINT } = require('./helpers');

const TLS_DIR = process.env.WEIR_CQL_TLS_DIR;
const tlsReason = !TLS_DIR ? 'WEIR_CQL_TLS_DIR is not set (the server was not started by npm test with CASSANDRA_CLIENT_TLS=1)'
  : !fs.existsSync(path.join(TLS_DIR, 'ca.pem')) ? `no ca.pem in ${TLS_DIR}` : null;
if (tlsReason) console.log(`# TLS tests skipped: ${tlsReason}`);

/**
 * This client's connections as the servers list them, found by a unique applicationName.
 * system_views.clients is local to each node, so every node of the cluster is asked in
 * turn (an AllowListPolicy of that one node).
 */
async function connectionsOf(appName) {
  const admin = newClient();
  let hosts;
  try {
    await admin.connect();
    hosts = admin.hosts.keys();
  } finally { await admin.shutdown(); }
  const lb = cql.policies.loadBalancing;
  const rows = [];
  for (const host of hosts) {
    const one = newClient({ policies: { loadBalancing: new lb.AllowListPolicy(new lb.DCAwareRoundRobinPolicy(), [host]) } });
    try {
      const rs = await one.execute('SELECT ssl_enabled, ssl_protocol, client_options FROM system_views.clients');
      rows.push(...rs.rows.filter((r) => r.client_options && r.client_options.APPLICATION_NAME === appName));
    } finally { await one.shutdown(); }
  }
  return rows;
}

const appName = (what) => `weircql-${what}-${crypto.randomBytes(3).toString('hex')}`;

test('sslOptions: every connection of the client is TLS on the server side', { skip: tlsReason || false }, async () => {
  const name = appName('tls');
  const c = newClient({ applicationName: name, sslOptions: { ca: [fs.readFileSync(path.join(TLS_DIR, 'ca.pem'))] } });
  try {
    await c.connect();
    const rs = await c.execute('SELECT release_version FROM system.local');
    assert.equal(rs.rowLength, 1);
    const conns = await connectionsOf(name);
    assert.ok(conns.length >= 2, `expected the control and pool connections, got ${conns.length}`);
    for (const r of conns) assert.equal(r.ssl_enabled, true, `a connection without TLS: ${JSON.stringify(r)}`);
  } finally { await c.shutdown(); }
});

test('sslOptions: a node certificate not signed by sslOptions.ca is refused', { skip: tlsReason || false }, async () => {
  const c = newClient({ sslOptions: { ca: [fs.readFileSync(path.join(TLS_DIR, 'other-ca.pem'))] }, socketOptions: { connectTimeout: 3000 } });
  await assert.rejects(c.connect(), (e) => {
    assert.ok(e instanceof cql.errors.NoHostAvailableError, String(e));
    assert.equal(Object.values(e.innerErrors)[0].code, 'ECERTVERIFY');
    return true;
  });
  await c.shutdown();
});

test('a localDataCenter no node is in fails connect() with the datacenters found', async () => {
  const c = newClient({ localDataCenter: 'no-such-dc' });
  await assert.rejects(c.connect(), (e) => {
    assert.ok(e instanceof cql.errors.ArgumentError, String(e));
    assert.match(e.message, /'no-such-dc'.*\[datacenter1\]/);
    return true;
  });
  await c.shutdown();
});

test('pooling.coreConnectionsPerHost sets the connections per node', async () => {
  const one = appName('pool1');
  const three = appName('pool3');
  const a = newClient({ applicationName: one });
  const b = newClient({ applicationName: three, pooling: { coreConnectionsPerHost: { [cql.types.distance.local]: 3 } } });
  try {
    await a.connect();
    await b.connect();
    // Pools fill in the background after connect(); wait for them to settle. Two more
    // connections on every node of the cluster.
    const extra = 2 * a.hosts.length;
    let n1 = 0, n3 = 0;
    // Up to 20 s: a loaded machine opens the pools' connections slowly.
    for (let i = 0; i < 200; i++) {
      n1 = (await connectionsOf(one)).length;
      n3 = (await connectionsOf(three)).length;
      if (n3 - n1 === extra) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(n3 - n1, extra, `1 vs 3 pooled connections per node on ${a.hosts.length} nodes: the servers list ${n1} and ${n3}`);
  } finally { await a.shutdown(); await b.shutdown(); }
});

test('execution profiles, timestamp generators and the allow list take effect', async (t) => {
  const { client, ks, drop } = await setupKeyspace(__filename, {
    profiles: [new cql.ExecutionProfile('three', { consistency: cql.types.consistencies.three })],
    policies: { timestampGeneration: { next: () => cql.types.Long.fromNumber(1234567) } },
  });
  try {
    await client.execute('CREATE TABLE t (id int PRIMARY KEY, v int)');
    await client.execute('INSERT INTO t (id, v) VALUES (1, 1)');
    await t.test('a profile\'s consistency is sent (THREE on one node is unavailable)', async () => {
      await assert.rejects(client.execute('SELECT * FROM t WHERE id = 1', [], { executionProfile: 'three' }),
        (e) => e instanceof cql.errors.ResponseError && e.code === cql.types.responseErrorCodes.unavailableException);
      const rs = await client.execute('SELECT * FROM t WHERE id = 1');
      assert.equal(rs.first().v, 1);
    });
    await t.test('a JS timestamp generator stamps each write', async () => {
      const rs = await client.execute('SELECT WRITETIME(v) AS w FROM t WHERE id = 1');
      assert.equal(String(rs.first().w), '1234567');
    });
    await t.test('the default monotonic generator writes client timestamps', async () => {
      const c = newClient({ keyspace: ks });
      try {
        const before = Date.now() * 1000;
        await c.execute('INSERT INTO t (id, v) VALUES (2, 2)');
        const w = Number(String((await c.execute('SELECT WRITETIME(v) AS w FROM t WHERE id = 2')).first().w));
        assert.ok(w >= before - 1000 && w <= Date.now() * 1000 + 1000, `writetime ${w}`);
      } finally { await c.shutdown(); }
    });
    await t.test('AllowListPolicy without the node: no host may serve', async () => {
      const lb = cql.policies.loadBalancing;
      const c = newClient({ keyspace: ks, policies: { loadBalancing: new lb.AllowListPolicy(new lb.DCAwareRoundRobinPolicy(), ['127.0.0.250:9042']) } });
      try {
        await assert.rejects(c.execute('SELECT * FROM t WHERE id = 1'), cql.errors.NoHostAvailableError);
      } finally { await c.shutdown(); }
      const ok = newClient({ keyspace: ks, policies: { loadBalancing: new lb.AllowListPolicy(new lb.DCAwareRoundRobinPolicy(), [CONTACT_POINT]) } });
      try {
        assert.equal((await ok.execute('SELECT * FROM t WHERE id = 1')).first().v, 1);
      } finally { await ok.shutdown(); }
    });
  } finally { await drop(); }
});
