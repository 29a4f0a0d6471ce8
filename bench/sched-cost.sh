#!/usr/bin/env bash
# sched-cost.sh: what the scheduler costs per I/O on zram, where the limit is CPU: scheduled
# rows against the same jobs unscheduled, CPU and calls per I/O (a benchmark, not a test).
#
# The job is bench/shares.sh's: two classes of 4 KiB random reads (OP, SIZE), parallelism 32
# per class per shard, 2 shards, 512 MB per job on an ext4 on a zram device of our own, the
# model bench/zram-quiet.yaml. Rows: unscheduled (`--no-scheduler`) and the splits 1:1 and
# 1000:100 through the scheduler, for WEIR and (if set) WEIR_B, in an order rotated by the
# round. Each row runs under `perf stat` and is divided by the I/Os it completed:
#   - CPU time per I/O (task-clock, every thread of the process, the io_uring workers too;
#     user and system time from weir's own report);
#   - context switches, io_uring_enter calls, clock_nanosleep calls (the shard loop's
#     sleeps: a shard that sleeps with queued work and budget is an idle gap) per I/O;
#   - the scheduler's cross-shard stalls and the leads it lets go for a laggard off its CPU
#     (`--metrics`), and how the I/Os split between the shards.
# This VM exposes no hardware counters (perf: instructions and cycles "not supported"), so
# the per-I/O figures are CPU time and counts of calls: counts do not move with another
# process's load, CPU time per I/O moves less than a rate does.
#
# HOG=N (0): N busy loops pinned to CPU 0 during every row (a controlled contention: shard 0
# is pinned there and gets 1 / (N + 1) of it), the case a busy neighbour makes by accident.
#
# Time: ROUNDS x rows x (DURATION + ~1 s) plus ~5 s of layout: the default (3 rounds, 3 rows,
# 3 s) ~35 s; with WEIR_B ~50 s (measured 50.8 s).
#
# Usage: bench/sched-cost.sh
# Environment: WEIR (a built weir; default: build this tree), WEIR_B, ROUNDS (3), DURATION
#   (3s), OP (randread), SIZE (4kB), SPLITS ("1:1 1000:100"), HOG (0), ZRAM_SIZE (4G),
#   ZRAM_DATA_SIZE (512MB), ZRAM_PROPS (bench/zram-quiet.yaml), GOAL (0.75ms),
#   BENCH_LOCK (/work/bench.lock if present).
# Needs root (its own zram device) and perf.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-3s}
OP=${OP:-randread}
SIZE=${SIZE:-4kB}
SPLITS=${SPLITS:-"1:1 1000:100"}
HOG=${HOG:-0}
ZRAM_SIZE=${ZRAM_SIZE:-4G}
ZRAM_DATA_SIZE=${ZRAM_DATA_SIZE:-512MB}
GOAL=${GOAL:-0.75ms}
REPO=$(cd "$(dirname "$0")/.." && pwd)
ZRAM_PROPS=${ZRAM_PROPS:-$REPO/bench/zram-quiet.yaml}

[[ $HOG =~ ^[0-9]+$ ]] || { echo "sched-cost: HOG=$HOG: a count of busy loops such as 2" >&2; exit 2; }
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "sched-cost: ROUNDS=$ROUNDS: a positive count of rounds such as 3" >&2; exit 2; }
# The Debian package that brings each tool, for the error's fix.
declare -A PACKAGE=([perf]=linux-perf [python3]=python3 [mkfs.ext4]=e2fsprogs)
for tool in perf python3 mkfs.ext4; do
    command -v "$tool" >/dev/null || {
        echo "sched-cost: $tool is required; install it (Debian: apt-get install ${PACKAGE[$tool]})" >&2
        exit 2
    }
done
if [[ $EUID -ne 0 || ! -w /sys/class/zram-control/hot_add ]]; then
    echo "sched-cost: needs root and /sys/class/zram-control (modprobe zram)" >&2
    exit 2
fi
if [[ -z "${WEIR:-}" ]]; then
    (cd "$REPO" && cargo build --release -p weir >&2)
    WEIR="${CARGO_TARGET_DIR:-$REPO/target}/release/weir"
fi
for bin in "$WEIR" ${WEIR_B:+"$WEIR_B"}; do
    [[ -x "$bin" ]] || { echo "sched-cost: no weir binary at $bin" >&2; exit 2; }
done

bench_lock sched-cost

WORK=$(mktemp -d "${TMPDIR:-/tmp}/weir-sched-cost.XXXXXX")
ZRAM_ID=""
MNT=""
HOGS=()
cleanup() {
    local pid
    for pid in "${HOGS[@]}"; do kill "$pid" 2>/dev/null || true; done
    zram_release "$MNT" "$ZRAM_ID"
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ZRAM_ID=$(cat /sys/class/zram-control/hot_add)
echo "$ZRAM_SIZE" >"/sys/block/zram$ZRAM_ID/disksize"
mkfs.ext4 -q "/dev/zram$ZRAM_ID"
MNT=$(mktemp -d /tmp/weir-sched-cost-zram.XXXXXX)
mount "/dev/zram$ZRAM_ID" "$MNT"

job_file() { # shares_a shares_b -> stdout (bench/shares.sh's job)
    local name shares
    for name in a b; do
        shares=$1
        [[ $name == b ]] && shares=$2
        cat <<EOF
- name: $name
  type: $OP
  shards: all
  data_size: $ZRAM_DATA_SIZE
  shard_info:
    parallelism: 32
    reqsize: $SIZE
    class: $name
    shares: $shares
EOF
    done
}

job_file 1 1 >"$WORK/job.yaml"
"$WEIR" run "$WORK/job.yaml" --dir "$MNT" --duration 1s --shards 2 --keep-files \
    --no-scheduler --output json >/dev/null

EVENTS=task-clock,context-switches,syscalls:sys_enter_io_uring_enter,syscalls:sys_enter_clock_nanosleep,syscalls:sys_enter_futex
RESULTS=$WORK/results.jsonl
: >"$RESULTS"

row() { # bin_label bin split
    local label=$1 bin=$2 split=$3 flags=(--no-scheduler) pair=1:1
    if [[ $split != none ]]; then
        pair=$split
        flags=(--latency-goal "$GOAL" --metrics "$WORK/row.prom")
    fi
    rm -f "$WORK/row.prom"
    job_file "${pair%%:*}" "${pair##*:}" >"$WORK/job.yaml"
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    perf stat -x, -e "$EVENTS" -o "$WORK/row.perf" "$bin" run "$WORK/job.yaml" --dir "$MNT" \
        --duration "$DURATION" --shards 2 --keep-files --output json \
        --io-properties "$ZRAM_PROPS" "${flags[@]}" >"$WORK/row.json"
    python3 - "$label" "$split" "$load" "$WORK" >>"$RESULTS" <<'EOF'
import json, os, re, sys
label, split, load, work = sys.argv[1:]
doc = json.load(open(f"{work}/row.json"))
ios = sum(j["ops"] for j in doc["jobs"])
per_shard = [sum(s["ops"] for j in doc["jobs"] for s in j["per_shard"] if s["shard"] == k)
             for k in (0, 1)]
events = {}
for line in open(f"{work}/row.perf"):
    parts = line.strip().split(",")
    if len(parts) > 2 and parts[0] and not line.startswith("#"):
        try:
            events[parts[2].split(":")[-1]] = float(parts[0])
        except ValueError:
            pass  # "<not counted>"
prom = {}
if os.path.exists(f"{work}/row.prom"):
    for line in open(f"{work}/row.prom"):
        m = re.match(r"weir_io_queue_(lag_stalls|lag_overdue_skips)\{[^}]*\} (\S+)", line)
        if m:
            prom[m.group(1)] = prom.get(m.group(1), 0.0) + float(m.group(2))
jobs = {j["name"]: j["ops"] for j in doc["jobs"]}
print(json.dumps({
    "bin": label, "split": split, "load": float(load), "iops": ios / doc["duration_s"],
    "ratio": jobs["a"] / max(jobs["b"], 1), "shard0": per_shard[0] / max(ios, 1),
    "cpu_us": events.get("task-clock", 0) * 1e3 / ios,
    "user_us": doc["cpu"]["user_s"] * 1e6 / ios, "sys_us": doc["cpu"]["sys_s"] * 1e6 / ios,
    "cs": events.get("context-switches", 0) / ios,
    "enters": events.get("sys_enter_io_uring_enter", 0) / ios,
    "sleeps": events.get("sys_enter_clock_nanosleep", 0) / ios,
    "futex": events.get("sys_enter_futex", 0) / ios,
    "stalls": prom.get("lag_stalls", 0.0), "overdue": prom.get("lag_overdue_skips", 0.0),
}))
EOF
}

for ((i = 0; i < HOG; i++)); do
    taskset -c 0 sh -c 'while :; do :; done' &
    HOGS+=($!)
done
echo "sched-cost: $(date -u +%Y-%m-%dT%H:%M:%SZ) weir $WEIR${WEIR_B:+ (A) and $WEIR_B (B)}, $OP $SIZE," \
    "splits $SPLITS, $ROUNDS rounds of $DURATION, $HOG busy loops on CPU 0, load average" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
ROWS=("A none")
for split in $SPLITS; do
    ROWS+=("A $split")
    [[ -n "${WEIR_B:-}" ]] && ROWS+=("B $split")
done
for ((round = 1; round <= ROUNDS; round++)); do
    for ((k = 0; k < ${#ROWS[@]}; k++)); do
        r=${ROWS[$(((k + round - 1) % ${#ROWS[@]}))]}
        label=${r%% *} split=${r#* } bin=$WEIR
        [[ $label == B ]] && bin=$WEIR_B
        row "$label" "$bin" "$split"
    done
done

python3 - "$RESULTS" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("every row, per I/O: CPU us (task-clock; user / sys from weir), context switches,"
      " io_uring_enter, clock_nanosleep, futex; cross-shard stalls and leads let go (row)")
fmt = ("  {bin} {split:>9}: {iops:9.0f} IOPS ratio a/b {ratio:6.2f} shard 0 {shard0:.2f} | cpu "
       "{cpu_us:6.3f} us ({user_us:.3f} / {sys_us:.3f}) cs {cs:.4f} enter {enters:.4f} sleep "
       "{sleeps:.4f} futex {futex:.4f} | stalls {stalls:.0f} let go {overdue:.0f} | load {load:.1f}")
for r in rows:
    print(fmt.format(**r))
print("\nmedians over rounds (IOPS against the unscheduled median)")
bare = statistics.median(r["iops"] for r in rows if r["split"] == "none")
for key in dict.fromkeys((r["bin"], r["split"]) for r in rows):
    sel = [r for r in rows if (r["bin"], r["split"]) == key]
    med = {k: statistics.median(r[k] for r in sel) for k in sel[0] if k not in ("bin", "split")}
    print(f"  {key[0]} {key[1]:>9}: {med['iops']:9.0f} IOPS = {med['iops'] / bare:.3f} of "
          f"unscheduled, ratio {med['ratio']:.2f}, cpu {med['cpu_us']:.3f} us/IO, cs "
          f"{med['cs']:.4f}, enter {med['enters']:.4f}, sleep {med['sleeps']:.4f}, stalls "
          f"{med['stalls']:.0f}, let go {med['overdue']:.0f}, load {med['load']:.1f}")
EOF
