#!/usr/bin/env node
'use strict';
// The package's test command (`npm test`):
//   1. builds the native addon (scripts/build.js: cargo build --release, then copy);
//   2. runs the unit tests (no server);
//   3. starts a three-node Apache Cassandra 5.0.9 cluster on 127.0.0.1-3 from Maven Central
//      jars (scripts/cassandra.sh; the jars are downloaded once into .cassandra/; nodes join
//      one after another), runs the integration tests against it, then the cluster tests
//      (test/cluster: routing counted on the servers, nodetool, kill -9 and SIGSTOP of a
//      node; they run last because they stop and restart node 3), and stops every node by
//      pid afterwards, also when tests fail or the run is interrupted; between the two, the
//      install tests (test/install: the packed tarballs installed into an empty project
//      without cargo, used from CommonJS, ESM and TypeScript, and examples/) run against it;
//   4. fails when any test failed or when zero tests ran.
// Set WEIR_CQL_CONTACT_POINT=host:port to use an already running server instead (nothing
// is started or stopped then; the cluster tests print SKIP: they need nodes they may kill;
// WEIR_CQL_TLS_DIR names the server's tls/ directory, see scripts/cassandra.sh
// CASSANDRA_CLIENT_TLS, else the TLS tests skip and say why).

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const cassandra = path.join(root, 'scripts', 'cassandra.sh');

// Children run asynchronously so that SIGINT/SIGTERM reach this process's handlers at once
// (a synchronous spawn would hold them until the child ended) and the nodes get stopped.
const children = new Set();
function run(cmd, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
    children.add(child);
    child.on('error', (e) => { children.delete(child); reject(e); });
    child.on('exit', (code) => { children.delete(child); resolve(code === null ? 1 : code); });
  });
}

async function runTests(label, dir, extraEnv) {
  const files = fs.readdirSync(path.join(root, dir)).filter((f) => f.endsWith('.test.js')).sort()
    .map((f) => path.join(dir, f));
  const tap = path.join(root, `.test-${label}.tap`);
  const status = await run(process.execPath, ['--test', '--test-concurrency=1',
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    '--test-reporter=tap', `--test-reporter-destination=${tap}`, ...files], extraEnv);
  const text = fs.existsSync(tap) ? fs.readFileSync(tap, 'utf8') : '';
  const count = (name) => { const m = new RegExp(`^# ${name} (\\d+)$`, 'm').exec(text); return m ? Number(m[1]) : 0; };
  const summary = { tests: count('tests'), pass: count('pass'), fail: count('fail'), skipped: count('skipped') };
  console.log(`weir-cql ${label} tests: ${summary.tests} run, ${summary.pass} passed, ${summary.fail} failed, ${summary.skipped} skipped`);
  return { status, ...summary };
}

async function main() {
  if (await run('npm', ['run', 'build', '--silent'], { CARGO_TARGET_DIR: process.env.CARGO_TARGET_DIR || path.join(root, 'target') }) !== 0) {
    console.error('weir-cql: native build failed (needs Rust and cargo on PATH)');
    return 1;
  }
  const unit = await runTests('unit', 'test/unit', {});
  // A stub server that misbehaves on purpose: timeouts, dropped and malformed frames.
  const faults = await runTests('faults', 'test/faults', {});
  let external = process.env.WEIR_CQL_CONTACT_POINT;
  let tlsDir = process.env.WEIR_CQL_TLS_DIR || '';
  let started = false;
  const stop = async () => {
    if (started) { started = false; await run('bash', [cassandra, 'stop']); }
  };
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, async () => {
      console.error(`weir-cql: ${sig}: stopping the test run and the nodes it started`);
      for (const c of children) c.kill('SIGTERM');
      await stop();
      process.exit(130);
    });
  }
  let integration = { status: 1, tests: 0, pass: 0, fail: 0 };
  let install = { status: 1, tests: 0, pass: 0, fail: 0 };
  let cluster = { status: 1, tests: 0, pass: 0, fail: 0 };
  try {
    if (!external) {
      started = true;
      const t0 = Date.now();
      // The nodes accept TLS and plaintext on their CQL ports, with certificates made for
      // this run by one CA; the TLS tests read the CA from WEIR_CQL_TLS_DIR.
      if (await run('bash', [cassandra, 'start', '1', '2', '3'], { CASSANDRA_CLIENT_TLS: '1' }) !== 0) {
        console.error('weir-cql: could not start the Cassandra cluster; see .cassandra/node*/logs');
        return 1;
      }
      console.log(`weir-cql: three nodes up after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      external = '127.0.0.1:9042';
      tlsDir = path.join(process.env.CASSANDRA_HOME_DIR || path.join(root, '.cassandra'), 'tls');
    }
    integration = await runTests('integration', 'test/integration', { WEIR_CQL_CONTACT_POINT: external, WEIR_CQL_TLS_DIR: tlsDir,
      WEIR_CQL_NODES: started ? '3' : (process.env.WEIR_CQL_NODES || '') });
    install = await runTests('install', 'test/install', { WEIR_CQL_CONTACT_POINT: external, WEIR_CQL_TLS_DIR: tlsDir });
    cluster = await runTests('cluster', 'test/cluster', { WEIR_CQL_CONTACT_POINT: external, WEIR_CQL_CLUSTER: started ? '3' : '' });
  } finally {
    await stop();
  }
  const counts = `${unit.tests} unit, ${faults.tests} faults, ${integration.tests} integration, ${install.tests} install and ${cluster.tests} cluster tests ran`;
  if (unit.tests === 0 || faults.tests === 0 || integration.tests === 0 || install.tests === 0 || cluster.tests === 0) {
    console.error(`weir-cql: refusing to pass: ${counts}`);
    return 1;
  }
  // Under the test command the cluster tests must run, never skip.
  if (started && cluster.skipped) {
    console.error(`weir-cql: refusing to pass: ${cluster.skipped} cluster tests skipped on the cluster this command started`);
    return 1;
  }
  if (started && install.skipped) {
    console.error(`weir-cql: refusing to pass: ${install.skipped} install tests skipped on the cluster this command started`);
    return 1;
  }
  for (const r of [unit, faults, integration, install, cluster]) if (r.status !== 0 || r.fail) return 1;
  return 0;
}

main().then((code) => { process.exitCode = code; }, async (e) => {
  console.error(`weir-cql: test command failed: ${e.stack || e}`);
  process.exitCode = 1;
});
