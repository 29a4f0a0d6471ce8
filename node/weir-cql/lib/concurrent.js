'use strict';
// concurrent.executeConcurrent, run on the Rust side: a chunk of parameter rows crosses
// as one buffer through the same native path as execute() (client._submit) and Rust keeps
// `concurrencyLevel` requests in flight. The next chunk is encoded while the current one
// runs.

const errors = require('./errors');
const req = require('./request');
const { ResultSet, ResultSetGroup } = require('./result');

// An array of up to 262,144 rows crosses in one call; longer inputs and streams go in
// chunks, the next encoded while the current one runs.
const CHUNK_ROWS = 262144;

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
  // Results that are not collected need no paging: run those statements unpaged.
  const o = client._execOptions({ ...options, prepare: true, paged: collect ? options.paged : false });
  const enc = client.options.encoding;
  const group = new ResultSetGroup(collect);

  const source = items ? items : rowsOf(parameters);
  let header = null;
  const encodeChunk = async (iter) => {
    const w = new req.Writer(items ? 1 << 16 : Math.min(CHUNK_ROWS, Array.isArray(parameters) ? parameters.length : 4096) * 64 + 64);
    w.u32le(0);
    let count = 0;
    for (;;) {
      // Arrays are read synchronously: an await per row would cost a microtask each.
      const next = iter.sync ? iter.nextSync() : await iter.next();
      if (next.done) break;
      let q = query, params = next.value;
      if (items) { q = next.value.query; params = next.value.params; }
      const entry = client._getPrepared(q);
      const info = entry.info || await entry.promise;
      // Every row shares one header: encode it once, then copy it.
      if (!header) { const h = new req.Writer(64); req.writeHeader(h, req.KIND_PREPARED, o, !collect); header = Buffer.from(h.done()); }
      w.bytes(header);
      w.u32le(info.handle);
      req.writePreparedValues(w, params, info.variables, enc);
      if (++count >= CHUNK_ROWS) break;
    }
    w.buf.writeUInt32LE(count, 0);
    return { buf: w.done(), count };
  };
  const list = items || (Array.isArray(parameters) ? parameters : null);
  let at = 0;
  const iter = list
    ? { sync: true, nextSync: () => (at < list.length ? { done: false, value: list[at++] } : { done: true }) }
    : source[Symbol.asyncIterator]();

  let chunk = await encodeChunk(iter);
  while (chunk.count > 0) {
    const count = chunk.count;
    const running = new Promise((resolve, reject) => {
      const results = new Array(count);
      client._submit(chunk.buf, concurrency, (buf) => {
        let answer;
        try {
          answer = req.readAnswer(buf, enc, (index, res) => { results[index] = res; });
        } catch (e) {
          reject(new errors.DriverError(`Malformed response from the native layer: ${e.message}`));
          return;
        }
        if (answer.error) reject(answer.error);
        else if (answer.last) resolve(results);
      });
    });
    const nextChunk = encodeChunk(iter);
    let results;
    try { results = await running; } catch (e) { await nextChunk.catch(() => {}); throw e; }
    for (let i = 0; i < count; i++) {
      const res = results[i];
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
