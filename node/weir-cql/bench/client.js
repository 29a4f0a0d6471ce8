#!/usr/bin/env node
'use strict';
// One client-cost run: one driver, one workload, a fixed number of requests in flight, in
// this process; prints one JSON line (wall seconds, client CPU seconds of the whole process
// during the timed part, requests). client-cost.js runs it pinned to one CPU.
//
//   node client.js <driver> <insert|select1|select100> <in-flight> <ops> [host:port]
//
// Drivers: weir-cql (this package), cassandra-driver (bench/node_modules), scylladb-driver
// (@scylladb/driver, built from source: SCYLLADB_DRIVER_DIR names its directory) and
// node-floor (the least a Node.js program does per request: CQL v4 spoken by hand on one
// socket, frames written and matched by stream id, nothing decoded past the header).
// In-flight N: N loops each awaiting one execute() after another (1 = sequential).
// BENCH_WARMUP_OPS (default 2000) uncounted requests first, at the same in-flight count.
// BENCH_PERF_CTL / BENCH_PERF_ACK: perf stat's control and ack fifos; counting is enabled
// for the timed part only, so the system calls counted are the requests' own.

const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const crypto = require('node:crypto');

const [driverName, workload, inflightText, opsText, host = '127.0.0.1:9042'] = process.argv.slice(2);
const INFLIGHT = Number(inflightText);
const OPS = Number(opsText);
const WORKLOADS = {
  insert: { query: 'INSERT INTO benchmarks.basic (id, val) VALUES (?, ?)', rows: 0 },
  select1: { query: 'SELECT id, val FROM benchmarks.basic WHERE id = ?', rows: 1 },
  select100: { query: 'SELECT id, val FROM benchmarks.basic LIMIT 100', rows: 100 },
};
const DRIVERS = ['weir-cql', 'cassandra-driver', 'scylladb-driver', 'node-floor'];
if (!DRIVERS.includes(driverName) || !WORKLOADS[workload] || !(INFLIGHT >= 1) || !(OPS >= INFLIGHT)) {
  console.error(`usage: node client.js <${DRIVERS.join('|')}> <${Object.keys(WORKLOADS).join('|')}> <in-flight >= 1> <ops >= in-flight> [host:port]`);
  process.exit(2);
}
const WARMUP = Number(process.env.BENCH_WARMUP_OPS || 2000);
// The row select1 reads: bench setup writes it on a real server; the stub answers any id.
const SELECT1_ID = '57656972-2d63-716c-0000-000000000000';

function perf(command) {
  const ctl = process.env.BENCH_PERF_CTL;
  const ack = process.env.BENCH_PERF_ACK;
  if (!ctl || !ack) return;
  const fd = fs.openSync(ctl, 'w');
  fs.writeSync(fd, `${command}\n`);
  fs.closeSync(fd);
  const afd = fs.openSync(ack, 'r');
  const buf = Buffer.alloc(16);
  fs.readSync(afd, buf, 0, 16, null);
  fs.closeSync(afd);
}

async function runLoops(total, inflight, one) {
  let next = 0;
  const loop = async () => {
    while (next < total) { const i = next++; await one(i); }
  };
  const loops = [];
  for (let k = 0; k < inflight; k++) loops.push(loop());
  await Promise.all(loops);
}

/** A driver with the cassandra-driver API: returns {one(i), close()}. */
async function apiDriver() {
  const mod = {
    'weir-cql': () => require(path.resolve(__dirname, '..')),
    'cassandra-driver': () => require('cassandra-driver'),
    'scylladb-driver': () => {
      const dir = process.env.SCYLLADB_DRIVER_DIR;
      if (!dir) throw new Error('scylladb-driver: set SCYLLADB_DRIVER_DIR to a built @scylladb/driver checkout');
      return require(path.resolve(dir));
    },
  }[driverName]();
  const [address, port] = host.split(':');
  // @scylladb/driver ignores protocolOptions.port: it gets the port in the contact point.
  const contactPoints = [driverName === 'scylladb-driver' ? host : address];
  const client = new mod.Client({ contactPoints, localDataCenter: 'datacenter1',
    protocolOptions: { port: Number(port) }, socketOptions: { readTimeout: 60000 } });
  await client.connect();
  const { query, rows } = WORKLOADS[workload];
  const id = mod.types.Uuid.fromString(SELECT1_ID);
  const opts = { prepare: true };
  const check = (rs) => {
    if (rs.rows.length !== rows) throw new Error(`${workload} returned ${rs.rows.length} rows, expected ${rows}`);
  };
  const one = {
    insert: (i) => client.execute(query, [mod.types.Uuid.random(), i], opts),
    select1: () => client.execute(query, [id], opts).then(check),
    select100: () => client.execute(query, [], opts).then(check),
  }[workload];
  return { one, close: () => client.shutdown() };
}

/** node-floor: CQL v4 by hand, stream ids 0..inflight-1, header-only decoding. */
async function floorDriver() {
  const [address, port] = host.split(':');
  const socket = net.connect({ host: address, port: Number(port), noDelay: true });
  await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
  const waiting = new Map();
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 9) {
      const len = pending.readUInt32BE(5);
      if (pending.length < 9 + len) break;
      const stream = pending.readInt16BE(2);
      const f = { opcode: pending[4], body: pending.subarray(9, 9 + len) };
      pending = pending.subarray(9 + len);
      const w = waiting.get(stream);
      waiting.delete(stream);
      if (w) { if (f.opcode === 0x00) w.reject(new Error(`server error ${f.body.readInt32BE(0)}`)); else w.resolve(f); }
    }
  });
  socket.on('close', () => { for (const w of waiting.values()) w.reject(new Error('connection closed')); });
  const head = (stream, opcode, len) => {
    const h = Buffer.allocUnsafe(9);
    h[0] = 0x04; h[1] = 0; h.writeInt16BE(stream, 2); h[4] = opcode; h.writeUInt32BE(len, 5);
    return h;
  };
  const send = (stream, opcode, body) => new Promise((resolve, reject) => {
    waiting.set(stream, { resolve, reject });
    socket.write(Buffer.concat([head(stream, opcode, body.length), body]));
  });
  const startup = Buffer.from('\u0000\u0001\u0000\u000bCQL_VERSION\u0000\u00053.0.0', 'latin1');
  await send(0, 0x01, startup);
  const text = Buffer.from(WORKLOADS[workload].query);
  const q = Buffer.alloc(4 + text.length); q.writeInt32BE(text.length); text.copy(q, 4);
  const prepared = await send(0, 0x09, q);
  const idLen = prepared.body.readUInt16BE(4);
  const id = prepared.body.subarray(4, 6 + idLen);
  const uuid = Buffer.from(SELECT1_ID.replace(/-/g, ''), 'hex');
  const values = (i) => {
    if (workload === 'insert') {
      const v = Buffer.alloc(2 + 4 + 16 + 4 + 4);
      v.writeUInt16BE(2, 0); v.writeInt32BE(16, 2); crypto.randomFillSync(v, 6, 16);
      v.writeInt32BE(4, 22); v.writeInt32BE(i | 0, 26);
      return v;
    }
    if (workload === 'select1') {
      const v = Buffer.alloc(2 + 4 + 16);
      v.writeUInt16BE(1, 0); v.writeInt32BE(16, 2); uuid.copy(v, 6);
      return v;
    }
    return Buffer.alloc(0);
  };
  let freeStreams = [];
  for (let s = 0; s < Math.max(INFLIGHT, 1); s++) freeStreams.push(s);
  const one = async (i) => {
    const stream = freeStreams.pop();
    const v = values(i);
    // [short bytes id][consistency LOCAL_ONE][flags: values 0x01 | page size 0x04][values][page size 5000]
    const body = Buffer.alloc(id.length + 2 + 1 + v.length + 4);
    let at = id.copy(body, 0);
    body.writeUInt16BE(0x000a, at); at += 2;
    body[at++] = (v.length ? 0x01 : 0) | 0x04;
    at += v.copy(body, at);
    body.writeInt32BE(5000, at);
    await send(stream, 0x0a, body);
    freeStreams.push(stream);
  };
  return { one, close: async () => { socket.end(); } };
}

async function main() {
  const d = driverName === 'node-floor' ? await floorDriver() : await apiDriver();
  await runLoops(Math.max(WARMUP, INFLIGHT), INFLIGHT, d.one);
  perf('enable');
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await runLoops(OPS, INFLIGHT, d.one);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  perf('disable');
  console.log(JSON.stringify({ driver: driverName, workload, inflight: INFLIGHT, ops: OPS,
    seconds: +seconds.toFixed(4), cpu_seconds: +((cpu.user + cpu.system) / 1e6).toFixed(4),
    user_seconds: +(cpu.user / 1e6).toFixed(4), system_seconds: +(cpu.system / 1e6).toFixed(4),
    rss_bytes: process.memoryUsage.rss() }));
  await d.close();
}

main().catch((e) => { console.error(`${driverName} ${workload}: ${e && e.stack || e}`); process.exit(1); });
