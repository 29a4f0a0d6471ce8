'use strict';
// client.hosts, client.metadata and getState() against the server.
const test = require('node:test');
const assert = require('node:assert/strict');
const { cql, setupKeyspace, CONTACT_POINT } = require('./helpers');

test('hosts, keyspaces, tables, UDTs, replicas, token ranges, traces', async (t) => {
  const logs = [];
  const { client, ks, drop } = await setupKeyspace(__filename);
  client.on('log', (level, cls, message) => logs.push(`${level} ${message}`));
  try {
    await client.execute('CREATE TYPE addr (street text, zip int)');
    await client.execute('CREATE TABLE t (a int, b text, c frozen<addr>, d map<text, int>, PRIMARY KEY (a, b))');
    await t.test('hosts and getState', () => {
      // The test command's cluster has three nodes; an external server is taken as one.
      const nodes = Number(process.env.WEIR_CQL_NODES || 1);
      assert.equal(client.hosts.length, nodes, `hosts ${client.hosts.keys()}`);
      const h = client.hosts.get(CONTACT_POINT);
      assert.ok(h, `host ${CONTACT_POINT} in ${client.hosts.keys()}`);
      assert.equal(h.datacenter, 'datacenter1');
      assert.equal(h.isUp(), true);
      assert.match(h.cassandraVersion, /^\d+\.\d+/);
      assert.equal(h.getCassandraVersion()[0] >= 4, true);
      assert.ok(client.getState().getConnectedHosts().map((x) => x.address).includes(CONTACT_POINT));
    });
    await t.test('keyspaces and getTable (schema agreement after DDL: visible at once)', async () => {
      const k = client.metadata.keyspaces[ks];
      assert.equal(k.strategy, 'org.apache.cassandra.locator.SimpleStrategy');
      assert.deepEqual(k.strategyOptions, { replication_factor: '1' });
      const table = await client.metadata.getTable(ks, 't');
      assert.deepEqual(table.columns.map((c) => c.name), ['a', 'b', 'c', 'd']);
      assert.deepEqual(table.partitionKeys.map((c) => c.name), ['a']);
      assert.deepEqual(table.clusteringKeys.map((c) => c.name), ['b']);
      assert.equal(table.columnsByName.a.type.code, cql.types.dataTypes.int);
      assert.equal(table.columnsByName.d.type.code, cql.types.dataTypes.map);
      assert.equal(table.columnsByName.c.type.info.name, 'addr');
      assert.equal(await client.metadata.getTable(ks, 'nope'), null);
      const udt = await client.metadata.getUdt(ks, 'addr');
      assert.deepEqual(udt.fields.map((f) => f.name), ['street', 'zip']);
    });
    await t.test('getReplicas and getTokenRanges', () => {
      const key = Buffer.alloc(4);
      key.writeInt32BE(1);
      // RF=1: one replica, a node of the cluster (the test command runs three; the
      // three-node tests in test/cluster compare replicas and ranges with nodetool).
      const replicas = client.metadata.getReplicas(ks, key).map((h) => h.address);
      assert.equal(replicas.length, 1);
      assert.ok(client.hosts.get(replicas[0]), `${replicas[0]} is not a known host`);
      const ranges = client.metadata.getTokenRanges();
      assert.equal(ranges.size, 16 * client.hosts.length, 'num_tokens: 16 per node');
      let owned = 0;
      for (const h of client.hosts.values()) owned += client.metadata.getTokenRangesForHost(ks, h).size;
      assert.equal(owned, ranges.size, 'at RF=1 every range has exactly one replica');
    });
    await t.test('getTrace of a traced query', async () => {
      const rs = await client.execute('SELECT * FROM t WHERE a = 1', [], { traceQuery: true });
      assert.ok(rs.info.traceId);
      let trace;
      for (let i = 0; i < 80 && !trace; i++) { // up to 20 s: Cassandra writes traces in the background
        try { trace = await client.metadata.getTrace(rs.info.traceId); } catch { await new Promise((r) => setTimeout(r, 250)); }
      }
      assert.ok(trace, 'the trace became readable');
      // Any node of the cluster may have coordinated the unprepared query.
      const ips = client.hosts.keys().map((a) => a.split(':')[0]);
      assert.ok(ips.includes(trace.coordinator.toString()), `coordinator ${trace.coordinator} is not one of ${ips}`);
      assert.ok(trace.events.length > 0);
      assert.ok(trace.duration > 0);
    });
    await t.test('checkSchemaAgreement', async () => {
      assert.equal(await client.metadata.checkSchemaAgreement(), true);
    });
  } finally { await drop(); }
});
