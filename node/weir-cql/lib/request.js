'use strict';
// Encodes requests into the native request format (see src/wire.rs) and maps
// cassandra-driver query options onto its header fields.

// The module's own binding of Buffer: the global one is an accessor (see lib/types.js).
const { Buffer } = require('node:buffer');
const { Writer, writeParam, guessType } = require('./codec');
const { toType } = require('./typeparse');
const { ArgumentError } = require('./errors');
const { Long } = require('./types');
// Module scope, not inside readAnswer: a require() per answer cost ~0.5 us (Module._load).
const { Reader, readResult } = require('./result');

const FLAG_PAGED = 1, FLAG_PAGING_STATE = 2, FLAG_SKIP_ROWS = 4, FLAG_TIMESTAMP = 8,
  FLAG_TRACING = 16, FLAG_IDEMPOTENT = 32;
const KIND_PREPARED = 0, KIND_QUERY = 1, KIND_BATCH = 2;

function pageStateBuffer(ps) {
  if (ps === undefined || ps === null) return null;
  if (Buffer.isBuffer(ps)) return ps;
  if (typeof ps === 'string' && /^([0-9a-fA-F]{2})*$/.test(ps)) return Buffer.from(ps, 'hex');
  throw new ArgumentError(`Invalid pageState: expected a Buffer or a hex string, got ${typeof ps}`);
}

/** Writes the common header; `o` is the merged execution options. */
function writeHeader(w, kind, o, skipRows) {
  let flags = 0;
  const paged = o.paged !== false && kind !== KIND_BATCH;
  if (paged) flags |= FLAG_PAGED;
  const ps = paged ? pageStateBuffer(o.pageState) : null;
  if (ps) flags |= FLAG_PAGING_STATE;
  if (skipRows) flags |= FLAG_SKIP_ROWS;
  const ts = o.timestamp;
  if (ts !== undefined && ts !== null) flags |= FLAG_TIMESTAMP;
  if (o.traceQuery) flags |= FLAG_TRACING;
  if (o.isIdempotent) flags |= FLAG_IDEMPOTENT;
  w.u8(kind);
  w.u8(flags);
  w.i32le(paged ? (o.fetchSize | 0) : 0);
  w.u16le(o.consistency === undefined || o.consistency === null ? 0xffff : o.consistency);
  w.u16le(o.serialConsistency === undefined || o.serialConsistency === null ? 0xffff : o.serialConsistency);
  w.u32le(o.readTimeout > 0 ? o.readTimeout : 0);
  if (flags & FLAG_TIMESTAMP) {
    // cassandra-driver takes microseconds since the epoch as Long, number or bigint.
    w.i64le(typeof ts === 'bigint' ? ts : BigInt(Long.isLong(ts) ? ts.toString() : ts));
  }
  if (ps) { w.u32le(ps.length); w.bytes(ps); }
}

/** Orders `params` (array or named object) by the statement's bind markers. */
function orderParams(params, variables) {
  if (params === undefined || params === null) return [];
  if (Array.isArray(params)) return params;
  if (typeof params !== 'object') throw new ArgumentError(`Parameters must be an Array or an Object, got ${typeof params}`);
  const lower = new Map();
  for (const k of Object.keys(params)) lower.set(k.toLowerCase(), params[k]);
  return variables.map((v, index) => {
    const key = v.name.toLowerCase();
    if (!lower.has(key)) throw new ArgumentError(`Missing parameter '${v.name}' (index ${index}): the statement binds ${variables.length} named values`);
    return lower.get(key);
  });
}

/** Values of a prepared statement, typed by its bind-marker metadata. */
function writePreparedValues(w, params, variables, encOpts) {
  const values = orderParams(params, variables);
  if (values.length !== variables.length) {
    if (values.length < variables.length) {
      const v = variables[values.length];
      throw new ArgumentError(`Missing parameter '${v.name}' (index ${values.length}, ${require('./typeparse').typeName(v.type)}): the statement has ${variables.length} bind markers, ${values.length} values given`);
    }
    throw new ArgumentError(`Too many parameters: the statement has ${variables.length} bind markers, ${values.length} values given`);
  }
  w.u16le(values.length);
  // Error contexts are built once per statement, not per value.
  let ctx = ctxCache.get(variables);
  if (!ctx) { ctx = variables.map((v, index) => ({ name: v.name, index })); ctxCache.set(variables, ctx); }
  for (let i = 0; i < values.length; i++) {
    writeParam(w, values[i], variables[i].type, ctx[i], encOpts);
  }
}
const ctxCache = new WeakMap();

/** Values of an unprepared statement: hinted, else guessed like cassandra-driver. */
function writeGuessedValues(w, params, hints, encOpts) {
  const values = params || [];
  if (!Array.isArray(values)) throw new ArgumentError('Named parameters need prepare: true or an array of values');
  w.u16le(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    let t = hints && hints[i] !== undefined && hints[i] !== null ? toType(hints[i]) : null;
    if (!t) t = guessType(v);
    if (!t && v !== null && v !== undefined && v !== require('./types').unset) {
      throw new ArgumentError(`Cannot guess the CQL type of parameter at index ${i} (${typeof v}); pass hints or use prepare: true`);
    }
    writeParam(w, v, t, { index: i }, encOpts);
  }
}

/**
 * Reads one answer of the native execution path (see run_requests in src/lib.rs):
 * `u32 token`, then `u8 1` + an error for the whole run, or `u8 0`, `u8 last`, `u32 n` and
 * n results, each `u32 request index` + the result. Calls `onResult(index, res)` with
 * readResult's {error} or {fields}; returns {last, error}.
 */
function readAnswer(buf, decodeOpts, onResult) {
  const r = new Reader(buf, 4);
  if (r.u8() !== 0) return { last: true, error: r.error() };
  const last = r.u8() === 1;
  const n = r.u32();
  for (let i = 0; i < n; i++) {
    const index = r.u32();
    onResult(index, readResult(r, decodeOpts));
  }
  return { last, error: null };
}

/** Whether an answer buffer is the last of its run (an error for the run is). */
const isLastAnswer = (buf) => buf[4] !== 0 || buf[5] === 1;

module.exports = { readAnswer, isLastAnswer, Writer, writeHeader, writePreparedValues, writeGuessedValues, pageStateBuffer,
  KIND_PREPARED, KIND_QUERY, KIND_BATCH };
