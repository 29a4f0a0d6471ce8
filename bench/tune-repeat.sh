#!/usr/bin/env bash
# tune-repeat.sh: N consecutive `weir tune` runs on XFS on a zram device of our own, and the
# largest change per figure between consecutive runs (issue 20's "two consecutive runs within
# 3%"). With two binaries (WEIR and WEIR_B) the runs alternate A B / B A / ... (rotated pairs,
# so both see the same minutes) and each binary's consecutive changes are printed apart.
#
# Usage: RUNS=5 ZRAM=6G bench/tune-repeat.sh                 (root: zram, mkfs.xfs, mount)
#        WEIR=/tmp/weir-old WEIR_B=target/release/weir RUNS=10 bench/tune-repeat.sh
#
# Every run starts from the same state: the zram device reset (its pages freed) and a new XFS
# made on it (`fresh`, as bench/tune-vs-fio.sh's default WRITE_REGIME), so no run writes where
# an earlier run's files were. Printed per run: the four figures, the depth each was confirmed
# at, whether a second opinion ran, and the load average at its start; then per binary the
# largest consecutive change (|b - a| / min(a, b)) of each figure and its spread (max/min - 1).
#
# FIO=1 (default) runs fio right after each tune, in the same lock hold, on tune's own files
# (kept by hard links while it runs): 4 KiB random reads at total depth FIO_RR_QD (32, fio's
# best depth in session 14's sweep) over all of each file, and 1 MiB sequential reads at 1 per
# job over the bytes tune's sequential reads read (the first range of each shard), 1 s ramp +
# 1.3 s, a job per shard pinned as tune's shards, registered buffers and files. fio's own
# consecutive changes are printed beside tune's: a change in both is the device's (the
# machine's), a change in tune alone is tune's.
#
# Environment: RUNS (5 per binary), ZRAM (6G), SETTLE_S (1 idle second after each mkfs), TRACE
# (1: WEIR_TUNE_TRACE=1, per-100 ms samples kept in KEEP), KEEP (a directory for the raw JSON
# and traces), LOCK (a lock file taken for each run separately, e.g. /tmp/weir-bench.lock, so
# other engineers' benches can run in between; the runs of one pair are taken under one lock).
# Run time: ~35 s per run (30 s tune, reset and mkfs).
set -euo pipefail

[[ $(id -u) == 0 ]] || { echo "SKIP tune-repeat: needs root (zram device, mkfs.xfs, mount)" >&2; exit 0; }
for tool in mkfs.xfs mount umount python3 flock fio; do
    command -v "$tool" >/dev/null || { echo "tune-repeat: $tool is required" >&2; exit 2; }
done
REPO=$(cd "$(dirname "$0")/.." && pwd)
source "$REPO/bench/tune-files.sh"
RUNS=${RUNS:-5}
ZRAM=${ZRAM:-6G}
SETTLE_S=${SETTLE_S:-1}
TRACE=${TRACE:-0}
FIO=${FIO:-1}
FIO_RR_QD=${FIO_RR_QD:-32}
JOBS=$(nproc)
LOCK=${LOCK:-}
if [[ -z "${WEIR:-}" ]]; then
    (cd "$REPO" && cargo build --release -p weir >&2)
    WEIR="${CARGO_TARGET_DIR:-$REPO/target}/release/weir"
fi
BINS=("$WEIR")
[[ -z "${WEIR_B:-}" ]] || BINS+=("$WEIR_B")
for b in "${BINS[@]}"; do
    [[ -x "$b" ]] || { echo "tune-repeat: no weir binary at $b" >&2; exit 2; }
done

WORK=${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/weir-tune-repeat.XXXXXX")}
mkdir -p "$WORK"
ZRAM_ID=$(cat /sys/class/zram-control/hot_add)
MNT=$(mktemp -d /tmp/weir-tune-repeat-mnt.XXXXXX)
cleanup() {
    umount "$MNT" 2>/dev/null || true
    rmdir "$MNT" 2>/dev/null || true
    echo 1 >"/sys/block/zram$ZRAM_ID/reset" 2>/dev/null || true
    echo "$ZRAM_ID" >/sys/class/zram-control/hot_remove 2>/dev/null || true
    [[ -n "${KEEP:-}" ]] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM


fresh() { # a reset device (every page freed) and a new XFS
    mountpoint -q "$MNT" && umount_retry "$MNT"
    echo 1 >"/sys/block/zram$ZRAM_ID/reset"
    echo "$ZRAM" >"/sys/block/zram$ZRAM_ID/disksize"
    mkfs.xfs -q -f "/dev/zram$ZRAM_ID"
    mount -o discard "/dev/zram$ZRAM_ID" "$MNT"
    sleep "$SETTLE_S"
}


fio_on_kept() { # rw bs total-qd bytes-per-file: prints "iops bytes_per_s"
    local args=() j
    for ((j = 0; j < JOBS; j++)); do
        args+=(--name="j$j" --filename="$MNT/kept.$j" --cpus_allowed="$j")
    done
    fio --thread --group_reporting --direct=1 --ioengine=io_uring --fixedbufs=1 --registerfiles=1 \
        --norandommap --rw="$1" --bs="$2" --iodepth=$(($3 / JOBS)) --size="$4" --ramp_time=1 \
        --runtime=1300ms --time_based --output-format=json "${args[@]}" 2>/dev/null |
        python3 -c 'import json,sys
j = json.load(sys.stdin)["jobs"][0]["read"]
print(int(j["iops"]), int(j["bw_bytes"]))'
}

one_run() { # binary-index run-number
    local tag="$1-$2" pid seq_bytes
    fresh
    cut -d' ' -f1-3 /proc/loadavg >"$WORK/load-$tag.txt"
    if [[ $TRACE == 1 ]]; then
        WEIR_TUNE_TRACE=1 "${BINS[$1]}" tune --dir "$MNT" --properties-file "$WORK/io-$tag.yaml" \
            --format json >"$WORK/tune-$tag.json" 2>"$WORK/trace-$tag.txt" &
    else
        "${BINS[$1]}" tune --dir "$MNT" --properties-file "$WORK/io-$tag.yaml" \
            --format json >"$WORK/tune-$tag.json" 2>"$WORK/log-$tag.txt" &
    fi
    pid=$!
    [[ $FIO != 1 ]] || keep_tune_files "$pid" "$MNT" "$JOBS" kept. ""
    wait "$pid"
    [[ $FIO == 1 && -e "$MNT/kept.0" ]] || return 0
    seq_bytes=$(python3 -c "import json; r = json.load(open('$WORK/tune-$tag.json'))['dirs'][0]['report']
print(min(s[0][1] for s in r['sequential_read_ranges_bytes']))")
    echo "$(fio_on_kept randread 4k "$FIO_RR_QD" "$(stat -c %s "$MNT/kept.0")") $(fio_on_kept read 1M "$JOBS" "$seq_bytes")" >"$WORK/fio-$tag.txt"
    rm -f "$MNT"/kept.*
}

pair() { # run-number: every binary once, rotated so each leads equally often
    local r=$1 n=${#BINS[@]} k
    for ((k = 0; k < n; k++)); do
        one_run $(((k + r) % n)) "$r"
    done
}
echo "tune-repeat: zram$ZRAM_ID $ZRAM XFS, fresh state each run, $RUNS runs x ${#BINS[@]} binaries, start $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((r = 0; r < RUNS; r++)); do
    if [[ -n $LOCK ]]; then
        exec 9>>"$LOCK"
        flock 9
    fi
    pair "$r"
    [[ -z $LOCK ]] || flock -u 9
done

python3 - "$WORK" "$RUNS" "${BINS[@]}" <<'EOF'
import json, os, sys
work, runs, bins = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
figs = [("read_iops", "read IOPS", 1e3, "K"), ("write_iops", "write IOPS", 1e3, "K"),
        ("read_bandwidth", "read BW", 1e6, "MB/s"), ("write_bandwidth", "write BW", 1e6, "MB/s")]
print(f"regime: fresh (zram reset + new XFS before every run); {runs} runs per binary")
for b, path in enumerate(bins):
    print(f"\n{'AB'[b]}: {path}")
    vals = {f[0]: [] for f in figs}
    fio_vals = {}
    for r in range(runs):
        rep = json.load(open(f"{work}/tune-{b}-{r}.json"))["dirs"][0]["report"]
        load = open(f"{work}/load-{b}-{r}.txt").read().strip()
        cells = []
        for key, name, scale, unit in figs:
            f = rep[key]
            vals[key].append(f["value"])
            cells.append(f"{name} {f['value'] / scale:.1f} {unit} @x{f['depth_best']}")
        fio_path = f"{work}/fio-{b}-{r}.txt"
        if os.path.exists(fio_path):
            rr_iops, _, _, sr_bw = map(float, open(fio_path).read().split())
            fio_vals.setdefault("read_iops", []).append(rr_iops)
            fio_vals.setdefault("read_bandwidth", []).append(sr_bw)
            cells.append(f"fio on tune's files: rand read {rr_iops / 1e3:.1f} K, seq read {sr_bw / 1e6:.0f} MB/s")
        print(f"  run {r}: " + " | ".join(cells) + f" | load {load}")
    def changes(label, v):
        cons = [abs(b2 - a) / min(a, b2) for a, b2 in zip(v, v[1:])]
        spread = max(v) / min(v) - 1 if min(v) > 0 else float("nan")
        print(f"  {label:22} largest consecutive change {100 * max(cons, default=0):5.1f}%  "
              f"spread {100 * spread:5.1f}%  consecutive: " + " ".join(f"{100 * c:.1f}" for c in cons))
    for key, name, _, _ in figs:
        changes(name, vals[key])
        if len(fio_vals.get(key, [])) == runs:
            changes(f"  fio beside ({name})", fio_vals[key])
EOF
echo "tune-repeat: end $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
