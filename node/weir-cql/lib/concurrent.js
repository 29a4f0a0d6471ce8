'use strict';
// concurrent.executeConcurrent, run on the Rust side: a chunk of parameter rows crosses
// as one buffer and Rust keeps `concurrencyLevel` requests in flight. The next chunk is
// encoded while the current one runs.

const errors = require('./errors');
const req = require('./request');
const { Reader, readResult, ResultSet, ResultSetGroup } = require('./result');

const CHUNK_ROWS = 32768;

async function* rowsOf(parameters) {
  if (Array.isArray(parameters)) { yield* parameters; return; }
  if (parameters && typeof parameters[Symbol.asyncIterator] === 'function') { yield* parameters; return; }
  throw new errors.ArgumentError('parameters must be an Array or a Readable stream of parameter arrays');
}

async function executeConcurrent(client, query, parameters, options) {
  let items;
  if (Array.isArray(query)) { options = parameters; items = query; }
  options = options || {};
  const concurrency = options.concurrencyLevel > 0 ? options.concurrencyLevel : 100;
  const raiseOnFirstError = options.raiseOnFirstError !== false;
  const collect = !!options.collectResults;
  const maxErrors = options.maxErrors === undefined ? 100 : options.maxErrors;
  if (typeof query !== 'string' && !Array.isArray(query)) throw new errors.ArgumentError('query must be a string or an array of {query, params}');
  const wait = client._ensureConnected();
  if (wait) await wait;
  const o = client._execOptions({ ...options, prepare: true });
  const enc = client.options.encoding;
  const group = new ResultSetGroup(collect);

  const source = items ? items : rowsOf(parameters);
  const encodeChunk = async (iter) => {
    const w = new req.Writer(1 << 16);
    w.u32le(0);
    let count = 0;
    const handles = [];
    for (;;) {
      const next = await iter.next();
      if (next.done) break;
      let q = query, params = next.value;
      if (items) { q = next.value.query; params = next.value.params; }
      const entry = client._getPrepared(q);
      const info = entry.info || await entry.promise;
      handles.push(info);
      req.writeHeader(w, req.KIND_PREPARED, o, !collect);
      w.u32le(info.handle);
      req.writePreparedValues(w, params, info.variables, enc);
      if (++count >= CHUNK_ROWS) break;
    }
    w.buf.writeUInt32LE(count, 0);
    return { buf: w.done(), count };
  };
  const iter = items ? (async function* () { yield* items; })() : source[Symbol.asyncIterator]();

  let chunk = await encodeChunk(iter);
  while (chunk.count > 0) {
    const seq = ++client._runSeq;
    client._runsInFlight.add(seq);
    const running = client._native.run(chunk.buf, concurrency);
    const nextChunk = encodeChunk(iter);
    let out;
    try { out = await running; } finally { client._runsInFlight.delete(seq); }
    const r = new Reader(out, 0);
    if (r.u8() !== 0) throw r.error();
    for (let i = 0; i < chunk.count; i++) {
      const res = readResult(r, enc);
      group.totalExecuted++;
      if (res.error) {
        if (raiseOnFirstError) { await nextChunk.catch(() => {}); throw res.error; }
        if (group.errors.length < maxErrors) group.errors.push(res.error);
        if (collect) group.resultItems.push(res.error);
        continue;
      }
      if (collect) group.resultItems.push(new ResultSet(res.fields));
    }
    chunk = await nextChunk;
  }
  client._releaseRetired();
  return group;
}

module.exports = { executeConcurrent, ResultSetGroup };
