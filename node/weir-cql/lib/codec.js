'use strict';
// The CQL value codec: JS values <-> CQL cell bytes, entirely on the JS side so a request
// crosses into Rust as one Buffer and a result page comes back as one Buffer.

// The module's own binding of Buffer: the global one is an accessor (see lib/types.js).
const { Buffer } = require('node:buffer');
const types = require('./types');
const { typeName } = require('./typeparse');
const { ArgumentError } = require('./errors');

const { Uuid, TimeUuid, Long, Integer, BigDecimal, InetAddress, LocalDate, LocalTime, Duration,
  Tuple, Vector, unset } = types;
const { bigintToTwos, twosToBigint } = types._internal;

/** A growable byte buffer; framing lengths are little-endian, CQL contents big-endian. */
class Writer {
  constructor(size) { this.buf = Buffer.allocUnsafe(size || 1024); this.pos = 0; }
  ensure(n) {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  u8(v) { this.ensure(1); this.buf[this.pos++] = v; }
  u16le(v) { this.ensure(2); this.buf.writeUInt16LE(v, this.pos); this.pos += 2; }
  u32le(v) { this.ensure(4); this.buf.writeUInt32LE(v, this.pos); this.pos += 4; }
  i32le(v) { this.ensure(4); this.buf.writeInt32LE(v, this.pos); this.pos += 4; }
  i64le(v) { this.ensure(8); this.buf.writeBigInt64LE(v, this.pos); this.pos += 8; }
  i32be(v) { this.ensure(4); this.buf.writeInt32BE(v, this.pos); this.pos += 4; }
  bytes(b) { this.ensure(b.length); b.copy(this.buf, this.pos); this.pos += b.length; }
  utf8(s) {
    const max = s.length * 3;
    this.ensure(max);
    this.pos += this.buf.utf8Write(s, this.pos, max);
  }
  /** `u32 len` + UTF-8, for framing strings (queries). */
  str(s) { const at = this.pos; this.u32le(0); this.utf8(s); this.buf.writeUInt32LE(this.pos - at - 4, at); }
  /** Cassandra's unsigned vint: e leading 1-bits in the first byte = e extra bytes. */
  unsignedVint(v) {
    let e = 0;
    while (e < 8 && v >= (1n << BigInt(7 * (e + 1)))) e++;
    this.ensure(e + 1);
    if (e === 8) { this.buf[this.pos++] = 0xff; this.buf.writeBigUInt64BE(v, this.pos); this.pos += 8; return; }
    for (let i = e; i >= 1; i--) this.buf[this.pos + i] = Number((v >> BigInt(8 * (e - i))) & 0xffn);
    this.buf[this.pos] = Number(v >> BigInt(8 * e)) | ((0xff << (8 - e)) & 0xff);
    this.pos += e + 1;
  }
  vint(v) { const n = BigInt(v); this.unsignedVint(BigInt.asUintN(64, (n << 1n) ^ (n >> 63n))); }
  done() { return this.buf.subarray(0, this.pos); }
}

function fail(value, type, ctx) {
  let shown;
  try { shown = typeof value === 'string' ? `'${value.slice(0, 40)}'` : String(value); } catch { shown = typeof value; }
  const what = ctx && ctx.name !== undefined ? `parameter '${ctx.name}' (index ${ctx.index})` : ctx ? `parameter at index ${ctx.index}` : 'value';
  return new ArgumentError(`Invalid value for ${what}: expected ${typeName(type)}, got ${value === null ? 'null' : typeof value} ${shown}`);
}

function toLong(value, type, ctx) {
  if (typeof value === 'bigint') return value;
  if (Long.isLong(value)) return BigInt(value.toString());
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  throw fail(value, type, ctx);
}

function uuidBuffer(value, type, ctx) {
  if (value instanceof Uuid) return value.buffer;
  if (typeof value === 'string') {
    try { return Uuid.fromString(value).buffer; } catch { throw fail(value, type, ctx); }
  }
  if (Buffer.isBuffer(value) && value.length === 16) return value;
  throw fail(value, type, ctx);
}

function intIn(value, type, ctx, lo, hi) {
  if (typeof value === 'number' && Number.isInteger(value) && value >= lo && value <= hi) return value;
  if (typeof value === 'bigint' && value >= BigInt(lo) && value <= BigInt(hi)) return Number(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) { const n = Number(value); if (n >= lo && n <= hi) return n; }
  throw fail(value, type, ctx);
}

/** Writes the contents of one cell (no length) for a non-null value. */
function writeContent(w, value, type, ctx, opts) {
  switch (type.code) {
    case 0x01: case 0x0a: case 0x0d:
      if (typeof value !== 'string') throw fail(value, type, ctx);
      if (type.code === 0x01 && !/^[\x00-\x7f]*$/.test(value)) throw fail(value, type, ctx);
      w.utf8(value); return;
    case 0x02: case 0x05: { const v = toLong(value, type, ctx); w.ensure(8); w.buf.writeBigInt64BE(BigInt.asIntN(64, v), w.pos); w.pos += 8; return; }
    case 0x03:
      if (Buffer.isBuffer(value)) { w.bytes(value); return; }
      if (value instanceof Uint8Array) { w.bytes(Buffer.from(value)); return; }
      throw fail(value, type, ctx);
    case 0x04: if (typeof value !== 'boolean') throw fail(value, type, ctx); w.u8(value ? 1 : 0); return;
    case 0x06: {
      let d = value;
      if (typeof d === 'number') d = BigDecimal.fromNumber(d);
      else if (typeof d === 'string') { try { d = BigDecimal.fromString(d); } catch { throw fail(value, type, ctx); } }
      if (!(d instanceof BigDecimal)) throw fail(value, type, ctx);
      w.bytes(BigDecimal.toBuffer(d)); return;
    }
    case 0x07: if (typeof value !== 'number') throw fail(value, type, ctx); w.ensure(8); w.buf.writeDoubleBE(value, w.pos); w.pos += 8; return;
    case 0x08: if (typeof value !== 'number') throw fail(value, type, ctx); w.ensure(4); w.buf.writeFloatBE(value, w.pos); w.pos += 4; return;
    case 0x09: w.i32be(intIn(value, type, ctx, -2147483648, 2147483647)); return;
    case 0x0b: {
      let ms;
      if (value instanceof Date) ms = BigInt(value.getTime());
      else if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) ms = BigInt(Date.parse(value));
      else ms = toLong(value, type, ctx);
      w.ensure(8); w.buf.writeBigInt64BE(ms, w.pos); w.pos += 8; return;
    }
    case 0x0c: case 0x0f: w.bytes(uuidBuffer(value, type, ctx)); return;
    case 0x0e: {
      let v;
      if (value instanceof Integer) v = value.value;
      else if (typeof value === 'bigint') v = value;
      else if (typeof value === 'number' && Number.isInteger(value)) v = BigInt(value);
      else if (typeof value === 'string' && /^-?\d+$/.test(value)) v = BigInt(value);
      else throw fail(value, type, ctx);
      w.bytes(bigintToTwos(v)); return;
    }
    case 0x10: {
      let a = value;
      if (typeof a === 'string') { try { a = InetAddress.fromString(a); } catch { throw fail(value, type, ctx); } }
      if (!(a instanceof InetAddress)) throw fail(value, type, ctx);
      w.bytes(a.buffer); return;
    }
    case 0x11: {
      let d = value;
      if (typeof d === 'string') { try { d = LocalDate.fromString(d); } catch { throw fail(value, type, ctx); } }
      else if (d instanceof Date) d = LocalDate.fromDate(d);
      if (!(d instanceof LocalDate)) throw fail(value, type, ctx);
      w.ensure(4); w.buf.writeUInt32BE((d._days + 2147483648) >>> 0, w.pos); w.pos += 4; return;
    }
    case 0x12: {
      let t = value;
      if (typeof t === 'string') { try { t = LocalTime.fromString(t); } catch { throw fail(value, type, ctx); } }
      if (t instanceof LocalTime) { w.ensure(8); w.buf.writeBigInt64BE(t._ns, w.pos); w.pos += 8; return; }
      const ns = toLong(t, type, ctx);
      w.ensure(8); w.buf.writeBigInt64BE(ns, w.pos); w.pos += 8; return;
    }
    case 0x13: { const v = intIn(value, type, ctx, -32768, 32767); w.ensure(2); w.buf.writeInt16BE(v, w.pos); w.pos += 2; return; }
    case 0x14: { const v = intIn(value, type, ctx, -128, 127); w.ensure(1); w.buf.writeInt8(v, w.pos); w.pos += 1; return; }
    case 0x15: {
      let d = value;
      if (typeof d === 'string') { try { d = Duration.fromString(d); } catch { throw fail(value, type, ctx); } }
      if (!(d instanceof Duration)) throw fail(value, type, ctx);
      w.vint(d.months); w.vint(d.days); w.vint(BigInt(d.nanoseconds.toString())); return;
    }
    case 0x20: case 0x22: {
      let items = value;
      if (value instanceof Set) items = Array.from(value);
      if (!Array.isArray(items)) throw fail(value, type, ctx);
      w.i32be(items.length);
      for (const item of items) writeNested(w, item, type.info, ctx, opts);
      return;
    }
    case 0x21: {
      let entries;
      if (value instanceof Map) entries = Array.from(value.entries());
      else if (value && typeof value === 'object' && !Array.isArray(value)) entries = Object.entries(value);
      else throw fail(value, type, ctx);
      w.i32be(entries.length);
      for (const [k, v] of entries) {
        writeNested(w, mapKey(k, type.info[0]), type.info[0], ctx, opts);
        writeNested(w, v, type.info[1], ctx, opts);
      }
      return;
    }
    case 0x30: {
      if (!value || typeof value !== 'object') throw fail(value, type, ctx);
      for (const f of type.info.fields) {
        const v = value[f.name];
        if (v === undefined || v === null) { w.i32be(-1); continue; }
        writeNested(w, v, f.type, ctx, opts);
      }
      return;
    }
    case 0x31: {
      const elems = value instanceof Tuple ? value.elements : Array.isArray(value) ? value : null;
      if (!elems) throw fail(value, type, ctx);
      type.info.forEach((t, i) => {
        const v = elems[i];
        if (v === undefined || v === null) w.i32be(-1);
        else writeNested(w, v, t, ctx, opts);
      });
      return;
    }
    case 0x00:
      if (type.customTypeName === 'vector') {
        const elems = value instanceof Vector ? value.elements : (Array.isArray(value) || ArrayBuffer.isView(value)) ? Array.from(value) : null;
        const [sub, dims] = type.info;
        if (!elems || elems.length !== dims) throw fail(value, type, ctx);
        const fixed = fixedSize(sub);
        for (const e of elems) {
          if (fixed) { writeContent(w, e, sub, ctx, opts); continue; }
          const inner = new Writer(32);
          writeContent(inner, e, sub, ctx, opts);
          w.unsignedVint(BigInt(inner.pos));
          w.bytes(inner.done());
        }
        return;
      }
      if (Buffer.isBuffer(value)) { w.bytes(value); return; }
      throw fail(value, type, ctx);
    default:
      throw new ArgumentError(`Unsupported CQL type code 0x${type.code.toString(16)}`);
  }
}

// Map keys from a plain object are strings; convert them back for non-text key types.
function mapKey(k, keyType) {
  if (typeof k !== 'string') return k;
  switch (keyType.code) {
    case 0x09: case 0x13: case 0x14: case 0x07: case 0x08: return Number(k);
    case 0x02: case 0x05: return BigInt(k);
    default: return k;
  }
}

function fixedSize(t) {
  switch (t.code) {
    case 0x04: return 1;
    case 0x07: case 0x02: case 0x0b: return 8;
    case 0x08: case 0x09: return 4;
    case 0x0c: case 0x0f: return 16;
    default: return 0;
  }
}

/** A nested element: `i32 BE len` + contents. */
function writeNested(w, value, type, ctx, opts) {
  if (value === null || value === undefined) { w.i32be(-1); return; }
  const at = w.pos;
  w.i32be(0);
  writeContent(w, value, type, ctx, opts);
  w.buf.writeInt32BE(w.pos - at - 4, at);
}

/** A top-level bound value: `i32 LE len` (-1 null, -2 unset) + contents. */
function writeParam(w, value, type, ctx, opts) {
  if (value === null) { w.i32le(-1); return; }
  if (value === undefined) {
    if (opts && opts.useUndefinedAsUnset === false) { w.i32le(-1); return; }
    w.i32le(-2); return;
  }
  if (value === unset) { w.i32le(-2); return; }
  const at = w.pos;
  w.i32le(0);
  writeContent(w, value, type, ctx, opts);
  w.buf.writeInt32LE(w.pos - at - 4, at);
}

/** Encodes one value to CQL bytes (used by tests and by callers who need raw cells). */
function encode(value, type, opts) {
  if (value === null || value === undefined || value === unset) return null;
  const w = new Writer(64);
  writeContent(w, value, type, null, opts);
  return Buffer.from(w.done());
}

// ---------------------------------------------------------------- decoding

function readUnsignedVint(buf, off) {
  const first = buf[off];
  let e = 0;
  while (e < 8 && (first & (0x80 >> e))) e++;
  if (e === 8) return [buf.readBigUInt64BE(off + 1), off + 9];
  let v = BigInt(first & (0xff >> (e + 1)));
  for (let i = 1; i <= e; i++) v = (v << 8n) | BigInt(buf[off + i]);
  return [v, off + e + 1];
}
function readVint(buf, off) {
  const [u, next] = readUnsignedVint(buf, off);
  return [BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n)), next];
}

function decode(buf, off, len, type, opts) {
  const end = off + len;
  switch (type.code) {
    case 0x01: return buf.toString('latin1', off, end);
    case 0x0a: case 0x0d: return buf.toString('utf8', off, end);
    case 0x02: case 0x05: {
      if (len === 0) return null;
      if (opts && opts.useBigIntAsLong) return buf.readBigInt64BE(off);
      return new Long(buf.readInt32BE(off + 4), buf.readInt32BE(off));
    }
    case 0x03: return Buffer.from(buf.subarray(off, end));
    case 0x04: return len === 0 ? null : buf[off] !== 0;
    case 0x06: return BigDecimal.fromBuffer(buf.subarray(off, end));
    case 0x07: return len === 0 ? null : buf.readDoubleBE(off);
    case 0x08: return len === 0 ? null : buf.readFloatBE(off);
    case 0x09: return len === 0 ? null : buf.readInt32BE(off);
    case 0x0b: return len === 0 ? null : new Date(Number(buf.readBigInt64BE(off)));
    // Views into the page buffer: no copy per value (the page lives as long as its rows).
    case 0x0c: return new Uuid(buf.subarray(off, end));
    case 0x0f: return new TimeUuid(buf.subarray(off, end));
    case 0x0e: {
      const v = twosToBigint(buf.subarray(off, end));
      return opts && opts.useBigIntAsVarint ? v : new Integer(v);
    }
    case 0x10: return new InetAddress(Buffer.from(buf.subarray(off, end)));
    case 0x11: return LocalDate.fromDays(buf.readUInt32BE(off) - 2147483648);
    case 0x12: return new LocalTime(buf.readBigInt64BE(off));
    case 0x13: return buf.readInt16BE(off);
    case 0x14: return buf.readInt8(off);
    case 0x15: {
      const [m, o1] = readVint(buf, off);
      const [d, o2] = readVint(buf, o1);
      const [n] = readVint(buf, o2);
      return new Duration(Number(m), Number(d), Long.fromString(n.toString()));
    }
    case 0x20: case 0x22: {
      const n = buf.readInt32BE(off);
      const out = new Array(n);
      let p = off + 4;
      for (let i = 0; i < n; i++) {
        const l = buf.readInt32BE(p); p += 4;
        out[i] = l < 0 ? null : decode(buf, p, l, type.info, opts);
        if (l > 0) p += l;
      }
      if (type.code === 0x22 && opts && opts.set === Set) return new Set(out);
      return out;
    }
    case 0x21: {
      const n = buf.readInt32BE(off);
      const asMap = opts && opts.map === Map;
      const out = asMap ? new Map() : {};
      let p = off + 4;
      for (let i = 0; i < n; i++) {
        const kl = buf.readInt32BE(p); p += 4;
        const k = kl < 0 ? null : decode(buf, p, kl, type.info[0], opts);
        if (kl > 0) p += kl;
        const vl = buf.readInt32BE(p); p += 4;
        const v = vl < 0 ? null : decode(buf, p, vl, type.info[1], opts);
        if (vl > 0) p += vl;
        if (asMap) out.set(k, v); else out[k] = v;
      }
      return out;
    }
    case 0x30: {
      const out = {};
      let p = off;
      for (const f of type.info.fields) {
        if (p >= end) { out[f.name] = null; continue; }
        const l = buf.readInt32BE(p); p += 4;
        out[f.name] = l < 0 ? null : decode(buf, p, l, f.type, opts);
        if (l > 0) p += l;
      }
      return out;
    }
    case 0x31: {
      const out = [];
      let p = off;
      for (const t of type.info) {
        if (p >= end) { out.push(null); continue; }
        const l = buf.readInt32BE(p); p += 4;
        out.push(l < 0 ? null : decode(buf, p, l, t, opts));
        if (l > 0) p += l;
      }
      return Tuple.fromArray(out);
    }
    case 0x00: {
      if (type.customTypeName === 'vector') {
        const [sub, dims] = type.info;
        const fixed = fixedSize(sub);
        const out = new Array(dims);
        let p = off;
        for (let i = 0; i < dims; i++) {
          let l = fixed;
          if (!fixed) { const [v, next] = readUnsignedVint(buf, p); l = Number(v); p = next; }
          out[i] = decode(buf, p, l, sub, opts);
          p += l;
        }
        return new Vector(out, typeName(sub));
      }
      return Buffer.from(buf.subarray(off, end));
    }
    default:
      return Buffer.from(buf.subarray(off, end));
  }
}

// ---------------------------------------------------------------- type guessing

/** cassandra-driver's guess for unprepared statements without hints. */
function guessType(value) {
  switch (typeof value) {
    case 'string': return { code: 0x0d, info: null };
    case 'number': return { code: 0x07, info: null };
    case 'boolean': return { code: 0x04, info: null };
    case 'bigint': return { code: 0x02, info: null };
    default: break;
  }
  if (value === null || value === undefined || value === unset) return null;
  if (Buffer.isBuffer(value)) return { code: 0x03, info: null };
  if (value instanceof Date) return { code: 0x0b, info: null };
  if (Long.isLong(value)) return { code: 0x02, info: null };
  if (value instanceof TimeUuid) return { code: 0x0f, info: null };
  if (value instanceof Uuid) return { code: 0x0c, info: null };
  if (value instanceof Integer) return { code: 0x0e, info: null };
  if (value instanceof BigDecimal) return { code: 0x06, info: null };
  if (value instanceof InetAddress) return { code: 0x10, info: null };
  if (value instanceof LocalDate) return { code: 0x11, info: null };
  if (value instanceof LocalTime) return { code: 0x12, info: null };
  if (value instanceof Duration) return { code: 0x15, info: null };
  if (value instanceof Tuple) return { code: 0x31, info: value.elements.map((e) => guessType(e) || { code: 0x03 }) };
  if (value instanceof Vector) {
    const sub = guessType(value.elements[0]);
    return { code: 0, customTypeName: 'vector', info: [sub && sub.code === 0x07 ? { code: 0x08, info: null } : sub, value.length] };
  }
  if (Array.isArray(value)) return { code: 0x20, info: guessType(value.find((v) => v != null)) || { code: 0x0d } };
  if (value instanceof Set) return { code: 0x22, info: guessType(Array.from(value).find((v) => v != null)) || { code: 0x0d } };
  if (value instanceof Map) {
    const first = value.entries().next().value || [];
    return { code: 0x21, info: [guessType(first[0]) || { code: 0x0d }, guessType(first[1]) || { code: 0x0d }] };
  }
  return null;
}

module.exports = { Writer, writeParam, writeContent, encode, decode, guessType, fail };
