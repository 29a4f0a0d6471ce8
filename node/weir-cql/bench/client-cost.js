#!/usr/bin/env node
'use strict';
// Client cost, side by side in one run: weir-cql, cassandra-driver, @scylladb/driver, the raw
// `scylla` crate and Node's own floor (node-floor, see client.js), against the stub server
// (bench/stub, near-zero cost per request) or a real server, server on CPU 0 and client on
// CPU 1 (taskset). Per round, every workload x in-flight count runs each driver in a fresh
// process, in an order rotated every round. Per run: throughput (requests/s over the timed
// part), client CPU per request (the client process's user+system CPU, getrusage, over the
// timed part), system calls per request (perf stat -e raw_syscalls:sys_enter, enabled by the
// client for the timed part only), and the server's CPU per request (/proc/<pid>/stat over
// the same run, whole run). Prints medians of the rounds with min-max spread, the ratios
// to cassandra-driver, and the targets' verdicts; writes the table as Markdown to --out.
//
//   node bench/client-cost.js [--rounds 3] [--workloads insert,select1,select100]
//        [--inflight 1,32,256,1024] [--drivers weir-cql,cassandra-driver,scylladb-driver,rust-raw,node-floor]
//        [--seq-ops 5000] [--ops 40000] [--warmup 2000] [--server stub | --server HOST:PORT --server-pids P1,P2]
//        [--out FILE.md]
//
// scylladb-driver needs SCYLLADB_DRIVER_DIR (a built scylladb/nodejs-rs-driver checkout);
// without it that driver is left out and the run says so. A real server must hold
// benchmarks.basic (id uuid PRIMARY KEY, val int) with at least 100 rows and the row
// client.js's select1 reads (bench/cassandra-setup.js writes them).

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const here = __dirname;
function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : dflt;
}
const ROUNDS = Number(arg('rounds', '3'));
const WORKLOADS = arg('workloads', 'insert,select1,select100').split(',');
const INFLIGHT = arg('inflight', '1,32,256,1024').split(',').map(Number);
let DRIVERS = arg('drivers', 'weir-cql,cassandra-driver,scylladb-driver,rust-raw,node-floor').split(',');
const SEQ_OPS = Number(arg('seq-ops', '5000'));
const OPS = Number(arg('ops', '40000'));
const WARMUP = Number(arg('warmup', '2000'));
const SERVER = arg('server', 'stub');
const SERVER_PIDS = arg('server-pids', '').split(',').filter(Boolean).map(Number);
const OUT = arg('out', null);
if (!(ROUNDS >= 1) || INFLIGHT.some((n) => !(n >= 1)) || !(SEQ_OPS >= 1) || !(OPS >= 1)) {
  console.error('client-cost.js: --rounds, --inflight, --seq-ops and --ops take positive whole numbers');
  process.exit(2);
}
const stubBin = path.join(here, 'stub/target/release/weir-cql-stub');
const rawBin = path.join(here, 'raw/target/release/weir-cql-bench-raw');
const notes = [];

function cargoBuild(dir, bin) {
  const r = spawnSync('cargo', ['build', '--release', '--quiet'], { cwd: dir, stdio: 'inherit' });
  if (r.status !== 0 || !fs.existsSync(bin)) throw new Error(`cargo build --release in ${dir} failed`);
}

if (DRIVERS.includes('scylladb-driver') && !process.env.SCYLLADB_DRIVER_DIR) {
  DRIVERS = DRIVERS.filter((d) => d !== 'scylladb-driver');
  notes.push('@scylladb/driver left out: SCYLLADB_DRIVER_DIR is not set');
}
if (DRIVERS.includes('rust-raw')) cargoBuild(path.join(here, 'raw'), rawBin);

function cpuTicks(pid) {
  // utime + stime: fields 14 and 15; the command name may hold spaces, so count after ')'.
  const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}
const TICK_US = 1e6 / 100; // USER_HZ

async function startStub() {
  cargoBuild(path.join(here, 'stub'), stubBin);
  const child = spawn('taskset', ['-c', '0', stubBin, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const address = await new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
      const m = /listening (\S+)/.exec(text);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`the stub exited (${code}) before listening`)));
  });
  return { child, address, pids: [child.pid] };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function command(driver, workload, inflight, ops, address) {
  if (driver === 'rust-raw') return [rawBin, workload, String(inflight), String(ops), address];
  return [process.execPath, path.join(here, 'client.js'), driver, workload, String(inflight), String(ops), address];
}

function runOnce(driver, workload, inflight, ops, address, serverPids) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'weir-cql-cost-'));
  const ctl = path.join(dir, 'ctl'), ack = path.join(dir, 'ack'), out = path.join(dir, 'perf.csv');
  try {
    for (const f of [ctl, ack]) if (spawnSync('mkfifo', [f]).status !== 0) throw new Error(`mkfifo ${f} failed`);
    const server0 = serverPids.reduce((a, p) => a + cpuTicks(p), 0);
    const r = spawnSync('perf', ['stat', '-x,', '-o', out, '-e', 'raw_syscalls:sys_enter', '-D', '-1',
      '--control', `fifo:${ctl},${ack}`, '--', 'taskset', '-c', '1', ...command(driver, workload, inflight, ops, address)],
    { encoding: 'utf8', maxBuffer: 1 << 24, timeout: 600000,
      env: { ...process.env, BENCH_WARMUP_OPS: String(WARMUP), BENCH_PERF_CTL: ctl, BENCH_PERF_ACK: ack } });
    const server1 = serverPids.reduce((a, p) => a + cpuTicks(p), 0);
    if (r.status !== 0) throw new Error(`${driver} ${workload} x${inflight}: exit ${r.status}: ${(r.stderr || '').slice(-1500)}`);
    const line = JSON.parse(r.stdout.trim().split('\n').pop());
    const csv = fs.readFileSync(out, 'utf8').split('\n').find((l) => l.includes('raw_syscalls:sys_enter'));
    const syscalls = csv ? Number(csv.split(',')[0]) : NaN;
    return {
      reqs_per_s: line.ops / line.seconds,
      cpu_us: (line.cpu_seconds / line.ops) * 1e6,
      syscalls: syscalls / line.ops,
      // The server's CPU over the whole client process (connect and warm-up included),
      // per timed request: an upper bound on what the timed requests cost it.
      server_cpu_us: serverPids.length ? ((server1 - server0) * TICK_US) / (line.ops + WARMUP) : NaN,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const fmtK = (x) => (Number.isFinite(x) ? (x / 1000).toFixed(1) + 'k' : '-');

async function main() {
  let server = null;
  let address = SERVER;
  let serverPids = SERVER_PIDS;
  if (SERVER === 'stub') {
    server = await startStub();
    address = server.address;
    serverPids = server.pids;
  }
  const t0 = new Date();
  const results = {}; // key -> driver -> [run]
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const workload of WORKLOADS) {
        for (const inflight of INFLIGHT) {
          const key = `${workload} x${inflight}`;
          results[key] ||= {};
          const shift = (round + WORKLOADS.indexOf(workload) + INFLIGHT.indexOf(inflight)) % DRIVERS.length;
          const order = DRIVERS.slice(shift).concat(DRIVERS.slice(0, shift));
          for (const driver of order) {
            const ops = inflight === 1 ? SEQ_OPS : OPS;
            const m = runOnce(driver, workload, inflight, ops, address, serverPids);
            (results[key][driver] ||= []).push(m);
            console.error(`round ${round + 1} ${key} ${driver}: ${fmtK(m.reqs_per_s)} req/s, ${fmt(m.cpu_us)} us CPU/req, ${fmt(m.syscalls, 2)} syscalls/req, server ${fmt(m.server_cpu_us)} us/req`);
          }
        }
      }
    }
  } finally {
    if (server) server.child.kill('SIGTERM');
  }
  const t1 = new Date();
  const lines = [];
  const spread = (xs, d) => `${fmt(Math.min(...xs), d)}-${fmt(Math.max(...xs), d)}`;
  lines.push(`| workload | in flight | driver | req/s | client CPU us/req | syscalls/req | server CPU us/req | req/s vs cassandra-driver | CPU vs cassandra-driver |`);
  lines.push('|---|---:|---|---:|---:|---:|---:|---:|---:|');
  const verdicts = [];
  const med = {};
  for (const [key, byDriver] of Object.entries(results)) {
    const [workload, x] = key.split(' ');
    med[key] = {};
    for (const d of DRIVERS) {
      const runs = byDriver[d];
      med[key][d] = {
        reqs: median(runs.map((r) => r.reqs_per_s)), cpu: median(runs.map((r) => r.cpu_us)),
        sys: median(runs.map((r) => r.syscalls)), server: median(runs.map((r) => r.server_cpu_us)), runs,
      };
    }
    const base = med[key]['cassandra-driver'];
    for (const d of DRIVERS) {
      const m = med[key][d];
      const ratio = (a, b) => (base ? fmt(a / b, 2) : '-');
      lines.push(`| ${workload} | ${x.slice(1)} | ${d} | ${fmtK(m.reqs)} (${spread(m.runs.map((r) => r.reqs_per_s / 1000), 1)}k) | ${fmt(m.cpu)} (${spread(m.runs.map((r) => r.cpu_us), 1)}) | ${fmt(m.sys, 2)} | ${fmt(m.server)} | ${ratio(m.reqs, base && base.reqs)} | ${ratio(m.cpu, base && base.cpu)} |`);
    }
    const w = med[key]['weir-cql'];
    if (w && base) {
      const inflight = Number(x.slice(1));
      if (inflight === 256) {
        const ok = w.reqs >= 1.5 * base.reqs && w.cpu <= 0.7 * base.cpu;
        verdicts.push(`${key}: weir-cql ${fmt(w.reqs / base.reqs, 2)}x throughput (>= 1.5), ${fmt(w.cpu / base.cpu, 2)}x CPU/req (<= 0.7): ${ok ? 'MET' : 'MISSED'}`);
      }
      if (inflight === 1) {
        verdicts.push(`${key}: weir-cql CPU/req ${fmt(w.cpu / base.cpu, 2)}x cassandra-driver's (<= 1.0): ${w.cpu <= base.cpu ? 'MET' : 'MISSED'}`);
        const raw = med[key]['rust-raw'], floor = med[key]['node-floor'];
        if (raw && floor) {
          const bound = 1.1 * (raw.cpu + floor.cpu);
          verdicts.push(`${key}: weir-cql CPU/req ${fmt(w.cpu)} us vs 1.1 x (rust-raw ${fmt(raw.cpu)} + node-floor ${fmt(floor.cpu)}) = ${fmt(bound)} us: ${w.cpu <= bound ? 'MET' : 'MISSED'}`);
        }
      }
    }
  }
  const header = [
    `Run ${t0.toISOString()} - ${t1.toISOString()}, ${os.cpus().length} CPUs (${os.cpus()[0].model}), Linux ${os.release()}, Node ${process.version}; server ${SERVER === 'stub' ? 'weir-cql-stub' : SERVER} on CPU 0, client on CPU 1; ${ROUNDS} rounds, medians (min-max of the rounds); ${SEQ_OPS} requests sequential, ${OPS} in flight, after ${WARMUP} uncounted.`,
    `Command: node node/weir-cql/bench/client-cost.js ${process.argv.slice(2).join(' ')}`,
    ...notes,
  ];
  const text = [...header, '', ...lines, '', ...verdicts.map((v) => `- ${v}`), ''].join('\n');
  console.log(text);
  if (OUT) fs.writeFileSync(OUT, text);
}

main().catch((e) => { console.error(`client-cost: ${e && e.stack || e}`); process.exit(1); });
