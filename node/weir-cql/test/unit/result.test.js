'use strict';
// Rows built by lib/result.js: one generated Row constructor per distinct column set
// (a generic per-cell keyed store costs ~1 us per row). These tests pin what a
// user can observe of a row, so the faster construction stays the same shape, and that a
// changed column set (ALTER TABLE) never reuses another set's constructor. No server.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Reader, readResult, ResultSet, Row } = require('../../lib/result');
const { Writer } = require('../../lib/codec');

const enc = { useBigIntAsLong: false, useBigIntAsVarint: false, useUndefinedAsUnset: true };
const INT = 0x09, TEXT = 0x0d;

function shortStr(w, s) { const b = Buffer.from(s, 'utf8'); w.u16le(b.length); w.bytes(b); }

/** A result in the native layout (src/wire.rs write_result_head + write_rows), int/text columns only. */
function resultBuffer(columns, rows) {
  return rawResultBuffer(columns, rows.map((row) => row.map((v, i) => {
    if (v === null) return null;
    if (columns[i][1] !== INT) return Buffer.from(v, 'utf8');
    const b = Buffer.alloc(4);
    b.writeInt32BE(v);
    return b;
  })));
}

function rowsOf(columns, rows) {
  const res = readResult(new Reader(resultBuffer(columns, rows), 0), enc);
  assert.ok(!res.error);
  return new ResultSet(res.fields).rows;
}

test('a row keeps the shape of a cassandra-driver Row: own columns in order, Row methods, hidden __columns', () => {
  // Names a generated constructor must not break: quotes, backslash, newline, U+2028, a
  // name shadowing a prototype member.
  const names = ['id', 'say "hi"', 'back\\slash', 'two\nlines', 'sep\u2028x', 'constructor'];
  const columns = names.map((n, i) => [n, i === 0 ? INT : TEXT]);
  const [a, b] = rowsOf(columns, [[1, 'q', 'b', 'n', 's', 'c'], [2, null, null, null, null, null]]);
  assert.ok(a instanceof Row);
  assert.equal(Object.getPrototypeOf(a).constructor.name, 'Row');
  assert.deepEqual(Object.keys(a), names);
  assert.deepEqual(a.keys(), names);
  assert.deepEqual(a.values(), [1, 'q', 'b', 'n', 's', 'c']);
  assert.equal(a.get(1), 'q');
  assert.equal(a.get('two\nlines'), 'n');
  assert.equal(a.constructor, 'c', 'a column named constructor is an own property, as before');
  const seen = [];
  a.forEach((v, k) => seen.push([k, v]));
  assert.deepEqual(seen.map(([k]) => k), names);
  assert.ok(!Object.keys(a).includes('__columns'));
  assert.deepEqual(a.__columns.map((c) => c.name), names);
  assert.equal(JSON.stringify(b), JSON.stringify(Object.fromEntries(names.map((n, i) => [n, i === 0 ? 2 : null]))));
  assert.equal(b.id, 2);
});

test('a changed column set gets its own Row constructor (no stale metadata after ALTER TABLE)', () => {
  const before = rowsOf([['id', INT], ['a', INT]], [[1, 10]])[0];
  const again = rowsOf([['id', INT], ['a', INT]], [[2, 20]])[0];
  // Same column bytes: the parse and the constructor are shared.
  assert.equal(Object.getPrototypeOf(again), Object.getPrototypeOf(before));
  // ADD b: a new column set.
  const added = rowsOf([['id', INT], ['a', INT], ['b', TEXT]], [[1, 10, 'bee']])[0];
  assert.deepEqual(Object.keys(added), ['id', 'a', 'b']);
  assert.equal(added.b, 'bee');
  assert.notEqual(Object.getPrototypeOf(added), Object.getPrototypeOf(before));
  // DROP a, same column count as the first set: names must not leak from it.
  const dropped = rowsOf([['id', INT], ['b', TEXT]], [[1, 'bee']])[0];
  assert.deepEqual(Object.keys(dropped), ['id', 'b']);
  assert.equal(dropped.a, undefined);
  assert.deepEqual(dropped.values(), [1, 'bee']);
  // A column of another type under the same name: decoded by the new type.
  const retyped = rowsOf([['id', INT], ['b', INT]], [[1, 7]])[0];
  assert.equal(retyped.b, 7);
});

test('column sets of equal byte length that differ in one byte never share parsed metadata', () => {
  // cachedSpecs checks the last set by its bytes first: a stale hit would name or decode
  // the columns of the previous answer.
  const a = rowsOf([['id', INT], ['x', INT]], [[1, 5]])[0];
  const b = rowsOf([['id', INT], ['y', INT]], [[1, 6]])[0];
  const c = rowsOf([['id', INT], ['y', TEXT]], [[1, 'z']])[0];
  assert.deepEqual(Object.keys(a), ['id', 'x']);
  assert.deepEqual(Object.keys(b), ['id', 'y']);
  assert.equal(b.y, 6);
  assert.equal(c.y, 'z');
  assert.equal(rowsOf([['id', INT], ['x', INT]], [[2, 7]])[0].x, 7);
});

/** A result with no rows whose head names `queried` and the tried hosts (flag 8). */
function hostsResult(queried, tried) {
  const w = new Writer(128);
  const str = (s) => { const b = Buffer.from(s, 'utf8'); w.u32le(b.length); w.bytes(b); };
  w.u8(0); w.u8(8); w.u16le(0);
  str(queried); w.u16le(1); w.u16le(0); w.u16le(tried.length);
  for (const [host, err] of tried) { str(host); if (err) { w.u8(1); str(err); } else w.u8(0); }
  const res = readResult(new Reader(w.buf.subarray(0, w.pos), 0), enc);
  assert.ok(!res.error);
  return res.fields.info;
}

test('hosts of equal length are read by their bytes: queriedHost and triedHosts follow each answer', () => {
  // The host strings are reused from earlier answers when their bytes match; hosts of the
  // same length in turn must still each come back as themselves.
  for (let i = 0; i < 3; i++) {
    const one = hostsResult('127.0.0.1:9042', [['127.0.0.1:9042', null]]);
    const two = hostsResult('127.0.0.2:9042', [['127.0.0.3:9042', 'timed out'], ['127.0.0.2:9042', null]]);
    assert.equal(one.queriedHost, '127.0.0.1:9042');
    assert.deepEqual(Object.keys(one.triedHosts), ['127.0.0.1:9042']);
    assert.equal(two.queriedHost, '127.0.0.2:9042');
    assert.deepEqual(Object.keys(two.triedHosts), ['127.0.0.3:9042', '127.0.0.2:9042']);
    assert.equal(two.triedHosts['127.0.0.3:9042'].message, 'timed out');
    assert.equal(two.triedHosts['127.0.0.2:9042'], null);
  }
  // More distinct hosts than the reuse list holds: still each itself.
  for (let n = 1; n <= 40; n++) assert.equal(hostsResult(`10.0.0.${n}:9042`, []).queriedHost, `10.0.0.${n}:9042`);
});

/** A result whose cells are given as raw bytes (null: a null cell), columns as [name, type code]. */
function rawResultBuffer(columns, rows) {
  const specs = new Writer(64);
  specs.u16le(columns.length);
  for (const [name, code] of columns) { shortStr(specs, 'ks'); shortStr(specs, 't'); shortStr(specs, name); specs.u16le(code); }
  const cells = new Writer(64);
  for (const row of rows) {
    for (const cell of row) {
      if (cell === null) { cells.i32be(-1); continue; }
      cells.i32be(cell.length); cells.bytes(cell);
    }
  }
  const w = new Writer(128);
  w.u8(0); w.u8(2); w.u16le(0);
  w.u32le(specs.pos); w.bytes(specs.buf.subarray(0, specs.pos));
  w.i32le(rows.length);
  w.u32le(cells.pos); w.bytes(cells.buf.subarray(0, cells.pos));
  return w.buf.subarray(0, w.pos);
}

test('cells of the types decoded inline come out as codec.decode makes them, odd lengths and nulls included', () => {
  const { decode } = require('../../lib/codec');
  const types = require('../../lib/types');
  const UUID = 0x0c, TIMEUUID = 0x0f, BOOLEAN = 0x04, BIGINT = 0x02;
  const columns = [['i', INT], ['u', UUID], ['t', TIMEUUID], ['b', BOOLEAN], ['s', TEXT], ['l', BIGINT]];
  const bytes = (...xs) => Buffer.from(xs);
  const u = types.Uuid.random().buffer;
  const tu = types.TimeUuid.now().buffer;
  const l = Buffer.alloc(8); l.writeBigInt64BE(-5n);
  const rows = [
    [bytes(0xff, 0xff, 0xff, 0xfe), u, tu, bytes(1), Buffer.from('héllo'), l],
    [bytes(0x7f, 0xff, 0xff, 0xff), u, tu, bytes(0), Buffer.alloc(0), l],
    [Buffer.alloc(0), null, null, Buffer.alloc(0), null, Buffer.alloc(0)],
    [null, null, null, null, null, null],
  ];
  const buf = rawResultBuffer(columns, rows);
  const res = readResult(new Reader(buf, 0), enc);
  const got = new ResultSet(res.fields).rows;
  rows.forEach((row, r) => {
    row.forEach((cell, c) => {
      const want = cell === null ? null : decode(cell, 0, cell.length, { code: columns[c][1], info: null }, enc);
      assert.deepEqual(got[r][columns[c][0]], want, `row ${r} column ${columns[c][0]}`);
    });
  });
  assert.equal(got[0].i, -2);
  assert.ok(got[0].u instanceof types.Uuid && !(got[0].u instanceof types.TimeUuid));
  assert.ok(got[0].t instanceof types.TimeUuid);
  assert.ok(Buffer.isBuffer(got[0].u.buffer) && got[0].u.buffer.length === 16);
  assert.equal(got[0].u.toString(), new types.Uuid(u).toString());
  assert.equal(got[0].t.toString(), new types.TimeUuid(tu).toString());
  // A uuid cell whose length is not 16 bytes fails as decode fails on it.
  const bad = rawResultBuffer([['u', UUID]], [[bytes(1, 2, 3)]]);
  assert.throws(() => new ResultSet(readResult(new Reader(bad, 0), enc).fields).rows, TypeError);
});

test('a result of many columns decodes every column', () => {
  const columns = Array.from({ length: 300 }, (_, i) => [`c${i}`, INT]);
  const [row] = rowsOf(columns, [columns.map((_, i) => i)]);
  assert.equal(Object.keys(row).length, 300);
  assert.equal(row.c0, 0);
  assert.equal(row.c299, 299);
});

test('a cell that claims more bytes than the result holds throws a RangeError', () => {
  for (const code of [INT, 0x0c, TEXT]) {
    const buf = rawResultBuffer([['x', code]], [[Buffer.alloc(code === INT ? 4 : 16)]]);
    // The last cell's length says 4 (or 16) but the buffer ends two bytes early.
    const cut = Buffer.from(buf.subarray(0, buf.length - 2));
    const res = readResult(new Reader(cut, 0), enc);
    assert.throws(() => new ResultSet(res.fields).rows, RangeError, `type 0x${code.toString(16)}`);
  }
});
