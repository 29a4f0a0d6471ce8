'use strict';
// Errors are cassandra-driver's classes with the protocol codes and fields, never strings.
const test = require('node:test');
const assert = require('node:assert/strict');
const { cql, setupKeyspace, newClient } = require('./helpers');
const { errors, types } = cql;
const codes = types.responseErrorCodes;

let env;
test.before(async () => {
  env = await setupKeyspace(__filename);
  await env.client.execute('CREATE TABLE t (id int PRIMARY KEY, val int)');
});
test.after(async () => { if (env) await env.drop(); });

async function rejectsWith(promise, check) {
  let err = null;
  try { await promise; } catch (e) { err = e; }
  assert.ok(err, 'expected a rejection');
  assert.ok(err instanceof Error, `not an Error: ${err}`);
  check(err);
  return err;
}

test('syntax error -> ResponseError syntaxError', async () => {
  await rejectsWith(env.client.execute('SELEKT * FROM t'), (e) => {
    assert.ok(e instanceof errors.ResponseError);
    assert.equal(e.code, codes.syntaxError);
  });
});

test('unknown table -> ResponseError invalid', async () => {
  await rejectsWith(env.client.execute('SELECT * FROM no_such_table'), (e) => {
    assert.ok(e instanceof errors.ResponseError);
    assert.equal(e.code, codes.invalid);
  });
});

test('existing table -> ResponseError alreadyExists naming keyspace and table', async () => {
  await rejectsWith(env.client.execute('CREATE TABLE t (id int PRIMARY KEY)'), (e) => {
    assert.equal(e.code, codes.alreadyExists);
    assert.equal(e.keyspace, env.ks);
    assert.equal(e.table, 't');
  });
});

test('not enough replicas -> ResponseError unavailableException with counts', async () => {
  // RF=5 is more than the test command's three nodes (or one external node) can hold.
  const ks = `${env.ks}_rf5`;
  await env.client.execute(`CREATE KEYSPACE ${ks} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 5}`);
  try {
    await env.client.execute(`CREATE TABLE ${ks}.t (id int PRIMARY KEY)`);
    await rejectsWith(env.client.execute(`INSERT INTO ${ks}.t (id) VALUES (1)`, [], { consistency: types.consistencies.all }), (e) => {
      assert.equal(e.code, codes.unavailableException);
      assert.equal(e.required, 5);
      assert.ok(e.alive >= 1 && e.alive < 5, `alive ${e.alive}`);
      assert.equal(e.consistencies, types.consistencies.all);
    });
  } finally {
    await env.client.execute(`DROP KEYSPACE ${ks}`);
  }
});

test('wrong parameter type -> ArgumentError naming parameter and type', async () => {
  await rejectsWith(env.client.execute('INSERT INTO t (id, val) VALUES (?, ?)', [1, 'one'], { prepare: true }), (e) => {
    assert.ok(e instanceof errors.ArgumentError);
    assert.match(e.message, /'val'/);
    assert.match(e.message, /expected int/);
  });
});

test('missing parameter -> ArgumentError naming it', async () => {
  await rejectsWith(env.client.execute('INSERT INTO t (id, val) VALUES (?, ?)', [1], { prepare: true }), (e) => {
    assert.ok(e instanceof errors.ArgumentError);
    assert.match(e.message, /Missing parameter 'val'/);
  });
  await rejectsWith(env.client.execute('INSERT INTO t (id, val) VALUES (:id, :val)', { id: 1 }, { prepare: true }), (e) => {
    assert.ok(e instanceof errors.ArgumentError);
    assert.match(e.message, /'val'/);
  });
});

test('unreachable hosts -> NoHostAvailableError with innerErrors per host', async () => {
  const c = new cql.Client({ contactPoints: ['127.0.0.1:1', '127.0.0.1:2'], localDataCenter: 'datacenter1', socketOptions: { connectTimeout: 2000 } });
  await rejectsWith(c.connect(), (e) => {
    assert.ok(e instanceof errors.NoHostAvailableError);
    assert.deepEqual(Object.keys(e.innerErrors).sort(), ['127.0.0.1:1', '127.0.0.1:2']);
    assert.match(String(e.innerErrors['127.0.0.1:1']), /refused/i);
  });
  await rejectsWith(c.execute('SELECT * FROM system.local'), (e) => assert.ok(e instanceof errors.NoHostAvailableError));
});

test('missing keyspace at connect -> ResponseError invalid', async () => {
  const c = newClient({ keyspace: 'no_such_keyspace_weircql' });
  await rejectsWith(c.connect(), (e) => {
    assert.ok(e instanceof errors.ResponseError);
    assert.equal(e.code, codes.invalid);
  });
});

// The reply must be unable to arrive before the timeout: a 1 ms readTimeout against a fast
// read races the reply and loses under load. The server holds this answer for
// HOLD_MS of wall time (a Java UDF spinning on System.nanoTime: the UDF sandbox has no
// sleep), 10x the timeout, so only a client-side timeout can end the request early; if
// client-side timeouts stopped working, the request would answer and the test would fail.
test('client-side timeout -> OperationTimedOutError', async () => {
  const HOLD_MS = 1000;
  const READ_TIMEOUT_MS = 100;
  await env.client.execute(`CREATE OR REPLACE FUNCTION ${env.ks}.hold_ms(ms int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java
    AS 'long end = System.nanoTime() + ms * 1000000L; long spins = 0; while (System.nanoTime() < end) spins++; return (int) (spins & 1);'`);
  const slow = `SELECT ${env.ks}.hold_ms(${HOLD_MS}) FROM system.local`;
  await rejectsWith(env.client.execute(slow, [], { readTimeout: READ_TIMEOUT_MS }), (e) => {
    assert.ok(e instanceof errors.OperationTimedOutError, `${e.name}: ${e.message}`);
  });
  // The control: without the short timeout the same request answers (the UDF runs and the
  // rejection above came from the client's timer, not from a failing query).
  const rs = await env.client.execute(slow, [], { readTimeout: 20000 });
  assert.equal(rs.rows.length, 1);
});
