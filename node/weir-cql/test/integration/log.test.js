'use strict';
// client.on('log') receives the Rust driver's own tracing events, with cassandra-driver's
// level names, and at most 100 of them per second (src/log.rs).
const test = require('node:test');
const assert = require('node:assert/strict');
const { newClient } = require('./helpers');
const native = require('../../lib/native/native.js');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test("the Rust driver's events reach client.on('log'), levels mapped", async () => {
  const client = newClient();
  const events = [];
  client.on('log', (level, className, message) => events.push({ level, className, message }));
  await client.connect();
  await client.execute('SELECT release_version FROM system.local');
  await client.shutdown();
  const rust = events.filter((e) => e.className.startsWith('scylla::'));
  assert.ok(rust.length > 0, `no event from the scylla crate among ${events.length}`);
  for (const e of rust) assert.ok(['verbose', 'info', 'warning', 'error'].includes(e.level), e.level);
  // The control connection's start-up and the nodes it found, as the Rust driver says them.
  assert.ok(rust.some((e) => e.level === 'info' && /Node added to cluster/.test(e.message)),
    rust.map((e) => `${e.level} ${e.className}: ${e.message}`).join('\n'));
  // A client that shut down gets no more driver events (it left the sink's audience, and
  // with it the last listener: the native sink is removed).
  const quiet = newClient();
  await quiet.connect();
  await quiet.shutdown();
  assert.equal(events.filter((e) => e.className.startsWith('scylla::')).length, rust.length);
});

test('a burst of driver events is cut to 100 per second and the drop is reported', async () => {
  const client = newClient();
  const burst = [];
  client.on('log', (level, className, message) => { if (className === 'weir_cql::log_test') burst.push({ level, message }); });
  await sleep(1100); // a fresh one-second window
  native.logTestBurst(500);
  await sleep(1100);
  native.logTestBurst(1);
  await sleep(200);
  client.removeAllListeners('log');
  assert.ok(burst.length >= 2, `got ${burst.length} events`);
  const first = burst.slice(0, -1), last = burst[burst.length - 1];
  // Other driver events of the same second share the budget, so at most 100 crossed.
  assert.ok(first.length <= 100 && first.length >= 90, `${first.length} of 500 crossed in one second`);
  assert.equal(first[0].level, 'verbose');
  const m = /\((\d+) earlier log events dropped/.exec(last.message);
  assert.ok(m, last.message);
  assert.ok(Number(m[1]) >= 500 - first.length, `${m[1]} dropped, ${first.length} crossed`);
});
