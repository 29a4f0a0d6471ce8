#!/usr/bin/env node
'use strict';
// The package's test command (`npm test`):
//   1. builds the native addon (scripts/build.js: cargo build --release, then copy);
//   2. runs the unit tests (no server);
//   3. starts Apache Cassandra 5.0.9 from Maven Central jars (scripts/cassandra.sh; the jars
//      are downloaded once into .cassandra/), runs the integration tests against it, and
//      stops it by pid afterwards, also when tests fail or the run is interrupted;
//   4. fails when any test failed or when zero tests ran.
// Set WEIR_CQL_CONTACT_POINT=host:port to use an already running server instead (nothing
// is started or stopped then; WEIR_CQL_TLS_DIR names its tls/ directory, see
// scripts/cassandra.sh CASSANDRA_CLIENT_TLS, else the TLS tests skip and say why).

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const cassandra = path.join(root, 'scripts', 'cassandra.sh');

function run(cmd, args, env) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.error) throw r.error;
  return r.status === null ? 1 : r.status;
}

function runTests(label, dir, extraEnv) {
  const files = fs.readdirSync(path.join(root, dir)).filter((f) => f.endsWith('.test.js')).sort()
    .map((f) => path.join(dir, f));
  const tap = path.join(root, `.test-${label}.tap`);
  const status = run(process.execPath, ['--test', '--test-concurrency=1',
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    '--test-reporter=tap', `--test-reporter-destination=${tap}`, ...files], extraEnv);
  const text = fs.existsSync(tap) ? fs.readFileSync(tap, 'utf8') : '';
  const count = (name) => { const m = new RegExp(`^# ${name} (\\d+)$`, 'm').exec(text); return m ? Number(m[1]) : 0; };
  const summary = { tests: count('tests'), pass: count('pass'), fail: count('fail'), skipped: count('skipped') };
  console.log(`weir-cql ${label} tests: ${summary.tests} run, ${summary.pass} passed, ${summary.fail} failed, ${summary.skipped} skipped`);
  return { status, ...summary };
}

function main() {
  if (run('npm', ['run', 'build', '--silent'], { CARGO_TARGET_DIR: process.env.CARGO_TARGET_DIR || path.join(root, 'target') }) !== 0) {
    console.error('weir-cql: native build failed (needs Rust and cargo on PATH)');
    return 1;
  }
  const unit = runTests('unit', 'test/unit', {});
  let external = process.env.WEIR_CQL_CONTACT_POINT;
  let tlsDir = process.env.WEIR_CQL_TLS_DIR || '';
  let started = false;
  const stop = () => {
    if (started) { started = false; run('bash', [cassandra, 'stop']); }
  };
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { stop(); process.exit(130); });
  let integration = { status: 1, tests: 0, pass: 0, fail: 0 };
  try {
    if (!external) {
      started = true;
      // The node accepts TLS and plaintext on its CQL port, with a certificate made for
      // this run; the TLS tests read the CA from WEIR_CQL_TLS_DIR.
      if (run('bash', [cassandra, 'start'], { CASSANDRA_CLIENT_TLS: '1' }) !== 0) {
        console.error('weir-cql: could not start Cassandra; see .cassandra/node/logs');
        return 1;
      }
      external = `${process.env.CASSANDRA_ADDR || '127.0.0.1'}:9042`;
      tlsDir = path.join(process.env.CASSANDRA_HOME_DIR || path.join(root, '.cassandra'), 'node', 'tls');
    }
    integration = runTests('integration', 'test/integration', { WEIR_CQL_CONTACT_POINT: external, WEIR_CQL_TLS_DIR: tlsDir });
  } finally {
    stop();
  }
  const total = unit.tests + integration.tests;
  if (total === 0 || unit.tests === 0 || integration.tests === 0) {
    console.error(`weir-cql: refusing to pass: ${unit.tests} unit and ${integration.tests} integration tests ran`);
    return 1;
  }
  if (unit.status !== 0 || integration.status !== 0 || unit.fail || integration.fail) return 1;
  return 0;
}

process.exitCode = main();
