#!/usr/bin/env node
'use strict';
// A/B of one setting: runs one benchmark of one driver alternately without (A) and with (B)
// an environment setting, in fresh processes on CPU 1 (taskset), and prints each round's
// B/A ratio of seconds, of client CPU seconds and of the server's CPU seconds (node 1's JVM
// when cassandra.sh started it, else NaN), with each side's run-queue wait (its client
// threads runnable while other jobs held CPU 1), then their medians. Alternating rounds
// share whatever noise the machine has, so the ratios say more than any single time.
// CQL_AB_CPUS (default 1) is the client's CPU list for taskset: CQL_AB_CPUS=0,1 runs it
// unpinned on this 2-CPU machine (its threads may then sit on the server's CPU).
//
//   node ab.js <weir-cql|cassandra-driver|rust-raw> <bench> <ops> <rounds> NAME=VALUE [host:port]
//
// e.g. node ab.js weir-cql insert 2000 6 WEIR_CQL_WRITE_COALESCING=0
// Needs a running server holding benchmarks.basic (run.js makes it; for select, 10 rows).

const { spawnSync } = require('node:child_process');
const path = require('node:path');

const [driver, bench, opsText, roundsText, setting, host = '127.0.0.1:9042'] = process.argv.slice(2);
const ops = Number(opsText), rounds = Number(roundsText);
const m = /^([A-Z0-9_]+)=(.*)$/.exec(setting || '');
if (!driver || !bench || !(ops > 0) || !(rounds > 0) || !m) {
  console.error('usage: node ab.js <driver> <bench> <ops> <rounds> NAME=VALUE [host:port]');
  process.exit(2);
}
const CPUS = process.env.CQL_AB_CPUS || '1';
const rawBin = path.join(__dirname, 'rust-raw/target/release/cql-bench-rust-raw');
// The node cassandra.sh started (if any): each run then reports the server's CPU too.
const serverPids = require('./servercpu').pids(1).join(',');

function once(extraEnv) {
  const args = driver === 'rust-raw' ? [rawBin, bench, String(ops), host]
    : [process.execPath, path.join(__dirname, 'one.js'), driver, bench, String(ops), host];
  const r = spawnSync('taskset', ['-c', CPUS, ...args], { encoding: 'utf8', env: { CQL_BENCH_SERVER_PIDS: serverPids, ...process.env, ...extraEnv } });
  if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}: ${(r.stderr || '').slice(-1000)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const k = s.length >> 1; return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2; };
const time = [], cpu = [], server = [];
for (let i = 0; i < rounds; i++) {
  // Swap the order every round so neither side always runs first after the other.
  const [first, second] = i % 2 ? [{ [m[1]]: m[2] }, {}] : [{}, { [m[1]]: m[2] }];
  const r1 = once(first), r2 = once(second);
  const [a, b] = i % 2 ? [r2, r1] : [r1, r2];
  time.push(b.seconds / a.seconds);
  cpu.push(b.cpu_seconds / a.cpu_seconds);
  server.push(b.server_cpu_seconds / a.server_cpu_seconds);
  const srv = (r) => (r.server_cpu_seconds == null ? 'n/a' : r.server_cpu_seconds.toFixed(3));
  // The client threads' run-queue wait (threads.js): time lost to other jobs on CPU 1.
  const wait = (r) => { const w = Object.values(r.threads || {}).reduce((s, t) => s + (t.wait_s || 0), 0); return r.threads ? `${w.toFixed(3)} s` : 'n/a'; };
  console.log(`round ${i + 1}: A ${a.seconds.toFixed(3)} s cpu ${a.cpu_seconds.toFixed(3)} s server ${srv(a)} s wait ${wait(a)} | B (${setting}) ${b.seconds.toFixed(3)} s cpu ${b.cpu_seconds.toFixed(3)} s server ${srv(b)} s wait ${wait(b)} | B/A time ${time[i].toFixed(2)} cpu ${cpu[i].toFixed(2)} server ${server[i].toFixed(2)}`);
}
console.log(`${driver} ${bench} ${ops} ops, ${rounds} rounds, B = ${setting}: median B/A time ${median(time).toFixed(2)} (range ${Math.min(...time).toFixed(2)}-${Math.max(...time).toFixed(2)}), cpu ${median(cpu).toFixed(2)} (range ${Math.min(...cpu).toFixed(2)}-${Math.max(...cpu).toFixed(2)}), server cpu ${median(server).toFixed(2)} (range ${Math.min(...server).toFixed(2)}-${Math.max(...server).toFixed(2)})`);
