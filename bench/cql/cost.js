#!/usr/bin/env node
'use strict';
// Where a sequential request's time goes, per driver: per operation, the client's wall
// time, user and system CPU, and for each thread the context switches (voluntary: it
// slept and had to be woken, i.e. a thread hop into it; involuntary: preempted) and CPU;
// with --strace, the system calls per operation by name (strace -f -c of a run of OPS
// operations minus a run of 1, so connect and prepare cancel out).
//
//   node cost.js [--bench insert|select] [--ops 5000] [--rounds 3] [--warmup 2000]
//                [--drivers weir-cql,cassandra-driver,rust-raw,node-floor] [--strace] [--env NAME=VALUE] [host:port]
//
// The client runs on CPU 1 (taskset); pin the server elsewhere (run.js --pin does, or
// `taskset -apc 0 <jvm pid>`). Needs a running server holding benchmarks.basic (run.js
// makes it; select wants 10 rows). Rounds alternate the drivers; medians are printed.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { arg, hostArg, envArg } = require('./cli');
const BENCH = arg('bench', 'insert');
const OPS = Number(arg('ops', '5000'));
const ROUNDS = Number(arg('rounds', '3'));
const WARMUP = Number(arg('warmup', '2000'));
const DRIVERS = arg('drivers', 'weir-cql,cassandra-driver,rust-raw').split(',');
const STRACE = process.argv.includes('--strace');
const ENV = arg('env', null);
const host = hostArg();
const rawBin = path.join(__dirname, 'rust-raw/target/release/cql-bench-rust-raw');
if (!['insert', 'select'].includes(BENCH) || !(OPS > 1) || !(ROUNDS > 0)) {
  console.error('usage: node cost.js [--bench insert|select] [--ops N>1] [--rounds N] [--warmup N] [--drivers ...] [--strace] [--env NAME=VALUE] [host:port]');
  process.exit(2);
}
const extraEnv = envArg();

function command(driver, ops) {
  if (driver === 'rust-raw') return [rawBin, BENCH, String(ops), host];
  // node-floor: Node's own floor per request, a hand-written CQL client (floor.js).
  if (driver === 'node-floor') return [process.execPath, path.join(__dirname, 'floor.js'), BENCH, String(ops), host];
  return [process.execPath, path.join(__dirname, 'one.js'), driver, BENCH, String(ops), host];
}

function once(driver, ops, straceOut) {
  let args = ['-c', '1', ...command(driver, ops)];
  if (straceOut) args = ['-c', '1', 'strace', '-f', '-c', '-o', straceOut, ...command(driver, ops)];
  const r = spawnSync('taskset', args, { encoding: 'utf8', maxBuffer: 1 << 24,
    env: { ...process.env, CQL_BENCH_WARMUP_OPS: straceOut ? '0' : String(WARMUP), ...extraEnv } });
  if (r.status !== 0) throw new Error(`${driver}: exit ${r.status}: ${(r.stderr || '').slice(-1500)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

/** {syscall: calls} from an `strace -c` summary file. */
function syscalls(file) {
  const out = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const f = line.trim().split(/\s+/);
    // % time, seconds, usecs/call, calls, [errors], syscall
    if (f.length >= 5 && /^\d+\.\d+$/.test(f[0]) && f[f.length - 1] !== 'total') out[f[f.length - 1]] = Number(f[3]);
  }
  return out;
}

const median = (xs) => { const s = xs.filter(Number.isFinite).sort((a, b) => a - b); const k = s.length >> 1; return !s.length ? NaN : s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2; };
const us = (s) => (s * 1e6 / OPS).toFixed(1);

const runs = Object.fromEntries(DRIVERS.map((d) => [d, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = DRIVERS.slice(round % DRIVERS.length).concat(DRIVERS.slice(0, round % DRIVERS.length));
  for (const d of order) {
    const r = once(d, OPS);
    runs[d].push(r);
    const hops = Object.entries(r.threads || {}).map(([n, t]) => `${n}: ${(t.vcs / OPS).toFixed(2)} vcs/op ${(t.nvcs / OPS).toFixed(2)} nvcs/op ${us(t.utime_s + t.stime_s)} us/op${t.wait_s != null ? ` wait ${us(t.wait_s)} us/op` : ''}`).join('; ');
    console.log(`round ${round + 1} ${d.padEnd(16)} ${us(r.seconds)} us/op wall, cpu ${us(r.cpu_seconds)} us/op (user ${us(r.user_seconds)}, sys ${us(r.system_seconds)}) | ${hops}`);
  }
}
console.log(`\n${BENCH}, ${OPS} ops after ${WARMUP} uncounted, ${ROUNDS} rounds, client on CPU 1${ENV ? `, ${ENV}` : ''}: medians per operation`);
// Run-queue wait: the client's threads were runnable but another task held CPU 1 (other jobs
// on a shared machine); a quiet run has ~0 here, and a mode that loses only here loses to
// contamination, not by its own cost.
console.log('| driver | wall us | CPU us | user us | sys us | voluntary switches (thread hops) per op, by thread | involuntary per op | run-queue wait us per op |');
console.log('|---|---:|---:|---:|---:|---|---:|---:|');
for (const d of DRIVERS) {
  const rs = runs[d];
  const names = [...new Set(rs.flatMap((r) => Object.keys(r.threads || {})))];
  const per = names.map((n) => `${n} ${(median(rs.map((r) => (r.threads[n] || { vcs: 0 }).vcs)) / OPS).toFixed(2)}`).join(', ');
  const nv = median(rs.map((r) => Object.values(r.threads || {}).reduce((a, t) => a + t.nvcs, 0))) / OPS;
  // rust-raw reports no run-queue wait (its own per-thread figures): n/a.
  const waits = rs.map((r) => Object.values(r.threads || {}).reduce((a, t) => (t.wait_s == null ? NaN : a + t.wait_s), 0));
  const wait = median(waits);
  console.log(`| ${d} | ${us(median(rs.map((r) => r.seconds)))} | ${us(median(rs.map((r) => r.cpu_seconds)))} | ${us(median(rs.map((r) => r.user_seconds)))} | ${us(median(rs.map((r) => r.system_seconds)))} | ${per} | ${nv.toFixed(2)} | ${Number.isFinite(wait) ? us(wait) : 'n/a'} |`);
}
if (STRACE) {
  console.log(`\nsystem calls per operation (strace -f -c: a run of ${OPS} minus a run of 1):`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cql-cost-'));
  for (const d of DRIVERS) {
    once(d, 1, path.join(dir, `${d}-1`));
    once(d, OPS, path.join(dir, `${d}-n`));
    const a = syscalls(path.join(dir, `${d}-1`)), b = syscalls(path.join(dir, `${d}-n`));
    const per = Object.keys(b).map((k) => [k, (b[k] - (a[k] || 0)) / (OPS - 1)]).filter(([, v]) => v >= 0.05).sort((x, y) => y[1] - x[1]);
    const total = per.reduce((s, [, v]) => s + v, 0);
    console.log(`${d}: ${total.toFixed(1)} per op: ${per.map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}
