#!/usr/bin/env bash
# explore-replay.sh: replays a frontier point of a `weir explore` map with fio (a benchmark,
# not a test). The map says that at read rate R the disk takes at most W write bytes/s with
# read p99 <= goal (in a full map W is the interpolated crossing of the goal between a pass and
# a fail each measured twice, docs/design/explore.md); fio, an independent tool, runs R Poisson reads beside paced writes at
# FACTORS x W in the map's write regime and prints, per factor, the read p99 and whether both
# sides kept up. Expected: at 0.7x the reads stay within the goal; at 1.6x they do not, or the
# writes do not keep up.
#
# Latency: fio's `lat` (submission to completion). With iodepth far above the in-flight count
# fio submits each request at its scheduled time, so this is weir's arrival-to-completion as
# long as fio keeps up with its own schedule; the script prints fio's achieved read rate so a
# run where fio fell behind is visible.
#
# Usage: bench/explore-replay.sh EXPLORE_JSON [DIR]   (DIR default /var/tmp/weir-replay, on the
#   disk the map measured)
# Environment: DURATION (10, seconds per factor), FACTORS ("0.7 1.6"), POINT (frontier index;
#   default: the entry nearest half of the largest read rate), BENCH_LOCK (/work/bench.lock
#   if present: held for the whole run).
set -euo pipefail

MAP=${1:?usage: bench/explore-replay.sh EXPLORE_JSON [DIR]}
DIR=${2:-/var/tmp/weir-replay}
DURATION=${DURATION:-10}
FACTORS=${FACTORS:-"0.7 1.6"}
POINT=${POINT:-}
LOCK=${BENCH_LOCK:-/work/bench.lock}
command -v fio >/dev/null || { echo "fio is not installed: apt-get install fio" >&2; exit 2; }
mkdir -p "$DIR"
WORK=$(mktemp -d)
cleanup() { rm -rf "$WORK"; rm -f "$DIR"/replay-read "$DIR"/replay-write; }
trap cleanup EXIT
if [ -e "$LOCK" ] && [ -z "${REPLAY_LOCKED:-}" ]; then
  exec env REPLAY_LOCKED=1 flock "$LOCK" "$0" "$@"
fi

# The point: read rate, frontier writes, goal, regime, sizes.
read -r R W GOAL REGIME RB WB < <(python3 - "$MAP" "$POINT" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
f = [p for p in m["frontier"] if p["read_iops"] > 0 and p["write_bytes_per_s"] > 0]
if not f:
    sys.exit("the map has no mixed frontier point (read and write both > 0)")
if sys.argv[2]:
    p = m["frontier"][int(sys.argv[2])]
else:
    top = max(p["read_iops"] for p in f)
    p = min(f, key=lambda p: abs(p["read_iops"] - top / 2))
print(round(p["read_iops"]), round(p["write_bytes_per_s"]), m["goal_us"], m["write_regime"],
      m["read_bytes"], m["write_bytes"])
EOF
)
echo "frontier point: $R reads/s, $W write B/s; goal read p99 $GOAL us; $REGIME writes"

# The read file, written once (fio lays it out), 2 GiB.
READ_SIZE=$((2 << 30))
if [ "$REGIME" = overwrite ]; then
  WRITE_SIZE=$((8 << 30))
  fio --name=prefill --filename="$DIR/replay-write" --rw=write --bs=1M --size=$WRITE_SIZE \
      --direct=1 --ioengine=io_uring --iodepth=8 --output=/dev/null
fi

printf '%-7s %14s %14s %12s %12s %12s  %s\n' factor "write B/s" "achieved" "reads/s" "achieved" "read p99 us" verdict
for f in $FACTORS; do
  RATE=$(python3 -c "print(int($W * $f))")
  if [ "$REGIME" = fresh ]; then
    # A new fallocated file per factor, large enough never to wrap.
    rm -f "$DIR/replay-write"
    WRITE_SIZE=$(python3 -c "print(max(64 << 20, int($RATE * ($DURATION + 3) * 1.25) // 1048576 * 1048576))")
    # A job-file line (no leading dashes); fio 3.33 spells the fallocate(2) mode `posix`.
    EXTRA="fallocate=posix"
  else
    EXTRA=""
  fi
  cat > "$WORK/replay.fio" <<EOF
[global]
directory=$DIR
direct=1
ioengine=io_uring
time_based=1
runtime=$DURATION
ramp_time=2
lat_percentiles=1
percentile_list=50:99:99.9

[reads]
filename=replay-read
rw=randread
bs=$RB
size=$READ_SIZE
iodepth=256
rate_iops=$R
rate_process=poisson

[writes]
filename=replay-write
rw=write
bs=$WB
size=$WRITE_SIZE
iodepth=64
rate=$RATE
$EXTRA
EOF
  fio --output-format=json --output="$WORK/out.json" "$WORK/replay.fio" >/dev/null
  python3 - "$WORK/out.json" "$f" "$RATE" "$R" "$GOAL" >>"$WORK/rows" <<'EOF'
import json, sys
out, f, rate, r, goal = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
jobs = {j["jobname"]: j for j in json.load(open(out))["jobs"]}
reads, writes = jobs["reads"]["read"], jobs["writes"]["write"]
p99 = reads["lat_ns"]["percentile"].get("99.000000", 0) / 1e3
# The map's kept-up rule: achieved >= 97% of offered, the reads allowed three standard
# deviations of their Poisson count on top, as explore allows them.
seconds = max(reads["runtime"] / 1e3, 1.0)
read_slack = 3 * (r * seconds) ** 0.5 / seconds
kept = reads["iops"] + read_slack >= 0.97 * r and writes["bw_bytes"] >= 0.97 * rate
verdict = "within goal" if kept and p99 <= goal else ("over goal" if kept else "did not keep up")
print(f"{f:<7} {rate:14.0f} {writes['bw_bytes']:14.0f} {r:12.0f} {reads['iops']:12.0f} {p99:12.0f}  {verdict}")
EOF
  tail -n 1 "$WORK/rows"
done

# The verdict the issue asks for: below the frontier (factor < 1) the reads stay within the
# goal; above it (factor > 1) they do not, or the writes do not keep up.
python3 - "$WORK/rows" <<'EOF'
import sys
agree = total = 0
for line in open(sys.argv[1]):
    f = float(line.split()[0])
    verdict = line.split("  ")[-1].strip()
    expected = "within goal" if f < 1 else "over goal or did not keep up"
    ok = (verdict == "within goal") == (f < 1)
    agree += ok
    total += 1
    print(f"{f}x: expected {expected}; fio: {verdict} ({'as the map says' if ok else 'AGAINST the map'})")
print(f"replay verdict: {'the map holds' if agree == total else 'the map does not hold'} "
      f"({agree} of {total} factors as expected)")
EOF
