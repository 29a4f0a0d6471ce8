#!/usr/bin/env bash
# engine-profile-zram.sh: where weir's and fio's CPU goes per I/O on zram, 4 KiB random reads.
#
# Usage: bench/engine-profile-zram.sh
# Environment: QD (32), DURATION_S (4), FREQ_HZ (4000), ROUNDS (1: each side once per round,
# order alternating), SIDES ("weir fio_reg_batch"; also fio_reg, fio_async,
# weir_<VAR=value,...> for a weir row with engine switches, e.g. weir_WEIR_URING_DEEP=async),
# TARGET (raw: the zram block device, as bench/engine-vs-fio.sh; xfs: a 1 GiB file on XFS
# made on it), WEIR (a built weir binary; default: build it), LOCK (a lock file taken
# around each sample, e.g. /tmp/weir-bench.lock), KEEP_DIR (keep each sample's `perf script`
# text there, named side-round-IOs.script, to rerun bench/perf-split.py on it).
#
# Makes its own zram device (never zram0), pre-writes 1 GiB of fio's random data, then per
# side runs `perf record -e cpu-clock -g` (a software event: this VM has no hardware
# counters) of the whole process, its io-wq threads included, and prints with
# bench/perf-split.py the CPU us per I/O per thread group (submitter, io-wq workers) in user
# space and per kernel job, and each group's busy share of a CPU. Both sides run the same
# 4 KiB random reads at QD on the same target, one shard / one fio job, for DURATION_S.
set -euo pipefail
QD=${QD:-32}
DURATION_S=${DURATION_S:-4}
FREQ_HZ=${FREQ_HZ:-4000}
ROUNDS=${ROUNDS:-1}
SIDES=${SIDES:-"weir fio_reg_batch"}
TARGET_KIND=${TARGET:-raw}
LOCK=${LOCK:-}
REPO=$(cd "$(dirname "$0")/.." && pwd)
for tool in fio perf python3; do
    command -v "$tool" >/dev/null || { echo "engine-profile-zram: $tool is required" >&2; exit 2; }
done
[[ -w /sys/class/zram-control/hot_add ]] || {
    echo "engine-profile-zram: needs root and the zram module (modprobe zram)" >&2; exit 2; }
if [[ -z "${WEIR:-}" ]]; then
    (cd "$REPO" && cargo build --release -p weir >&2)
    WEIR="${CARGO_TARGET_DIR:-$REPO/target}/release/weir"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/weir-prof.XXXXXX")
ZRAM_ID= MNT=
cleanup() {
    [[ -n $MNT ]] && { umount "$MNT" || true; rmdir "$MNT" || true; }
    if [[ -n $ZRAM_ID ]]; then
        echo 1 >"/sys/block/zram$ZRAM_ID/reset" || true
        echo "$ZRAM_ID" >/sys/class/zram-control/hot_remove || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ZRAM_ID=$(cat /sys/class/zram-control/hot_add)
echo 2G >"/sys/block/zram$ZRAM_ID/disksize"
DEV=/dev/zram$ZRAM_ID
if [[ $TARGET_KIND == xfs ]]; then
    mkfs.xfs -q -f "$DEV"
    MNT=$(mktemp -d /tmp/weir-prof-mnt.XXXXXX)
    mount "$DEV" "$MNT"
    FILE=$MNT/weir-bench-0.data
    WEIR_TARGET=(--dir "$MNT" --keep-files)
else
    FILE=$DEV
    WEIR_TARGET=(--device "$DEV")
fi
# fio's random buffers: zram stores them uncompressed (no decompression, no zero-page shortcut).
fio --name=prewrite --filename="$FILE" --rw=write --bs=1m --size=1g --direct=1 \
    --ioengine=io_uring --iodepth=8 --output=/dev/null
if [[ $TARGET_KIND == xfs ]]; then
    # weir reuses only files that carry its mark; this one was written by fio for both sides.
    python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.weir.owner", b"weir kept")' "$FILE"
fi
cat >"$WORK/job.yaml" <<YAML
- name: bench
  shards: [0]
  type: randread
  data_size: 1GB
  shard_info:
    parallelism: $QD
    reqsize: 4kB
YAML

locked() { if [[ -n $LOCK ]]; then flock "$LOCK" "$@"; else "$@"; fi; }

profile() { # side round
    local side=$1 out="$WORK/$1-$2" ios
    local rec=(perf record -q -e cpu-clock -F "$FREQ_HZ" -g -o "$out.data" --)
    if [[ $side == weir* ]]; then
        local envs=()
        [[ $side == weir_* ]] && IFS=, read -r -a envs <<<"${side#weir_}"
        locked env "${envs[@]}" "${rec[@]}" "$WEIR" run "$WORK/job.yaml" "${WEIR_TARGET[@]}" \
            --duration "${DURATION_S}s" --shards 1 --backend uring --output json \
            >"$out.json" 2>"$out.err"
        ios=$(python3 -c 'import json,sys
def ops(n):
    if isinstance(n, dict):
        for k in ("ops", "total_requests", "requests"):
            if isinstance(n.get(k), (int, float)): return int(n[k])
        for v in n.values():
            r = ops(v)
            if r: return r
    if isinstance(n, list):
        for v in n:
            r = ops(v)
            if r: return r
    return 0
print(ops(json.load(open(sys.argv[1]))))' "$out.json")
    else
        local f=(--fixedbufs=1 --registerfiles=1)
        [[ $side == fio_async* ]] && f+=(--force_async=1)
        [[ $side == *_batch ]] && f+=(--iodepth_batch_complete_min=$((QD / 2 > 1 ? QD / 2 : 1)))
        locked "${rec[@]}" fio --name=bench --filename="$FILE" --size=1g --direct=1 \
            --ioengine=io_uring "${f[@]}" --rw=randread --bs=4k --iodepth="$QD" \
            --norandommap --randrepeat=0 --time_based --runtime="$DURATION_S" \
            --output-format=json --output="$out.json"
        ios=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["read"]["total_ios"])' "$out.json")
    fi
    echo "[$(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)]"
    perf script -F tid,comm,time,ip,sym,dso -i "$out.data" 2>/dev/null >"$out.script"
    if [[ -n ${KEEP_DIR:-} ]]; then
        mkdir -p "$KEEP_DIR"
        cp "$out.script" "$KEEP_DIR/$side-$2-$ios.script"
    fi
    python3 "$REPO/bench/perf-split.py" "$ios" "$FREQ_HZ" "$side round $2 ($TARGET_KIND, QD$QD)" \
        <"$out.script"
}

read -r -a sides <<<"$SIDES"
n=${#sides[@]}
for round in $(seq 1 "$ROUNDS"); do
    for i in $(seq 0 $((n - 1))); do
        profile "${sides[$(((i + round - 1) % n))]}" "$round"
    done
done
