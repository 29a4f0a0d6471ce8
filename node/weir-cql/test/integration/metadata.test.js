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
      assert.ok(client.hosts.length >= 1);
      const h = client.hosts.get(CONTACT_POINT);
      assert.ok(h, `host ${CONTACT_POINT} in ${client.hosts.keys()}`);
      assert.equal(h.datacenter, 'datacenter1');
      assert.equal(h.isUp(), true);
      assert.match(h.cassandraVersion, /^\d+\.\d+/);
      assert.equal(h.getCassandraVersion()[0] >= 4, true);
      assert.deepEqual(client.getState().getConnectedHosts().map((x) => x.address).sort(), client.hosts.keys().sort());
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
      const replicas = client.metadata.getReplicas(ks, key);
      assert.equal(replicas.length, 1, 'RF=1: one replica');
      assert.ok(client.hosts.get(replicas[0].address));
      const ranges = client.metadata.getTokenRanges();
      assert.equal(ranges.size, 16 * client.hosts.length, 'num_tokens: 16 per node');
      assert.equal(client.metadata.getTokenRangesForHost(ks, client.hosts.get(CONTACT_POINT)).size, 16);
    });
    await t.test('getTrace of a traced query', async () => {
      const rs = await client.execute('SELECT * FROM t WHERE a = 1', [], { traceQuery: true });
      assert.ok(rs.info.traceId);
      let trace;
      for (let i = 0; i < 20 && !trace; i++) {
        try { trace = await client.metadata.getTrace(rs.info.traceId); } catch { await new Promise((r) => setTimeout(r, 250)); }
      }
      assert.ok(trace, 'the trace became readable');
      assert.ok(client.hosts.keys().includes(`${trace.coordinator}:9042`), `coordinator ${trace.coordinator}`);
      assert.ok(trace.events.length > 0);
      assert.ok(trace.duration > 0);
    });
    await t.test('checkSchemaAgreement', async () => {
      assert.equal(await client.metadata.checkSchemaAgreement(), true);
    });
  } finally { await drop(); }
});
