'use strict';
// The ES module entry (index.mjs) re-exports index.js: the default export is the same object
// and every top-level name of index.js is a named export, so the two cannot drift apart.
const test = require('node:test');
const assert = require('node:assert/strict');

test('index.mjs names every export of index.js and defaults to the same object', async () => {
  const cjs = require('../..');
  const esm = await import('../../index.mjs');
  assert.equal(esm.default, cjs);
  const named = Object.keys(esm).filter((k) => k !== 'default').sort();
  assert.deepEqual(named, Object.keys(cjs).sort());
  for (const k of named) assert.equal(esm[k], cjs[k], k);
});

test('the package exports map sends require, import and types to the shipped entries', () => {
  const pkg = require('../../package.json');
  assert.deepEqual(pkg.exports['.'], { types: './index.d.ts', import: './index.mjs', require: './index.js' });
  // Self-reference by name resolves through the exports map, as it does for a user.
  assert.equal(require.resolve('weir-cql'), require.resolve('../../index.js'));
});

test('every file an npm script runs exists', () => {
  const pkg = require('../../package.json');
  const fs = require('node:fs');
  const path = require('node:path');
  for (const [name, cmd] of Object.entries(pkg.scripts)) {
    for (const m of cmd.matchAll(/\bnode (?:--[\w=-]+ )*((?:\.\.\/|[\w-]+\/)[\w./-]+)/g)) {
      assert.ok(fs.existsSync(path.resolve(__dirname, '../..', m[1])), `npm run ${name}: ${m[1]} does not exist`);
    }
  }
});
