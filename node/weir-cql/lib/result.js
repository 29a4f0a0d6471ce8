'use strict';
// ResultSet and Row (cassandra-driver 4.x shapes) over one native response buffer.
// A page arrives as raw CQL cells; rows are decoded on first access of `rows`, so a caller
// that only checks success (inserts) or counts rows never pays for decoding.

// The module's own binding of Buffer: the global one is an accessor (see lib/types.js).
const { Buffer } = require('node:buffer');
const { decode } = require('./codec');
const { Uuid, TimeUuid } = require('./types');
const errors = require('./errors');

class Row {
  constructor(columns) {
    // Keeps `columns` off the enumerable properties, as cassandra-driver does.
    if (columns !== undefined) Object.defineProperty(this, '__columns', { value: columns, enumerable: false, writable: false });
  }
  get(columnName) {
    if (typeof columnName === 'number') return this[this.__columns[columnName].name];
    return this[columnName];
  }
  values() { return this.__columns.map((c) => this[c.name]); }
  keys() { return this.__columns.map((c) => c.name); }
  forEach(callback) { for (const c of this.__columns) callback(this[c.name], c.name); }
}

/** Reads the native buffers: little-endian framing, see src/wire.rs. */
class Reader {
  constructor(buf, pos) { this.buf = buf; this.pos = pos || 0; }
  u8() { return this.buf[this.pos++]; }
  u16() { const v = this.buf.readUInt16LE(this.pos); this.pos += 2; return v; }
  u32() { const v = this.buf.readUInt32LE(this.pos); this.pos += 4; return v; }
  i32() { const v = this.buf.readInt32LE(this.pos); this.pos += 4; return v; }
  shortStr() { const n = this.u16(); const s = this.buf.toString('utf8', this.pos, this.pos + n); this.pos += n; return s; }
  str() { const n = this.u32(); const s = this.buf.toString('utf8', this.pos, this.pos + n); this.pos += n; return s; }
  blob() { const n = this.u32(); const b = Buffer.from(this.buf.subarray(this.pos, this.pos + n)); this.pos += n; return b; }
  type() {
    const code = this.u16();
    switch (code) {
      case 0x20: case 0x22: return { code, info: this.type() };
      case 0x21: return { code, info: [this.type(), this.type()] };
      case 0x30: {
        const keyspace = this.shortStr();
        const name = this.shortStr();
        const n = this.u16();
        const fields = [];
        for (let i = 0; i < n; i++) fields.push({ name: this.shortStr(), type: this.type() });
        return { code, info: { keyspace, name, fields } };
      }
      case 0x31: { const n = this.u16(); const info = []; for (let i = 0; i < n; i++) info.push(this.type()); return { code, info }; }
      case 0xfe: { const sub = this.type(); const dims = this.u16(); return { code: 0, customTypeName: 'vector', info: [sub, dims] }; }
      default: return { code, info: null };
    }
  }
  specs() {
    const n = this.u16();
    const out = new Array(n);
    for (let i = 0; i < n; i++) {
      const ksname = this.shortStr();
      const tablename = this.shortStr();
      out[i] = { name: this.shortStr(), type: this.type(), ksname, tablename };
    }
    return out;
  }
  error() {
    const kind = this.u8();
    const code = this.i32();
    const message = this.str();
    const extraText = this.str();
    let extra = null;
    if (extraText) { try { extra = JSON.parse(extraText); } catch { extra = null; } }
    return errors.fromNative(kind, code, message, extra);
  }
}

/** Whether buf[pos, pos + len) holds the bytes of `known` (a short Buffer). */
function sameBytes(buf, pos, len, known) {
  if (known.length !== len) return false;
  for (let i = 0; i < len; i++) if (buf[pos + i] !== known[i]) return false;
  return true;
}

// Column metadata repeats on every page of a statement; parse each distinct one once. The
// last one seen is checked first by its bytes: most answers repeat it, and the Map's key (a
// string made of the bytes, then hashed) cost ~0.3 us per answer.
const specCache = new Map();
let lastSpecBytes = null;
let lastSpecs = null;
function cachedSpecs(r) {
  const len = r.u32();
  if (lastSpecBytes !== null && sameBytes(r.buf, r.pos, len, lastSpecBytes)) {
    r.pos += len;
    return lastSpecs;
  }
  const key = r.buf.toString('latin1', r.pos, r.pos + len);
  let cols = specCache.get(key);
  if (!cols) {
    cols = new Reader(r.buf, r.pos).specs();
    if (specCache.size > 1000) specCache.clear();
    specCache.set(key, cols);
  }
  lastSpecBytes = Buffer.from(r.buf.subarray(r.pos, r.pos + len));
  lastSpecs = cols;
  r.pos += len;
  return cols;
}

// The hosts an answer names (queriedHost, triedHosts' keys) are few and repeat: each is
// read as the same string object as before when its bytes match, so `triedHosts[host]`
// stores under an already-internalized key (a fresh string per answer cost V8 a
// string-table lookup in a megamorphic keyed store, ~0.2 us per answer).
const knownHosts = [];
function hostStr(r) {
  const n = r.u32();
  const { buf, pos } = r;
  r.pos += n;
  for (const h of knownHosts) if (sameBytes(buf, pos, n, h.bytes)) return h.name;
  const name = buf.toString('utf8', pos, pos + n);
  if (knownHosts.length >= 16) knownHosts.shift();
  knownHosts.push({ bytes: Buffer.from(buf.subarray(pos, pos + n)), name });
  return name;
}

class ResultSet {
  constructor(fields) {
    this.info = fields.info;
    this.columns = fields.columns;
    this.rowLength = fields.rowLength;
    this.pageState = fields.rawPageState ? fields.rawPageState.toString('hex') : null;
    // Plain fields (not defineProperty): a ResultSet is built per statement on the hot path.
    this.rawPageState = fields.rawPageState;
    this._page = fields.page;
    this._rows = fields.rows || null;
    this._fetchPage = fields.fetchPage;
    if (fields.rawPageState && fields.fetchPage) {
      // Manual paging: fetch the page after this one (promise, or callback when given).
      this.nextPage = (callback) => {
        const p = fields.fetchPage(fields.rawPageState);
        if (typeof callback === 'function') { p.then((rs) => callback(null, rs), callback); return undefined; }
        return p;
      };
    }
  }

  get rows() {
    if (this._rows === null) this._rows = decodeRows(this._page, this.columns, this.rowLength);
    return this._rows;
  }
  set rows(v) { this._rows = v; }

  first() { return this.rowLength > 0 ? this.rows[0] : null; }

  /** For conditional (LWT) statements: the `[applied]` column; true for others. */
  wasApplied() {
    if (!this.columns || this.rowLength === 0) return true;
    const c = this.columns.find((col) => col.name === '[applied]');
    if (!c) return true;
    return this.rows[0]['[applied]'] === true;
  }

  isPaged() { return !!this.rawPageState; }

  getColumns() { return this.columns; }

  [Symbol.iterator]() { return this.rows[Symbol.iterator](); }

  /** Iterates every row of every page, fetching following pages as it goes. */
  async *[Symbol.asyncIterator]() {
    let page = this;
    for (;;) {
      for (const row of page.rows) yield row;
      if (!page.rawPageState || !page._fetchPage) return;
      page = await page._fetchPage(page.rawPageState);
    }
  }
}

const rowClasses = new WeakMap();

/**
 * The class Buffer's own methods make views with (`buf.subarray` constructs its species):
 * a view of a uuid's 16 bytes made with it directly skips subarray's look-ups of the
 * constructor and species, ~1/4 of a 100-row page's decoding (perf).
 */
const BufferView = Buffer[Symbol.species];

/**
 * The expression that decodes a non-null cell of `len` bytes at `p` (a column of type
 * `t${c}`), written inline for the fixed-size types most rows carry: a call to `decode` per
 * cell (its switch, `readInt32BE`'s bounds checks) was about a third of a 100-row page's
 * decoding (perf of sequential selects). Any other length or type goes to `decode`, so
 * every value comes out exactly as `decode` makes it.
 */
function cellExpr(type, c) {
  const generic = `decode(buf, p, len, t${c}, opts)`;
  const i32 = (at) => `(buf[${at}] << 24 | buf[${at} + 1] << 16 | buf[${at} + 2] << 8 | buf[${at} + 3])`;
  switch (type.code) {
    case 0x09: return `len === 4 ? ${i32('p')} : ${generic}`;
    case 0x0c: return `len === 16 ? new Uuid(new BufferView(bytes, at + p, 16)) : ${generic}`;
    case 0x0f: return `len === 16 ? new TimeUuid(new BufferView(bytes, at + p, 16)) : ${generic}`;
    case 0x04: return `len === 1 ? buf[p] !== 0 : ${generic}`;
    default: return generic;
  }
}

/**
 * The Row constructor of one column set and the function that decodes a page of its rows,
 * each made once per distinct column metadata (which cachedSpecs shares between results).
 * The constructor takes the row's values as arguments and assigns each to its column name
 * in a statement of its own: a generic loop storing `row[columns[c].name]` goes through
 * V8's megamorphic keyed store for every cell (~1 us per row of two columns), while fixed
 * named stores build every row with one hidden class. The decoder reads each column's cell
 * into a local of its own, with the column's type fixed in its code (see cellExpr). The
 * constructor is named Row, its prototype inherits Row's and carries `__columns`, so rows
 * look exactly as before (own enumerable properties: the columns, in order).
 */
function rowClassOf(columns) {
  const known = rowClasses.get(columns);
  if (known) return known;
  const n = columns.length;
  const vars = columns.map((_, i) => `v${i}`);
  // Column names come from the server; JSON.stringify makes each a safe string literal.
  const body = columns.map((c, i) => `this[${JSON.stringify(c.name)}] = v${i};`).join('\n');
  const RowOfColumns = new Function(`return function Row(${vars.join(', ')}) {\n${body}\n};`)();
  RowOfColumns.prototype = Object.create(Row.prototype, {
    constructor: { value: RowOfColumns, writable: true, configurable: true },
    __columns: { value: columns, enumerable: false },
  });
  // A cell that claims to run past the buffer fails as Buffer's own reads fail there (the
  // inline reads would see other bytes of its memory, or undefined, instead).
  const cells = columns.map((col, c) => [
    'len = buf.readInt32BE(p); p += 4;',
    `if (len < 0) v${c} = null; else { if (p + len > end) outOfRange(p, len, end); v${c} = ${cellExpr(col.type, c)}; p += len; }`,
  ].join('\n')).join('\n');
  const decodePage = new Function('decode', 'outOfRange', 'Uuid', 'TimeUuid', 'BufferView', 'RowOfColumns', ...columns.map((_, c) => `t${c}`), `
    return function decodePage(buf, p, rows, opts) {
      const count = rows.length;
      const end = buf.length;
      const bytes = buf.buffer;
      const at = buf.byteOffset;
      let len${n ? ', ' + vars.join(', ') : ''};
      for (let i = 0; i < count; i++) {
        ${cells}
        rows[i] = new RowOfColumns(${vars.join(', ')});
      }
    };`)(decode, outOfRange, Uuid, TimeUuid, BufferView, RowOfColumns, ...columns.map((c) => c.type));
  const made = { RowOfColumns, decodePage };
  rowClasses.set(columns, made);
  return made;
}

function outOfRange(p, len, end) {
  throw new RangeError(`a ${len}-byte cell at offset ${p} runs past the ${end}-byte result buffer`);
}

function decodeRows(page, columns, rowLength) {
  const rows = new Array(rowLength);
  if (!page) return rows;
  rowClassOf(columns).decodePage(page.buf, page.start, rows, page.opts);
  return rows;
}

/**
 * Fills info.queriedHost, triedHosts (host -> null, or the Error its attempt failed with, as
 * cassandra-driver), achievedConsistency and speculativeExecutions from the hosts part of a
 * result head (see write_host_info in src/wire.rs).
 */
function readHosts(r, info) {
  info.queriedHost = hostStr(r);
  const consistency = r.u16();
  info.achievedConsistency = consistency === 0xffff ? undefined : consistency;
  info.speculativeExecutions = r.u16();
  const n = r.u16();
  const tried = {};
  for (let i = 0; i < n; i++) {
    const host = hostStr(r);
    tried[host] = r.u8() === 1 ? new Error(r.str()) : null;
  }
  info.triedHosts = tried;
}

/**
 * Reads one result at r.pos. Returns {error} or {fields} for a ResultSet; `decodeOpts`
 * carries the client's encoding options (useBigIntAsLong, map, set).
 */
function readResult(r, decodeOpts) {
  const status = r.u8();
  if (status !== 0) return { error: r.error() };
  const flags = r.u8();
  const rawPageState = flags & 1 ? r.blob() : null;
  let traceId;
  if (flags & 4) {
    traceId = new Uuid(Buffer.from(r.buf.subarray(r.pos, r.pos + 16)));
    r.pos += 16;
  }
  const nw = r.u16();
  let warnings;
  if (nw) { warnings = []; for (let i = 0; i < nw; i++) warnings.push(r.str()); }
  const info = { queriedHost: undefined, triedHosts: undefined, speculativeExecutions: 0,
    achievedConsistency: undefined, traceId, warnings, customPayload: undefined, isSchemaInAgreement: true };
  if (flags & 8) readHosts(r, info);
  if (!(flags & 2)) return { fields: { info, columns: null, rowLength: 0, rawPageState, page: null, rows: [] } };
  const columns = cachedSpecs(r);
  const rowLength = r.i32();
  const bytes = r.u32();
  const page = { buf: r.buf, start: r.pos, opts: decodeOpts };
  r.pos += bytes;
  return { fields: { info, columns, rowLength, rawPageState, page } };
}

class ResultSetGroup {
  constructor(collect) {
    this.errors = [];
    this.resultItems = collect ? [] : undefined;
    this.totalExecuted = 0;
  }
}

module.exports = { Row, ResultSet, ResultSetGroup, Reader, readResult };
