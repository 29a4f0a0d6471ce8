#!/usr/bin/env node
'use strict';
// The JS result path alone: captures one real answer of a sequential select and of an
// insert from a running server, then replays each through what weir-cql does with an
// answer on the JS thread (readAnswer, ResultSet, rows read as one.js reads them) and
// prints ns per answer, median of 5 rounds. No server or native call is timed, so the
// figure moves only with the JS code and V8 (and the machine's load: run it on CPU 1 with
// `taskset -c 1`, and A/B two builds alternately: WEIR_CQL_PACKAGE=<dir> loads another).
//
//   taskset -c 1 node replay.js [iterations] [host:port]
// Needs benchmarks.basic with 10 rows (run.js's select setup makes it).

const [itersText = '200000', host = '127.0.0.1:9042'] = process.argv.slice(2);
const ITERS = Number(itersText);
const pkg = process.env.WEIR_CQL_PACKAGE || require('node:path').join(__dirname, '../../node/weir-cql');
const cql = require(pkg);
const req = require(`${pkg}/lib/request`);
const { ResultSet } = require(`${pkg}/lib/result`);

async function capture(client, query, params) {
  let got = null;
  const complete = client._complete;
  client._complete = function (buf) { got = Buffer.from(buf); return complete.call(this, buf); };
  await client.execute(query, params, { prepare: true, fetchSize: 10 });
  client._complete = complete;
  return got;
}

function replay(buf, enc, iters) {
  let rows = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < iters; i++) {
    req.readAnswer(buf, enc, (index, res) => {
      if (res.error) throw res.error;
      if (res.fields.rawPageState) res.fields.fetchPage = () => null;
      const rs = new ResultSet(res.fields);
      rows += rs.rows.length;
    });
  }
  return { ns: Number(process.hrtime.bigint() - t0) / iters, rows };
}

async function main() {
  const client = new cql.Client({ contactPoints: [host], localDataCenter: 'datacenter1' });
  await client.connect();
  const sel = await capture(client, 'SELECT * FROM benchmarks.basic', []);
  const ins = await capture(client, 'INSERT INTO benchmarks.basic (id, val) VALUES (?, ?)',
    [cql.types.Uuid.fromString('00000000-0000-0000-0000-000000000000'), -1]);
  await client.execute('DELETE FROM benchmarks.basic WHERE id = ?', [cql.types.Uuid.fromString('00000000-0000-0000-0000-000000000000')], { prepare: true });
  await client.shutdown();
  const enc = client.options.encoding;
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  for (const [name, buf] of [['select', sel], ['insert', ins]]) {
    replay(buf, enc, ITERS); // warm-up: V8 optimizes the path first
    const ns = [];
    for (let r = 0; r < 5; r++) ns.push(replay(buf, enc, ITERS).ns);
    console.log(`${name}: answer ${buf.length} bytes, ${median(ns).toFixed(0)} ns per answer (rounds ${ns.map((x) => x.toFixed(0)).join(' ')})`);
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
