'use strict';
// Support for the three-node tests: the nodes' own counters (JMX through nodetool), nodetool
// itself, and the node processes (pid, kill, pause, resume), all through scripts/cassandra.sh.
//
// The tests run only on the cluster `npm test` started (WEIR_CQL_CLUSTER=3): they kill and
// pause nodes, which must never happen to a server someone else runs.

const { spawn } = require('node:child_process');
const path = require('node:path');
const cql = require('../..');

const SCRIPT = path.resolve(__dirname, '../../scripts/cassandra.sh');
const NODES = [1, 2, 3];
const enabled = process.env.WEIR_CQL_CLUSTER === '3';
const skipReason = enabled ? null
  : 'needs the three-node cluster that `npm test` starts on 127.0.0.1-3 (WEIR_CQL_CLUSTER=3); '
    + 'these tests kill and pause nodes, so they never run against an external server';
if (!enabled) console.log(`SKIP test/cluster: ${skipReason}`);

function script(args, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs || 120000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`cassandra.sh ${args.join(' ')} exited ${code}: ${err.slice(-1500)}`));
    });
  });
}

const nodetool = (n, ...args) => script(['nodetool', String(n), ...args]);

/**
 * The `Count` of every MBean matching `pattern` on node n, as Map(name -> number).
 * Uses nodetool's bundled sjk (`sjk mx -all -mg -f Count`).
 */
async function counts(n, pattern) {
  const out = await nodetool(n, 'sjk', 'mx', '-all', '-b', pattern, '-mg', '-f', 'Count');
  const lines = out.split('\n').map((l) => l.trim()).filter(Boolean);
  const m = new Map();
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const v = Number(lines[i + 1]);
    if (!Number.isFinite(v)) throw new Error(`unexpected sjk output for ${pattern} on node ${n}: ${lines[i]} / ${lines[i + 1]}`);
    m.set(lines[i], v);
  }
  return m;
}

const sum = (m) => [...m.values()].reduce((a, b) => a + b, 0);

/**
 * What each node counted, read on the servers:
 * - `coordinated`: requests this node coordinated for keyspace.table (the table's
 *   Coordinator{Read,Write}Latency timers count every request a client sent to this node);
 * - `forwarded`: requests other nodes sent to this node's replica (MUTATION_REQ, READ_REQ
 *   messages received): a coordinator that is not a replica must forward the request, a
 *   replica that coordinates applies it locally without a message.
 */
async function serverCounts(ks, table) {
  const per = await Promise.all(NODES.map(async (n) => {
    const msgs = await counts(n, 'org.apache.cassandra.metrics:type=Messaging,name=*_REQ-WaitLatency');
    return {
      node: n,
      ...await coordinated(n, ks, table),
      forwardedWrites: pick(msgs, /name=MUTATION_REQ-WaitLatency$/),
      forwardedReads: pick(msgs, /name=READ_REQ-WaitLatency$/),
    };
  }));
  return per;
}

/** The sum of the counts in `m` whose MBean name matches `re`. */
function pick(m, re) {
  let s = 0;
  for (const [k, v] of m) if (re.test(k)) s += v;
  return s;
}

/**
 * The requests node n coordinated for keyspace.table (`coordinatedWrites`,
 * `coordinatedReads`, as in serverCounts): one nodetool call, for a test that watches one node.
 */
async function coordinated(n, ks, table) {
  const coord = await counts(n, `org.apache.cassandra.metrics:type=Table,keyspace=${ks},scope=${table},name=Coordinator*Latency`);
  return {
    coordinatedWrites: pick(coord, /name=CoordinatorWriteLatency$/),
    coordinatedReads: pick(coord, /name=CoordinatorReadLatency$/),
  };
}

/** after - before, per node and field. */
function delta(before, after) {
  return after.map((a, i) => {
    const d = { node: a.node };
    for (const k of Object.keys(a)) if (k !== 'node') d[k] = a[k] - before[i][k];
    return d;
  });
}

const total = (rows, field) => rows.reduce((s, r) => s + r[field], 0);

async function pid(n) {
  const out = (await script(['pid', String(n)]).catch(() => '')).trim();
  if (!/^\d+$/.test(out)) throw new Error(`node ${n} is not running (no pid)`);
  return Number(out);
}

/** Starts node n again on its data (after kill -9) and waits for its CQL port. */
const resume = (n) => script(['resume', String(n)], 240000);

function newClient(extra) {
  return new cql.Client({ contactPoints: ['127.0.0.1:9042'], localDataCenter: 'datacenter1', ...extra });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

module.exports = { cql, enabled, skipReason, nodetool, counts, sum, serverCounts, coordinated, delta, total, pid,
  resume, newClient, sleep, NODES };
