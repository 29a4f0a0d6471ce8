#!/usr/bin/env bash
# engine-vs-fio.sh: weir's engine against fio (io_uring, O_DIRECT) on the same 1 GiB file.
#
# Usage: bench/engine-vs-fio.sh [DIR]      (default DIR: /var/tmp/weir-bench)
# Environment: ROUNDS (5), DURATION_S (10), SETTLE_S (3), BACKENDS ("uring aio"),
# WORKLOADS ("randread_qd1 randread_qd32 write128k_qd8"), LOCK (a lock file taken
# exclusively around each sample, e.g. /work/bench.lock; default none), WEIR (path to a built
# weir binary; default: build it with `cargo build --release -p weir`).
#
# Three workloads, one shard / one fio job each: 4 KiB random reads at QD1 and QD32, and
# 128 KiB sequential writes at QD8. Both sides do the same thing to the same pre-written file:
# O_DIRECT, io_uring (fio) or io_uring/AIO (weir) at the same depth and request size,
# sequential writes from offset 0 wrapping at 1 GiB, incompressible data (fio's random,
# scrambled buffers; weir's random buffers stamped per write, see weir_engine::payload).
# weir sends RWF_NOWAIT and reports how many requests came back EAGAIN (0 on this file).
#
# The disk under the development VM drifts by +-20% within minutes and the host buffers
# writes, so the order of the sides rotates every round (fio/aio/uring, then aio/uring/fio,
# ...), each sample starts after `sync` and a SETTLE_S pause so the previous side's buffered
# writes have drained, and every round's weir/fio ratio is printed so drift is visible.
# Printed: IOPS, MB/s, p50/p99 latency (submission to completion), CPU seconds per I/O
# (user+sys of the whole process from /usr/bin/time over its completed I/Os), medians over
# rounds, ratios of the medians, and the median of the per-round ratios (each round's pair
# ran within seconds of each other, so that one is the less drift-prone estimate).
set -euo pipefail

DIR=${1:-/var/tmp/weir-bench}
ROUNDS=${ROUNDS:-5}
SETTLE_S=${SETTLE_S:-3}
WORKLOADS=${WORKLOADS:-"randread_qd1 randread_qd32 write128k_qd8"}
LOCK=${LOCK:-}
DURATION_S=${DURATION_S:-10}
BACKENDS=${BACKENDS-"uring aio"}
REPO=$(cd "$(dirname "$0")/.." && pwd)
JOB=bench
FILE="$DIR/test-$JOB-0"
FILE_BYTES=$((1 << 30))

for tool in fio python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "engine-vs-fio: $tool is required" >&2; exit 2; }
done

if [[ -z "${WEIR:-}" ]]; then
    (cd "$REPO" && cargo build --release -p weir >&2)
    WEIR="${CARGO_TARGET_DIR:-$REPO/target}/release/weir"
fi
[[ -x "$WEIR" ]] || { echo "engine-vs-fio: no weir binary at $WEIR" >&2; exit 2; }

mkdir -p "$DIR"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/weir-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# Keep weir from deleting (or re-filling) the shared file when it supports that.
KEEP=()
if "$WEIR" run --help 2>/dev/null | grep -q -- '--keep-files'; then KEEP=(--keep-files); fi

prewrite() {
    local size
    size=$(stat -c %s "$FILE" 2>/dev/null || echo 0)
    if [[ "$size" != "$FILE_BYTES" ]]; then
        echo "pre-writing $FILE (1 GiB)" >&2
        fio --name=prewrite --filename="$FILE" --rw=write --bs=1m --size=1g --direct=1 \
            --ioengine=io_uring --iodepth=8 --output=/dev/null
    fi
}

# One timed sample: flush what earlier samples left in the host's buffers, pause, then run
# the command (under the exclusive LOCK, when given, so nothing else uses the disk meanwhile).
sample() {
    local settle=(bash -c 'sync; sleep "$0"; exec "$@"' "$SETTLE_S")
    if [[ -n "$LOCK" ]]; then flock "$LOCK" "${settle[@]}" "$@"; else "${settle[@]}" "$@"; fi
}

# workload name -> fio args and weir job file
declare -A FIO_ARGS=(
    [randread_qd1]="--rw=randread --bs=4k --iodepth=1"
    [randread_qd32]="--rw=randread --bs=4k --iodepth=32"
    [write128k_qd8]="--rw=write --bs=128k --iodepth=8"
)
write_job() { # name type parallelism reqsize
    cat >"$WORK/$1.yaml" <<YAML
- name: $JOB
  shards: [0]
  type: $2
  data_size: 1GB
  shard_info:
    parallelism: $3
    reqsize: $4
YAML
}
write_job randread_qd1 randread 1 4kB
write_job randread_qd32 randread 32 4kB
write_job write128k_qd8 overwrite 8 128kB

run_fio() { # workload round
    local out="$WORK/fio-$1-$2"
    prewrite
    # shellcheck disable=SC2086
    if ! sample /usr/bin/time -f '%U %S' -o "$out.time" fio --name=bench --filename="$FILE" \
        --size=1g --direct=1 --ioengine=io_uring --time_based --runtime="$DURATION_S" \
        --lat_percentiles=1 --clat_percentiles=0 --norandommap --randrepeat=0 \
        ${FIO_ARGS[$1]} --output-format=json --output="$out.json"; then
        echo "fio failed ($1, round $2); this sample is skipped" >&2
        return 0
    fi
    python3 - "$out" fio <<'PY' >>"$WORK/results.tsv"
import json, sys
out, side = sys.argv[1], sys.argv[2]
j = json.load(open(out + ".json"))["jobs"][0]
d = j["read"] if j["read"]["total_ios"] > 0 else j["write"]
pct = d["lat_ns"]["percentile"]
user, sys_s = map(float, open(out + ".time").read().split()[-2:])
ios = d["total_ios"]
print("\t".join(map(str, [*out.split("/")[-1].split("-")[1:3], side, d["iops"],
      d["bw_bytes"] / 1e6, pct["50.000000"] / 1e3, pct["99.000000"] / 1e3,
      (user + sys_s) / max(ios, 1)])))
PY
}

run_weir() { # workload round backend
    local out="$WORK/weir_$3-$1-$2"
    prewrite
    if ! sample /usr/bin/time -f '%U %S' -o "$out.time" "$WEIR" run "$WORK/$1.yaml" --dir "$DIR" \
        --duration "${DURATION_S}s" --shards 1 --backend "$3" --output json "${KEEP[@]}" \
        >"$out.json" 2>"$out.err"; then
        echo "weir run failed ($1, round $2, $3); this sample is skipped:" >&2
        cat "$out.err" "$out.time" >&2
        return 0
    fi
    python3 - "$out" "weir_$3" <<'PY' >>"$WORK/results.tsv"
import json, sys
out, side = sys.argv[1], sys.argv[2]
doc = json.load(open(out + ".json"))

def find(node, names):
    """The first value under any of `names`, searching depth-first (the report's layout
    belongs to weir-workload; this accepts its plausible spellings)."""
    if isinstance(node, dict):
        for n in names:
            if n in node and not isinstance(node[n], (dict, list)):
                return float(node[n])
        for v in node.values():
            r = find(v, names)
            if r is not None:
                return r
    elif isinstance(node, list):
        for v in node:
            r = find(v, names)
            if r is not None:
                return r
    return None

iops = find(doc, ["iops", "IOPS"])
bw = find(doc, ["throughput_bytes_per_s", "bandwidth_bytes_per_s", "bytes_per_s"])
if bw is None:
    kbs = find(doc, ["throughput_kbps", "throughput_kb_per_s", "throughput"])
    bw = kbs * 1024 if kbs is not None else float("nan")
p50 = find(doc, ["latency_us_p50", "p50_us", "p50", "p0.5"])
p99 = find(doc, ["latency_us_p99", "p99_us", "p99", "p0.99"])
ios = find(doc, ["ops", "total_requests", "requests", "ios", "total_ios"])
user, sys_s = map(float, open(out + ".time").read().split()[-2:])
nan = float("nan")
print("\t".join(map(str, [*out.split("/")[-1].split("-")[1:3], side, iops or nan, bw / 1e6,
      p50 if p50 is not None else nan, p99 if p99 is not None else nan,
      (user + sys_s) / ios if ios else nan])))
PY
}

sides=(fio)
for b in $BACKENDS; do sides+=("weir_$b"); done
: >"$WORK/results.tsv"
for round in $(seq 1 "$ROUNDS"); do
    for workload in $WORKLOADS; do
        n=${#sides[@]}
        for i in $(seq 0 $((n - 1))); do
            side=${sides[$(((i + round - 1) % n))]}
            echo "round $round/$ROUNDS: $workload on $side" >&2
            if [[ $side == fio ]]; then run_fio "$workload" "$round"
            else run_weir "$workload" "$round" "${side#weir_}"; fi
        done
    done
done

python3 - "$WORK/results.tsv" "$WORKLOADS" <<'PY'
import statistics, sys
from collections import defaultdict
rows = defaultdict(list)      # (workload, side) -> [values]
by_round = defaultdict(dict)  # (workload, round) -> side -> values
for line in open(sys.argv[1]):
    w, rnd, side, *vals = line.split("\t")
    vals = [float(v) for v in vals]
    rows[(w, side)].append(vals)
    by_round[(w, int(rnd))][side] = vals
workloads = sys.argv[2].split()
def med(w, side, k):
    vals = [r[k] for r in rows.get((w, side), []) if r[k] == r[k]]
    return statistics.median(vals) if vals else float("nan")
def ratio(a, b):
    return a / b if b and a == a and b == b else float("nan")
sides = sorted({s for _, s in rows}, key=lambda s: (s != "fio", s))
print(f"{'workload':15} {'side':11} {'IOPS':>9} {'MB/s':>8} {'p50 us':>8} {'p99 us':>8} "
      f"{'CPU us/IO':>9} | {'IOPS x':>6} {'MB/s x':>6} {'CPU x':>6} {'paired':>6}")
for w in workloads:
    f = [med(w, "fio", k) for k in range(5)]
    for s in sides:
        m = [med(w, s, k) for k in range(5)]
        paired = [ratio(r[s][1], r["fio"][1]) for (ww, _), r in by_round.items()
                  if ww == w and s in r and "fio" in r]
        paired = statistics.median(paired) if paired else float("nan")
        print(f"{w:15} {s:11} {m[0]:9.0f} {m[1]:8.1f} {m[2]:8.1f} {m[3]:8.1f} "
              f"{m[4] * 1e6:9.2f} | {ratio(m[0], f[0]):6.3f} {ratio(m[1], f[1]):6.3f} "
              f"{ratio(m[4], f[4]):6.3f} {paired:6.3f}")
rounds = max((r for _, r in by_round), default=0)
print(f"(medians of {rounds} rounds; ratios are weir/fio of the medians; 'paired' is the median "
      "of each round's MB/s ratio; CPU = user+sys seconds of the process per completed I/O)")
print()
print("per-round MB/s and weir/fio ratio (the order rotates every round):")
for w in workloads:
    for rnd in range(1, rounds + 1):
        r = by_round.get((w, rnd), {})
        cells = [f"{s} {r[s][1]:7.1f}" + (f" ({ratio(r[s][1], r['fio'][1]):.3f})"
                 if s != "fio" and "fio" in r else "") for s in sides if s in r]
        print(f"  {w:15} round {rnd}: " + ", ".join(cells))
PY
