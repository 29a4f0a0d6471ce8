#!/usr/bin/env node
'use strict';
// Splits a sequential run's wall time at the socket: runs one driver (client on CPU 1)
// under `strace --seccomp-bpf -e trace=sendto,recvfrom,write,writev,read` (only those
// calls are stopped, so the rest runs at full speed) and prints, per request, the time
// from its send to its reply being read (server + the client noticing) and from that read
// to the next send (the client's own turnaround), and the slow tail: replies read more
// than --slow us after their send. A driver that misses a wake-up shows there. Every
// traced call costs a ptrace stop (tens of us), so the figures compare drivers and modes
// with each other, not with an untraced run.
//
//   node gaps.js [--bench insert|select] [--ops 3000] [--rounds 3] [--warmup 1000]
//                [--drivers weir-cql,cassandra-driver,rust-raw] [--env NAME=VALUE] [--slow 900] [host:port]
//
// Rounds alternate the drivers; every round is printed, then medians. Needs strace and a
// running server holding benchmarks.basic (run.js makes it).

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { arg, hostArg, envArg } = require('./cli');
const BENCH = arg('bench', 'insert');
const OPS = Number(arg('ops', '3000'));
const ROUNDS = Number(arg('rounds', '3'));
const WARMUP = Number(arg('warmup', '1000'));
const SLOW_US = Number(arg('slow', '900'));
const DRIVERS = arg('drivers', 'weir-cql,cassandra-driver,rust-raw').split(',');
const ENV = arg('env', null);
const host = hostArg();
const rawBin = path.join(__dirname, 'rust-raw/target/release/cql-bench-rust-raw');
const extraEnv = envArg();
if (!['insert', 'select'].includes(BENCH) || !(OPS > 10) || !(ROUNDS > 0) || !(SLOW_US > 0)) {
  console.error('usage: node gaps.js [--bench insert|select] [--ops N>10] [--rounds N] [--warmup N] [--drivers ...] [--env NAME=VALUE] [--slow us] [host:port]');
  process.exit(2);
}

/** Microseconds since midnight of an strace -tt stamp (HH:MM:SS.micro). */
const stamp = (s) => { const [h, m, x] = s.split(':'); return (Number(h) * 3600 + Number(m) * 60 + Number(x)) * 1e6; };

/**
 * Send and receive events on the CQL socket, in order. A send is a write of a CQL request
 * frame (first byte 0x04: protocol v4 request); a receive is any read of the socket
 * that a request's send preceded. Eventfd writes (8 bytes) are not frames.
 */
function events(file) {
  const out = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^\d+\s+(\d\d:\d\d:\d\d\.\d+) (sendto|write|writev|recvfrom|read)\((\d+), (\S*)/.exec(line);
    if (!m || /= -1 /.test(line) || / = 8$/.test(line)) continue;
    const send = m[2] === 'sendto' || m[2] === 'write' || m[2] === 'writev';
    if (send && !/^(\[\{iov_base=)?"\\4\\0/.test(m[4])) continue;
    if (!send && !/^"\\204/.test(m[4])) continue;
    out.push({ t: stamp(m[1]), send });
  }
  return out;
}

function once(driver) {
  const file = path.join(os.tmpdir(), `gaps-${process.pid}-${driver}.strace`);
  const cmd = driver === 'rust-raw' ? [rawBin, BENCH, String(OPS), host]
    : [process.execPath, path.join(__dirname, 'one.js'), driver, BENCH, String(OPS), host];
  // Only the calls the driver moves frames with: each stop costs tens of us, so tracing
  // eventfd reads and writes too would charge the threaded drivers for their wake-ups twice.
  const calls = driver === 'cassandra-driver' ? 'write,writev,read' : 'sendto,recvfrom';
  const r = spawnSync('taskset', ['-c', '1', 'strace', '-f', '--seccomp-bpf', '-tt', '-s', '4',
    '-e', `trace=${calls}`, '-o', file, ...cmd],
  { encoding: 'utf8', maxBuffer: 1 << 24, env: { ...process.env, CQL_BENCH_WARMUP_OPS: String(WARMUP), ...extraEnv } });
  if (r.status !== 0) throw new Error(`${driver}: exit ${r.status}: ${(r.stderr || '').slice(-1500)}`);
  const ev = events(file);
  fs.rmSync(file, { force: true });
  // The timed requests are the last OPS sends (after connect, prepare and the warm-up).
  const sends = [];
  ev.forEach((e, i) => { if (e.send) sends.push(i); });
  const first = sends[Math.max(0, sends.length - OPS)];
  const sendToReply = [], replyToSend = [];
  let lastSend = null, lastReply = null;
  for (const e of ev.slice(first)) {
    if (e.send) {
      if (lastReply !== null) replyToSend.push(e.t - lastReply);
      lastSend = e.t; lastReply = null;
    } else if (lastSend !== null) {
      sendToReply.push(e.t - lastSend);
      lastReply = e.t; lastSend = null;
    }
  }
  return { sendToReply, replyToSend, seconds: JSON.parse(r.stdout.trim().split('\n').pop()).seconds };
}

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const q = (xs, f) => { const s = sorted(xs); return s.length ? s[Math.min(s.length - 1, Math.floor(s.length * f))] : NaN; };
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs) => q(xs, 0.5);

const rows = Object.fromEntries(DRIVERS.map((d) => [d, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = DRIVERS.slice(round % DRIVERS.length).concat(DRIVERS.slice(0, round % DRIVERS.length));
  for (const d of order) {
    const g = once(d);
    const slow = g.sendToReply.filter((x) => x > SLOW_US);
    const row = {
      n: g.sendToReply.length, sr_med: median(g.sendToReply), sr_mean: mean(g.sendToReply), sr_p99: q(g.sendToReply, 0.99),
      rs_med: median(g.replyToSend), rs_mean: mean(g.replyToSend),
      slow_pct: 100 * slow.length / g.sendToReply.length, slow_us_per_op: slow.reduce((a, b) => a + b - SLOW_US, 0) / g.sendToReply.length,
    };
    rows[d].push(row);
    console.log(`round ${round + 1} ${d.padEnd(16)} requests ${row.n}: send->reply median ${row.sr_med.toFixed(0)} mean ${row.sr_mean.toFixed(0)} p99 ${row.sr_p99.toFixed(0)} us | reply->send median ${row.rs_med.toFixed(0)} mean ${row.rs_mean.toFixed(0)} us | replies later than ${SLOW_US} us: ${row.slow_pct.toFixed(2)} %, ${row.slow_us_per_op.toFixed(1)} us/op beyond ${SLOW_US}`);
  }
}
console.log(`\n${BENCH}, ${OPS} ops after ${WARMUP} uncounted, ${ROUNDS} rounds, client on CPU 1 under strace (sends and reads only)${ENV ? `, ${ENV}` : ''}: medians of the rounds, us`);
console.log(`| driver | send->reply median | send->reply mean | p99 | reply->send median | reply->send mean | replies > ${SLOW_US} us | their excess us/op |`);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
const m = (d, k, p = 0) => median(rows[d].map((r) => r[k])).toFixed(p);
for (const d of DRIVERS) console.log(`| ${d} | ${m(d, 'sr_med')} | ${m(d, 'sr_mean')} | ${m(d, 'sr_p99')} | ${m(d, 'rs_med')} | ${m(d, 'rs_mean')} | ${m(d, 'slow_pct', 2)} % | ${m(d, 'slow_us_per_op', 1)} |`);
