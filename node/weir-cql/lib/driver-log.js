'use strict';
// The Rust driver's own log events (src/log.rs) for `client.on('log')`. They are
// process-wide (the scylla crate's events name no session), so one native sink is
// registered while any client has a 'log' listener, and each event goes to all of them as
// cassandra-driver's (level, className, message): className is the Rust module that logged.

const native = require('./native/native.js');

const listening = new Set();

function deliver(json) {
  let e;
  try { e = JSON.parse(json); } catch { return; }
  for (const client of listening) client.emit('log', e.level, e.target, e.message);
}

/** Called when `client` gains or loses its last 'log' listener. */
function track(client, on) {
  const before = listening.size;
  if (on) listening.add(client); else listening.delete(client);
  if (before === 0 && listening.size > 0) native.setLogSink(deliver);
  else if (before > 0 && listening.size === 0) native.setLogSink(null);
}

module.exports = { track };
