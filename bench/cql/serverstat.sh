#!/usr/bin/env bash
# One benchmark run of one driver (client on CPU 1) with the server's side counted: perf stat
# on node 1's JVM (cassandra.sh) for the run's length, printed per operation: wall time,
# client CPU, the server's CPU in the timed part (one.js), and the JVM's context switches and
# futex / read / write / writev / epoll_wait calls over the whole run (connect and warm-up
# included, so use thousands of ops). With the JVM pinned to one CPU, the server's CPU per
# request is what bounds a concurrent benchmark; this shows what the JVM spends it on.
#
#   usage: bench/cql/serverstat.sh <weir-cql|cassandra-driver|rust-raw> <bench> <ops> [NAME=VALUE ...]
#          (CQL_BENCH_WARMUP_OPS as for one.js; needs perf and a node started by cassandra.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 3 ] || { echo "usage: $0 <driver> <bench> <ops> [NAME=VALUE ...]" >&2; exit 2; }
driver=$1 bench=$2 ops=$3; shift 3
pid=$("$here/../../node/weir-cql/scripts/cassandra.sh" pid 1)
[[ $pid =~ ^[0-9]+$ ]] || { echo "$0: no node 1 started by cassandra.sh" >&2; exit 2; }
if [ "$driver" = rust-raw ]; then cmd=("$here/rust-raw/target/release/cql-bench-rust-raw" "$bench" "$ops")
else cmd=(node "$here/one.js" "$driver" "$bench" "$ops"); fi
stat=$(mktemp); trap 'rm -f "$stat"' EXIT
line=$(env CQL_BENCH_SERVER_PIDS="$pid" "$@" perf stat -x, -o "$stat" -p "$pid" \
  -e task-clock,context-switches,syscalls:sys_enter_futex,syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_epoll_wait \
  -- taskset -c 1 "${cmd[@]}" | tail -1)
LINE="$line" OPS="$ops" LABEL="$driver $bench $*" node -e '
const r = JSON.parse(process.env.LINE), n = Number(process.env.OPS);
const stat = require("fs").readFileSync(process.argv[1], "utf8").split("\n").map((l) => l.split(","))
  .filter((p) => p.length > 3 && /^[0-9.]+$/.test(p[0])).map((p) => [p[2].replace("syscalls:sys_enter_", ""), Number(p[0])]);
const us = (s) => (s / n * 1e6).toFixed(1);
console.log(`${process.env.LABEL}: ${us(r.seconds)} us/op wall, client CPU ${us(r.cpu_seconds)}, server CPU ${r.server_cpu_seconds == null ? "n/a" : us(r.server_cpu_seconds)} | JVM per op (whole run): ` +
  stat.filter(([k]) => k !== "task-clock").map(([k, v]) => `${k} ${(v / n).toFixed(2)}`).join(", "));' "$stat"
