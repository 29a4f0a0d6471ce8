'use strict';
// The server's CPU seconds (utime + stime of each Cassandra JVM, from /proc/<pid>/stat), so a
// benchmark row can show the server's CPU per request beside the client's. With the JVM
// pinned to one CPU, speed is bounded by the server's CPU per request, so a driver that
// makes the server work more per request runs slower whatever its own cost.
// Pids come from node/weir-cql/scripts/cassandra.sh (nodes it did not start have none:
// then the figure is NaN, never a guess).

const { spawnSync, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const cassandra = path.resolve(__dirname, '../../node/weir-cql/scripts/cassandra.sh');
let ticksPerSecond = null;

function clockTicks() {
  if (ticksPerSecond === null) {
    try { ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100; } catch { ticksPerSecond = 100; }
  }
  return ticksPerSecond;
}

/** The JVM pids of nodes 1..nodes that cassandra.sh knows, skipping nodes it did not start. */
function pids(nodes) {
  const out = [];
  for (let n = 1; n <= nodes; n++) {
    const pid = spawnSync('bash', [cassandra, 'pid', String(n)], { encoding: 'utf8' }).stdout.trim();
    if (/^\d+$/.test(pid)) out.push(Number(pid));
  }
  return out;
}

/** CPU seconds (user + system, all threads) the given pids used so far; NaN if any is gone. */
function seconds(pidList) {
  if (!pidList.length) return NaN;
  let ticks = 0;
  for (const pid of pidList) {
    let stat;
    try { stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { return NaN; }
    // Fields after the command name (which may hold spaces) start at field 3; utime and
    // stime are fields 14 and 15.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks / clockTicks();
}

module.exports = { pids, seconds };
