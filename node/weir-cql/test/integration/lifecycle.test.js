'use strict';
// shutdown() closes every connection; a process that never calls it still exits.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { cql, newClient, CONTACT_POINT } = require('./helpers');

const port = Number(CONTACT_POINT.split(':')[1] || 9042);

/** Established TCP connections of this process to the CQL port (from /proc). */
function cqlSockets() {
  const inodes = new Set();
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/self/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch { /* fd closed meanwhile */ }
  }
  let n = 0;
  for (const file of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
    if (!fs.existsSync(file)) continue;
    for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const remotePort = parseInt(f[2].split(':')[1], 16);
      if (remotePort === port && f[3] === '01' && inodes.has(f[9])) n++;
    }
  }
  return n;
}

async function waitFor(pred, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) { if (pred()) return true; await new Promise((r) => setTimeout(r, 50)); }
  return pred();
}

test('shutdown closes every connection of the client', async () => {
  const before = cqlSockets();
  const c = newClient();
  await c.connect();
  await c.execute('SELECT release_version FROM system.local');
  assert.ok(cqlSockets() > before, 'connect opened connections');
  await c.shutdown();
  assert.ok(await waitFor(() => cqlSockets() === before, 10000), `still ${cqlSockets() - before} connections after shutdown`);
  await assert.rejects(c.execute('SELECT * FROM system.local'), cql.errors.DriverError);
});

test('a process that forgets shutdown() still exits', () => {
  const script = `
    const cql = require(${JSON.stringify(path.resolve(__dirname, '../..'))});
    const c = new cql.Client({ contactPoints: [${JSON.stringify(CONTACT_POINT)}], localDataCenter: 'datacenter1' });
    c.execute('SELECT release_version FROM system.local').then((rs) => console.log('version', rs.first().release_version));
  `;
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30000 });
  assert.equal(r.signal, null, `child killed after ${Date.now() - t0} ms: it did not exit by itself`);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /version 5\./);
});
