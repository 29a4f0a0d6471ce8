'use strict';
// Per-thread cost of a process, from /proc/<pid>/task/*: CPU (user, system), context
// switches (voluntary: the thread blocked and was woken later, i.e. one wake-up it needed
// from someone else; involuntary: it was preempted) and run-queue wait (schedstat: time
// runnable but not running, i.e. waiting for a CPU another task held; on a machine shared
// with other jobs this is the contamination a thread suffered). Grouped by thread name, so
// a run can say how many times per request each thread slept and was woken (the "thread
// hops").

const fs = require('node:fs');

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** Seconds `tid` spent runnable but waiting for a CPU (0 without schedstats). */
function runQueueWait(pid, tid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(/\s+/);
    return Number(f[1]) / 1e9 || 0;
  } catch { return 0; }
}

/** {tid: {comm, utime_s, stime_s, vcs, nvcs, wait_s}} for every live thread of `pid`. */
function snapshot(pid = process.pid) {
  const out = {};
  let tids;
  try { tids = fs.readdirSync(`/proc/${pid}/task`); } catch { return out; }
  for (const tid of tids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // The name is in parentheses and may hold spaces: the fields start after the last ')'.
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const status = fs.readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      const num = (k) => Number((new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status) || [])[1] || 0);
      out[tid] = { comm, utime_s: Number(f[11]) / TICKS_PER_SECOND, stime_s: Number(f[12]) / TICKS_PER_SECOND,
        vcs: num('voluntary_ctxt_switches'), nvcs: num('nonvoluntary_ctxt_switches'), wait_s: runQueueWait(pid, tid) };
    } catch { /* the thread exited between readdir and read */ }
  }
  return out;
}

/** What each thread name did between two snapshots (threads born in between count from 0). */
function diff(a, b) {
  const byName = {};
  for (const [tid, t] of Object.entries(b)) {
    const t0 = a[tid] || { utime_s: 0, stime_s: 0, vcs: 0, nvcs: 0, wait_s: 0 };
    const name = t.comm.replace(/[0-9]+$/, '');
    const g = byName[name] || (byName[name] = { threads: 0, utime_s: 0, stime_s: 0, vcs: 0, nvcs: 0, wait_s: 0 });
    g.threads += 1;
    g.utime_s += t.utime_s - t0.utime_s;
    g.stime_s += t.stime_s - t0.stime_s;
    g.vcs += t.vcs - t0.vcs;
    g.nvcs += t.nvcs - t0.nvcs;
    g.wait_s += (t.wait_s || 0) - (t0.wait_s || 0);
  }
  for (const name of Object.keys(byName)) {
    const g = byName[name];
    if (!g.vcs && !g.nvcs && !g.utime_s && !g.stime_s) delete byName[name];
    else { g.utime_s = +g.utime_s.toFixed(2); g.stime_s = +g.stime_s.toFixed(2); g.wait_s = +g.wait_s.toFixed(4); }
  }
  return byName;
}

module.exports = { snapshot, diff };
