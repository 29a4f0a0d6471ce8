'use strict';
// The public surface: index.d.ts declares what index.js exports, and the generated native
// typings match the native module, so the typings cannot drift from the code.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const cql = require('../..');

const dts = fs.readFileSync(path.join(__dirname, '../../index.d.ts'), 'utf8');

test('every Client method is declared in index.d.ts', () => {
  const methods = Object.getOwnPropertyNames(cql.Client.prototype).filter((m) => !m.startsWith('_') && m !== 'constructor');
  // Methods as `name(`, getters (hosts) as `name:`.
  for (const m of methods) assert.match(dts, new RegExp(`\\b${m}[(:]`), `Client.${m} missing from index.d.ts`);
});

test('every types, errors and concurrent export is declared', () => {
  for (const name of Object.keys(cql.types).filter((k) => !k.startsWith('_'))) {
    assert.match(dts, new RegExp(`\\b${name}\\b`), `types.${name} missing from index.d.ts`);
  }
  for (const name of Object.keys(cql.errors).filter((k) => k !== 'fromNative')) {
    assert.match(dts, new RegExp(`class ${name}\\b`), `errors.${name} missing from index.d.ts`);
  }
  assert.match(dts, /function executeConcurrent\(/);
  for (const ns of ['loadBalancing', 'retry', 'reconnection', 'speculativeExecution', 'timestampGeneration', 'addressResolution']) {
    for (const name of Object.keys(cql.policies[ns])) assert.match(dts, new RegExp(`class ${name}\\b`), `policies.${ns}.${name} missing from index.d.ts`);
  }
  for (const name of Object.keys(cql.auth)) assert.match(dts, new RegExp(`class ${name}\\b`), `auth.${name} missing from index.d.ts`);
  assert.match(dts, /class ExecutionProfile\b/);
});

test('the generated native typings list every native method', () => {
  const nativeDts = fs.readFileSync(path.join(__dirname, '../../lib/native/native.d.ts'), 'utf8');
  const { NativeSession } = require('../../lib/native/native.js');
  for (const m of Object.getOwnPropertyNames(NativeSession.prototype).filter((n) => n !== 'constructor')) {
    assert.match(nativeDts, new RegExp(`\\b${m}\\(`), `native ${m} missing from the generated typings`);
  }
});

test('Client validates its options with ArgumentError', () => {
  assert.throws(() => new cql.Client(), cql.errors.ArgumentError);
  assert.throws(() => new cql.Client({ contactPoints: [] }), /contactPoints/);
  assert.throws(() => new cql.Client({ contactPoints: ['x'], maxPrepared: 0 }), /maxPrepared/);
});

test('error classes carry cassandra-driver fields', () => {
  const e = cql.errors.fromNative(0, 0x2200, 'bad', { keyspace: 'k' });
  assert.ok(e instanceof cql.errors.ResponseError && e instanceof cql.errors.DriverError && e instanceof Error);
  assert.equal(e.code, cql.types.responseErrorCodes.invalid);
  const n = cql.errors.fromNative(1, 0, 'x', { innerErrors: { '10.0.0.1:9042': 'refused' } });
  assert.ok(n instanceof cql.errors.NoHostAvailableError);
  assert.deepEqual(Object.keys(n.innerErrors), ['10.0.0.1:9042']);
});
