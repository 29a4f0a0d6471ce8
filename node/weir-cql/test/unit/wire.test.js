'use strict';
// The request format between the JS encoder (lib/request.js) and the Rust decoder
// (src/wire.rs): what JS writes, Rust parses into its request structure and writes back
// byte for byte (a field the decoder dropped or misread would change the bytes), and a
// malformed buffer is an error naming the offset, never a crash. No server needed.
const test = require('node:test');
const assert = require('node:assert/strict');
const req = require('../../lib/request');
const { toType } = require('../../lib/typeparse');
const native = require('../../lib/native/native.js');
const cql = require('../..');

const enc = { useBigIntAsLong: false, useBigIntAsVarint: false, useUndefinedAsUnset: true };
const variables = [
  { name: 'id', type: toType('int') },
  { name: 'name', type: toType('text') },
  { name: 'tags', type: toType('map<text, frozen<list<bigint>>>') },
  { name: 'u', type: toType('uuid') },
  { name: 'gone', type: toType('int') },
  { name: 'nothing', type: toType('double') },
];
const values = [42, 'zażółć 🦀', { a: [cql.types.Long.fromNumber(1), cql.types.Long.fromString('-9007199254740993')] },
  cql.types.Uuid.random(), null, undefined];

/** Every request shape and every header field, options at non-default values. */
function sample() {
  const w = new req.Writer(64);
  w.u32le(4);
  req.writeHeader(w, req.KIND_PREPARED, {
    fetchSize: 123, consistency: cql.types.consistencies.localQuorum,
    serialConsistency: cql.types.consistencies.localSerial, readTimeout: 1500,
    timestamp: cql.types.Long.fromString('1732490000123456'), pageState: Buffer.from('00ff10', 'hex'),
    traceQuery: true, isIdempotent: true,
  }, true);
  w.u32le(7);
  req.writePreparedValues(w, values, variables, enc);
  req.writeHeader(w, req.KIND_QUERY, { fetchSize: 5000, paged: false, timestamp: 5n }, false);
  w.str('SELECT * FROM ks.t WHERE k = ? AND name = ?');
  req.writeGuessedValues(w, ['κλειδί', 2.5, true, 12345678901234n], null, enc);
  req.writeHeader(w, req.KIND_PREPARED, {}, false);
  w.u32le(0xfffffff0);
  req.writePreparedValues(w, [], [], enc);
  req.writeHeader(w, req.KIND_BATCH, { consistency: cql.types.consistencies.all }, false);
  w.u8(1);
  w.u16le(2);
  w.u8(0); w.u32le(9); req.writePreparedValues(w, { ID: 1, Name: 'n', tags: null, u: null, gone: 3, nothing: 1.5 }, variables, enc);
  w.u8(1); w.str('INSERT INTO t (a) VALUES (?)'); req.writeGuessedValues(w, ['x'], ['ascii'], enc);
  return Buffer.from(w.done());
}

test('JS-encoded requests come back from the Rust decoder byte for byte', () => {
  const buf = sample();
  const echoed = native.wireEchoRequests(buf);
  assert.equal(echoed.toString('hex'), buf.toString('hex'));
});

test('every truncation of a request buffer is an error naming the offset, never a crash', () => {
  const buf = sample();
  for (let len = 0; len < buf.length; len++) {
    assert.throws(() => native.wireEchoRequests(buf.subarray(0, len)), /truncated|invalid|unknown|trailing/,
      `prefix of ${len} bytes`);
  }
  assert.throws(() => native.wireEchoRequests(Buffer.concat([buf, Buffer.from([0])])), /1 trailing bytes after 4 requests/);
});

test('malformed fields are named: cell length, request kind, batch item kind', () => {
  const w = new req.Writer(64);
  w.u32le(1);
  req.writeHeader(w, req.KIND_PREPARED, {}, false);
  w.u32le(1);
  w.u16le(1);
  const at = w.pos;
  w.i32le(-3);
  assert.throws(() => native.wireEchoRequests(Buffer.from(w.done())), new RegExp(`invalid cell length -3 at offset ${at}`));
  const bad = Buffer.from(w.done());
  bad[4] = 9;
  assert.throws(() => native.wireEchoRequests(bad), /unknown request kind 9/);
  const b = new req.Writer(64);
  b.u32le(1);
  req.writeHeader(b, req.KIND_BATCH, {}, false);
  b.u8(0); b.u16le(1); b.u8(5);
  assert.throws(() => native.wireEchoRequests(Buffer.from(b.done())), /unknown batch item kind 5/);
});

// And back: the Rust result writer (head, column specs of every type kind, rows) read by
// the JS decoder. The cells are written by the JS codec, so values make the full circle.
const { Reader, readResult, ResultSet } = require('../../lib/result');

test('a result written by Rust decodes in JS: flags, paging state, tracing id, warnings, specs, rows', () => {
  const columns = ['int', 'text', 'map<text, frozen<list<bigint>>>', 'set<uuid>', 'tuple<int, text>',
    'frozen<address>', 'vector<float, 3>'];
  const udt = { code: 0x30, info: { keyspace: 'ks', name: 'address', fields: [
    { name: 'street', type: toType('text') }, { name: 'zip', type: toType('int') }] } };
  const types = columns.map((t) => (t === 'frozen<address>' ? udt : toType(t)));
  const u1 = cql.types.Uuid.random(), u2 = cql.types.Uuid.random();
  const rows = [
    [7, 'ünï', { a: [cql.types.Long.fromNumber(-1), cql.types.Long.fromString('9007199254740993')] }, [u1, u2],
      new cql.types.Tuple(1, 'x'), { street: 'Main', zip: 12345 }, [1.5, -2, 0.25]],
    [-8, null, null, null, null, null, null],
  ];
  const w = new req.Writer(256);
  w.u16le(rows.length * columns.length);
  for (const row of rows) row.forEach((v, i) => require('../../lib/codec').writeParam(w, v, types[i], { index: i }, enc));
  const paging = Buffer.from('0a0b0c', 'hex');
  const trace = cql.types.Uuid.random().getBuffer();
  const out = native.wireSampleResult(paging, trace, ['careful', 'ω'], rows.length, Buffer.from(w.done()), '127.0.0.2:9042');
  const r = new Reader(out, 0);
  const res = readResult(r, enc);
  assert.equal(r.pos, out.length, 'the decoder consumed the whole result');
  assert.ok(!res.error);
  const rs = new ResultSet(res.fields);
  assert.deepEqual(Buffer.from(rs.pageState, 'hex'), paging);
  assert.deepEqual(rs.info.traceId.getBuffer(), trace);
  assert.deepEqual(rs.info.warnings, ['careful', 'ω']);
  // The hosts part, from the attempt log: the queried host, the failed attempt before it
  // with its error, and ONE (the retry's choice) achieved where QUORUM was asked.
  assert.equal(rs.info.queriedHost, '127.0.0.2:9042');
  assert.deepEqual(Object.keys(rs.info.triedHosts), ['127.0.0.9:9042', '127.0.0.2:9042']);
  assert.match(rs.info.triedHosts['127.0.0.9:9042'].message, /stream/i);
  assert.equal(rs.info.triedHosts['127.0.0.2:9042'], null);
  assert.equal(rs.info.achievedConsistency, cql.types.consistencies.one);
  assert.equal(rs.info.speculativeExecutions, 1);
  assert.deepEqual(rs.columns.map((c) => c.name), ['id', 'name', 'tags', 'ids', 'pair', 'addr', 'v']);
  // The protocol sends text columns as varchar (0x0d), like Cassandra does.
  assert.deepEqual(rs.columns[2].type, { code: 0x21, info: [{ code: 0x0d, info: null }, { code: 0x20, info: { code: 0x02, info: null } }] });
  assert.equal(rs.columns[5].type.code, 0x30);
  assert.deepEqual(rs.columns[5].type.info.fields.map((f) => f.name), ['street', 'zip']);
  assert.equal(rs.rowLength, 2);
  const [a, b] = rs.rows;
  assert.equal(a.id, 7);
  assert.equal(a.name, 'ünï');
  assert.equal(a.tags.a[1].toString(), '9007199254740993');
  assert.equal(a.tags.a[0].toString(), '-1');
  assert.deepEqual(a.ids.map(String).sort(), [String(u1), String(u2)].sort());
  assert.equal(a.pair.get(0), 1);
  assert.equal(a.pair.get(1), 'x');
  assert.deepEqual({ ...a.addr }, { street: 'Main', zip: 12345 });
  assert.deepEqual([...a.v], [1.5, -2, 0.25]);
  assert.equal(b.id, -8);
  for (const k of ['name', 'tags', 'ids', 'pair', 'addr', 'v']) assert.equal(b[k], null, k);
});

test('the result writer refuses cells that do not fill the rows', () => {
  const w = new req.Writer(16);
  w.u16le(1); w.i32le(-1);
  assert.throws(() => native.wireSampleResult(null, null, [], 1, Buffer.from(w.done())), /1 cells given for 1 rows of 7 columns/);
});

// The host names of `info` come from a per-thread cache of address texts (src/history.rs,
// 64 entries): more addresses than it holds, then the first ones again after eviction, must
// each come back as their own text.
test('queriedHost and triedHosts stay right past the address-text cache: 150 hosts, then again', () => {
  const hostOf = (addr) => {
    const out = native.wireSampleResult(null, null, [], 0, Buffer.from([0, 0]), addr);
    const rs = new ResultSet(readResult(new Reader(out, 0), enc).fields);
    return [rs.info.queriedHost, Object.keys(rs.info.triedHosts)];
  };
  const addrs = [];
  for (let n = 0; n < 150; n++) addrs.push(`10.${n >> 8}.${n & 255}.${1 + (n % 7)}:${9000 + n}`);
  for (const pass of [1, 2]) {
    for (const a of addrs) assert.deepEqual(hostOf(a), [a, ['127.0.0.9:9042', a]], `pass ${pass}, ${a}`);
  }
});
