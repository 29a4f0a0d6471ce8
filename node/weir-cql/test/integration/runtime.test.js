'use strict';
// WEIR_CQL_RUNTIME=js (the default), =worker and =thread (src/runtime.rs): the same requests
// give the same answers in every mode, the mode is really in force (no fallback message), in
// `js` mode no thread but the JS thread wakes during sequential requests (the tokio worker
// and the runtime thread carry them in the other two), and a process that forgets
// shutdown() still exits. Each mode runs in a child process: the mode is chosen at load.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { CONTACT_POINT, setupKeyspace } = require('./helpers');

const pkg = path.resolve(__dirname, '../..');

/** Voluntary context switches per thread name of this process (from /proc/self/task). */
const switchesSource = `
  const fs = require('fs');
  function switches() {
    const out = {};
    for (const tid of fs.readdirSync('/proc/self/task')) {
      try {
        const comm = fs.readFileSync('/proc/self/task/' + tid + '/comm', 'utf8').trim();
        const m = /voluntary_ctxt_switches:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/task/' + tid + '/status', 'utf8'));
        out[tid + ' ' + comm] = Number(m[1]);
      } catch {}
    }
    return out;
  }`;

function child(mode, ks, body, env = {}) {
  const script = `
    const cql = require(${JSON.stringify(pkg)});
    ${switchesSource}
    (async () => {
      const c = new cql.Client({ contactPoints: [${JSON.stringify(CONTACT_POINT)}], localDataCenter: 'datacenter1', keyspace: ${JSON.stringify(ks)} });
      ${body}
    })().catch((e) => { console.error(e && e.stack || e); process.exit(1); });`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60000, env: { ...process.env, ...env, WEIR_CQL_RUNTIME: mode } });
  assert.equal(r.signal, null, `${mode}: child killed by ${r.signal} (hung?); stderr: ${r.stderr}`);
  assert.equal(r.status, 0, `${mode}: ${r.stderr}`);
  assert.doesNotMatch(r.stderr, /unavailable/, `${mode}: the runtime fell back: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

test('the js, worker and thread runtimes give the same answers', async (t) => {
  const { client, ks, drop } = await setupKeyspace(__filename);
  t.after(drop);
  await client.execute('CREATE TABLE kv (k int PRIMARY KEY, v text)');
  for (const mode of ['js', 'worker', 'thread']) {
    await client.execute('TRUNCATE kv');
    const out = child(mode, ks, `
      await c.connect();
      for (let i = 0; i < 50; i++) await c.execute('INSERT INTO kv (k, v) VALUES (?, ?)', [i, 'v' + i], { prepare: true });
      const g = await cql.concurrent.executeConcurrent(c, 'INSERT INTO kv (k, v) VALUES (?, ?)',
        Array.from({ length: 500 }, (_, i) => [1000 + i, 'c' + i]), { concurrencyLevel: 50 });
      const one = await c.execute('SELECT v FROM kv WHERE k = ?', [7], { prepare: true });
      // Sequential requests: which threads slept and were woken meanwhile.
      const s0 = switches();
      for (let i = 0; i < 200; i++) await c.execute('SELECT v FROM kv WHERE k = ?', [i % 50], { prepare: true });
      const s1 = switches();
      const woke = Object.keys(s1).filter((k) => s1[k] - (s0[k] || 0) > 20).map((k) => k.split(' ').slice(1).join(' '));
      const count = (await c.execute('SELECT COUNT(*) AS n FROM kv')).first().n.toNumber();
      await c.shutdown();
      console.log(JSON.stringify({ executed: g.totalExecuted, v7: one.first().v, count, woke }));
    `);
    assert.equal(out.executed, 500, mode);
    assert.equal(out.v7, 'v7', mode);
    assert.equal(out.count, 550, mode);
    if (mode === 'js') {
      // 200 requests: only the JS thread ("node") may have slept and woken ~once per request.
      assert.deepEqual(out.woke.filter((n) => n !== 'node'), [], `js mode: other threads woke: ${out.woke}`);
    } else {
      const carrier = mode === 'worker' ? 'weir-cql' : 'weir-cql-rt';
      assert.ok(out.woke.includes(carrier), `${mode} mode: thread ${carrier} should carry the requests, woke: ${out.woke}`);
    }
  }
});

test('a js-runtime process that forgets shutdown() still exits', async (t) => {
  const { ks, drop } = await setupKeyspace(__filename);
  t.after(drop);
  const out = child('js', ks, `
    const rs = await c.execute('SELECT release_version FROM system.local');
    console.log(JSON.stringify({ version: rs.first().release_version }));
  `);
  assert.match(out.version, /^5\./);
});

// The lost pump (src/runtime.rs, `pump`): tokio's last driver poll of a pump can take a reply
// off the epoll descriptor, and libuv then never reports it. WEIR_CQL_TEST_PARK_DELAY_US holds
// the pump in that window for 2 ms, so most replies land there. They must be delivered by
// the same pump (repumps), not by the 1 ms timer: without the repump every one of them is a
// timer delivery (checked 27 Nov: 147 of 200 with the repump disabled, the rest met a pump
// started for another reason first).
test('js runtime: a reply taken by tokio\'s last driver poll is delivered without the timer', async (t) => {
  const { client, ks, drop } = await setupKeyspace(__filename);
  t.after(drop);
  await client.execute('CREATE TABLE IF NOT EXISTS kv (k int PRIMARY KEY, v text)');
  await client.execute("INSERT INTO kv (k, v) VALUES (1, 'one')");
  const out = child('js', ks, `
    const native = require(${JSON.stringify(path.join(pkg, 'lib/native/native.js'))});
    await c.connect();
    await c.execute('SELECT v FROM kv WHERE k = ?', [1], { prepare: true });
    const s0 = JSON.parse(native.runtimeStats());
    for (let i = 0; i < 200; i++) await c.execute('SELECT v FROM kv WHERE k = ?', [1], { prepare: true });
    const s1 = JSON.parse(native.runtimeStats());
    await c.shutdown();
    console.log(JSON.stringify({ mode: s1.mode, repumps: s1.repumps - s0.repumps,
      timer: s1.answers.timer - s0.answers.timer, readable: s1.answers.readable - s0.answers.readable }));
  `, { WEIR_CQL_TEST_PARK_DELAY_US: '2000' });
  assert.equal(out.mode, 'js');
  // A timer pump may still meet a reply libuv was about to report (both due in one loop turn).
  assert.ok(out.timer <= 10, `${out.timer} of 200 replies waited for the 1 ms timer: ${JSON.stringify(out)}`);
  // The race was really provoked (a reply slower than 2 ms goes to libuv instead).
  assert.ok(out.repumps >= 100, `only ${out.repumps} of 200 replies landed in the widened window: ${JSON.stringify(out)}`);
});
