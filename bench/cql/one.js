#!/usr/bin/env node
'use strict';
// Runs one benchmark with one JS driver in this process and prints one JSON line.
// The same code drives weir-cql and cassandra-driver: their APIs are the same.
//
// usage: node one.js <weir-cql|cassandra-driver> <insert|select|concurrent_insert|concurrent_select> <ops> [host:port]
//
// CQL_BENCH_WARMUP_OPS=N first runs N operations of a sequential benchmark, not counted, so
// a short run measures V8's and the server's steady state rather than their warm-up.
// WEIR_CQL_PACKAGE=<dir> loads weir-cql from another build (A/B of two builds with ab.js).
// Besides seconds and client CPU, the line carries user and system CPU apart and, per thread
// name, CPU and context switches during the timed part (threads.js), and with
// CQL_BENCH_SERVER_PIDS the server JVMs' CPU seconds over the same part.

const [driverName, bench, opsText, host = '127.0.0.1:9042'] = process.argv.slice(2);
const ops = Number(opsText);
if (!['weir-cql', 'cassandra-driver'].includes(driverName) || !(ops > 0)) {
  console.error('usage: node one.js <weir-cql|cassandra-driver> <bench> <ops> [host:port]');
  process.exit(2);
}
// WEIR_CQL_PACKAGE=/path/to/a/weir-cql build: A/B two builds (ab.js ... WEIR_CQL_PACKAGE=dir).
const pkgPath = driverName === 'weir-cql' && process.env.WEIR_CQL_PACKAGE || driverName;
const driver = require(pkgPath);
const traffic = require('./traffic');
const threads = require('./threads');
const serverCpu = require('./servercpu');
// CQL_BENCH_SERVER_PIDS (run.js, ab.js): the server JVMs' pids, so the line carries the
// server's CPU seconds during the timed part.
const SERVER_PIDS = (process.env.CQL_BENCH_SERVER_PIDS || '').split(',').filter(Boolean).map(Number);
const { Uuid } = driver.types;
const INSERT = 'INSERT INTO benchmarks.basic (id, val) VALUES (?, ?)';
const SELECT = 'SELECT * FROM benchmarks.basic';
// CQL_BENCH_CONCURRENCY: executeConcurrent's concurrencyLevel (default 100, the seed's JS value).
const CONCURRENCY = Number(process.env.CQL_BENCH_CONCURRENCY || 100);
const WARMUP_OPS = Number(process.env.CQL_BENCH_WARMUP_OPS || 0);

async function main() {
  const client = new driver.Client({ contactPoints: [host], localDataCenter: 'datacenter1',
    socketOptions: { readTimeout: 60000 } });
  await client.connect();
  // Warm the prepared-statement cache so both drivers start from the same state.
  await client.execute(SELECT, [], { prepare: true, fetchSize: 10 });
  const warm = Uuid.fromString('00000000-0000-0000-0000-000000000000');
  await client.execute(INSERT, [warm, -1], { prepare: true });
  await client.execute('DELETE FROM benchmarks.basic WHERE id = ?', [warm], { prepare: true });
  if (bench === 'insert') {
    // One row overwritten, then deleted: the table's row count stays what run.js checks.
    for (let i = 0; i < WARMUP_OPS; i++) await client.execute(INSERT, [warm, i], { prepare: true });
    await client.execute('DELETE FROM benchmarks.basic WHERE id = ?', [warm], { prepare: true });
  } else if (bench === 'select') {
    for (let i = 0; i < WARMUP_OPS; i++) await client.execute(SELECT, [], { prepare: true, fetchSize: 10 });
  }
  const sockets0 = traffic.driverSockets(process.pid);
  const threads0 = threads.snapshot();
  const cpu0 = process.cpuUsage();
  const server0 = serverCpu.seconds(SERVER_PIDS);
  const t0 = process.hrtime.bigint();
  switch (bench) {
    case 'insert':
      for (let i = 0; i < ops; i++) await client.execute(INSERT, [Uuid.random(), i], { prepare: true });
      break;
    case 'select':
      for (let i = 0; i < ops; i++) {
        const rs = await client.execute(SELECT, [], { prepare: true, fetchSize: 10 });
        if (rs.rows.length !== 10) throw new Error(`select returned ${rs.rows.length} rows, expected 10`);
      }
      break;
    case 'concurrent_insert': {
      const params = new Array(ops);
      for (let i = 0; i < ops; i++) params[i] = [Uuid.random(), i];
      const g = await driver.concurrent.executeConcurrent(client, INSERT, params, { concurrencyLevel: CONCURRENCY });
      if (g.totalExecuted !== ops) throw new Error(`executed ${g.totalExecuted} of ${ops}`);
      break;
    }
    case 'concurrent_select': {
      const params = new Array(ops).fill([]);
      // The seed's shape: the whole 10-row table in one page of the drivers' default
      // fetchSize (5000). (It had fetchSize 10, which cassandra-driver's executeConcurrent
      // does not pass on: it sent 5000 while weir-cql sent 10, so the two asked the server
      // for different work.)
      const g = await driver.concurrent.executeConcurrent(client, SELECT, params,
        { concurrencyLevel: CONCURRENCY, collectResults: true, prepare: true });
      if (g.resultItems.length !== ops) throw new Error(`collected ${g.resultItems.length} of ${ops}`);
      for (const rs of g.resultItems) if (rs.rowLength !== 10) throw new Error(`a select returned ${rs.rowLength} rows`);
      break;
    }
    default:
      throw new Error(`unknown benchmark '${bench}'`);
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const server = serverCpu.seconds(SERVER_PIDS) - server0;
  const perThread = threads.diff(threads0, threads.snapshot());
  // Read after the clock stopped: what this process moved to and from the nodes.
  const moved = traffic.moved(sockets0, traffic.driverSockets(process.pid));
  console.log(JSON.stringify({ driver: driverName, bench, ops, seconds: +seconds.toFixed(4),
    cpu_seconds: +((cpu.user + cpu.system) / 1e6).toFixed(4),
    user_seconds: +(cpu.user / 1e6).toFixed(4), system_seconds: +(cpu.system / 1e6).toFixed(4),
    server_cpu_seconds: Number.isFinite(server) ? +server.toFixed(4) : null, threads: perThread,
    driver_packets: moved.packets, driver_bytes: moved.bytes, driver_closed: moved.closed }));
  await client.shutdown();
}

main().catch((e) => { console.error(`${driverName} ${bench}: ${e && e.stack || e}`); process.exit(1); });
