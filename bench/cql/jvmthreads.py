#!/usr/bin/env python3
"""Where the server's CPU per request goes: runs a client command and prints, per kind of
Cassandra JVM thread, the CPU and context switches per operation during it (bench/cql,
issue 21).

usage: jvmthreads.py --ops N [--pid PID] -- COMMAND...
       (PID defaults to node 1's JVM from node/weir-cql/scripts/cassandra.sh)

Threads are diffed one by one (/proc/<pid>/task/<tid>/stat and status) and then grouped by
their name at the end, with the shared-pool (SEP) request workers in one group: the pool
renames a worker after the stage it serves (ReadStage, Native-Transport-Requests,
MutationStage), so their names say nothing stable. Voluntary switches per operation in that
group count how often a request thread parked and was woken.
"""
import collections
import os
import re
import subprocess
import sys

SEP = re.compile(r'^(ReadStage|Native-Transpor|MutationStage|CounterMutation|ViewMutation|RequestResponse|SharedPool)')


def snapshot(pid):
    out = {}
    for tid in os.listdir(f'/proc/{pid}/task'):
        try:
            stat = open(f'/proc/{pid}/task/{tid}/stat').read()
            status = open(f'/proc/{pid}/task/{tid}/status').read()
        except OSError:
            continue  # the thread ended meanwhile
        f = stat[stat.rindex(')') + 2:].split()
        switches = [int(re.search(rf'^{k}_ctxt_switches:\s+(\d+)', status, re.M).group(1))
                    for k in ('voluntary', 'nonvoluntary')]
        out[tid] = [int(f[11]) + int(f[12])] + switches
    return out


def name_of(pid, tid):
    try:
        return open(f'/proc/{pid}/task/{tid}/comm').read().strip()
    except OSError:
        return '?'


def main():
    args = sys.argv[1:]
    if '--' not in args or '--ops' not in args:
        sys.exit(__doc__)
    cmd = args[args.index('--') + 1:]
    ops = int(args[args.index('--ops') + 1])
    if '--pid' in args:
        pid = args[args.index('--pid') + 1]
    else:
        here = os.path.dirname(os.path.abspath(__file__))
        script = os.path.join(here, '../../node/weir-cql/scripts/cassandra.sh')
        pid = subprocess.run(['bash', script, 'pid', '1'], capture_output=True, text=True).stdout.strip()
    if not pid.isdigit():
        sys.exit('jvmthreads.py: no JVM pid (start node 1 with cassandra.sh or pass --pid)')
    hz = os.sysconf('SC_CLK_TCK')
    before = snapshot(pid)
    rc = subprocess.run(cmd).returncode
    after = snapshot(pid)
    groups = collections.defaultdict(lambda: [0, 0, 0, 0])
    for tid, now in after.items():
        delta = [a - b for a, b in zip(now, before.get(tid, [0, 0, 0]))]
        if not any(delta):
            continue
        name = name_of(pid, tid)
        key = 'SEP request workers' if SEP.match(name) else re.sub(r'[-:#]?\d+$', '', name)
        g = groups[key]
        for i in range(3):
            g[i] += delta[i]
        g[3] += 1
    print(f'JVM {pid}, {ops} operations: per kind of thread, CPU and context switches per operation')
    for key, (ticks, vol, invol, n) in sorted(groups.items(), key=lambda kv: -kv[1][0])[:6]:
        print(f'  {key:24s} {n:3d} threads  {ticks / hz:6.2f} s = {ticks / hz * 1e6 / ops:6.1f} us/op  '
              f'voluntary {vol / ops:5.2f}/op  involuntary {invol / ops:5.2f}/op')
    sys.exit(rc)


if __name__ == '__main__':
    main()
