'use strict';
// Paging: fetchSize, manual nextPage, page state handed to a different Client (Buffer and
// hex), transparent async iteration across pages, and unpaged execution.
const test = require('node:test');
const assert = require('node:assert/strict');
const { setupKeyspace, newClient } = require('./helpers');

let env;
const N = 25;
test.before(async () => {
  env = await setupKeyspace(__filename);
  await env.client.execute('CREATE TABLE items (p int, c int, v text, PRIMARY KEY (p, c))');
  await Promise.all(Array.from({ length: N }, (_, i) => env.client.execute('INSERT INTO items (p, c, v) VALUES (?, ?, ?)', [1, i, `v${i}`], { prepare: true })));
});
test.after(async () => { if (env) await env.drop(); });

const Q = 'SELECT c FROM items WHERE p = ?';

test('fetchSize limits a page and nextPage continues', async () => {
  const first = await env.client.execute(Q, [1], { prepare: true, fetchSize: 10 });
  assert.equal(first.rowLength, 10);
  assert.equal(typeof first.pageState, 'string');
  assert.ok(Buffer.isBuffer(first.rawPageState));
  const second = await first.nextPage();
  assert.deepEqual(second.rows.map((r) => r.c), [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
  const third = await second.nextPage();
  assert.equal(third.rowLength, 5);
  assert.equal(third.pageState, null);
  assert.equal(third.nextPage, undefined);
});

test('a different Client resumes from a hex or Buffer page state', async () => {
  const first = await env.client.execute(Q, [1], { prepare: true, fetchSize: 20 });
  const other = newClient({ keyspace: env.ks });
  try {
    const fromHex = await other.execute(Q, [1], { prepare: true, fetchSize: 20, pageState: first.pageState });
    assert.deepEqual(fromHex.rows.map((r) => r.c), [20, 21, 22, 23, 24]);
    const fromBuf = await other.execute(Q, [1], { prepare: true, fetchSize: 20, pageState: first.rawPageState });
    assert.equal(fromBuf.rowLength, 5);
    // Unprepared statements page the same way.
    const up = await env.client.execute('SELECT c FROM items WHERE p = 1', [], { fetchSize: 24 });
    const rest = await other.execute('SELECT c FROM items WHERE p = 1', [], { fetchSize: 24, pageState: up.pageState });
    assert.deepEqual(rest.rows.map((r) => r.c), [24]);
  } finally {
    await other.shutdown();
  }
});

test('async iteration walks every page; sync iteration only the current one', async () => {
  const rs = await env.client.execute(Q, [1], { prepare: true, fetchSize: 4 });
  assert.equal([...rs].length, 4);
  const all = [];
  for await (const row of rs) all.push(row.c);
  assert.deepEqual(all, Array.from({ length: N }, (_, i) => i));
});

test('unpaged execution returns every row at once', async () => {
  const rs = await env.client.execute(Q, [1], { prepare: true, fetchSize: 3, paged: false });
  assert.equal(rs.rowLength, N);
  assert.equal(rs.pageState, null);
});

test('eachRow without autoPage exposes nextPage', async () => {
  const seen = [];
  await new Promise((resolve, reject) => {
    let pages = 0;
    env.client.eachRow(Q, [1], { prepare: true, fetchSize: 10 }, (n, row) => seen.push(row.c), (err, rs) => {
      if (err) return reject(err);
      pages++;
      if (rs.nextPage && pages < 3) return rs.nextPage();
      return resolve();
    });
  });
  assert.equal(seen.length, N);
});
