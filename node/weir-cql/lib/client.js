'use strict';
// Client: cassandra-driver 4.x's Client over the native session.
//
// Every execute() issued in one event-loop turn is encoded into one request buffer and
// sent in one native call, which runs them concurrently in Rust and answers with one
// buffer. A sequential `await` loop pays one crossing per statement; a burst of N
// concurrent statements pays one crossing in total.

// The module's own binding of Buffer: the global one is an accessor (see lib/types.js).
const { Buffer } = require('node:buffer');
const { EventEmitter } = require('node:events');
const { Readable } = require('node:stream');
const native = require('./native/native.js');
const driverLog = require('./driver-log');
const errors = require('./errors');
const types = require('./types');
const { ResultSet, Reader, readResult } = require('./result');
const req = require('./request');
const clientOptions = require('./options');
const { HostWatcher, ClientState } = require('./hosts');
const { Metadata } = require('./metadata');

const DEFAULTS = {
  queryOptions: { fetchSize: 5000, prepare: false, consistency: types.consistencies.localOne, autoPage: true },
  socketOptions: { connectTimeout: 5000, readTimeout: 12000 },
  protocolOptions: { port: 9042 },
  encoding: { useBigIntAsLong: false, useBigIntAsVarint: false, useUndefinedAsUnset: true },
  maxPrepared: 500,
};

function normalizeArgs(params, options, callback) {
  if (typeof params === 'function') return { params: undefined, options: {}, callback: params };
  if (typeof options === 'function') return { params, options: {}, callback: options };
  return { params, options: options || {}, callback };
}

function withCallback(promise, callback) {
  if (typeof callback !== 'function') return promise;
  promise.then((v) => callback(null, v), (e) => callback(e));
  return undefined;
}

/**
 * The merged options of one request (`{ ...queryOptions, ...options }`), in one hidden class:
 * every query option cassandra-driver knows is a field from the start (undefined when
 * absent), so the reads on the request path stay monomorphic. The spread built a fresh
 * hidden class per request, each store a transition (perf of a sequential select: ~5% of
 * the client's CPU in V8's slow store and load paths).
 */
class ExecOptions {
  constructor() {
    this.autoPage = undefined; this.captureStackTrace = undefined; this.consistency = undefined;
    this.counter = undefined; this.customPayload = undefined; this.executeAs = undefined;
    this.executionProfile = undefined; this.fetchSize = undefined; this.hints = undefined;
    this.host = undefined; this.isIdempotent = undefined; this.keyspace = undefined;
    this.logged = undefined; this.nowInSeconds = undefined; this.pageState = undefined;
    this.paged = undefined; this.prepare = undefined; this.readTimeout = undefined;
    this.retry = undefined; this.retryOnTimeout = undefined; this.routingIndexes = undefined;
    this.routingKey = undefined; this.routingNames = undefined; this.serialConsistency = undefined;
    this.timestamp = undefined; this.traceQuery = undefined;
  }
}

/** Bytes of a client's answer buffer: a page of a few hundred small rows fits. */
const ANSWER_BUFFER_BYTES = 1 << 16;

/**
 * An answer out of the answer buffer, into a Buffer of its own (pooled when small): the
 * next answer overwrites the buffer, and a ResultSet decodes its rows later.
 */
function copyAnswer(answers, n) {
  const buf = Buffer.allocUnsafe(n);
  buf.set(n === answers.length ? answers : answers.subarray(0, n));
  return buf;
}

/** Copies the own enumerable properties of `from` onto `to`, as object spread does. */
function copyOwn(to, from) {
  for (const k in from) if (Object.prototype.hasOwnProperty.call(from, k)) to[k] = from[k];
}

class Client extends EventEmitter {
  constructor(options) {
    super();
    if (!options || typeof options !== 'object') throw new errors.ArgumentError('Client options are required, e.g. { contactPoints: ["127.0.0.1"], localDataCenter: "datacenter1" }');
    if (!Array.isArray(options.contactPoints) || options.contactPoints.length === 0) {
      throw new errors.ArgumentError('options.contactPoints must be a non-empty array of host or host:port strings');
    }
    this.options = {
      ...options,
      queryOptions: { ...DEFAULTS.queryOptions, ...options.queryOptions },
      socketOptions: { ...DEFAULTS.socketOptions, ...options.socketOptions },
      protocolOptions: { ...DEFAULTS.protocolOptions, ...options.protocolOptions },
      encoding: { ...DEFAULTS.encoding, ...options.encoding },
      maxPrepared: options.maxPrepared === undefined ? DEFAULTS.maxPrepared : options.maxPrepared,
    };
    if (!(this.options.maxPrepared >= 1)) throw new errors.ArgumentError('options.maxPrepared must be at least 1');
    // Every option reaches the native layer or throws NotSupportedError here (lib/options.js).
    this._resolved = clientOptions.resolve(this.options);
    this._timestampGenerator = this._resolved.timestampGenerator;
    this._profileBase = new Map();
    this.metadata = new Metadata(this);
    this._hostWatcher = new HostWatcher(this, 1000);
    this.keyspace = options.keyspace;
    this.connected = false;
    this._native = new native.NativeSession();
    this._connecting = null;
    this._closed = false;
    // Prepared statements: an LRU of at most maxPrepared entries (Map keeps insertion order).
    this._prepared = new Map();
    this._preparedLast = undefined;
    this._evicted = [];
    this._pending = null;
    this._spare = null;
    this._runSeq = 0;
    this._runsInFlight = new Set();
    // Results of submit() arrive through one completion function, keyed by run token.
    this._waiting = new Map();
    // Answers that fit arrive in this buffer, announced by their length (src/direct.rs).
    this._answers = Buffer.allocUnsafeSlow(ANSWER_BUFFER_BYTES);
    this._native.setCompletion((x) => this._complete(typeof x === 'number' ? copyAnswer(this._answers, x) : x), this._answers);
    // A weak completion never holds the process; this timer does, only while requests
    // are in flight, so a forgotten client never blocks exit.
    this._keepAlive = setInterval(() => {}, 1 << 30);
    this._keepAlive.unref();
    // The Rust driver's log events flow only while someone listens (see lib/driver-log.js).
    this.on('newListener', (event) => { if (event === 'log' && !this._closed) driverLog.track(this, true); });
    this.on('removeListener', (event) => { if (event === 'log' && this.listenerCount('log') === 0) driverLog.track(this, false); });
  }

  connect(callback) {
    if (!this._connecting) this._connecting = this._doConnect();
    return withCallback(this._connecting, callback);
  }

  async _doConnect() {
    if (this._closed) throw new errors.DriverError('The client was shut down; create a new Client');
    const o = this.options;
    const port = o.protocolOptions.port;
    const contactPoints = o.contactPoints.map((cp) => (/:\d+$/.test(cp) && !cp.startsWith('[') ? cp : `${cp}:${port}`));
    const result = await this._native.connect({
      ...this._resolved.native,
      contactPoints,
      keyspace: o.keyspace,
      connectTimeoutMs: o.socketOptions.connectTimeout,
      requestTimeoutMs: o.socketOptions.readTimeout,
    });
    if (result.length > 0) {
      this._connecting = null;
      const r = new Reader(result, 1);
      throw r.error();
    }
    this.connected = true;
    this._hostWatcher.start();
    await this._hostWatcher.readVersions();
    this.log('info', `Connected to cluster ${this.metadata.clusterName} through ${contactPoints.join(', ')}`);
    this.emit('connected');
  }

  /** Resolves to {handle, variables, pkIndexes, columns}; cached (LRU, maxPrepared). */
  _getPrepared(query) {
    const key = query;
    const hit = this._prepared.get(key);
    if (hit) {
      // Already the most recent entry (a statement run over and over): nothing to reorder.
      if (this._preparedLast !== key) {
        this._prepared.delete(key);
        this._prepared.set(key, hit);
        this._preparedLast = key;
      }
      return hit;
    }
    const entry = { info: null, promise: null };
    entry.promise = this._native.prepare(query).then((buf) => {
      const r = new Reader(buf, 0);
      if (r.u8() !== 0) throw r.error();
      const handle = r.u32();
      const variables = r.specs();
      const n = r.u16();
      const pkIndexes = [];
      for (let i = 0; i < n; i++) pkIndexes.push(r.u16());
      const columns = r.specs();
      entry.info = { handle, variables, pkIndexes, columns, query };
      return entry.info;
    }, (e) => { throw e; });
    entry.promise.catch(() => {
      if (this._prepared.get(key) === entry) this._prepared.delete(key);
      if (this._preparedLast === key) this._preparedLast = undefined;
    });
    this._prepared.set(key, entry);
    this._preparedLast = key;
    while (this._prepared.size > this.options.maxPrepared) {
      const [oldKey, old] = this._prepared.entries().next().value;
      this._prepared.delete(oldKey);
      if (this._preparedLast === oldKey) this._preparedLast = undefined;
      // Release only after every run that may still name the handle has finished.
      old.promise.then((info) => this._retire(info.handle), () => {});
    }
    return entry;
  }

  _retire(handle) {
    this._evicted.push({ handle, afterSeq: this._runSeq + 1 });
    this._releaseRetired();
  }

  _releaseRetired() {
    if (this._evicted.length === 0) return;
    let minInFlight = Infinity;
    for (const s of this._runsInFlight) if (s < minInFlight) minInFlight = s;
    const pendingSeq = this._pending ? this._runSeq + 1 : Infinity;
    const keep = [];
    for (const e of this._evicted) {
      if (e.afterSeq < Math.min(minInFlight, pendingSeq) || (this._runsInFlight.size === 0 && !this._pending)) {
        this._native.release(e.handle);
      } else keep.push(e);
    }
    this._evicted = keep;
  }

  /** Client query defaults under the named execution profile (cached per profile). */
  _profileDefaults(name) {
    const key = name && typeof name === 'object' ? name.name : name;
    let base = this._profileBase.get(key);
    if (base) return base;
    const profile = name && typeof name === 'object' ? name : this._resolved.profiles.get(key);
    if (!profile) throw new errors.ArgumentError(`Execution profile '${key}' not found; the client has: ${[...this._resolved.profiles.keys()].join(', ') || '(none)'}`);
    base = { ...this.options.queryOptions };
    for (const f of ['consistency', 'serialConsistency', 'readTimeout']) if (profile[f] !== undefined) base[f] = profile[f];
    this._profileBase.set(key, base);
    return base;
  }

  _execOptions(options) {
    let q = this.options.queryOptions;
    if (options && options.executionProfile !== undefined) q = this._profileDefaults(options.executionProfile);
    else if (this._resolved.profiles.has('default')) q = this._profileDefaults('default');
    if (options) clientOptions.checkQueryOptions(options);
    const o = new ExecOptions();
    copyOwn(o, q);
    if (options) copyOwn(o, options);
    if (this._timestampGenerator && (o.timestamp === undefined || o.timestamp === null)) {
      o.timestamp = this._timestampGenerator.next(this);
    }
    if (o.readTimeout === undefined) o.readTimeout = 0;
    if (options && options.autoPage === false && o.paged === undefined) o.paged = true;
    return o;
  }

  /** Adds one encoded request to this tick's run; resolves with its ResultSet. */
  _enqueue(encodeFn, ctx) {
    let p = this._pending;
    if (!p) {
      const w = this._spare || new req.Writer(4096);
      this._spare = null;
      w.pos = 0;
      w.u32le(0);
      p = this._pending = { w, count: 0, slots: [] };
      queueMicrotask(() => this._flush());
    }
    const start = p.w.pos;
    try {
      encodeFn(p.w);
    } catch (e) {
      p.w.pos = start;
      return Promise.reject(e);
    }
    p.count++;
    return new Promise((resolve, reject) => { p.slots.push({ resolve, reject, ctx }); });
  }

  _flush() {
    const p = this._pending;
    this._pending = null;
    if (!p || p.count === 0) { if (p) this._spare = p.w; return; }
    p.w.buf.writeUInt32LE(p.count, 0);
    let seq;
    try {
      seq = this._submit(p.w.done(), p.count, (buf) => this._dispatch(buf, p.slots));
    } catch (e) {
      for (const s of p.slots) s.reject(e);
      return;
    }
    // The native side copied the request synchronously: reuse the buffer.
    this._spare = p.w;
    return seq;
  }

  /**
   * The one native execution path (execute, batch, executeConcurrent): runs the encoded
   * requests with at most `concurrency` in flight; `onResult(buf)` gets each part of the
   * answer as requests complete (req.readAnswer reads it). Returns the run's sequence number.
   */
  _submit(buf, concurrency, onResult) {
    const seq = ++this._runSeq;
    // Registered before the native call: a native side that answers from inside submit
    // (direct delivery from the JS-thread runtime's pump) must find the run, or its answer is
    // dropped and the caller waits forever.
    this._runsInFlight.add(seq);
    this._waiting.set(seq, onResult);
    if (this._waiting.size === 1) this._keepAlive.ref();
    try {
      this._native.submit(buf, concurrency, seq);
    } catch (e) {
      this._runsInFlight.delete(seq);
      this._waiting.delete(seq);
      if (this._waiting.size === 0) this._keepAlive.unref();
      throw e;
    }
    return seq;
  }

  _complete(buf) {
    const seq = buf.readUInt32LE(0);
    const onResult = this._waiting.get(seq);
    // A run answers in parts as its requests complete; it ends with its last part.
    if (req.isLastAnswer(buf)) {
      this._waiting.delete(seq);
      this._runsInFlight.delete(seq);
      if (this._waiting.size === 0) this._keepAlive.unref();
    }
    if (onResult) onResult(buf);
    this._releaseRetired();
  }

  /** Settles the promises of the requests one answer part carries (by request index). */
  _dispatch(buf, slots) {
    let answer;
    try {
      answer = req.readAnswer(buf, this.options.encoding, (index, res) => {
        const s = slots[index];
        if (!s) return;
        if (res.error) { s.reject(res.error); return; }
        const ctx = s.ctx;
        if (ctx && res.fields.rawPageState) {
          res.fields.fetchPage = (state) => this._execute(ctx.query, ctx.params, { ...ctx.options, pageState: state });
        }
        s.resolve(new ResultSet(res.fields));
      });
    } catch (e) {
      // Settling twice is a no-op: only the requests not yet answered see this.
      const err = new errors.DriverError(`Malformed response from the native layer: ${e.message}`);
      for (const s of slots) s.reject(err);
      return;
    }
    if (answer.error) for (const s of slots) s.reject(answer.error);
  }

  _ensureConnected() {
    if (this.connected) return null;
    if (this._closed) return Promise.reject(new errors.DriverError('The client was shut down; create a new Client'));
    return this.connect();
  }

  /** Core of execute(): returns a promise of the ResultSet of one page. */
  _execute(query, params, options) {
    if (typeof query !== 'string') return Promise.reject(new errors.ArgumentError(`Query must be a string, got ${typeof query}`));
    const wait = this._ensureConnected();
    if (wait) return wait.then(() => this._execute(query, params, options));
    const o = this._execOptions(options);
    const enc = this.options.encoding;
    const ctx = { query, params, options };
    const named = params && !Array.isArray(params) && typeof params === 'object';
    if (o.prepare || named) {
      const entry = this._getPrepared(query);
      const send = (info) => this._enqueue((w) => {
        req.writeHeader(w, req.KIND_PREPARED, o, false);
        w.u32le(info.handle);
        req.writePreparedValues(w, params, info.variables, enc);
      }, ctx);
      return entry.info ? send(entry.info) : entry.promise.then(send);
    }
    return this._enqueue((w) => {
      req.writeHeader(w, req.KIND_QUERY, o, false);
      w.str(query);
      req.writeGuessedValues(w, params, o.hints, enc);
    }, ctx);
  }

  execute(query, params, options, callback) {
    const a = normalizeArgs(params, options, callback);
    return withCallback(this._execute(query, a.params, a.options), a.callback);
  }

  /** Calls rowCallback(n, row) per row; autoPage (default off, as cassandra-driver) walks all pages. */
  eachRow(query, params, options, rowCallback, callback) {
    if (typeof params === 'function') { callback = options; rowCallback = params; params = undefined; options = {}; }
    else if (typeof options === 'function') { callback = rowCallback; rowCallback = options; options = {}; }
    options = options || {};
    if (typeof rowCallback !== 'function') throw new errors.ArgumentError('eachRow needs a row callback');
    const done = typeof callback === 'function' ? callback : () => {};
    let n = 0;
    const run = (pageState) => {
      this._execute(query, params, { ...options, pageState }).then((rs) => {
        for (const row of rs.rows) rowCallback(n++, row);
        if (options.autoPage && rs.rawPageState) return run(rs.rawPageState);
        if (rs.rawPageState) rs.nextPage = () => run(rs.rawPageState);
        rs.rowLength = options.autoPage ? n : rs.rowLength;
        return done(null, rs);
      }, (e) => done(e));
    };
    run(options.pageState);
  }

  /** A Readable of rows over every page. */
  stream(query, params, options, callback) {
    const a = normalizeArgs(params, options, callback);
    let pageState = a.options.pageState;
    let done = false;
    const client = this;
    const readable = new Readable({
      objectMode: true,
      read() {
        if (done) return;
        client._execute(query, a.params, { ...a.options, pageState }).then((rs) => {
          pageState = rs.rawPageState;
          if (!pageState || a.options.autoPage === false) done = true;
          for (const row of rs.rows) this.push(row);
          if (done) { this.push(null); if (a.callback) a.callback(null); }
        }, (e) => { done = true; this.destroy(e); if (a.callback) a.callback(e); });
      },
    });
    return readable;
  }

  /** Executes statements as one CQL BATCH (logged unless options.logged === false). */
  batch(queries, options, callback) {
    if (typeof options === 'function') { callback = options; options = {}; }
    return withCallback(this._batch(queries, options || {}), callback);
  }

  async _batch(queries, options) {
    if (!Array.isArray(queries) || queries.length === 0) throw new errors.ArgumentError('batch needs a non-empty array of queries');
    const wait = this._ensureConnected();
    if (wait) await wait;
    const o = this._execOptions(options);
    const items = queries.map((q) => (typeof q === 'string' ? { query: q, params: [] } : q));
    const infos = [];
    for (const it of items) {
      if (!it || typeof it.query !== 'string') throw new errors.ArgumentError('Each batch item must be a string or {query, params}');
      const named = it.params && !Array.isArray(it.params);
      infos.push(o.prepare || named ? (this._getPrepared(it.query).info || await this._getPrepared(it.query).promise) : null);
    }
    const batchType = options.counter ? 2 : options.logged === false ? 1 : 0;
    return this._enqueue((w) => {
      req.writeHeader(w, req.KIND_BATCH, o, false);
      w.u8(batchType);
      w.u16le(items.length);
      items.forEach((it, i) => {
        if (infos[i]) {
          w.u8(0); w.u32le(infos[i].handle);
          req.writePreparedValues(w, it.params, infos[i].variables, this.options.encoding);
        } else {
          w.u8(1); w.str(it.query);
          req.writeGuessedValues(w, it.params, o.hints && o.hints[i], this.options.encoding);
        }
      });
    }, null);
  }

  /** Closes every connection; later calls fail with a DriverError. */
  shutdown(callback) {
    const p = (async () => {
      this._closed = true;
      this.connected = false;
      if (this._connecting) { try { await this._connecting; } catch { /* already reported */ } }
      // Let requests already handed to the native side finish before dropping the session.
      while (this._pending || this._runsInFlight.size) await new Promise((r) => setImmediate(r));
      this._prepared.clear();
      this._preparedLast = undefined;
      this._hostWatcher.stop();
      this._native.shutdown();
      driverLog.track(this, false);
      clearInterval(this._keepAlive);
      this.emit('shutdown');
    })();
    return withCallback(p, callback);
  }

  /** Number of prepared statements held natively (bounded by maxPrepared). */
  getPreparedCount() { return this._native.preparedCount(); }

  /** HostMap of the cluster's nodes (empty before connect()). */
  get hosts() { return this._hostWatcher.map; }

  /** A ClientState snapshot (getConnectedHosts()); `connected` and `prepared` are weir-cql extras. */
  getState() {
    const state = new ClientState(this.hosts.values());
    state.connected = this.connected;
    state.prepared = this._prepared.size;
    return state;
  }

  /** Emits cassandra-driver's 'log' event: (level, className, message, furtherInfo). */
  log(level, message, furtherInfo) {
    if (this.listenerCount('log') > 0) this.emit('log', level, 'Client', message, furtherInfo);
  }
}

module.exports = { Client };
