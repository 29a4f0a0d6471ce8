#!/usr/bin/env node
'use strict';
// The floor of any Node.js driver on the sequential benchmarks: one socket, CQL protocol v4
// spoken by hand, the statement prepared once, then one EXECUTE frame written and its
// RESULT awaited per operation, with nothing else (no pool, no routing, no retries, no
// result decoding beyond the frame's header, no timers). A driver cannot do less per
// request than this and still talk to the server, so this program's wall time per
// operation is what Node itself sets against the raw Rust driver (issue 21's "faster than
// rust-raw"). It prints one.js's JSON line, so cost.js runs it as the driver `node-floor`.
//
// usage: node floor.js <insert|select> <ops> [host:port]
// CQL_BENCH_WARMUP_OPS=N first runs N uncounted operations.

const net = require('node:net');
const crypto = require('node:crypto');
const threads = require('./threads');

const [bench, opsText, host = '127.0.0.1:9042'] = process.argv.slice(2);
const ops = Number(opsText);
if (!['insert', 'select'].includes(bench) || !(ops > 0)) {
  console.error('usage: node floor.js <insert|select> <ops> [host:port]');
  process.exit(2);
}
const WARMUP_OPS = Number(process.env.CQL_BENCH_WARMUP_OPS || 0);
const QUERY = bench === 'insert' ? 'INSERT INTO benchmarks.basic (id, val) VALUES (?, ?)'
  : 'SELECT * FROM benchmarks.basic';
const OP = { ERROR: 0x00, STARTUP: 0x01, READY: 0x02, PREPARE: 0x09, EXECUTE: 0x0a, RESULT: 0x08 };
const LOCAL_ONE = 0x000a;

function frame(opcode, body) {
  const head = Buffer.alloc(9);
  head[0] = 0x04; // protocol v4, request
  head.writeInt16BE(0, 2); // stream 0: one request at a time
  head[4] = opcode;
  head.writeUInt32BE(body.length, 5);
  return Buffer.concat([head, body]);
}

const u16 = (n) => { const b = Buffer.alloc(2); b.writeUInt16BE(n); return b; };
const i32 = (n) => { const b = Buffer.alloc(4); b.writeInt32BE(n); return b; };
const str = (s) => Buffer.concat([u16(Buffer.byteLength(s)), Buffer.from(s)]);
const longStr = (s) => Buffer.concat([i32(Buffer.byteLength(s)), Buffer.from(s)]);

/** Frames read off the socket, one awaited at a time (stream 0 only). */
function reader(socket) {
  let pending = Buffer.alloc(0);
  let waiter = null;
  const frames = [];
  const take = () => {
    while (pending.length >= 9) {
      const len = pending.readUInt32BE(5);
      if (pending.length < 9 + len) break;
      frames.push({ opcode: pending[4], body: pending.subarray(9, 9 + len) });
      pending = pending.subarray(9 + len);
    }
    if (waiter && frames.length) { const w = waiter; waiter = null; w.resolve(frames.shift()); }
  };
  socket.on('data', (chunk) => { pending = pending.length ? Buffer.concat([pending, chunk]) : chunk; take(); });
  socket.on('error', (e) => { if (waiter) waiter.reject(e); });
  socket.on('close', () => { if (waiter) waiter.reject(new Error('the server closed the connection')); });
  return () => new Promise((resolve, reject) => {
    if (frames.length) resolve(frames.shift()); else waiter = { resolve, reject };
  });
}

function expect(f, opcode, what) {
  if (f.opcode === OP.ERROR) {
    throw new Error(`${what}: server error 0x${f.body.readInt32BE(0).toString(16)}: ${f.body.subarray(6, 6 + f.body.readUInt16BE(4))}`);
  }
  if (f.opcode !== opcode) throw new Error(`${what}: opcode 0x${f.opcode.toString(16)}, expected 0x${opcode.toString(16)}`);
}

async function main() {
  const [address, port] = host.split(':');
  const socket = net.connect({ host: address, port: Number(port), noDelay: true });
  await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
  const next = reader(socket);
  socket.write(frame(OP.STARTUP, Buffer.concat([u16(1), str('CQL_VERSION'), str('3.0.0')])));
  expect(await next(), OP.READY, 'STARTUP');
  socket.write(frame(OP.PREPARE, longStr(QUERY)));
  const prepared = await next();
  expect(prepared, OP.RESULT, 'PREPARE');
  const idLen = prepared.body.readUInt16BE(4); // [int kind = 4][short bytes id]...
  const id = prepared.body.subarray(4, 6 + idLen);
  // EXECUTE: id, consistency, flags (0x01 values, 0x04 page size), the values, and for the
  // select one.js's fetchSize of 10: what a driver must send.
  const pageSize = bench === 'select' ? [i32(10)] : [];
  const execute = (values) => frame(OP.EXECUTE, Buffer.concat([id, u16(LOCAL_ONE),
    Buffer.from([(values.length ? 0x01 : 0) | (pageSize.length ? 0x04 : 0)]),
    ...(values.length ? [u16(values.length), ...values] : []), ...pageSize]));
  const insertValues = (i) => [Buffer.concat([i32(16), crypto.randomBytes(16)]), Buffer.concat([i32(4), i32(i)])];
  const one = async (i) => {
    socket.write(execute(bench === 'insert' ? insertValues(i) : []));
    expect(await next(), OP.RESULT, 'EXECUTE');
  };
  for (let i = 0; i < WARMUP_OPS; i++) await one(i);
  const threads0 = threads.snapshot();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) await one(i);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  console.log(JSON.stringify({ driver: 'node-floor', bench, ops, seconds: +seconds.toFixed(4),
    cpu_seconds: +((cpu.user + cpu.system) / 1e6).toFixed(4),
    user_seconds: +(cpu.user / 1e6).toFixed(4), system_seconds: +(cpu.system / 1e6).toFixed(4),
    threads: threads.diff(threads0, threads.snapshot()) }));
  socket.end();
}

main().catch((e) => { console.error(`node-floor ${bench}: ${e && e.message || e}`); process.exit(1); });
