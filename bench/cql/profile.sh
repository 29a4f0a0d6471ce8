#!/usr/bin/env bash
# Profiles one benchmark run of one driver on the client side and draws its flame graph.
#
#   usage: bench/cql/profile.sh [driver] [bench] [ops] [host:port]
#          (defaults: weir-cql insert 20000 127.0.0.1:9042)
#
# Needs a running server holding benchmarks.basic (run.js makes it), perf (Debian:
# apt-get install linux-perf) and inferno's inferno-collapse-perf / inferno-flamegraph on
# PATH (cargo install inferno). The client runs on CPU 1 (taskset) with V8's perf map, so
# JS frames have names. Writes results/profile-<driver>-<bench>.{folded,svg} and prints
# the share of client CPU samples by thread and the hottest functions.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DRIVER="${1:-weir-cql}"; BENCH="${2:-insert}"; OPS="${3:-20000}"; HOST="${4:-127.0.0.1:9042}"
for tool in perf inferno-collapse-perf inferno-flamegraph taskset; do
  command -v "$tool" >/dev/null || { echo "profile.sh: $tool not found (see the header for how to install it)" >&2; exit 2; }
done
mkdir -p "$HERE/results"
OUT="$HERE/results/profile-$DRIVER-$BENCH"
cd "$HERE"
perf record -q -F 1999 -g -o "$OUT.data" -- taskset -c 1 node --perf-basic-prof \
  one.js "$DRIVER" "$BENCH" "$OPS" "$HOST"
perf script -i "$OUT.data" 2>/dev/null | inferno-collapse-perf --all > "$OUT.folded"
inferno-flamegraph --title "$DRIVER $BENCH ($OPS ops, client on CPU 1)" < "$OUT.folded" > "$OUT.svg"
echo "profile.sh: $OUT.svg"
echo "-- samples by thread (comm):"
perf report -i "$OUT.data" --no-children --sort comm --stdio 2>/dev/null | grep -E '^ +[0-9.]+%' | awk 'NR <= 8'
echo "-- hottest functions (self):"
perf report -i "$OUT.data" --no-children --sort dso,sym --stdio 2>/dev/null | grep -E '^ +[0-9.]+%' | awk 'NR <= 25'
rm -f "$OUT.data"
