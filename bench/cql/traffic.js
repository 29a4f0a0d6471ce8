'use strict';
// Traffic counters per TCP connection, from the kernel's tcp_info as `ss -tin` prints it
// (bytes_sent, bytes_received, segs_out, segs_in): the seed's traffic table without
// tcpdump or firewall rules. Loopback segments are up to 64 KiB, so "packets" here are
// TCP segments as the kernel counted them.
//
// - driver<->node: the client process's own connections to port 9042 (filtered by pid),
//   counted from the client side (sent + received);
// - node<->node: every internode connection (destination port 7000), counted once, from
//   its initiating side (Cassandra's internode connections are one-way, each with an
//   initiator).

const { execFileSync } = require('node:child_process');

const FIELDS = ['bytes_sent', 'bytes_received', 'segs_out', 'segs_in'];

/** Parses `ss -tinHp` output into [{local, peer, pid, bytes_sent, ...}]. */
function parse(text) {
  const out = [];
  let cur = null;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    if (!/^\s/.test(line)) {
      const f = line.trim().split(/\s+/);
      const pid = /pid=(\d+)/.exec(line);
      cur = { local: f[2], peer: f[3], pid: pid ? Number(pid[1]) : null };
      for (const k of FIELDS) cur[k] = 0;
      out.push(cur);
    } else if (cur) {
      for (const k of FIELDS) {
        const m = new RegExp(`\\b${k}:(\\d+)`).exec(line);
        if (m) cur[k] = Number(m[1]);
      }
    }
  }
  return out;
}

function ss(filter) {
  return parse(execFileSync('ss', ['-tinHp', 'state', 'established', filter], { encoding: 'utf8' }));
}

/** Counters of every connection of `pid` to a CQL port, keyed by connection. */
function driverSockets(pid) {
  const m = new Map();
  for (const s of ss('( dport = :9042 )')) if (s.pid === pid) m.set(`${s.local}>${s.peer}`, s);
  return m;
}

/** Counters of every internode connection, keyed by connection. */
function internodeSockets() {
  const m = new Map();
  for (const s of ss('( dport = :7000 )')) m.set(`${s.local}>${s.peer}`, s);
  return m;
}

/**
 * Totals moved between two snapshots: {packets, bytes}. A connection that is new in `after`
 * counts from zero; one that closed in between is lost (the table says so if it happens).
 */
function moved(before, after) {
  let packets = 0, bytes = 0, closed = 0;
  for (const [k, a] of after) {
    const b = before.get(k) || { bytes_sent: 0, bytes_received: 0, segs_out: 0, segs_in: 0 };
    packets += (a.segs_out - b.segs_out) + (a.segs_in - b.segs_in);
    bytes += (a.bytes_sent - b.bytes_sent) + (a.bytes_received - b.bytes_received);
  }
  for (const k of before.keys()) if (!after.has(k)) closed++;
  return { packets, bytes, closed };
}

module.exports = { parse, driverSockets, internodeSockets, moved };
