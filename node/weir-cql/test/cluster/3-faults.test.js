'use strict';
// Faults on the three-node cluster: a node paused with SIGSTOP, and a node killed with
// SIGKILL in the middle of a concurrent insert at RF=3, QUORUM, then started again.
// Runs last (files run in name order): it leaves node 3 restarted.
const test = require('node:test');
const assert = require('node:assert/strict');
const c = require('./cluster');

const opts = { skip: c.skipReason || false };
const { consistencies } = c.cql.types;
let admin, ks;

test.before(async () => {
  if (!c.enabled) return;
  ks = `weircql_faults_${process.pid}`;
  admin = c.newClient({ socketOptions: { readTimeout: 30000 } });
  await admin.execute(`CREATE KEYSPACE ${ks}_rf1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
  await admin.execute(`CREATE TABLE ${ks}_rf1.t (id int PRIMARY KEY, v int)`);
  await admin.execute(`CREATE KEYSPACE ${ks} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`);
  // A coordinator reading at ONE sends the data read to one replica in its snitch's order,
  // which on a fresh cluster is often the paused node 3, and asks another replica only after
  // the table's speculative_retry (default 99p: ~2.5 s on this cluster) - measured: 9 of 24
  // reads coordinated by live nodes answered after 2.55 s. A fixed 20 ms keeps the
  // coordinators out of what the SIGSTOP test measures: the driver's own choice of node.
  await admin.execute(`CREATE TABLE ${ks}.t (id int PRIMARY KEY, v int) WITH speculative_retry = '20ms'`);
});
test.after(async () => {
  if (!admin) return;
  for (const k of [ks, `${ks}_rf1`]) await admin.execute(`DROP KEYSPACE IF EXISTS ${k}`).catch(() => {});
  await admin.shutdown();
});

/**
 * SIGSTOP `pid` and wait until every one of its threads is stopped ('T' in
 * /proc/PID/task/TID/stat). kill() only queues the stop: a JVM thread already running can
 * still answer a request sent in the next few milliseconds (seen once: a read of a key
 * owned by the "paused" node answered in 2 ms), so a test of a paused node starts here.
 */
async function pause(pid) {
  const fs = require('node:fs');
  process.kill(pid, 'SIGSTOP');
  const deadline = Date.now() + 5000;
  for (;;) {
    const running = fs.readdirSync(`/proc/${pid}/task`).filter((tid) => {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'T';
      } catch { return false; } // the thread exited
    });
    if (running.length === 0) return;
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGCONT');
      throw new Error(`node pid ${pid}: ${running.length} threads still running 5 s after SIGSTOP`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

function alive(pid) {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

/** A key of `table` whose only replica is 127.0.0.n, asked of nodetool getendpoints. */
async function keyOwnedBy(keyspace, table, n) {
  for (let id = 0; id < 40; id++) {
    const out = (await c.nodetool(1, 'getendpoints', keyspace, table, String(id))).trim();
    if (out === `127.0.0.${n}`) return id;
  }
  throw new Error(`none of 40 keys is owned by node ${n} alone`);
}

test('a paused node (SIGSTOP) yields OperationTimedOutError within readTimeout', opts, async () => {
  const READ_TIMEOUT_MS = 2000;
  const id = await keyOwnedBy(`${ks}_rf1`, 't', 3);
  const client = c.newClient({ socketOptions: { readTimeout: READ_TIMEOUT_MS } });
  const select = `SELECT v FROM ${ks}_rf1.t WHERE id = ?`;
  try {
    await client.execute(`INSERT INTO ${ks}_rf1.t (id, v) VALUES (?, ?)`, [id, 7], { prepare: true });
    assert.equal((await client.execute(select, [id], { prepare: true })).first().v, 7);
    const pid = await c.pid(3);
    await pause(pid);
    let err = null, elapsedMs = 0;
    try {
      const t0 = Date.now();
      try { await client.execute(select, [id], { prepare: true }); } catch (e) { err = e; }
      elapsedMs = Date.now() - t0;
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    console.log(`paused replica: ${err && err.constructor.name} after ${elapsedMs} ms (readTimeout ${READ_TIMEOUT_MS} ms)`);
    assert.ok(err instanceof c.cql.errors.OperationTimedOutError, `expected OperationTimedOutError, got ${err && err.stack}`);
    assert.ok(elapsedMs >= READ_TIMEOUT_MS - 50, `gave up after ${elapsedMs} ms, before readTimeout`);
    assert.ok(elapsedMs < READ_TIMEOUT_MS + 1000, `took ${elapsedMs} ms, readTimeout is ${READ_TIMEOUT_MS} ms`);
    // The node answers again once continued.
    assert.equal((await client.execute(select, [id], { prepare: true, readTimeout: 20000 })).first().v, 7);
  } finally {
    await client.shutdown();
  }
});

test('speculative execution answers from another replica while one is paused (SIGSTOP)', opts, async () => {
  const READ_TIMEOUT_MS = 3000;
  const N = 24;
  const NODE3 = '127.0.0.3:9042';
  const select = `SELECT v FROM ${ks}.t WHERE id = ?`;
  const o = { prepare: true, isIdempotent: true, consistency: consistencies.one };
  const ids = Array.from({ length: N }, (_, i) => 1000000 + i);
  for (const id of ids) await admin.execute(`INSERT INTO ${ks}.t (id, v) VALUES (?, ?)`, [id, id], { prepare: true, consistency: consistencies.all });
  const spec = c.cql.policies.speculativeExecution;
  // RF=3: every node is a replica and the driver picks the first one at random, so about a
  // third of the reads start on the paused node.
  const plain = c.newClient({ socketOptions: { readTimeout: READ_TIMEOUT_MS } });
  const speculative = c.newClient({ socketOptions: { readTimeout: READ_TIMEOUT_MS },
    policies: { speculativeExecution: new spec.ConstantSpeculativeExecutionPolicy(100, 2) } });
  const timed = async (client, id) => {
    const t0 = Date.now();
    try {
      const rs = await client.execute(select, [id], o);
      return { ms: Date.now() - t0, v: rs.first().v, host: rs.info.queriedHost, speculative: rs.info.speculativeExecutions };
    } catch (e) { return { ms: Date.now() - t0, error: e }; }
  };
  try {
    for (const client of [plain, speculative]) await client.execute(select, [ids[0]], o);
    const pid = await c.pid(3);
    await pause(pid);
    let without, withSpec;
    try {
      without = await Promise.all(ids.map((id) => timed(plain, id)));
      withSpec = await Promise.all(ids.map((id) => timed(speculative, id)));
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const timedOut = without.filter((r) => r.error);
    const answered = without.filter((r) => !r.error);
    const ms = (rs) => rs.map((r) => r.ms).sort((a, b) => a - b);
    const hosts = (rs) => rs.map((r) => (r.host || '-').replace(/^127\.0\.0\.(\d+):9042$/, '$1')).join('');
    console.log(`node 3 paused: without speculation ${timedOut.length} of ${N} reads timed out (answered ones took ${ms(answered)} ms, by nodes ${hosts(answered)}); `
      + `with it ${withSpec.filter((r) => r.error).length} failed, ${withSpec.filter((r) => r.speculative > 0).length} speculated, took ${ms(withSpec)} ms, by nodes ${hosts(withSpec)}`);
    // The control: the driver picks the first replica at random (about a third of the reads
    // start on node 3; P(none of 24) = (2/3)^24 < 1e-4), and a read that started on the
    // paused node waits for readTimeout: no speculation, no answer.
    assert.ok(timedOut.length > 0, 'no read started on the paused node: the control shows nothing');
    for (const r of timedOut) assert.ok(r.error instanceof c.cql.errors.OperationTimedOutError, String(r.error));
    for (const r of answered) assert.notEqual(r.host, NODE3, 'the paused node answered');
    // The reads issued in the same tick cross in one native run; those served by a live
    // node must not wait for the run's slowest (they once all took readTimeout), so their
    // median is far below it (a count such as "half answered fast" is not: about a third
    // of the reads time out, and more than half do in ~3 % of runs).
    if (answered.length) {
      const median = ms(answered)[answered.length >> 1];
      assert.ok(median < READ_TIMEOUT_MS / 2, `reads answered by live nodes took ${median} ms (median), readTimeout ${READ_TIMEOUT_MS} ms: held back by the timed-out ones?`);
    }
    withSpec.forEach((r, i) => {
      assert.ok(!r.error, `read ${i} failed with speculative execution: ${r.error}`);
      assert.equal(r.v, ids[i]);
      assert.notEqual(r.host, NODE3, `read ${i} was answered by the paused node`);
      // Answered, and before readTimeout: it did not wait for the paused replica. (On the
      // loaded 2-core VM a read can take seconds, so no tighter bound is asserted.)
      assert.ok(r.ms < READ_TIMEOUT_MS, `read ${i} took ${r.ms} ms with a 100 ms speculative delay`);
    });
    // The reads that started on node 3 were saved by a speculative execution.
    assert.ok(withSpec.some((r) => r.speculative > 0), 'no read needed a speculative execution: none started on the paused node');
  } finally {
    await plain.shutdown();
    await speculative.shutdown();
  }
});

test('kill -9 of a node during a concurrent QUORUM insert at RF=3: no acknowledged write lost, the run goes on, the node comes back', opts, async () => {
  const client = c.newClient({ socketOptions: { readTimeout: 10000 } });
  const insert = `INSERT INTO ${ks}.t (id, v) VALUES (?, ?)`;
  const o = { prepare: true, consistency: consistencies.quorum, isIdempotent: true };
  const acked = [];
  const failures = new Map();
  let next = 0, stop = false, slow = false;
  // While node 3 is down and restarting, 4 workers write ~80/s: enough to see its traffic
  // come back, without hours of hints and read-back.
  const worker = async (index) => {
    while (!stop) {
      if (slow) {
        await c.sleep(50);
        if (index >= 4) continue;
      }
      const id = next++;
      try {
        await client.execute(insert, [id, id ^ 0x5a5a], o);
        acked.push(id);
      } catch (e) {
        failures.set(e.constructor.name, (failures.get(e.constructor.name) || 0) + 1);
      }
    }
  };
  const waitAcked = async (n, ms) => {
    const end = Date.now() + ms;
    while (acked.length < n && Date.now() < end) await c.sleep(50);
    return acked.length >= n;
  };
  let killedPid = null;
  const workers = [];
  // The driver's own view of node 3: hostDown after the kill, hostUp after the restart.
  const events = [];
  const NODE3 = '127.0.0.3:9042';
  client.on('hostDown', (h) => { if (h.address === NODE3) events.push(['down', Date.now()]); });
  client.on('hostUp', (h) => { if (h.address === NODE3) events.push(['up', Date.now()]); });
  try {
    await client.connect();
    for (let i = 0; i < 32; i++) workers.push(worker(i));
    assert.ok(await waitAcked(1000, 60000), `only ${acked.length} writes acknowledged before the kill`);
    killedPid = await c.pid(3);
    process.kill(killedPid, 'SIGKILL');
    const atKill = acked.length;
    // SIGKILL is asynchronous: a 1 GB JVM takes a moment to be torn down.
    for (let i = 0; i < 200 && alive(killedPid); i++) await c.sleep(50);
    assert.ok(!alive(killedPid), `node 3 (pid ${killedPid}) still alive 10 s after SIGKILL`);
    // The run goes on with two of three replicas.
    assert.ok(await waitAcked(atKill + 1000, 60000), `only ${acked.length - atKill} writes acknowledged in 60 s after the kill`);
    console.log(`kill -9 node 3 after ${atKill} acknowledged writes; ${acked.length - atKill} more since; failures ${JSON.stringify(Object.fromEntries(failures))}`);
    slow = true;
    const t0 = Date.now();
    await c.resume(3);
    console.log(`node 3 restarted in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    killedPid = null;
    // Its return is seen: the driver sends node 3 requests again (counted by node 3).
    const before = (await c.coordinated(3, ks, 't')).coordinatedWrites;
    let back = 0;
    const end = Date.now() + 90000;
    while (Date.now() < end) {
      await c.sleep(1000);
      back = (await c.coordinated(3, ks, 't')).coordinatedWrites - before;
      if (back > 0) break;
    }
    assert.ok(back > 0, 'node 3 coordinated no write within 90 s of its return');
    const seen = events.map(([e, at]) => `${e} ${((at - t0) / 1000).toFixed(1)} s`);
    console.log(`host events for node 3 (from its restart): ${seen.join(', ')}`);
    assert.ok(events.some(([e]) => e === 'down'), `no hostDown for ${NODE3}: ${seen}`);
    const lastDown = Math.max(...events.filter(([e]) => e === 'down').map(([, at]) => at));
    assert.ok(events.some(([e, at]) => e === 'up' && at > lastDown), `no hostUp for ${NODE3} after its hostDown: ${seen}`);
    console.log(`node 3 back: it coordinated ${back} writes within ${((Date.now() - t0) / 1000).toFixed(1)} s of its restart`);
  } finally {
    stop = true;
    await Promise.all(workers);
    if (killedPid !== null) await c.resume(3).catch(() => {});
  }
  // Every acknowledged write reads back, at QUORUM.
  const tRead = Date.now();
  const group = await c.cql.concurrent.executeConcurrent(client, `SELECT v FROM ${ks}.t WHERE id = ?`,
    acked.map((id) => [id]), { collectResults: true, consistency: consistencies.quorum, concurrencyLevel: 64, raiseOnFirstError: false });
  assert.equal(group.errors.length, 0, `read-back errors: ${group.errors.slice(0, 3).map((e) => e.message)}`);
  let lost = 0;
  group.resultItems.forEach((rs, i) => {
    const row = rs.first();
    if (!row || row.v !== (acked[i] ^ 0x5a5a)) lost++;
  });
  console.log(`${acked.length} acknowledged writes read back in ${((Date.now() - tRead) / 1000).toFixed(1)} s, ${lost} lost; ${[...failures.values()].reduce((a, b) => a + b, 0)} writes failed`);
  assert.equal(lost, 0, `${lost} acknowledged writes lost`);
  await client.shutdown();
});
