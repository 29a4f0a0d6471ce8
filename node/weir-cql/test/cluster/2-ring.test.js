'use strict';
// The ring the driver routes by is the servers' ring: client.metadata.getReplicas,
// getTokenRanges and getTokenRangesForHost match `nodetool getendpoints` and
// `nodetool describering` (at RF=2, so a host's ranges include those it only replicates).
const test = require('node:test');
const assert = require('node:assert/strict');
const c = require('./cluster');

const opts = { skip: c.skipReason || false };
let client, ks;

test.before(async () => {
  if (!c.enabled) return;
  ks = `weircql_ring_${process.pid}`;
  client = c.newClient({ socketOptions: { readTimeout: 30000 } });
  await client.execute(`CREATE KEYSPACE ${ks} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}`);
  await client.execute(`CREATE TABLE ${ks}.t (id int PRIMARY KEY, v int)`);
  // The driver learns of a new keyspace's replication from the schema event; give it a beat.
  await client.execute(`SELECT * FROM ${ks}.t LIMIT 1`);
});
test.after(async () => {
  if (!client) return;
  await client.execute(`DROP KEYSPACE IF EXISTS ${ks}`);
  await client.shutdown();
});

/** cassandra-driver's routing key of one int partition-key column: its 4 value bytes. */
function intKey(id) {
  const b = Buffer.alloc(4);
  b.writeInt32BE(id);
  return b;
}

test('replicas of keys match nodetool getendpoints (RF=2)', opts, async () => {
  for (const id of [0, 1, 2, 42, -7, 1000000]) {
    const ours = client.metadata.getReplicas(ks, intKey(id)).map((h) => h.address.split(':')[0]);
    const theirs = (await c.nodetool(1, 'getendpoints', ks, 't', String(id))).trim().split('\n').map((l) => l.trim()).filter(Boolean);
    assert.equal(ours.length, 2, `key ${id}: ${ours}`);
    assert.deepEqual([...ours].sort(), [...theirs].sort(), `replicas of key ${id}`);
  }
});

test("token ranges, and each host's ranges at RF=2, match nodetool describering", opts, async () => {
  const out = await c.nodetool(2, 'describering', ks);
  const theirs = new Map();
  const re = /TokenRange\(start_token:(-?\d+), end_token:(-?\d+), endpoints:\[([^\]]*)\]/g;
  for (let m = re.exec(out); m; m = re.exec(out)) {
    theirs.set(`${m[1]}..${m[2]}`, m[3].split(',').map((s) => s.trim()));
  }
  // 3 nodes x num_tokens 16.
  assert.equal(theirs.size, 48, `nodetool listed ${theirs.size} ranges`);
  const key = (r) => `${r.start}..${r.end}`;
  const all = [...client.metadata.getTokenRanges()].map(key).sort();
  assert.deepEqual(all, [...theirs.keys()].sort());
  assert.equal(client.hosts.length, 3);
  for (const host of client.hosts.values()) {
    const ip = host.address.split(':')[0];
    const ours = [...client.metadata.getTokenRangesForHost(ks, host)].map(key).sort();
    const expected = [...theirs].filter(([, eps]) => eps.includes(ip)).map(([k]) => k).sort();
    // RF=2 of 3 nodes: each host replicates about two thirds of the ranges.
    assert.ok(expected.length > 16, `nodetool gives ${ip} only ${expected.length} ranges`);
    assert.deepEqual(ours, expected, `ranges of ${ip}`);
  }
});
