'use strict';
// execute / prepare / callbacks / named parameters / coalescing / batch / eachRow / stream.
const test = require('node:test');
const assert = require('node:assert/strict');
const { cql, setupKeyspace } = require('./helpers');
const { Uuid } = cql.types;

let env;
test.before(async () => {
  env = await setupKeyspace(__filename);
  await env.client.execute('CREATE TABLE kv (id uuid PRIMARY KEY, val int, name text)');
  await env.client.execute('CREATE TABLE counters (id int PRIMARY KEY, n counter)');
});
test.after(async () => { if (env) await env.drop(); });

test('prepared insert and select round-trip a row', async () => {
  const id = Uuid.random();
  await env.client.execute('INSERT INTO kv (id, val, name) VALUES (?, ?, ?)', [id, 7, 'seven'], { prepare: true });
  const rs = await env.client.execute('SELECT * FROM kv WHERE id = ?', [id], { prepare: true });
  assert.equal(rs.rowLength, 1);
  const row = rs.first();
  assert.ok(row.id.equals(id));
  assert.equal(row.val, 7);
  assert.equal(row.get('name'), 'seven');
  assert.deepEqual(row.keys().sort(), ['id', 'name', 'val']);
  assert.deepEqual(rs.columns.map((c) => c.name).sort(), ['id', 'name', 'val']);
  assert.equal([...rs].length, 1);
});

test('a prepared SELECT * sees columns added and dropped after it was prepared', async () => {
  // Guards the EXECUTE flags: protocol v4 has no result-metadata id, and Cassandra 5.0 keeps
  // a prepared statement across ALTER TABLE ADD, so a driver that set SKIP_METADATA and read
  // rows with the PREPARE answer's columns would silently miss 'b' here (it would see
  // ['id', 'a']), so EXECUTE asks for the metadata).
  await env.client.execute('CREATE TABLE altered (id int PRIMARY KEY, a int)');
  await env.client.execute('INSERT INTO altered (id, a) VALUES (1, 10)');
  const select = 'SELECT * FROM altered WHERE id = ?';
  let rs = await env.client.execute(select, [1], { prepare: true });
  assert.deepEqual(rs.columns.map((c) => c.name), ['id', 'a']);
  await env.client.execute('ALTER TABLE altered ADD b text');
  await env.client.execute("UPDATE altered SET b = 'bee' WHERE id = 1");
  rs = await env.client.execute(select, [1], { prepare: true });
  assert.deepEqual(rs.columns.map((c) => c.name), ['id', 'a', 'b']);
  assert.equal(rs.first().a, 10);
  assert.equal(rs.first().b, 'bee');
  // Rows are built by a constructor cached per column set (lib/result.js): the new set's.
  assert.deepEqual(Object.keys(rs.first()), ['id', 'a', 'b']);
  await env.client.execute('ALTER TABLE altered DROP a');
  rs = await env.client.execute(select, [1], { prepare: true });
  assert.deepEqual(rs.columns.map((c) => c.name), ['id', 'b']);
  assert.equal(rs.first().b, 'bee');
  assert.equal(rs.first().a, undefined);
  assert.deepEqual(rs.first().keys(), ['id', 'b']);
});

test('unprepared statements guess types and honour hints', async () => {
  const id = Uuid.random();
  await env.client.execute('INSERT INTO kv (id, name) VALUES (?, ?)', [id, 'guessed']);
  // A JS number is guessed as double; an int column needs a hint, as with cassandra-driver.
  await assert.rejects(env.client.execute('INSERT INTO kv (id, val) VALUES (?, ?)', [id, 5]),
    (e) => e instanceof cql.errors.ResponseError || e instanceof cql.errors.ArgumentError);
  await env.client.execute('INSERT INTO kv (id, val) VALUES (?, ?)', [id, 5], { hints: ['uuid', 'int'] });
  const rs = await env.client.execute(`SELECT val, name FROM kv WHERE id = ${id}`);
  assert.equal(rs.first().val, 5);
  assert.equal(rs.first().name, 'guessed');
});

test('named parameters bind by marker name', async () => {
  const id = Uuid.random();
  await env.client.execute('INSERT INTO kv (id, val) VALUES (:id, :val)', { id, val: 11 }, { prepare: true });
  const rs = await env.client.execute('SELECT val FROM kv WHERE id = :id', { ID: id });
  assert.equal(rs.first().val, 11);
});

test('callback form and promise form both work', async () => {
  const id = Uuid.random();
  await new Promise((resolve, reject) => env.client.execute('INSERT INTO kv (id, val) VALUES (?, ?)', [id, 1], { prepare: true },
    (err) => (err ? reject(err) : resolve())));
  const rs = await new Promise((resolve, reject) => env.client.execute('SELECT val FROM kv WHERE id = ?', [id], { prepare: true },
    (err, r) => (err ? reject(err) : resolve(r))));
  assert.equal(rs.first().val, 1);
  const err = await new Promise((resolve) => env.client.execute('SELEC 1', (e) => resolve(e)));
  assert.ok(err instanceof cql.errors.ResponseError);
});

test('many statements in one tick all succeed (coalesced run)', async () => {
  const ids = Array.from({ length: 300 }, () => Uuid.random());
  await Promise.all(ids.map((id, i) => env.client.execute('INSERT INTO kv (id, val) VALUES (?, ?)', [id, i], { prepare: true })));
  const back = await Promise.all(ids.map((id) => env.client.execute('SELECT val FROM kv WHERE id = ?', [id], { prepare: true })));
  assert.deepEqual(back.map((rs) => rs.first().val), ids.map((_, i) => i));
  // One bad statement in a coalesced run fails alone.
  const mixed = await Promise.allSettled([
    env.client.execute('SELECT val FROM kv WHERE id = ?', [ids[0]], { prepare: true }),
    env.client.execute('SELECT nope FROM kv'),
    env.client.execute('SELECT val FROM kv WHERE id = ?', [ids[1]], { prepare: true }),
  ]);
  assert.deepEqual(mixed.map((m) => m.status), ['fulfilled', 'rejected', 'fulfilled']);
});

test('batch: logged, prepared, unprepared and counter', async () => {
  const a = Uuid.random(), b = Uuid.random();
  await env.client.batch([
    { query: 'INSERT INTO kv (id, val) VALUES (?, ?)', params: [a, 1] },
    { query: 'INSERT INTO kv (id, val) VALUES (?, ?)', params: [b, 2] },
  ], { prepare: true });
  await env.client.batch([`UPDATE kv SET name = 'x' WHERE id = ${a}`], { logged: false });
  const rs = await env.client.execute('SELECT id, val, name FROM kv WHERE id IN ?', [[a, b]], { prepare: true });
  assert.equal(rs.rowLength, 2);
  await env.client.batch([{ query: 'UPDATE counters SET n = n + ? WHERE id = ?', params: [cql.types.Long.fromNumber(3), 1] }], { prepare: true, counter: true });
  const c = await env.client.execute('SELECT n FROM counters WHERE id = 1');
  assert.equal(c.first().n.toNumber(), 3);
});

test('eachRow and stream deliver every row', async () => {
  await env.client.execute('CREATE TABLE IF NOT EXISTS seq (p int, c int, PRIMARY KEY (p, c))');
  await Promise.all(Array.from({ length: 25 }, (_, i) => env.client.execute('INSERT INTO seq (p, c) VALUES (?, ?)', [1, i], { prepare: true })));
  const seen = [];
  await new Promise((resolve, reject) => env.client.eachRow('SELECT c FROM seq WHERE p = 1', [], { prepare: true, fetchSize: 10, autoPage: true },
    (n, row) => seen.push(row.c), (err) => (err ? reject(err) : resolve())));
  assert.deepEqual(seen, Array.from({ length: 25 }, (_, i) => i));
  const streamed = [];
  for await (const row of env.client.stream('SELECT c FROM seq WHERE p = 1', [], { prepare: true, fetchSize: 7 })) streamed.push(row.c);
  assert.equal(streamed.length, 25);
});

test('wasApplied reflects lightweight transactions', async () => {
  const id = Uuid.random();
  const first = await env.client.execute('INSERT INTO kv (id, val) VALUES (?, ?) IF NOT EXISTS', [id, 1], { prepare: true });
  assert.equal(first.wasApplied(), true);
  const second = await env.client.execute('INSERT INTO kv (id, val) VALUES (?, ?) IF NOT EXISTS', [id, 2], { prepare: true });
  assert.equal(second.wasApplied(), false);
});

test('executeConcurrent runs all rows in Rust and collects results', async () => {
  const rows = Array.from({ length: 2000 }, (_, i) => [Uuid.random(), i]);
  const g = await cql.concurrent.executeConcurrent(env.client, 'INSERT INTO kv (id, val) VALUES (?, ?)', rows, { concurrencyLevel: 50 });
  assert.equal(g.totalExecuted, 2000);
  assert.equal(g.errors.length, 0);
  const sel = await cql.concurrent.executeConcurrent(env.client, 'SELECT val FROM kv WHERE id = ?', rows.slice(0, 100).map((r) => [r[0]]), { collectResults: true });
  assert.deepEqual(sel.resultItems.map((rs) => rs.first().val), rows.slice(0, 100).map((r) => r[1]));
  const bad = rows.slice(0, 3).map((r) => [r[0], 'not an int']);
  await assert.rejects(cql.concurrent.executeConcurrent(env.client, 'INSERT INTO kv (id, val) VALUES (?, ?)', bad), cql.errors.ArgumentError);
  const many = await cql.concurrent.executeConcurrent(env.client, [
    { query: 'INSERT INTO kv (id, val) VALUES (?, ?)', params: [Uuid.random(), 1] },
    { query: 'SELECT * FROM missing_table WHERE id = ?', params: [Uuid.random()] },
  ], { raiseOnFirstError: false }).catch((e) => e);
  assert.ok(many instanceof Error || many.errors.length === 1);
});

test('the prepared cache stays within maxPrepared', async () => {
  const small = require('./helpers').newClient({ keyspace: env.ks, maxPrepared: 5 });
  for (let i = 0; i < 40; i++) {
    await small.execute(`SELECT val FROM kv WHERE id = ? AND val = ${i} ALLOW FILTERING`, [Uuid.random()], { prepare: true });
  }
  await Promise.all(Array.from({ length: 40 }, (_, i) => small.execute(`SELECT name FROM kv WHERE id = ? AND val = ${i} ALLOW FILTERING`, [Uuid.random()], { prepare: true })));
  assert.ok(small.getPreparedCount() <= 5, `native cache holds ${small.getPreparedCount()} statements`);
  await small.shutdown();
});

test('rs.info names the coordinator (the replica, at RF=1), the tried hosts and the consistency', async () => {
  const id = Uuid.random();
  const rs = await env.client.execute('INSERT INTO kv (id, val) VALUES (?, ?)', [id, 1],
    { prepare: true, consistency: cql.types.consistencies.quorum });
  // Prepared statements are routed by their partition key: the coordinator is the replica
  // the ring names (three nodes under the test command; one under WEIR_CQL_CONTACT_POINT).
  const replicas = env.client.metadata.getReplicas(env.ks, id.getBuffer()).map((h) => h.address);
  assert.deepEqual([rs.info.queriedHost], replicas);
  assert.deepEqual(rs.info.triedHosts, { [rs.info.queriedHost]: null });
  assert.equal(rs.info.achievedConsistency, cql.types.consistencies.quorum);
  assert.equal(rs.info.speculativeExecutions, 0);
  // The client's default consistency (localOne) when the query names none; unprepared too.
  const sel = await env.client.execute('SELECT * FROM kv WHERE id = ?', [id], { prepare: false });
  assert.equal(sel.info.achievedConsistency, cql.types.consistencies.localOne);
  assert.ok(env.client.hosts.get(sel.info.queriedHost), `${sel.info.queriedHost} is a known host`);
  const b = await env.client.batch([{ query: 'INSERT INTO kv (id, val) VALUES (?, ?)', params: [id, 2] }], { prepare: true });
  assert.ok(env.client.hosts.get(b.info.queriedHost), 'a batch names its coordinator too');
});
