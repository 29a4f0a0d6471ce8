'use strict';
// Token-aware routing on three nodes, counted by the servers themselves: with a prepared
// statement at RF=1 every request is coordinated by the one replica of its key, so no node
// forwards a mutation or a read to another. The unprepared control shows the counter does
// see forwarding when the driver cannot route (no partition key metadata).
const test = require('node:test');
const assert = require('node:assert/strict');
const c = require('./cluster');

const opts = { skip: c.skipReason || false };
const ROWS = 600;
let client, ks;

test.before(async () => {
  if (!c.enabled) return;
  ks = `weircql_routing_${process.pid}`;
  client = c.newClient({ socketOptions: { readTimeout: 30000 } });
  await client.execute(`CREATE KEYSPACE ${ks} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
  await client.execute(`CREATE TABLE ${ks}.t (id int PRIMARY KEY, v int)`);
  await client.execute(`CREATE TABLE ${ks}.u (id int PRIMARY KEY, v int)`);
});
test.after(async () => {
  if (!client) return;
  await client.execute(`DROP KEYSPACE IF EXISTS ${ks}`);
  await client.shutdown();
});

function show(label, d) {
  console.log(`${label}: ${d.map((r) => `node ${r.node} coordinated w${r.coordinatedWrites}/r${r.coordinatedReads} received-forwarded w${r.forwardedWrites}/r${r.forwardedReads}`).join('; ')}`);
}

test('prepared at RF=1: every request is coordinated by its replica (server counters)', opts, async () => {
  const insert = `INSERT INTO ${ks}.t (id, v) VALUES (?, ?)`;
  const select = `SELECT v FROM ${ks}.t WHERE id = ?`;
  // Prepare first: preparing is not a table request and goes to any node.
  await client.execute(insert, [-1, -1], { prepare: true });
  await client.execute(select, [-1], { prepare: true });
  const before = await c.serverCounts(ks, 't');
  // Both native entry points: executeConcurrent, and one execute() at a time.
  const rows = [];
  for (let i = 0; i < ROWS; i++) rows.push([i, i * 2]);
  const group = await c.cql.concurrent.executeConcurrent(client, insert, rows, { concurrencyLevel: 32 });
  assert.equal(group.errors.length, 0);
  for (let i = ROWS; i < ROWS + 100; i++) await client.execute(insert, [i, i * 2], { prepare: true });
  for (let i = 0; i < 100; i++) {
    const rs = await client.execute(select, [i], { prepare: true });
    assert.equal(rs.first().v, i * 2);
  }
  const d = c.delta(before, await c.serverCounts(ks, 't'));
  show('prepared', d);
  assert.equal(c.total(d, 'coordinatedWrites'), ROWS + 100, 'the servers counted every write');
  assert.equal(c.total(d, 'coordinatedReads'), 100, 'the servers counted every read');
  // Requests reached every node (the keys spread over the ring), none was forwarded.
  for (const r of d) assert.ok(r.coordinatedWrites > 0, `node ${r.node} coordinated no write`);
  assert.equal(c.total(d, 'forwardedWrites'), 0, 'mutations forwarded by a non-replica coordinator');
  assert.equal(c.total(d, 'forwardedReads'), 0, 'reads forwarded by a non-replica coordinator');
});

test('control: unprepared statements cannot be routed and the servers count the forwarding', opts, async () => {
  const before = await c.serverCounts(ks, 'u');
  for (let i = 0; i < 150; i++) await client.execute(`INSERT INTO ${ks}.u (id, v) VALUES (${i}, ${i})`);
  const d = c.delta(before, await c.serverCounts(ks, 'u'));
  show('unprepared', d);
  assert.equal(c.total(d, 'coordinatedWrites'), 150);
  // Round-robin over 3 nodes with RF=1: about 2/3 of the writes land on a non-replica.
  assert.ok(c.total(d, 'forwardedWrites') >= 30, `only ${c.total(d, 'forwardedWrites')} of 150 unrouted writes were forwarded`);
});
