'use strict';
// A retry policy's effect, counted by the servers: a write at ALL to a keyspace of RF=4 on
// three nodes is refused by its coordinator with Unavailable (4 replicas required, 3
// alive). RetryPolicy (the default; the Rust driver's DefaultRetryPolicy) tries the next
// node once, so two coordinators count an Unavailable; FallthroughRetryPolicy never
// retries, so one does. The count is each node's ClientRequest Write Unavailables meter.
const test = require('node:test');
const assert = require('node:assert/strict');
const c = require('./cluster');

const opts = { skip: c.skipReason || false };
const WRITES = 5;
let admin, ks;

test.before(async () => {
  if (!c.enabled) return;
  ks = `weircql_retry_${process.pid}`;
  admin = c.newClient({ socketOptions: { readTimeout: 30000 } });
  // RF above the node count is allowed (Cassandra warns); it makes ALL unsatisfiable.
  await admin.execute(`CREATE KEYSPACE ${ks} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 4}`);
  await admin.execute(`CREATE TABLE ${ks}.t (id int PRIMARY KEY, v int)`);
});
test.after(async () => {
  if (!admin) return;
  await admin.execute(`DROP KEYSPACE IF EXISTS ${ks}`);
  await admin.shutdown();
});

/** Unavailables the nodes' coordinators answered for writes, summed over the cluster. */
async function unavailables() {
  const per = await Promise.all(c.NODES.map((n) => c.counts(n,
    'org.apache.cassandra.metrics:type=ClientRequest,scope=Write,name=Unavailables')));
  return per.reduce((s, m) => s + c.sum(m), 0);
}

async function refusedWrites(retry) {
  const client = c.newClient({ keyspace: ks, policies: retry ? { retry } : undefined });
  await client.connect();
  try {
    const before = await unavailables();
    for (let i = 0; i < WRITES; i++) {
      await assert.rejects(client.execute(`INSERT INTO ${ks}.t (id, v) VALUES (?, ?)`, [i, i],
        { prepare: true, consistency: c.cql.types.consistencies.all }),
      (e) => e instanceof c.cql.errors.ResponseError && e.code === c.cql.types.responseErrorCodes.unavailableException);
    }
    return (await unavailables()) - before;
  } finally {
    await client.shutdown();
  }
}

test('RetryPolicy retries an Unavailable on the next node once; FallthroughRetryPolicy never (server counters)', opts, async () => {
  const retried = await refusedWrites(null);
  const fallthrough = await refusedWrites(new c.cql.policies.retry.FallthroughRetryPolicy());
  console.log(`Unavailables counted by the nodes for ${WRITES} writes at ALL: RetryPolicy ${retried}, FallthroughRetryPolicy ${fallthrough}`);
  assert.equal(retried, 2 * WRITES, 'the default policy: the first coordinator, then one retry on the next node');
  assert.equal(fallthrough, WRITES, 'fallthrough: the first coordinator only');
});
