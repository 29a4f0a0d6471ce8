'use strict';
// WEIR_CQL_WORKER_POLICY (src/worker_policy.rs): the tokio workers' scheduling policy is what
// the kernel reports for those threads, and a policy that is not applied says so. Each case
// loads the addon in a child process (the workers start at module load, once per process).
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const pkg = path.resolve(__dirname, '../..');
const SCHED_OTHER = 0;
const SCHED_BATCH = 3;

// Prints the policy field (stat field 41) of every thread named weir-cql, then runtimeStats().
const script = `
  const fs = require('fs');
  require(${JSON.stringify(pkg)});
  const native = require(${JSON.stringify(path.join(pkg, 'lib/native/native.js'))});
  const policies = fs.readdirSync('/proc/self/task')
    .filter((t) => fs.readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim() === 'weir-cql')
    .map((t) => { const s = fs.readFileSync('/proc/self/task/' + t + '/stat', 'utf8');
      return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[41 - 3]); });
  console.log(JSON.stringify({ policies, stats: JSON.parse(native.runtimeStats()) }));`;

function load(policy) {
  const env = { ...process.env, WEIR_CQL_RUNTIME: 'worker' };
  if (policy === undefined) delete env.WEIR_CQL_WORKER_POLICY; else env.WEIR_CQL_WORKER_POLICY = policy;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env });
  assert.equal(r.status, 0, r.stderr);
  return { ...JSON.parse(r.stdout.trim().split('\n').pop()), stderr: r.stderr };
}

const linux = process.platform === 'linux' ? false : 'reads /proc/self/task (Linux)';

test('WEIR_CQL_WORKER_POLICY=batch puts every tokio worker in SCHED_BATCH', { skip: linux }, () => {
  const r = load('batch');
  assert.ok(r.policies.length > 0, 'no thread named weir-cql: the worker runtime did not start');
  assert.deepEqual(r.policies, r.policies.map(() => SCHED_BATCH), `worker policies ${r.policies}; ${r.stderr}`);
  assert.equal(r.stats.workerPolicy, 'batch');
  assert.equal(r.stats.workerPolicyFallback, '');
});

test('the default leaves the workers SCHED_NORMAL', { skip: linux }, () => {
  const r = load(undefined);
  assert.ok(r.policies.length > 0, 'no thread named weir-cql');
  assert.deepEqual(r.policies, r.policies.map(() => SCHED_OTHER));
  assert.equal(r.stats.workerPolicy, 'normal');
});

test('an unknown policy falls back to normal and says so once', { skip: linux }, () => {
  const r = load('fifo');
  assert.deepEqual(r.policies, r.policies.map(() => SCHED_OTHER));
  assert.equal(r.stats.workerPolicy, 'normal');
  assert.match(r.stats.workerPolicyFallback, /WEIR_CQL_WORKER_POLICY="fifo" is not a policy/);
  assert.equal(r.stderr.match(/is not a policy/g).length, 1, r.stderr);
});
