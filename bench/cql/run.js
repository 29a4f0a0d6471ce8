#!/usr/bin/env node
'use strict';
// The seed's four CQL benchmarks for weir-cql, cassandra-driver (npm) and the raw `scylla`
// crate, against Apache Cassandra 5.0.9 (keyspace RF=1), each run in a fresh process.
// Prints seconds, ops/s and client CPU seconds per run, then the ratios the targets name,
// and the seed's traffic table: packets and bytes driver<->node and node<->node (kernel
// tcp_info counters, see traffic.js) and the requests the nodes forwarded to a replica
// (MUTATION_REQ / READ_REQ messages received, counted by the nodes over JMX).
//
//   node run.js [--ops 62500,250000] [--benches insert,select,concurrent_insert,concurrent_select]
//               [--drivers weir-cql,cassandra-driver,rust-raw] [--nodes 1,3] [--rounds 1] [--pin]
//               [--warmup 2000]
//
// --nodes lists the cluster sizes to run, one after another (default 1,3: one node, then
// the seed's three on 127.0.0.1..3); --rounds repeats every benchmark, printing each
// round's ratios, then their medians; --pin puts every node's JVM on CPU 0 and the client on
// CPU 1 (taskset), so the client's own cost shows; --warmup runs that many sequential
// operations in each sequential run's process before the clock starts (not counted), so
// insert and select measure V8's JIT and the server in their steady state, not a cold
// start that short runs are mostly made of (default 2000; 0 turns it off).
// Starts the nodes with node/weir-cql/scripts/cassandra.sh and stops them by pid at the end,
// unless WEIR_CQL_CONTACT_POINT names a running server (then one size only; --pin and the
// forwarded counts work only on nodes cassandra.sh started). Writes results/<time>.json and .md.
// On more than one node it prints the traffic verdict of issue 21 per benchmark (MET/MISSED).

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const here = __dirname;
const repo = path.resolve(here, '../..');
const pkg = path.join(repo, 'node/weir-cql');
const rawDir = path.join(here, 'rust-raw');
const rawBin = path.join(rawDir, 'target/release/cql-bench-rust-raw');

function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1].split(',') : dflt;
}
const OPS = arg('ops', ['62500', '250000']).map(Number);
const BENCHES = arg('benches', ['insert', 'select', 'concurrent_insert', 'concurrent_select']);
const DRIVERS = arg('drivers', ['weir-cql', 'cassandra-driver', 'rust-raw']);
const NODE_COUNTS = arg('nodes', ['1', '3']).map(Number);
const ROUNDS = Number(arg('rounds', ['1'])[0]);
const PIN = process.argv.includes('--pin');
const WARMUP_OPS = Number(arg('warmup', ['2000'])[0]);
const traffic = require('./traffic');
const serverCpu = require('./servercpu');

function sh(cmd, args, opts) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (status ${r.status})`);
}

function build() {
  if (!fs.existsSync(path.join(here, 'node_modules/cassandra-driver'))) sh('npm', ['install', '--no-audit', '--no-fund'], { cwd: here });
  if (!fs.readdirSync(path.join(pkg, 'lib/native')).some((f) => f.endsWith('.node'))) sh('npm', ['run', 'build'], { cwd: pkg });
  sh('cargo', ['build', '--release', '--quiet'], { cwd: rawDir, env: { ...process.env, CARGO_TARGET_DIR: path.join(rawDir, 'target') } });
}

async function admin(host, fn) {
  const cql = require(pkg);
  const c = new cql.Client({ contactPoints: [host], localDataCenter: 'datacenter1', socketOptions: { readTimeout: 120000 } });
  try { return await fn(c, cql); } finally { await c.shutdown(); }
}

async function prepareTable(host, bench) {
  await admin(host, async (c, cql) => {
    await c.execute("CREATE KEYSPACE IF NOT EXISTS benchmarks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    await c.execute('CREATE TABLE IF NOT EXISTS benchmarks.basic (id uuid PRIMARY KEY, val int)');
    await c.execute('TRUNCATE benchmarks.basic');
    if (bench.includes('select')) {
      for (let i = 0; i < 10; i++) await c.execute('INSERT INTO benchmarks.basic (id, val) VALUES (?, ?)', [cql.types.Uuid.random(), i], { prepare: true });
    }
  });
}

async function countRows(host) {
  return admin(host, async (c) => {
    const rs = await c.execute('SELECT COUNT(*) AS n FROM benchmarks.basic', [], { readTimeout: 120000 });
    return rs.first().n.toNumber();
  });
}

function runOne(driver, bench, ops, host, serverPids = []) {
  let [cmd, args] = driver === 'rust-raw' ? [rawBin, [bench, String(ops), host]]
    : [process.execPath, [path.join(here, 'one.js'), driver, bench, String(ops), host]];
  if (PIN) { args = ['-c', '1', cmd, ...args]; cmd = 'taskset'; }
  const r = spawnSync(cmd, args, { cwd: here, encoding: 'utf8', maxBuffer: 1 << 24,
    env: { ...process.env, CQL_BENCH_WARMUP_OPS: String(WARMUP_OPS), CQL_BENCH_SERVER_PIDS: serverPids.join(',') } });
  if (r.status !== 0) throw new Error(`${driver} ${bench} ${ops}: exit ${r.status}: ${(r.stderr || '').slice(-2000)}`);
  const line = r.stdout.trim().split('\n').pop();
  return JSON.parse(line);
}

const fmt = (n, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
const usPerOp = (s, ops) => fmt((s / ops) * 1e6, 1);
const cassandra = path.join(pkg, 'scripts/cassandra.sh');

/** Requests node n received from other nodes' coordinators: MUTATION_REQ and READ_REQ. */
function forwardedOn(n) {
  const r = spawnSync('bash', [cassandra, 'nodetool', String(n), 'sjk', 'mx', '-all', '-b',
    'org.apache.cassandra.metrics:type=Messaging,name=*_REQ-WaitLatency', '-mg', '-f', 'Count'], { encoding: 'utf8' });
  if (r.status !== 0) return NaN;
  const lines = r.stdout.split('\n').map((l) => l.trim()).filter(Boolean);
  let n2 = 0;
  for (let i = 0; i + 1 < lines.length; i += 2) if (/name=(MUTATION|READ)_REQ-WaitLatency$/.test(lines[i])) n2 += Number(lines[i + 1]);
  return n2;
}
const forwarded = (nodes) => { let s = 0; for (let n = 1; n <= nodes; n++) s += forwardedOn(n); return s; };

/** Puts every thread of every node's JVM on CPU 0. */
function pinNodes(nodes) {
  for (let n = 1; n <= nodes; n++) {
    const pid = spawnSync('bash', [cassandra, 'pid', String(n)], { encoding: 'utf8' }).stdout.trim();
    if (!/^\d+$/.test(pid)) throw new Error(`--pin: node ${n} has no pid from cassandra.sh (not started by it?)`);
    sh('taskset', ['-apc', '0', pid], { stdio: 'ignore' });
  }
}

const median = (xs) => { const v = xs.filter(Number.isFinite).sort((a, b) => a - b); const k = v.length >> 1; return !v.length ? NaN : v.length % 2 ? v[k] : (v[k - 1] + v[k]) / 2; };

/**
 * Issue 21's traffic targets on more than one node, per benchmark and round: weir-cql's
 * node<->node segments no more than cassandra-driver's (gossip included), and zero
 * prepared requests forwarded by a non-replica coordinator (every benchmark is prepared).
 */
function trafficVerdict(results) {
  const out = ['Traffic verdict (nodes > 1; target: node<->node no more than cassandra-driver\'s, zero forwarded):', ''];
  for (const w of results.filter((r) => r.driver === 'weir-cql' && r.nodes > 1)) {
    const c = results.find((r) => r.driver === 'cassandra-driver' && r.nodes === w.nodes && r.round === w.round && r.bench === w.bench && r.ops === w.ops);
    const nodeOk = c && Number.isFinite(w.node_packets) && Number.isFinite(c.node_packets) ? w.node_packets <= c.node_packets : null;
    const fwdOk = Number.isFinite(w.forwarded) ? w.forwarded === 0 : null;
    const say = (ok) => (ok === null ? 'n/a' : ok ? 'MET' : 'MISSED');
    out.push(`- ${w.nodes} nodes, round ${w.round}, ${w.bench} ${w.ops}: node<->node ${w.node_packets} vs cassandra-driver ${c ? c.node_packets : 'n/a'} segments: ${say(nodeOk)}; forwarded by a non-replica ${Number.isFinite(w.forwarded) ? w.forwarded : 'n/a'}: ${say(fwdOk)}`);
  }
  if (out.length === 2) out.push('- no multi-node weir-cql run');
  return out;
}

function report(results) {
  const lines = [];
  lines.push('| nodes | round | benchmark | ops | driver | seconds | ops/s | client CPU s | client CPU us/op | server CPU s | server CPU us/op |');
  lines.push('|---:|---:|---|---:|---|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    lines.push(`| ${r.nodes} | ${r.round} | ${r.bench} | ${r.ops} | ${r.driver} | ${fmt(r.seconds)} | ${Math.round(r.ops / r.seconds)} | ${fmt(r.cpu_seconds)} | ${usPerOp(r.cpu_seconds, r.ops)} | ${fmt(r.server_cpu_seconds)} | ${usPerOp(r.server_cpu_seconds, r.ops)} |`);
  }
  lines.push('');
  lines.push('Traffic during each run (kernel TCP segment and byte counters; node<->node includes gossip):');
  lines.push('');
  lines.push('| nodes | round | benchmark | ops | driver | driver<->node packets | driver<->node MB | node<->node packets | node<->node MB | requests forwarded by a non-replica coordinator |');
  lines.push('|---:|---:|---|---:|---|---:|---:|---:|---:|---:|');
  for (const r of results) {
    const mb = (b) => (Number.isFinite(b) ? (b / 1e6).toFixed(1) : 'n/a');
    lines.push(`| ${r.nodes} | ${r.round} | ${r.bench} | ${r.ops} | ${r.driver} | ${r.driver_packets ?? 'n/a'} | ${mb(r.driver_bytes)} | ${r.node_packets} | ${mb(r.node_bytes)} | ${Number.isFinite(r.forwarded) ? r.forwarded : 'n/a'} |`);
  }
  lines.push('');
  lines.push(...trafficVerdict(results));
  lines.push('');
  lines.push('Ratios per round, then the median of the rounds (weir-cql against each):');
  lines.push('');
  lines.push('| nodes | round | benchmark | ops | speed vs cassandra-driver (target >= 0.95 sequential, >= 1.5 concurrent) | CPU vs cassandra-driver (target <= 1) | server CPU vs cassandra-driver\'s | speed vs rust-raw (target > 1 sequential) |');
  lines.push('|---:|---:|---|---:|---:|---:|---:|---:|');
  for (const nodes of [...new Set(results.map((r) => r.nodes))]) {
    for (const ops of OPS) {
      for (const bench of BENCHES) {
        const rows = [];
        for (let round = 1; round <= ROUNDS; round++) {
          const get = (d) => results.find((r) => r.nodes === nodes && r.round === round && r.driver === d && r.bench === bench && r.ops === ops);
          const w = get('weir-cql'), c = get('cassandra-driver'), raw = get('rust-raw');
          if (!w) continue;
          const row = { speed: c ? c.seconds / w.seconds : NaN, cpu: c ? w.cpu_seconds / c.cpu_seconds : NaN,
            server: c ? w.server_cpu_seconds / c.server_cpu_seconds : NaN, raw: raw ? raw.seconds / w.seconds : NaN };
          rows.push(row);
          lines.push(`| ${nodes} | ${round} | ${bench} | ${ops} | ${fmt(row.speed)}x | ${fmt(row.cpu)} | ${fmt(row.server)} | ${fmt(row.raw)}x |`);
        }
        if (rows.length > 1) {
          lines.push(`| ${nodes} | median | ${bench} | ${ops} | ${fmt(median(rows.map((x) => x.speed)))}x | ${fmt(median(rows.map((x) => x.cpu)))} | ${fmt(median(rows.map((x) => x.server)))} | ${fmt(median(rows.map((x) => x.raw)))}x |`);
        }
      }
    }
  }
  return lines.join('\n');
}

/** Runs every round of every benchmark on one cluster of `nodes` nodes. */
async function runCluster(nodes, results) {
  let host = process.env.WEIR_CQL_CONTACT_POINT;
  let started = false;
  const stop = () => { if (started) { started = false; spawnSync('bash', [cassandra, 'stop'], { stdio: 'inherit' }); } };
  const onSignal = () => { stop(); process.exit(130); };
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, onSignal);
  try {
    if (!host) {
      started = true;
      sh('bash', [cassandra, 'start', ...Array.from({ length: nodes }, (_, i) => String(i + 1))]);
      host = '127.0.0.1:9042';
    }
    if (PIN) pinNodes(nodes);
    console.log(`bench/cql: ${nodes} node(s)${PIN ? ', nodes pinned to CPU 0 and the client to CPU 1' : ''}, ${ROUNDS} round(s), ${WARMUP_OPS} uncounted warm-up operations per sequential run`);
    // Warm the server's JIT before measuring (not reported), with the benchmarks chosen
    // (a 3-node SELECT * is a range scan: warming it when it is not measured costs minutes).
    for (const bench of BENCHES.filter((b) => b.startsWith('concurrent'))) {
      await prepareTable(host, bench);
      // A warm-up that fails (a 3-node range scan on one loaded CPU can time out on the
      // server) is reported and the measured runs go ahead.
      try {
        runOne('rust-raw', bench, bench.endsWith('select') ? Math.round(5000 / nodes) : 50000, host);
      } catch (e) {
        console.log(`bench/cql: warm-up ${bench} failed, continuing: ${e.message.split('\n')[0]}`);
      }
    }
    for (let round = 1; round <= ROUNDS; round++) {
      for (const ops of OPS) {
        for (const bench of BENCHES) {
          // Rotate the driver order per benchmark and round: the first run after a TRUNCATE
          // meets a busier server, and no driver should always pay for that.
          const shift = ((round - 1) + OPS.indexOf(ops) * BENCHES.length + BENCHES.indexOf(bench)) % DRIVERS.length;
          const order = DRIVERS.slice(shift).concat(DRIVERS.slice(0, shift));
          for (const driver of order) {
            await prepareTable(host, bench);
            await new Promise((r) => setTimeout(r, 2000));
            // Forwarded requests are counted for the inserts (JMX reads take seconds per node).
            const countFwd = started && bench.endsWith('insert');
            const fwd0 = countFwd ? forwarded(nodes) : NaN;
            const node0 = traffic.internodeSockets();
            const jvmPids = serverCpu.pids(nodes);
            let r;
            try {
              r = runOne(driver, bench, ops, host, jvmPids);
            } catch (e) {
              // One failed run (a server-side timeout under load) is recorded, not fatal.
              console.log(`${nodes} node(s) round ${round} ${bench} ${ops} ${driver}: FAILED ${e.message.split('\n')[0]}`);
              results.push({ nodes, round, driver, bench, ops, seconds: NaN, cpu_seconds: NaN, error: e.message });
              continue;
            }
            const nodeMoved = traffic.moved(node0, traffic.internodeSockets());
            // The server's CPU during the timed part, as the child measured it (NaN on nodes
            // cassandra.sh did not start).
            const serverSeconds = r.server_cpu_seconds ?? NaN;
            Object.assign(r, { nodes, round, node_packets: nodeMoved.packets, node_bytes: nodeMoved.bytes, server_cpu_seconds: serverSeconds });
            r.forwarded = countFwd ? forwarded(nodes) - fwd0 : NaN;
            if (bench === 'concurrent_insert' || bench === 'insert') {
              const n = await countRows(host);
              if (n !== ops) throw new Error(`${driver} ${bench}: table holds ${n} rows after ${ops} inserts`);
            }
            results.push(r);
            console.log(`${nodes} node(s) round ${round} ${bench.padEnd(18)} ${String(ops).padStart(7)} ${driver.padEnd(17)} ${fmt(r.seconds).padStart(8)} s ${String(Math.round(ops / r.seconds)).padStart(7)} ops/s  cpu ${fmt(r.cpu_seconds)} s  server cpu ${fmt(serverSeconds)} s (${usPerOp(r.cpu_seconds, ops)} / ${usPerOp(serverSeconds, ops)} us per op)`);
          }
        }
      }
    }
  } finally {
    stop();
    for (const sig of ['SIGINT', 'SIGTERM']) process.off(sig, onSignal);
  }
}

async function main() {
  build();
  const counts = process.env.WEIR_CQL_CONTACT_POINT ? NODE_COUNTS.slice(0, 1) : NODE_COUNTS;
  const results = [];
  try {
    for (const nodes of counts) await runCluster(nodes, results);
  } finally {
    // Whatever ran is reported, also when a later cluster failed.
    const md = report(results);
    console.log('\n' + md);
    fs.mkdirSync(path.join(here, 'results'), { recursive: true });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    fs.writeFileSync(path.join(here, `results/${stamp}.json`), JSON.stringify(results, null, 1));
    fs.writeFileSync(path.join(here, `results/${stamp}.md`), md + '\n');
  }
}

main().catch((e) => { console.error(`bench/cql: ${e.message}`); process.exitCode = 1; });
