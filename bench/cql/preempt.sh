#!/bin/bash
# Who preempts weir-cql's JS thread: records sched_switch on CPU 1 (perf) during one pinned
# weir-cql run and counts the switches away from a runnable node thread per operation, by
# the task that took the CPU (the tokio worker, another node thread, anything else), then
# prints the run's wall, CPU and involuntary switches per operation. Needs perf and a
# running server holding benchmarks.basic (run.js makes it; select wants 10 rows).
#
#   bench/cql/preempt.sh BENCH OPS [NAME=VALUE...]    (from the repository root)
# e.g. bench/cql/preempt.sh select 4000 WEIR_CQL_WORKER_POLICY=batch
set -euo pipefail
bench=$1 ops=$2; shift 2
warmup=${CQL_BENCH_WARMUP_OPS:-1000}
dir=$(mktemp -d /tmp/cql-preempt.XXXXXX)
trap 'rm -rf "$dir"' EXIT
env "$@" CQL_BENCH_WARMUP_OPS="$warmup" perf record -q -o "$dir/perf.data" -e sched:sched_switch -C 1 -- \
  taskset -c 1 node bench/cql/one.js weir-cql "$bench" "$ops" "${CQL_HOST:-127.0.0.1:9042}" > "$dir/run.json" 2>/dev/null
# The warm-up operations run inside the recording too, so they count in the divisor.
perf script -i "$dir/perf.data" -F trace 2>/dev/null | grep 'prev_comm=node ' | awk -v n=$((ops + warmup)) -v tag="${*:-default}" -v bench="$bench" '
  / prev_state=R/ { if ($0 ~ /next_comm=weir-cql /) w++; else if ($0 ~ /next_comm=node /) j++; else o++ }
  END { printf "%s %s: node threads preempted per op by the tokio worker %.3f, by node %.3f, by other tasks %.3f\n", bench, tag, w / n, j / n, o / n }'
node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").pop());
  const us = (s) => (s / r.ops * 1e6).toFixed(1);
  console.log(`  wall ${us(r.seconds)} us/op, CPU ${us(r.cpu_seconds)} (user ${us(r.user_seconds)}, sys ${us(r.system_seconds)}), JS-side involuntary switches ${(r.threads.node.nvcs / r.ops).toFixed(2)}/op, run-queue wait ${us(r.threads.node.wait_s)} us/op`)' "$dir/run.json"
