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
