#!/usr/bin/env python3
"""How many CQL requests a client really has outstanding on the wire (bench/cql, issue 21).

Sniffs loopback (AF_PACKET, root) for TCP to or from port 9042, reassembles each direction of
each connection, parses CQL v4 frames (9-byte header: version, flags, stream, opcode, length)
and tracks, per connection, which stream ids have a request on the wire without an answer yet.
Prints, when SIGINT/SIGTERM arrive (or after --seconds), one JSON line: requests and answers
seen, connections used, the outstanding count averaged over time while anything was
outstanding and its distribution as seen by each new request, and frames per TCP segment in
each direction (write coalescing shows there).

usage: inflight.py [--seconds S] [--port 9042] [--dump N: print the first N EXECUTE and RESULT frames in hex to stderr]   (start it, run the client, stop it)

Loopback hands each packet to AF_PACKET twice (outgoing and incoming); only the outgoing copy
is read. A dropped packet breaks the reassembly of its direction: the line then says
"desync" > 0 and the figures are not to be trusted.
"""
import json
import signal
import socket
import struct
import sys
import time

PACKET_OUTGOING = 4
ETH_P_ALL = 0x0003


def main():
    args = sys.argv[1:]
    seconds = float(args[args.index('--seconds') + 1]) if '--seconds' in args else None
    port = int(args[args.index('--port') + 1]) if '--port' in args else 9042
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE: 64 MiB, so bursts are not dropped
    s.bind(('lo', 0))
    s.settimeout(0.2)
    stop = [False]
    signal.signal(signal.SIGINT, lambda *_: stop.__setitem__(0, True))
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    pending = {}       # (conn, direction) -> bytes not yet parsed
    outstanding = {}   # conn -> set of stream ids
    total = [0]        # outstanding over all connections
    seen_at_request = {}
    st = dict(requests=0, answers=0, desync=0, req_segments=0, ans_segments=0)
    area = [0.0, 0.0, None]  # time-weighted sum, busy time, last change
    dump = [int(args[args.index('--dump') + 1]) if '--dump' in args else 0]
    t_end = time.monotonic() + seconds if seconds else None
    print('inflight.py: listening', file=sys.stderr, flush=True)

    idle = dict(since=None, gaps=[])

    def change(now, delta):
        if total[0] == 0 and delta > 0 and idle['since'] is not None:
            idle['gaps'].append(now - idle['since'])
            if '--gaps' in args and now - idle['since'] > 0.002:
                print('gap %.1f ms after %d requests' % ((now - idle['since']) * 1e3, st['requests']), file=sys.stderr)
        if total[0] + delta == 0:
            idle['since'] = now
        if area[2] is not None and total[0] > 0:
            area[0] += total[0] * (now - area[2])
            area[1] += now - area[2]
        area[2] = now
        total[0] += delta

    while not stop[0] and (t_end is None or time.monotonic() < t_end):
        try:
            pkt, addr = s.recvfrom(262144)
        except socket.timeout:
            continue
        if addr[2] != PACKET_OUTGOING or len(pkt) < 14 + 20 or pkt[12:14] != b'\x08\x00':
            continue
        ip = pkt[14:]
        ihl = (ip[0] & 15) * 4
        if ip[9] != 6:
            continue
        tcp = ip[ihl:]
        sport, dport = struct.unpack('!HH', tcp[:4])
        if port not in (sport, dport):
            continue
        payload = tcp[(tcp[12] >> 4) * 4:struct.unpack('!H', ip[2:4])[0] - ihl]
        if not payload:
            continue
        to_server = dport == port
        conn = (ip[12:16], sport, ip[16:20], dport) if to_server else (ip[16:20], dport, ip[12:16], sport)
        key = (conn, to_server)
        buf = pending.get(key, b'') + payload
        now = time.monotonic()
        st['req_segments' if to_server else 'ans_segments'] += 1
        streams = outstanding.setdefault(conn, set())
        while len(buf) >= 9:
            version, _flags, stream, _op, length = struct.unpack('!BBhBI', buf[:9])
            if version & 0x7f not in (3, 4, 5) or length > 256 << 20:
                st['desync'] += 1
                buf = b''
                break
            if len(buf) < 9 + length:
                break
            frame = buf[9:9 + length]
            buf = buf[9 + length:]
            if stream < 0:
                continue  # server events
            if dump[0] > 0 and _op in (10, 8):
                dump[0] -= 1
                print(('REQ ' if to_server else 'ANS ') + 'op=%d len=%d ' % (_op, length) + frame[:200].hex(), file=sys.stderr)
            if to_server:
                st['requests'] += 1
                n = total[0]
                seen_at_request[n] = seen_at_request.get(n, 0) + 1
                if stream not in streams:
                    streams.add(stream)
                    change(now, 1)
            else:
                st['answers'] += 1
                if stream in streams:
                    streams.discard(stream)
                    change(now, -1)
        pending[key] = buf
    counts = sorted(seen_at_request.items())
    n = sum(c for _, c in counts)

    def quantile(q):
        acc = 0
        for v, c in counts:
            acc += c
            if acc >= q * n:
                return v
        return None

    gaps = sorted(idle['gaps'])
    out = dict(st,
               idle_gaps=len(gaps), idle_seconds=round(sum(gaps), 3),
               idle_gap_ms_p50_p90_max=[round(gaps[int(q * (len(gaps) - 1))] * 1e3, 2) for q in (0.5, 0.9, 1.0)] if gaps else None, connections=len([c for c in outstanding]),
               avg_outstanding_while_busy=round(area[0] / area[1], 1) if area[1] else None,
               busy_seconds=round(area[1], 3),
               outstanding_at_request_p10_p50_p90=[quantile(0.1), quantile(0.5), quantile(0.9)],
               frames_per_request_segment=round(st['requests'] / st['req_segments'], 2) if st['req_segments'] else None,
               frames_per_answer_segment=round(st['answers'] / st['ans_segments'], 2) if st['ans_segments'] else None)
    print(json.dumps(out), flush=True)


if __name__ == '__main__':
    main()
