'use strict';
// README.md's "Supported cassandra-driver surface" table and its "What throws
// NotSupportedError" table are kept true: every name the first table lists exists in the
// package, every export of the package is listed, and every line of the second table throws
// NotSupportedError when run.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const cassandra = require('../..');

const readme = fs.readFileSync(path.join(__dirname, '../../README.md'), 'utf8');

/** The backticked items of the first column of the table between <!-- NAME:begin/end -->. */
function firstColumn(name) {
  const m = new RegExp(`<!-- ${name}:begin -->\\n([\\s\\S]*?)<!-- ${name}:end -->`).exec(readme);
  assert.ok(m, `README.md has no ${name}:begin/end block`);
  const rows = m[1].trim().split('\n').slice(2);
  assert.ok(rows.length > 0, `the ${name} table is empty`);
  return rows.map((row) => {
    const cell = row.split(/(?<!\\)\|/)[1];
    // Split on backticks outside parentheses/brackets: an item may contain commas.
    return [...cell.matchAll(/`([^`]+)`/g)].map((x) => x[1]);
  });
}

const client = () => new cassandra.Client({ contactPoints: ['127.0.0.1'], localDataCenter: 'datacenter1' });

/** Resolves `a.b.c` against the package, `Client#m` against a Client instance. */
function resolve(name) {
  const [head, member] = name.split('#');
  let v = cassandra;
  for (const part of head.split('.')) {
    if (v === undefined || v === null || !(part in Object(v))) return undefined;
    v = v[part];
  }
  if (member === undefined) return v;
  const instance = client();
  return member in instance ? instance[member] : undefined;
}

test('every name in the README surface table exists in the package', () => {
  const names = firstColumn('surface').flat();
  assert.ok(names.length > 50, `only ${names.length} names in the table`);
  const missing = names.filter((n) => resolve(n) === undefined);
  assert.deepEqual(missing, [], 'listed in README.md but not exported');
});

test('every export of the package is in the README surface table', () => {
  const listed = new Set(firstColumn('surface').flat());
  const exported = [];
  for (const [k, v] of Object.entries(cassandra)) {
    const nested = ['types', 'errors', 'auth', 'concurrent', 'mapping', 'codec'].includes(k);
    if (k === 'policies') {
      for (const [ns, members] of Object.entries(v)) {
        if (typeof members === 'function') exported.push(`policies.${ns}`);
        else for (const m of Object.keys(members)) exported.push(`policies.${ns}.${m}`);
      }
    } else if (nested) {
      for (const m of Object.keys(v).filter((m) => !m.startsWith('_') && m !== 'fromNative')) exported.push(`${k}.${m}`);
    } else {
      exported.push(k);
    }
  }
  const instance = client();
  let proto = Object.getPrototypeOf(instance);
  const methods = new Set(Object.getOwnPropertyNames(proto).filter((m) => !m.startsWith('_') && m !== 'constructor'
    // log(): the internal logger behind the 'log' event, as in cassandra-driver.
    && m !== 'log'));
  for (const m of ['hosts', 'metadata']) methods.add(m);
  for (const m of methods) exported.push(`Client#${m}`);
  const unlisted = exported.filter((n) => !listed.has(n));
  assert.deepEqual(unlisted, [], 'exported but missing from the README table');
});

test('every line of the README NotSupportedError table throws NotSupportedError', async () => {
  const items = firstColumn('unsupported').flat();
  assert.ok(items.length >= 15, `only ${items.length} lines`);
  const scope = { ...cassandra, client: client() };
  const evaluate = (expr) => new Function(...Object.keys(scope), `return (${expr});`)(...Object.values(scope));
  for (const item of items) {
    let thrown;
    try {
      if (item.startsWith('{')) {
        new cassandra.Client({ contactPoints: ['127.0.0.1'], localDataCenter: 'datacenter1', ...evaluate(item) });
      } else {
        await evaluate(item);
      }
    } catch (e) {
      thrown = e;
    }
    assert.ok(thrown instanceof cassandra.errors.NotSupportedError,
      `${item}: expected NotSupportedError, got ${thrown ? `${thrown.constructor.name}: ${thrown.message}` : 'no error'}`);
  }
  await scope.client.shutdown();
});
