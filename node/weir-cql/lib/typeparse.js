'use strict';
// Parses CQL type names ('int', 'list<text>', 'map<text, frozen<tuple<int, uuid>>>',
// 'vector<float, 3>') into cassandra-driver's {code, info} type descriptors. Used for
// query hints and for types.dataTypes.getByName.

const CODES = { ascii: 1, bigint: 2, blob: 3, boolean: 4, counter: 5, decimal: 6, double: 7,
  float: 8, int: 9, text: 10, timestamp: 11, uuid: 12, varchar: 13, varint: 14, timeuuid: 15,
  inet: 16, date: 17, time: 18, smallint: 19, tinyint: 20, duration: 21 };

function splitArgs(s) {
  const out = [];
  let depth = 0, start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '<') depth++;
    else if (c === '>') depth--;
    else if (c === ',' && depth === 0) { out.push(s.slice(start, i).trim()); start = i + 1; }
  }
  out.push(s.slice(start).trim());
  return out;
}

function parseTypeName(name) {
  const s = String(name).trim();
  const lt = s.indexOf('<');
  const base = (lt < 0 ? s : s.slice(0, lt)).trim().toLowerCase();
  if (lt < 0) {
    if (base in CODES) return { code: CODES[base] === 13 ? 13 : CODES[base], info: null };
    throw new TypeError(`Unknown CQL type '${name}'`);
  }
  if (!s.endsWith('>')) throw new TypeError(`Unbalanced type '${name}'`);
  const args = splitArgs(s.slice(lt + 1, -1));
  switch (base) {
    case 'frozen': return parseTypeName(args[0]);
    case 'list': return { code: 0x20, info: parseTypeName(args[0]) };
    case 'set': return { code: 0x22, info: parseTypeName(args[0]) };
    case 'map': return { code: 0x21, info: [parseTypeName(args[0]), parseTypeName(args[1])] };
    case 'tuple': return { code: 0x31, info: args.map(parseTypeName) };
    case 'vector': return { code: 0, customTypeName: 'vector', info: [parseTypeName(args[0]), parseInt(args[1], 10)] };
    default: throw new TypeError(`Unknown CQL type '${name}'`);
  }
}

/** Normalizes a hint: a type name, a numeric code, or a {code, info} object. */
function toType(hint) {
  if (hint === null || hint === undefined) return null;
  if (typeof hint === 'string') return parseTypeName(hint);
  if (typeof hint === 'number') return { code: hint, info: null };
  if (typeof hint === 'object' && typeof hint.code === 'number') return hint;
  throw new TypeError(`Invalid type hint ${String(hint)}`);
}

function typeName(t) {
  if (!t) return 'unknown';
  const names = { 0x20: 'list', 0x21: 'map', 0x22: 'set', 0x31: 'tuple' };
  if (t.code === 0 && t.customTypeName === 'vector') return `vector<${typeName(t.info[0])}, ${t.info[1]}>`;
  if (t.code === 0x30) return `udt ${t.info && t.info.name}`;
  if (names[t.code]) {
    const args = Array.isArray(t.info) ? t.info.map(typeName).join(', ') : typeName(t.info);
    return `${names[t.code]}<${args}>`;
  }
  for (const [k, v] of Object.entries(CODES)) if (v === t.code) return k;
  return `type 0x${t.code.toString(16)}`;
}

module.exports = { parseTypeName, toType, typeName };
