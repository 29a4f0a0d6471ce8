#!/usr/bin/env node
'use strict';
// Soak: weir-cql at a steady load against a real server for a fixed time, then every
// acknowledged write read back. Writes go to a table of its own (soak.t_<time>), each row's
// id derived from a counter and its val the counter, so the acknowledged set is a bitmap
// (one bit per write: it adds nothing to the resident memory being watched). Reads run
// beside the writes (prepared select of a recent row). Every 10 s the process's resident
// memory is sampled; after the warm-up (the first fifth of the run, at least 60 s) the
// samples must stay within 10% of their median. Any unhandled rejection fails the run.
// At the end a paged scan of the table must find every acknowledged id with its val.
//
//   node bench/soak.js [--minutes 30] [--rate 2000] [--inflight 32] [--reads-per-write 0.5] [host:port]
//
// Prints one JSON line with the figures and exits 1 when a check fails.

const path = require('node:path');
const cql = require(path.resolve(__dirname, '..'));

function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : dflt;
}
const MINUTES = Number(arg('minutes', '30'));
const RATE = Number(arg('rate', '2000')); // writes per second
const INFLIGHT = Number(arg('inflight', '32'));
const READS_PER_WRITE = Number(arg('reads-per-write', '0.5'));
const host = process.argv.slice(2).find((a) => /^[^-].*:\d+$/.test(a)) || '127.0.0.1:9042';
if (!(MINUTES > 0) || !(RATE > 0) || !(INFLIGHT >= 1) || !(READS_PER_WRITE >= 0)) {
  console.error('usage: node bench/soak.js [--minutes M > 0] [--rate writes/s > 0] [--inflight N >= 1] [--reads-per-write R >= 0] [host:port]');
  process.exit(2);
}

const unhandled = [];
process.on('unhandledRejection', (e) => unhandled.push(String(e && e.stack || e)));

/** The id of write number i: 8 fixed bytes, then i. */
function idOf(i) {
  const b = Buffer.alloc(16);
  b.write('soakweir', 0, 'latin1');
  b.writeBigUInt64BE(BigInt(i), 8);
  return new cql.types.Uuid(b);
}

async function main() {
  const client = new cql.Client({ contactPoints: [host], localDataCenter: 'datacenter1',
    socketOptions: { readTimeout: 12000 } });
  await client.connect();
  const table = `soak.t_${Date.now()}`;
  await client.execute("CREATE KEYSPACE IF NOT EXISTS soak WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
  await client.execute(`CREATE TABLE ${table} (id uuid PRIMARY KEY, val bigint)`);
  const INSERT = `INSERT INTO ${table} (id, val) VALUES (?, ?)`;
  const SELECT = `SELECT val FROM ${table} WHERE id = ?`;
  const durationMs = MINUTES * 60000;
  const maxWrites = Math.ceil(RATE * MINUTES * 60 * 1.05) + INFLIGHT;
  const acked = new Uint8Array(Math.ceil(maxWrites / 8));
  const counts = { writes: 0, acked: 0, writeErrors: 0, reads: 0, readErrors: 0, readMismatch: 0 };
  const errorKinds = {};
  const rss = [];
  const t0 = Date.now();
  const sampler = setInterval(() => rss.push({ s: Math.round((Date.now() - t0) / 1000), rss: process.memoryUsage.rss() }), 10000);
  let next = 0;
  let readCredit = 0;
  const loop = async () => {
    for (;;) {
      const elapsed = Date.now() - t0;
      if (elapsed >= durationMs || next >= maxWrites) return;
      // Pace: write i may start at i / RATE seconds.
      const due = (next / RATE) * 1000 - elapsed;
      if (due > 0) { await new Promise((r) => setTimeout(r, due)); continue; }
      const i = next++;
      counts.writes++;
      try {
        await client.execute(INSERT, [idOf(i), cql.types.Long.fromNumber(i)], { prepare: true });
        acked[i >> 3] |= 1 << (i & 7);
        counts.acked++;
      } catch (e) {
        counts.writeErrors++;
        errorKinds[e.name] = (errorKinds[e.name] || 0) + 1;
      }
      readCredit += READS_PER_WRITE;
      while (readCredit >= 1) {
        readCredit -= 1;
        const j = Math.max(0, i - 100);
        if (!(acked[j >> 3] & (1 << (j & 7)))) continue;
        counts.reads++;
        try {
          const rs = await client.execute(SELECT, [idOf(j)], { prepare: true });
          if (rs.rows.length !== 1 || rs.rows[0].val.toNumber() !== j) counts.readMismatch++;
        } catch (e) {
          counts.readErrors++;
          errorKinds[e.name] = (errorKinds[e.name] || 0) + 1;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: INFLIGHT }, loop));
  clearInterval(sampler);
  const runSeconds = (Date.now() - t0) / 1000;
  // Read back every acknowledged write with a paged scan.
  const found = new Uint8Array(acked.length);
  let scanned = 0, wrongVal = 0;
  for await (const row of iterate(client, `SELECT id, val FROM ${table}`)) {
    scanned++;
    const b = row.id.getBuffer();
    const i = Number(b.readBigUInt64BE(8));
    if (row.val.toNumber() !== i) wrongVal++;
    found[i >> 3] |= 1 << (i & 7);
  }
  let missing = 0;
  for (let i = 0; i < next; i++) {
    if ((acked[i >> 3] & (1 << (i & 7))) && !(found[i >> 3] & (1 << (i & 7)))) missing++;
  }
  await client.execute(`DROP TABLE ${table}`);
  await client.shutdown();
  const warm = Math.max(60, (MINUTES * 60) / 5);
  const steady = rss.filter((s) => s.s >= warm).map((s) => s.rss);
  const sorted = [...steady].sort((a, b) => a - b);
  const med = sorted.length ? sorted[sorted.length >> 1] : NaN;
  const lo = sorted.length ? sorted[0] : NaN, hi = sorted.length ? sorted[sorted.length - 1] : NaN;
  const flat = steady.length >= 2 && hi <= med * 1.1 && lo >= med * 0.9;
  const ok = flat && unhandled.length === 0 && missing === 0 && wrongVal === 0 && counts.readMismatch === 0;
  console.log(JSON.stringify({ ok, minutes: MINUTES, run_seconds: +runSeconds.toFixed(1), rate_target: RATE,
    writes_per_s: +(counts.writes / runSeconds).toFixed(1), ...counts, error_kinds: errorKinds,
    scanned, missing_acknowledged: missing, wrong_val: wrongVal, unhandled_rejections: unhandled.length,
    rss_warmup_s: warm, rss_samples_after_warmup: steady.length,
    rss_mib_median: +(med / 1048576).toFixed(1), rss_mib_min: +(lo / 1048576).toFixed(1), rss_mib_max: +(hi / 1048576).toFixed(1),
    rss_flat_within_10pct: flat, rss_series_mib: rss.map((s) => [s.s, +(s.rss / 1048576).toFixed(1)]) }));
  if (unhandled.length) console.error(unhandled.slice(0, 3).join('\n'));
  process.exit(ok ? 0 : 1);
}

/** Every row of `query`, page by page (fetchSize 5000). */
async function* iterate(client, query) {
  let pageState;
  for (;;) {
    const rs = await client.execute(query, [], { prepare: true, fetchSize: 5000, pageState });
    for (const row of rs.rows) yield row;
    if (!rs.pageState) return;
    pageState = rs.pageState;
  }
}

main().catch((e) => { console.error(`soak: ${e && e.stack || e}`); process.exit(1); });
