'use strict';
// How weir-cql survives a server that misbehaves: the stub server (bench/stub) answers
// normally until a statement's text asks it to stay silent, go mute, drop the connection in
// the middle of a frame, or send a malformed, unknown or oversized frame. Every request must
// settle (resolve or reject with a cassandra-driver error class), nothing may hang, the
// process must not crash, and the client must serve the next request.
const test = require('node:test');
const assert = require('node:assert/strict');
const cql = require('../..');
const { startStub } = require('./stub');

const { errors, types } = cql;
const SELECT = 'SELECT id, val FROM benchmarks.basic WHERE id = ?';
const ID = types.Uuid.fromString('57656972-2d63-716c-0000-000000000000');
let stub;
const unhandled = [];
const onUnhandled = (e) => unhandled.push(e);

function newClient(extra = {}) {
  return new cql.Client({ contactPoints: [stub.address], localDataCenter: 'datacenter1',
    ...extra, socketOptions: { readTimeout: 2000, ...(extra.socketOptions || {}) } });
}

/** `promise`, or a failure naming `what` if it has not settled after `ms`. */
function within(ms, what, promise) {
  let timer;
  const guard = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms);
  });
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer));
}

async function selectOk(client, options = {}) {
  const rs = await client.execute(SELECT, [ID], { prepare: true, ...options });
  assert.equal(rs.rows.length, 1);
  assert.equal(rs.rows[0].val, 0);
}

/** Retries a normal request until it succeeds (the pool reconnecting) or `ms` pass. */
async function untilServed(client, ms) {
  const t0 = Date.now();
  for (;;) {
    try {
      await selectOk(client);
      return Date.now() - t0;
    } catch (e) {
      if (Date.now() - t0 > ms) throw new Error(`no request served within ${ms} ms after the fault: ${e.message}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

test.before(async () => {
  process.on('unhandledRejection', onUnhandled);
  stub = await startStub();
});
test.after(async () => {
  process.off('unhandledRejection', onUnhandled);
  if (stub) await stub.stop();
});

test('a request the server never answers fails with OperationTimedOutError after readTimeout, and the client keeps serving', { timeout: 30000 }, async () => {
  const client = newClient({ socketOptions: { readTimeout: 600 } });
  await client.connect();
  try {
    await selectOk(client);
    const t0 = Date.now();
    await within(10000, 'the unanswered request', assert.rejects(
      client.execute(`${SELECT} /* stub:silent */`, [ID], { prepare: true }),
      (e) => e instanceof errors.OperationTimedOutError && e instanceof errors.DriverError));
    const waited = Date.now() - t0;
    assert.ok(waited >= 550 && waited < 8000, `the timeout fired after ${waited} ms, readTimeout is 600 ms`);
    await selectOk(client);
  } finally {
    await within(10000, 'shutdown', client.shutdown());
  }
});

test('a per-request readTimeout overrides the client one for an unanswered request', { timeout: 30000 }, async () => {
  const client = newClient({ socketOptions: { readTimeout: 60000 } });
  try {
    const t0 = Date.now();
    await within(10000, 'the unanswered request', assert.rejects(
      client.execute(`${SELECT} /* stub:silent */`, [ID], { prepare: true, readTimeout: 400 }),
      errors.OperationTimedOutError));
    const waited = Date.now() - t0;
    assert.ok(waited >= 350 && waited < 8000, `the timeout fired after ${waited} ms, the request's readTimeout is 400 ms`);
  } finally {
    await within(10000, 'shutdown', client.shutdown());
  }
});

test('a server that stops answering every request makes each time out, and the client serves again once it answers', { timeout: 30000 }, async () => {
  const client = newClient({ socketOptions: { readTimeout: 500 } });
  await client.connect();
  try {
    await selectOk(client);
    const muted = Date.now();
    // The mute request goes first and alone, so the server has gone mute before the rest.
    const mute = client.execute(`${SELECT} /* stub:mute=1500 */`, [ID], { prepare: true });
    await new Promise((r) => setTimeout(r, 100));
    const results = await within(8000, 'requests to a mute server', Promise.allSettled([
      mute, ...Array.from({ length: 20 }, () => client.execute(SELECT, [ID], { prepare: true })),
    ]));
    for (const r of results) {
      assert.equal(r.status, 'rejected');
      assert.ok(r.reason instanceof errors.OperationTimedOutError, `expected OperationTimedOutError, got ${r.reason && r.reason.stack}`);
    }
    await new Promise((r) => setTimeout(r, Math.max(0, 1600 - (Date.now() - muted))));
    await untilServed(client, 10000);
  } finally {
    await within(10000, 'shutdown', client.shutdown());
  }
});

test('a connection dropped mid-frame settles every request in flight, none silently, and the pool reconnects', { timeout: 60000 }, async () => {
  const client = newClient({ socketOptions: { readTimeout: 5000 } });
  await client.connect();
  try {
    await selectOk(client);
    // Selects held by the server for 400 ms, inserts held too, then a request whose answer
    // is cut in half by the closing connection.
    const held = Array.from({ length: 30 }, () => client.execute(`${SELECT} /* stub:delay=400 */`, [ID], { prepare: true }));
    const writes = Array.from({ length: 30 }, (_, i) => client.execute(
      'INSERT INTO benchmarks.basic (id, val) VALUES (?, ?) /* stub:delay=400 */', [types.Uuid.random(), i], { prepare: true }));
    await new Promise((r) => setTimeout(r, 50));
    const dropped = client.execute(`${SELECT} /* stub:drop */`, [ID], { prepare: true });
    const settled = await within(15000, 'requests in flight on a dropped connection',
      Promise.allSettled([dropped, ...held, ...writes]));
    assert.equal(settled[0].status, 'rejected', 'the request whose answer was cut resolved');
    let failed = 0;
    for (const [i, r] of settled.entries()) {
      if (r.status === 'rejected') {
        failed++;
        assert.ok(r.reason instanceof errors.DriverError, `request ${i} failed with a non-driver error: ${r.reason && r.reason.stack}`);
      } else if (i <= held.length) {
        // A select that was retried or was on another connection must carry its row.
        assert.equal(r.value.rows.length, 1);
      }
    }
    assert.ok(failed >= 1);
    // Non-idempotent inserts (the default) are never retried after a connection broke
    // under them: cassandra-driver's default retry policy fails them, and so must this.
    for (const r of settled.slice(1 + held.length)) {
      if (r.status === 'rejected') assert.ok(r.reason instanceof errors.DriverError);
    }
    const ms = await untilServed(client, 10000);
    assert.ok(ms < 10000);
    // The pool is whole again: a burst is served.
    await Promise.all(Array.from({ length: 50 }, () => selectOk(client)));
  } finally {
    await within(10000, 'shutdown', client.shutdown());
  }
});

test('an idempotent request cut by a dropped connection is retried per the retry policy and succeeds', { timeout: 60000 }, async () => {
  const client = newClient({ socketOptions: { readTimeout: 5000 } });
  await client.connect();
  try {
    await selectOk(client);
    const held = Array.from({ length: 10 }, () => client.execute(`${SELECT} /* stub:delay=300 */`, [ID], { prepare: true, isIdempotent: true }));
    await new Promise((r) => setTimeout(r, 50));
    const dropped = client.execute(`${SELECT} /* stub:drop */`, [ID], { prepare: true });
    const settled = await within(15000, 'idempotent requests on a dropped connection', Promise.allSettled([dropped, ...held]));
    assert.equal(settled[0].status, 'rejected');
    for (const [i, r] of settled.slice(1).entries()) {
      if (r.status === 'fulfilled') assert.equal(r.value.rows.length, 1);
      else assert.ok(r.reason instanceof errors.DriverError, `held request ${i}: ${r.reason && r.reason.stack}`);
    }
    await untilServed(client, 10000);
  } finally {
    await within(10000, 'shutdown', client.shutdown());
  }
});

for (const [fault, what] of [
  ['malformed', 'a RESULT frame whose rows metadata claims 2^31-1 columns'],
  ['bad-opcode', 'a frame with an opcode the protocol does not define'],
  ['oversized', 'a frame header declaring a 2 GiB body, 1 MiB of it sent, then the connection closed'],
]) {
  test(`${what} fails the request with a DriverError; the process holds no unbounded memory and serves the next request`, { timeout: 60000 }, async () => {
    const client = newClient({ socketOptions: { readTimeout: 3000 } });
    await client.connect();
    try {
      await selectOk(client);
      const rss0 = process.memoryUsage.rss();
      const t0 = Date.now();
      await within(10000, `the request answered with ${fault}`, assert.rejects(
        client.execute(`${SELECT} /* stub:${fault} */`, [ID], { prepare: true }),
        (e) => e instanceof errors.DriverError));
      assert.ok(Date.now() - t0 < 8000);
      const grown = process.memoryUsage.rss() - rss0;
      assert.ok(grown < 64 << 20, `resident memory grew by ${(grown / 1048576).toFixed(1)} MiB`);
      await untilServed(client, 10000);
    } finally {
      await within(10000, 'shutdown', client.shutdown());
    }
  });
}

test('an error the server sends arrives as a ResponseError with its code', { timeout: 30000 }, async () => {
  const client = newClient();
  try {
    await assert.rejects(client.execute(`${SELECT} /* stub:error=0x1001 */`, [ID], { prepare: true }),
      (e) => e instanceof errors.ResponseError && e.code === types.responseErrorCodes.overloaded);
  } finally {
    await within(10000, 'shutdown', client.shutdown());
  }
});

test('no promise rejection went unhandled during the faults', () => {
  assert.deepEqual(unhandled.map((e) => String(e && e.stack || e)), []);
});
