'use strict';
// index.d.ts against a program written for cassandra-driver 4.x's typings
// (test/typescript/program.ts, with `cassandra-driver` mapped to this package's typings):
// `tsc --noEmit` must accept it. typescript and @types/node are locked devDependencies.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

test('tsc --noEmit accepts a cassandra-driver program against index.d.ts', () => {
  const root = path.resolve(__dirname, '../..');
  const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '-p', path.join(root, 'test/typescript/tsconfig.json')], { encoding: 'utf8' });
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
});
