'use strict';
// Value types of cassandra-driver 4.x (types.Uuid, types.Long, ...), implemented anew.
// Every class keeps the representation its CQL type needs, so encoding is a copy.

// Node's `Buffer` global is an accessor on globalThis: every bare `Buffer` read on a hot path
// was a global load IC and a getter call (perf of row decoding). The module's own binding
// is a constant.
const { Buffer } = require('node:buffer');
const crypto = require('node:crypto');
const Long = require('long');

// cassandra-driver serializes Long as its decimal string ("1234567890123"), so JSON
// responses built from rows keep that shape after a switch.
if (typeof Long.prototype.toJSON !== 'function') {
  Long.prototype.toJSON = function toJSON() { return this.toString(); };
}

const HEX = [];
for (let i = 0; i < 256; i++) HEX.push((i + 0x100).toString(16).slice(1));

const RANDOM_POOL = Buffer.alloc(16 * 256);
let randomPos = RANDOM_POOL.length;

class Uuid {
  constructor(buffer) {
    if (!Buffer.isBuffer(buffer) || buffer.length !== 16) {
      throw new TypeError('Uuid needs a 16-byte Buffer');
    }
    this.buffer = buffer;
  }
  static fromString(value) {
    const hex = typeof value === 'string' ? value.replace(/-/g, '') : '';
    if (!/^[0-9a-fA-F]{32}$/.test(hex)) {
      throw new TypeError(`Invalid uuid string '${value}': expected 32 hex digits, e.g. 01234567-89ab-cdef-0123-456789abcdef`);
    }
    return new this(Buffer.from(hex, 'hex'));
  }
  static random() {
    // Random bytes come from a pool refilled 256 ids at a time: one randomBytes call per
    // id costs more than the rest of an insert's JS work.
    if (randomPos >= RANDOM_POOL.length) { crypto.randomFillSync(RANDOM_POOL); randomPos = 0; }
    const b = Buffer.allocUnsafe(16);
    RANDOM_POOL.copy(b, 0, randomPos, randomPos + 16);
    randomPos += 16;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    return new Uuid(b);
  }
  getBuffer() { return this.buffer; }
  equals(other) { return other instanceof Uuid && this.buffer.equals(other.buffer); }
  toString() {
    const b = this.buffer;
    return HEX[b[0]] + HEX[b[1]] + HEX[b[2]] + HEX[b[3]] + '-' + HEX[b[4]] + HEX[b[5]] + '-' +
      HEX[b[6]] + HEX[b[7]] + '-' + HEX[b[8]] + HEX[b[9]] + '-' + HEX[b[10]] + HEX[b[11]] +
      HEX[b[12]] + HEX[b[13]] + HEX[b[14]] + HEX[b[15]];
  }
  inspect() { return `Uuid: ${this.toString()}`; }
  toJSON() { return this.toString(); }
}

// 100-ns intervals between 1582-10-15 (the UUID epoch) and 1970-01-01.
const GREGORIAN_OFFSET_100NS = 122192928000000000n;
// Ids made for the same millisecond without explicit ticks count 0, 1, 2, ... within it
// (as cassandra-driver does), so they stay unique and ordered; any other millisecond,
// earlier or later, starts again at 0 and keeps its own date.
let lastTicksMs = -1;
let ticksInMs = 0;

function nextTicks(ms) {
  if (ms === lastTicksMs) {
    ticksInMs = ticksInMs >= 9999 ? 0 : ticksInMs + 1;
  } else {
    lastTicksMs = ms;
    ticksInMs = 0;
  }
  return ticksInMs;
}

function timeUuidBytes(date, ticks, nodeId, clockId) {
  const d = date instanceof Date ? date : new Date(date);
  const msNumber = d.getTime();
  if (!Number.isFinite(msNumber)) throw new TypeError(`TimeUuid needs a valid Date, got ${String(date)}`);
  const t100 = ticks === undefined || ticks === null ? nextTicks(msNumber) : Number(ticks);
  if (!(t100 >= 0 && t100 <= 9999)) throw new RangeError(`TimeUuid ticks must be 0..9999 (100-ns units within the millisecond), got ${ticks}`);
  const t = BigInt(msNumber) * 10000n + BigInt(t100) + GREGORIAN_OFFSET_100NS;
  const b = Buffer.alloc(16);
  b.writeUInt32BE(Number(t & 0xffffffffn), 0);
  b.writeUInt16BE(Number((t >> 32n) & 0xffffn), 4);
  b.writeUInt16BE(Number((t >> 48n) & 0x0fffn) | 0x1000, 6);
  const clock = clockId === undefined || clockId === null ? crypto.randomBytes(2) : toBytes(clockId, 2, 'clockId');
  b[8] = (clock[0] & 0x3f) | 0x80;
  b[9] = clock[1];
  const node = nodeId === undefined || nodeId === null ? crypto.randomBytes(6) : toBytes(nodeId, 6, 'nodeId');
  node.copy(b, 10, 0, 6);
  return b;
}

class TimeUuid extends Uuid {
  /** `new TimeUuid(buffer)`, or `new TimeUuid(date?, ticks?, nodeId?, clockId?)` (now by default). */
  constructor(value, ticks, nodeId, clockId) {
    super(Buffer.isBuffer(value) ? value : timeUuidBytes(value === undefined ? new Date() : value, ticks, nodeId, clockId));
  }
  static fromDate(date, ticks, nodeId, clockId) { return new TimeUuid(timeUuidBytes(date, ticks, nodeId, clockId)); }
  static now(nodeId, clockId) { return TimeUuid.fromDate(new Date(), undefined, nodeId, clockId); }
  static min(date) { return TimeUuid.fromDate(date, 0, Buffer.alloc(6), Buffer.alloc(2)); }
  static max(date) { return TimeUuid.fromDate(date, 9999, Buffer.alloc(6, 0xff), Buffer.from([0x3f, 0xff])); }
  getTicks100ns() {
    const b = this.buffer;
    return (BigInt(b.readUInt16BE(6) & 0x0fff) << 48n) | (BigInt(b.readUInt16BE(4)) << 32n) |
      BigInt(b.readUInt32BE(0));
  }
  getDate() { return new Date(Number((this.getTicks100ns() - GREGORIAN_OFFSET_100NS) / 10000n)); }
  getDatePrecision() {
    const t = this.getTicks100ns() - GREGORIAN_OFFSET_100NS;
    return { date: new Date(Number(t / 10000n)), ticks: Number(t % 10000n) };
  }
  getNodeId() { return this.buffer.subarray(10, 16); }
  getClockId() { return this.buffer.subarray(8, 10); }
}

function toBytes(v, n, name) {
  if (Buffer.isBuffer(v) && v.length === n) return v;
  if (typeof v === 'string') return Buffer.from(v.padEnd(n).slice(0, n), 'latin1');
  throw new TypeError(`${name} must be a Buffer of ${n} bytes or a string`);
}

// --- varint: arbitrary-precision integer (cassandra-driver's types.Integer) ---
function bigintToTwos(v) {
  if (v === 0n) return Buffer.from([0]);
  let hex = (v < 0n ? -v : v).toString(16);
  if (hex.length % 2) hex = '0' + hex;
  let b = Buffer.from(hex, 'hex');
  if (v > 0n) {
    if (b[0] & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
    return b;
  }
  // Negative: the smallest width whose two's complement range holds v.
  let width = 1;
  while (v < -(1n << BigInt(width * 8 - 1))) width++;
  return Buffer.from(((1n << BigInt(width * 8)) + v).toString(16).padStart(width * 2, '0'), 'hex');
}

function twosToBigint(buf) {
  if (buf.length === 0) return 0n;
  const v = BigInt('0x' + buf.toString('hex'));
  return buf[0] & 0x80 ? v - (1n << BigInt(buf.length * 8)) : v;
}

class Integer {
  constructor(value) { this.value = BigInt(value); }
  static fromNumber(n) { return new Integer(BigInt(Math.trunc(n))); }
  static fromString(s, radix) {
    if (radix && radix !== 10) {
      const neg = s.startsWith('-');
      const digits = neg ? s.slice(1) : s;
      let v = 0n;
      for (const ch of digits) v = v * BigInt(radix) + BigInt(parseInt(ch, radix));
      return new Integer(neg ? -v : v);
    }
    return new Integer(BigInt(s));
  }
  static fromBuffer(buf) { return new Integer(twosToBigint(buf)); }
  static toBuffer(v) { return bigintToTwos(v.value); }
  toBigInt() { return this.value; }
  toNumber() { return Number(this.value); }
  toString(radix) { return this.value.toString(radix || 10); }
  toJSON() { return this.toString(); }
  equals(o) { return o instanceof Integer && o.value === this.value; }
  compare(o) { return this.value < o.value ? -1 : this.value > o.value ? 1 : 0; }
  isNegative() { return this.value < 0n; }
  isZero() { return this.value === 0n; }
  negate() { return new Integer(-this.value); }
  add(o) { return new Integer(this.value + o.value); }
  subtract(o) { return new Integer(this.value - o.value); }
  multiply(o) { return new Integer(this.value * o.value); }
  abs() { return new Integer(this.value < 0n ? -this.value : this.value); }
}

class BigDecimal {
  constructor(unscaledValue, scale) {
    this.unscaled = unscaledValue instanceof Integer ? unscaledValue.value : BigInt(unscaledValue);
    this.scale = scale | 0;
  }
  static fromString(s) {
    const m = /^([-+]?)(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?$/.exec(String(s).trim());
    if (!m || (m[2] === '' && (m[3] === undefined || m[3] === ''))) {
      throw new TypeError(`Invalid decimal string '${s}'`);
    }
    const frac = m[3] || '';
    let scale = frac.length - (m[4] ? parseInt(m[4], 10) : 0);
    const unscaled = BigInt((m[1] === '-' ? '-' : '') + ((m[2] || '0') + frac));
    return new BigDecimal(unscaled, scale);
  }
  static fromNumber(n) {
    if (!Number.isFinite(n)) throw new TypeError(`Cannot represent ${n} as a decimal`);
    return BigDecimal.fromString(String(n));
  }
  static fromBuffer(buf) { return new BigDecimal(twosToBigint(buf.subarray(4)), buf.readInt32BE(0)); }
  static toBuffer(v) {
    const s = Buffer.alloc(4);
    s.writeInt32BE(v.scale, 0);
    return Buffer.concat([s, bigintToTwos(v.unscaled)]);
  }
  getUnscaledValue() { return new Integer(this.unscaled); }
  getScale() { return this.scale; }
  toString() {
    const neg = this.unscaled < 0n;
    let digits = (neg ? -this.unscaled : this.unscaled).toString();
    let out;
    if (this.scale <= 0) {
      out = digits + '0'.repeat(-this.scale);
    } else {
      digits = digits.padStart(this.scale + 1, '0');
      out = digits.slice(0, digits.length - this.scale) + '.' + digits.slice(digits.length - this.scale);
    }
    return (neg ? '-' : '') + out;
  }
  toNumber() { return Number(this.toString()); }
  toJSON() { return this.toString(); }
  equals(o) { return o instanceof BigDecimal && o.unscaled === this.unscaled && o.scale === this.scale; }
}

class InetAddress {
  constructor(buffer) {
    if (!Buffer.isBuffer(buffer) || (buffer.length !== 4 && buffer.length !== 16)) {
      throw new TypeError('InetAddress needs a 4-byte (IPv4) or 16-byte (IPv6) Buffer');
    }
    this.buffer = buffer;
    this.length = buffer.length;
    this.version = buffer.length === 4 ? 4 : 6;
  }
  static fromString(s) {
    const net = require('node:net');
    if (net.isIPv4(s)) return new InetAddress(Buffer.from(s.split('.').map(Number)));
    if (net.isIPv6(s)) return new InetAddress(parseIpv6(s));
    throw new TypeError(`Invalid IP address '${s}'`);
  }
  getBuffer() { return this.buffer; }
  equals(o) { return o instanceof InetAddress && o.buffer.equals(this.buffer); }
  toString() {
    if (this.length === 4) return Array.from(this.buffer).join('.');
    const groups = [];
    for (let i = 0; i < 16; i += 2) groups.push(this.buffer.readUInt16BE(i).toString(16));
    // Compress the longest run of zero groups, as RFC 5952 asks.
    let best = -1, bestLen = 0;
    for (let i = 0; i < 8;) {
      if (groups[i] !== '0') { i++; continue; }
      let j = i;
      while (j < 8 && groups[j] === '0') j++;
      if (j - i > bestLen && j - i > 1) { best = i; bestLen = j - i; }
      i = j;
    }
    if (best < 0) return groups.join(':');
    return groups.slice(0, best).join(':') + '::' + groups.slice(best + bestLen).join(':');
  }
  toJSON() { return this.toString(); }
}

function parseIpv6(s) {
  let tail4 = null;
  const lastColon = s.lastIndexOf(':');
  if (s.includes('.')) { tail4 = s.slice(lastColon + 1).split('.').map(Number); s = s.slice(0, lastColon) + ':0:0'; }
  const [head, rest] = s.split('::');
  const h = head ? head.split(':') : [];
  const r = rest !== undefined && rest !== '' ? rest.split(':') : [];
  const fill = rest === undefined ? [] : new Array(8 - h.length - r.length).fill('0');
  const groups = [...h, ...fill, ...r];
  const b = Buffer.alloc(16);
  groups.forEach((g, i) => b.writeUInt16BE(parseInt(g, 16), i * 2));
  if (tail4) Buffer.from(tail4).copy(b, 12);
  return b;
}

// Civil date <-> days since 1970-01-01 (proleptic Gregorian), valid for all CQL dates.
function daysFromCivil(y, m, d) {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}
function civilFromDays(z) {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

class LocalDate {
  constructor(year, month, day) {
    this._days = daysFromCivil(year, month, day);
    [this.year, this.month, this.day] = civilFromDays(this._days);
    this.date = new Date(this._days * 86400000);
  }
  static fromDays(days) { const [y, m, d] = civilFromDays(days); return new LocalDate(y, m, d); }
  static fromDate(date) { return LocalDate.fromDays(Math.floor(date.getTime() / 86400000)); }
  static now() { return LocalDate.fromDate(new Date()); }
  static utcNow() { return LocalDate.now(); }
  static fromString(s) {
    const m = /^(-?\d+)-(\d{1,2})-(\d{1,2})$/.exec(s);
    if (!m) {
      if (/^-?\d+$/.test(s)) return LocalDate.fromDays(parseInt(s, 10));
      throw new TypeError(`Invalid date '${s}': expected yyyy-mm-dd`);
    }
    return new LocalDate(parseInt(m[1], 10), parseInt(m[2], 10), parseInt(m[3], 10));
  }
  daysSinceEpoch() { return this._days; }
  equals(o) { return o instanceof LocalDate && o._days === this._days; }
  compare(o) { return this._days - o._days; }
  toString() {
    const y = this.year < 0 ? '-' + String(-this.year).padStart(4, '0') : String(this.year).padStart(4, '0');
    return `${y}-${String(this.month).padStart(2, '0')}-${String(this.day).padStart(2, '0')}`;
  }
  toJSON() { return this.toString(); }
}

const NS_PER_S = 1000000000n;
class LocalTime {
  constructor(totalNanoseconds) {
    const ns = BigInt(Long.isLong(totalNanoseconds) ? totalNanoseconds.toString() : totalNanoseconds);
    if (ns < 0n || ns >= 86400n * NS_PER_S) throw new RangeError('LocalTime must be within one day');
    this._ns = ns;
    this.hour = Number(ns / 3600n / NS_PER_S);
    this.minute = Number((ns / 60n / NS_PER_S) % 60n);
    this.second = Number((ns / NS_PER_S) % 60n);
    this.nanosecond = Number(ns % NS_PER_S);
  }
  static fromString(s) {
    const m = /^(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/.exec(s);
    if (!m) throw new TypeError(`Invalid time '${s}': expected hh:mm:ss.fffffffff`);
    const ns = ((BigInt(m[1]) * 60n + BigInt(m[2])) * 60n + BigInt(m[3] || 0)) * NS_PER_S +
      BigInt((m[4] || '').padEnd(9, '0'));
    return new LocalTime(ns);
  }
  static fromMilliseconds(ms, nanos) { return new LocalTime(BigInt(ms) * 1000000n + BigInt(nanos || 0)); }
  static fromDate(date, nanos) {
    const ms = ((date.getHours() * 60 + date.getMinutes()) * 60 + date.getSeconds()) * 1000 + date.getMilliseconds();
    return LocalTime.fromMilliseconds(ms, nanos);
  }
  static fromParts(h, m, s, ns) { return new LocalTime(((BigInt(h) * 60n + BigInt(m)) * 60n + BigInt(s || 0)) * NS_PER_S + BigInt(ns || 0)); }
  static now(nanos) { return LocalTime.fromDate(new Date(), nanos); }
  getTotalNanoseconds() { return Long.fromString(this._ns.toString()); }
  equals(o) { return o instanceof LocalTime && o._ns === this._ns; }
  compare(o) { return this._ns < o._ns ? -1 : this._ns > o._ns ? 1 : 0; }
  toString() {
    const p = (n) => String(n).padStart(2, '0');
    let s = `${p(this.hour)}:${p(this.minute)}:${p(this.second)}`;
    if (this.nanosecond) s += '.' + String(this.nanosecond).padStart(9, '0').replace(/0+$/, '');
    return s;
  }
  toJSON() { return this.toString(); }
}

const DURATION_UNITS = { y: [12, 0, 0n], mo: [1, 0, 0n], w: [0, 7, 0n], d: [0, 1, 0n],
  h: [0, 0, 3600n * NS_PER_S], m: [0, 0, 60n * NS_PER_S], s: [0, 0, NS_PER_S],
  ms: [0, 0, 1000000n], us: [0, 0, 1000n], 'µs': [0, 0, 1000n], ns: [0, 0, 1n] };

class Duration {
  constructor(months, days, nanoseconds) {
    this.months = months | 0;
    this.days = days | 0;
    this.nanoseconds = Long.isLong(nanoseconds) ? nanoseconds : Long.fromValue(typeof nanoseconds === 'bigint' ? nanoseconds.toString() : (nanoseconds || 0));
  }
  static fromString(input) {
    let s = String(input).trim();
    const neg = s.startsWith('-');
    if (neg) s = s.slice(1);
    const re = /(\d+)(y|mo|w|d|h|ms|m|s|us|µs|ns)/gi;
    let months = 0, days = 0, ns = 0n, consumed = 0, m;
    while ((m = re.exec(s)) !== null) {
      if (m.index !== consumed) break;
      consumed = re.lastIndex;
      const u = DURATION_UNITS[m[2].toLowerCase()];
      const n = BigInt(m[1]);
      months += Number(n) * u[0];
      days += Number(n) * u[1];
      ns += n * u[2];
    }
    if (consumed !== s.length || s.length === 0) throw new TypeError(`Invalid duration '${input}': expected e.g. 1y2mo3d4h5m6s7ms8us9ns`);
    return neg ? new Duration(-months, -days, (-ns).toString()) : new Duration(months, days, ns.toString());
  }
  equals(o) { return o instanceof Duration && o.months === this.months && o.days === this.days && o.nanoseconds.equals(this.nanoseconds); }
  toString() {
    const neg = this.months < 0 || this.days < 0 || this.nanoseconds.isNegative();
    let months = Math.abs(this.months), days = Math.abs(this.days);
    let ns = BigInt(this.nanoseconds.toString());
    if (ns < 0n) ns = -ns;
    let out = '';
    if (months >= 12) { out += Math.floor(months / 12) + 'y'; months %= 12; }
    if (months) out += months + 'mo';
    if (days) out += days + 'd';
    for (const [u, f] of [['h', 3600n * NS_PER_S], ['m', 60n * NS_PER_S], ['s', NS_PER_S], ['ms', 1000000n], ['us', 1000n], ['ns', 1n]]) {
      if (ns >= f) { out += (ns / f) + u; ns %= f; }
    }
    return (neg ? '-' : '') + (out || '0s');
  }
  toJSON() { return this.toString(); }
}

class Tuple {
  constructor(...elements) { this.elements = elements; this.length = elements.length; }
  static fromArray(elements) { return new Tuple(...elements); }
  get(i) { return this.elements[i]; }
  values() { return this.elements.slice(); }
  toString() { return '(' + this.elements.map(String).join(',') + ')'; }
  toJSON() { return this.elements; }
}

class Vector {
  constructor(elements, subtype) {
    if (!Array.isArray(elements) && !ArrayBuffer.isView(elements)) throw new TypeError('Vector needs an array of elements');
    this.elements = Array.from(elements);
    this.length = this.elements.length;
    this.subtype = subtype;
  }
  get(i) { return this.elements[i]; }
  getSubtype() { return this.subtype; }
  toString() { return '[' + this.elements.join(', ') + ']'; }
  toJSON() { return this.elements; }
  [Symbol.iterator]() { return this.elements[Symbol.iterator](); }
}

/** `types.unset`: leaves the bound column untouched (unlike null, which writes a tombstone). */
const unset = Object.freeze({ toString() { return 'unset'; } });

const consistencies = { any: 0, one: 1, two: 2, three: 3, quorum: 4, all: 5, localQuorum: 6,
  eachQuorum: 7, serial: 8, localSerial: 9, localOne: 10 };

const dataTypes = { custom: 0x0000, ascii: 0x0001, bigint: 0x0002, blob: 0x0003, boolean: 0x0004,
  counter: 0x0005, decimal: 0x0006, double: 0x0007, float: 0x0008, int: 0x0009, text: 0x000a,
  timestamp: 0x000b, uuid: 0x000c, varchar: 0x000d, varint: 0x000e, timeuuid: 0x000f, inet: 0x0010,
  date: 0x0011, time: 0x0012, smallint: 0x0013, tinyint: 0x0014, duration: 0x0015, list: 0x0020,
  map: 0x0021, set: 0x0022, udt: 0x0030, tuple: 0x0031 };
dataTypes.getByName = function getByName(name) { return require('./typeparse').parseTypeName(name); };

const responseErrorCodes = { serverError: 0x0000, protocolError: 0x000a, badCredentials: 0x0100,
  unavailableException: 0x1000, overloaded: 0x1001, isBootstrapping: 0x1002, truncateError: 0x1003,
  writeTimeout: 0x1100, readTimeout: 0x1200, readFailure: 0x1300, functionFailure: 0x1400,
  writeFailure: 0x1500, syntaxError: 0x2000, unauthorized: 0x2100, invalid: 0x2200,
  configError: 0x2300, alreadyExists: 0x2400, unprepared: 0x2500, clientWriteFailure: 0x8000 };

const distance = { local: 0, remote: 1, ignored: 2 };

module.exports = {
  Uuid, TimeUuid, Long, Integer, BigDecimal, InetAddress, LocalDate, LocalTime, Duration, Tuple,
  Vector, unset, consistencies, dataTypes, responseErrorCodes, distance,
  timeuuid: (opts) => TimeUuid.now(opts && opts.nodeId, opts && opts.clockId).toString(),
  uuid: () => Uuid.random().toString(),
  _internal: { bigintToTwos, twosToBigint, daysFromCivil, civilFromDays },
};
