'use strict';
// The cell decoder (lib/codec.js decode) reads bytes a server sent. Fed random and mutated
// cells of random types, it must return a value or throw an Error, quickly, never hang,
// crash or allocate without bound. A fixed seed makes a failure repeatable; set
// WEIR_CQL_FUZZ_ITERATIONS for a longer run (the default keeps the test under a second or
// two) and WEIR_CQL_FUZZ_SEED to explore other inputs.
const test = require('node:test');
const assert = require('node:assert/strict');
const { decode, encode } = require('../../lib/codec');

const ITERATIONS = Number(process.env.WEIR_CQL_FUZZ_ITERATIONS || 4000);
let seed = Number(process.env.WEIR_CQL_FUZZ_SEED || 0x5eed) >>> 0;
/** xorshift32: small, fast, repeatable. */
function rand() {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed;
}
const pick = (xs) => xs[rand() % xs.length];

const NATIVE = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
  0x10, 0x11, 0x12, 0x13, 0x14, 0x15];
function randomType(depth) {
  const r = rand() % 10;
  if (depth > 2 || r < 5) return { code: pick(NATIVE), info: null };
  switch (r) {
    case 5: return { code: 0x20, info: randomType(depth + 1) };
    case 6: return { code: 0x22, info: randomType(depth + 1) };
    case 7: return { code: 0x21, info: [randomType(depth + 1), randomType(depth + 1)] };
    case 8: return { code: 0x31, info: [randomType(depth + 1), randomType(depth + 1)] };
    default: return { code: 0x30, info: { keyspace: 'ks', name: 'u', fields: [
      { name: 'a', type: randomType(depth + 1) }, { name: 'b', type: randomType(depth + 1) }] } };
  }
}

/** Bytes that look like a cell of `type` often enough to reach deep into the decoder. */
function randomCell(type) {
  const len = rand() % 40;
  const b = Buffer.alloc(len);
  for (let i = 0; i < len; i++) b[i] = rand() & 0xff;
  if ((type.code === 0x20 || type.code === 0x21 || type.code === 0x22) && len >= 4 && rand() % 2) {
    // A collection count: small, huge or negative.
    b.writeInt32BE(pick([0, 1, 2, 3, 0x7fffffff, -1, -0x80000000, rand() | 0]), 0);
  }
  return b;
}

test('the cell decoder returns or throws an Error on random and mutated cells, and never hangs', { timeout: 60000 }, () => {
  let threw = 0;
  const t0 = Date.now();
  for (let i = 0; i < ITERATIONS; i++) {
    const type = randomType(0);
    let cell = randomCell(type);
    // Every fourth input: a valid encoding of a value, then mutated in one byte.
    if (i % 4 === 0 && type.code === 0x20 && type.info.code === 0x09) {
      cell = Buffer.from(encode([1, 2, 3], type));
      if (cell.length) cell[rand() % cell.length] = rand() & 0xff;
    }
    // The page buffer holds other cells after this one: decoding must not depend on the
    // page ending where the cell does.
    const page = Buffer.concat([cell, Buffer.alloc(rand() % 16, 0xff)]);
    try {
      decode(page, 0, cell.length, type, null);
    } catch (e) {
      assert.ok(e instanceof Error, `decode threw a non-Error (${typeof e}) for type 0x${type.code.toString(16)}`);
      threw++;
    }
  }
  const ms = Date.now() - t0;
  assert.ok(threw > 0, 'no input was rejected: the inputs are not reaching the decoder\'s checks');
  assert.ok(ms < 30000, `${ITERATIONS} decodes took ${ms} ms`);
});
