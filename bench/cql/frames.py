#!/usr/bin/env python3
"""The CQL request frames a client wrote, from an strace log, so two drivers' requests can be
compared field by field: per EXECUTE its protocol version, header flags (tracing,
compression, custom payload), consistency, query flags (values, skip_metadata, page size,
paging state, serial consistency, default timestamp), and how many frames each write
system call carried (coalescing). Protocol v4 only (v5 wraps frames in segments after
STARTUP, which this does not decode).

  taskset -c 1 strace -f -qq -e trace=write,writev,sendmsg,sendto -xx -s 200000 -o LOG \
      node bench/cql/one.js <driver> concurrent_select 300
  python3 bench/cql/frames.py LOG
"""
import re, sys, collections
if len(sys.argv) != 2:
    sys.exit('usage: frames.py <strace -xx log>')
pat = re.compile(r'^(\d+)\s+(write|sendto|writev|sendmsg)\((\d+),\s*(.*)$')
hexs = re.compile(r'"((?:\\x[0-9a-f]{2})*)"')
OPS = {0x0a: 'EXECUTE', 0x07: 'QUERY', 0x09: 'PREPARE', 0x0d: 'BATCH', 0x05: 'OPTIONS', 0x01: 'STARTUP', 0x0b: 'REGISTER'}
per_call = collections.Counter(); shapes = collections.Counter(); calls = 0; frames = 0
fds = collections.Counter()
for line in open(sys.argv[1], errors='replace'):
    m = pat.match(line)
    if not m: continue
    data = b''.join(bytes.fromhex(h.replace('\\x', '')) for h in hexs.findall(m.group(4)))
    if len(data) < 9 or data[0] not in (4, 5): continue
    n = 0; off = 0
    while off + 9 <= len(data):
        ver, fl, stream, op = data[off], data[off+1], int.from_bytes(data[off+2:off+4], 'big'), data[off+4]
        ln = int.from_bytes(data[off+5:off+9], 'big'); body = data[off+9:off+9+ln]
        if ver not in (4, 5): break
        n += 1
        if op == 0x0a:
            idl = int.from_bytes(body[0:2], 'big'); p = 2 + idl
            cons = int.from_bytes(body[p:p+2], 'big'); qf = body[p+2]; p += 3
            nv = 0
            if qf & 1:
                nv = int.from_bytes(body[p:p+2], 'big'); p += 2
                for _ in range(nv):
                    l = int.from_bytes(body[p:p+4], 'big', signed=True); p += 4 + max(l, 0)
            ps = None
            if qf & 4: ps = int.from_bytes(body[p:p+4], 'big'); p += 4
            if qf & 8: l = int.from_bytes(body[p:p+4], 'big'); p += 4 + l
            ser = None
            if qf & 0x10: ser = int.from_bytes(body[p:p+2], 'big'); p += 2
            ts = qf & 0x20 != 0
            shapes[(f'v{ver}', f'hdrflags={fl:#x}', f'cons={cons:#x}', f'qflags={qf:#x}', f'skip_meta={bool(qf&2)}', f'values={nv}', f'page={ps}', f'serial={ser}', f'ts={ts}', f'len={ln}')] += 1
            fds[m.group(3)] += 1
        off += 9 + ln
    if n:
        calls += 1; frames += n; per_call[n] += 1
print(sys.argv[1], 'request syscalls', calls, 'frames', frames, 'frames/syscall', round(frames / max(calls, 1), 2))
print(' EXECUTE per fd', dict(fds))
for s, c in shapes.most_common(): print(' ', c, ' '.join(s))
print(' frames per syscall histogram', sorted(per_call.items())[:20])
