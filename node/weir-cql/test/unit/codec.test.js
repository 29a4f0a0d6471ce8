'use strict';
// Encoder/decoder unit tests: byte layouts from the CQL v4/v5 spec, no server needed.
const test = require('node:test');
const assert = require('node:assert/strict');
const { types, codec, errors } = require('../..');
const { parseTypeName } = require('../../lib/typeparse');
const { Writer, writeParam } = require('../../lib/codec');

const T = parseTypeName;
const hex = (v, t) => codec.encode(v, T(t)).toString('hex');
const roundTrip = (v, t, opts) => { const b = codec.encode(v, T(t), opts); return codec.decode(b, 0, b.length, T(t), opts); };

test('fixed-width numbers are big-endian', () => {
  assert.equal(hex(1, 'int'), '00000001');
  assert.equal(hex(-2, 'int'), 'fffffffe');
  assert.equal(hex(-1, 'smallint'), 'ffff');
  assert.equal(hex(-128, 'tinyint'), '80');
  assert.equal(hex(1.5, 'double'), '3ff8000000000000');
  assert.equal(hex(1.5, 'float'), '3fc00000');
  assert.equal(hex(true, 'boolean'), '01');
  assert.equal(hex(types.Long.fromString('-1'), 'bigint'), 'ffffffffffffffff');
  assert.equal(hex(9007199254740993n, 'bigint'), '0020000000000001');
});

test('varint uses minimal two\'s complement', () => {
  const cases = [[0n, '00'], [1n, '01'], [127n, '7f'], [128n, '0080'], [-1n, 'ff'], [-128n, '80'],
    [-129n, 'ff7f'], [255n, '00ff'], [-256n, 'ff00'], [2n ** 64n, '010000000000000000']];
  for (const [v, h] of cases) {
    assert.equal(hex(new types.Integer(v), 'varint'), h, `varint ${v}`);
    assert.equal(roundTrip(new types.Integer(v), 'varint').value, v);
  }
});

test('decimal is scale then unscaled varint', () => {
  assert.equal(hex(types.BigDecimal.fromString('1.50'), 'decimal'), '00000002' + '0096');
  assert.equal(hex(types.BigDecimal.fromString('-0.001'), 'decimal'), '00000003ff');
  assert.equal(roundTrip(types.BigDecimal.fromString('123456789012345678901234.5678'), 'decimal').toString(), '123456789012345678901234.5678');
  assert.equal(types.BigDecimal.fromString('1e3').toString(), '1000');
});

test('uuid, timeuuid and inet', () => {
  const u = types.Uuid.fromString('01234567-89ab-cdef-0123-456789abcdef');
  assert.equal(hex(u, 'uuid'), '0123456789abcdef0123456789abcdef');
  assert.equal(roundTrip(u, 'uuid').toString(), u.toString());
  const d = new Date('2024-02-03T04:05:06.789Z');
  const t = types.TimeUuid.fromDate(d, 0);
  assert.equal(t.getDate().getTime(), d.getTime());
  assert.equal(t.buffer[6] >> 4, 1, 'version 1');
  assert.ok(roundTrip(t, 'timeuuid') instanceof types.TimeUuid);
  assert.equal(hex('10.0.0.1', 'inet'), '0a000001');
  assert.equal(roundTrip('::1', 'inet').toString(), '::1');
  assert.equal(roundTrip('2001:db8::ff00:42:8329', 'inet').toString(), '2001:db8::ff00:42:8329');
});

test('date, time, timestamp and duration', () => {
  assert.equal(hex(types.LocalDate.fromString('1970-01-01'), 'date'), '80000000');
  assert.equal(hex(types.LocalDate.fromString('1970-01-02'), 'date'), '80000001');
  assert.equal(roundTrip(types.LocalDate.fromString('-0044-03-15'), 'date').toString(), '-0044-03-15');
  assert.equal(roundTrip(types.LocalDate.fromString('9999-12-31'), 'date').toString(), '9999-12-31');
  assert.equal(hex(types.LocalTime.fromString('00:00:01'), 'time'), '000000003b9aca00');
  assert.equal(roundTrip(types.LocalTime.fromString('23:59:59.123456789'), 'time').toString(), '23:59:59.123456789');
  assert.equal(hex(new Date(1), 'timestamp'), '0000000000000001');
  // Duration: zig-zag vints for months, days, nanoseconds.
  assert.equal(hex(new types.Duration(1, 2, 3), 'duration'), '020406');
  assert.equal(hex(new types.Duration(-1, 0, 0), 'duration'), '010000');
  assert.equal(hex(new types.Duration(0, 0, 1000), 'duration'), '0000' + '87d0');
  const big = types.Duration.fromString('1y2mo3w4d5h6m7s8ms9us10ns');
  assert.ok(roundTrip(big, 'duration').equals(big));
  assert.equal(big.toString(), '1y2mo25d5h6m7s8ms9us10ns');
});

test('collections, tuples, UDTs and vectors', () => {
  assert.equal(hex([1, 2], 'list<int>'), '00000002' + '0000000400000001' + '0000000400000002');
  assert.deepEqual(roundTrip(['a', 'b'], 'set<text>'), ['a', 'b']);
  assert.deepEqual(roundTrip({ a: 1, b: 2 }, 'map<text, int>'), { a: 1, b: 2 });
  assert.deepEqual(roundTrip(new Map([[1, 'x']]), 'map<int, text>', { map: Map }), new Map([[1, 'x']]));
  const tup = roundTrip(new types.Tuple(1, 'x', null), 'tuple<int, text, int>');
  assert.deepEqual(tup.values(), [1, 'x', null]);
  const udt = { code: 0x30, info: { keyspace: 'k', name: 'u', fields: [{ name: 'a', type: T('int') }, { name: 'b', type: T('text') }] } };
  const b = codec.encode({ a: 7, b: null }, udt);
  assert.equal(b.toString('hex'), '0000000400000007' + 'ffffffff');
  assert.deepEqual(codec.decode(b, 0, b.length, udt), { a: 7, b: null });
  assert.equal(hex(new types.Vector([1, 2, 3]), 'vector<float, 3>'), '3f800000' + '40000000' + '40400000');
  assert.deepEqual(roundTrip(['ab', 'c'], 'vector<text, 2>').elements, ['ab', 'c']);
  assert.equal(hex(['ab', 'c'], 'vector<text, 2>'), '02' + '6162' + '01' + '63');
});

test('null, undefined and unset are distinct cells', () => {
  const w = new Writer(16);
  writeParam(w, null, T('int'));
  writeParam(w, types.unset, T('int'));
  writeParam(w, undefined, T('int'));
  writeParam(w, undefined, T('int'), null, { useUndefinedAsUnset: false });
  const b = w.done();
  assert.deepEqual([0, 4, 8, 12].map((o) => b.readInt32LE(o)), [-1, -2, -2, -1]);
});

test('a wrong JS type names the parameter and the expected CQL type', () => {
  const w = new Writer(16);
  assert.throws(() => writeParam(w, 'abc', T('int'), { name: 'val', index: 1 }), (e) => {
    assert.ok(e instanceof errors.ArgumentError);
    assert.match(e.message, /parameter 'val' \(index 1\): expected int, got string 'abc'/);
    return true;
  });
  assert.throws(() => codec.encode(2 ** 40, T('int')), errors.ArgumentError);
  assert.throws(() => codec.encode('not-a-uuid', T('uuid')), errors.ArgumentError);
  assert.throws(() => codec.encode([1, 2], T('vector<float, 3>')), errors.ArgumentError);
});

test('type guessing follows cassandra-driver', () => {
  const g = (v) => codec.guessType(v).code;
  assert.equal(g('x'), 0x0d);
  assert.equal(g(1), 0x07);
  assert.equal(g(types.Long.fromNumber(1)), 0x02);
  assert.equal(g(10n), 0x02);
  assert.equal(g(types.Uuid.random()), 0x0c);
  assert.equal(g(types.TimeUuid.now()), 0x0f);
  assert.equal(g(new Date()), 0x0b);
  assert.equal(g(Buffer.alloc(1)), 0x03);
  assert.equal(g([1]), 0x20);
  assert.equal(codec.guessType({}), null);
});

test('useBigIntAsLong decodes bigint columns to BigInt', () => {
  const b = codec.encode(-5n, T('bigint'));
  assert.equal(codec.decode(b, 0, 8, T('bigint'), { useBigIntAsLong: true }), -5n);
  assert.ok(types.Long.isLong(codec.decode(b, 0, 8, T('bigint'))));
});
