#!/usr/bin/env bash
# explore-repeat.sh: do two maps of one device agree? (a benchmark, not a test; issue 22's
# "two runs' frontiers within 5%" on XFS on zram).
#
# Makes a private zram device (hot_add, never /dev/zram0), puts XFS on it, runs two full
# `weir explore` maps back to back in one regime, prints `weir explore --compare` of the two
# (the largest frontier difference against the 5% target, beside the same runs' pure-load
# differences), then unmounts and removes the device, also on Ctrl-C.
#
# Usage: bench/explore-repeat.sh [OUTDIR]      (default /tmp/weir-explore-repeat; needs root)
# Environment: REGIME (overwrite), GOAL (1ms), SIZE (8G, the zram disksize), WEIR (a built
#   weir; default: cargo build --release -p weir), EXPLORE_ARGS (extra flags, e.g. --quick),
#   DIR (map this directory instead of a zram device: the vda spread, no device is made).
set -euo pipefail

OUT=${1:-/tmp/weir-explore-repeat}
REGIME=${REGIME:-overwrite}
GOAL=${GOAL:-1ms}
SIZE=${SIZE:-8G}
EXPLORE_ARGS=${EXPLORE_ARGS:-}
DIR=${DIR:-}
REPO=$(cd "$(dirname "$0")/.." && pwd)

if [[ -z "${WEIR:-}" ]]; then
    (cd "$REPO" && cargo build --release -p weir >&2)
    WEIR="${CARGO_TARGET_DIR:-$REPO/target}/release/weir"
fi
[[ -x "$WEIR" ]] || { echo "explore-repeat: no weir binary at $WEIR" >&2; exit 2; }

ZRAM_ID=""
MNT=""
cleanup() {
    if [[ -n "$MNT" ]]; then
        umount "$MNT" 2>/dev/null || true
        rmdir "$MNT" 2>/dev/null || true
    fi
    if [[ -n "$ZRAM_ID" ]]; then
        echo 1 >"/sys/block/zram$ZRAM_ID/reset" 2>/dev/null || true
        echo "$ZRAM_ID" >/sys/class/zram-control/hot_remove 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -z "$DIR" ]]; then
    [[ $(id -u) -eq 0 ]] || { echo "explore-repeat: making a zram device needs root (or set DIR)" >&2; exit 2; }
    [[ -e /sys/class/zram-control/hot_add ]] || modprobe zram num_devices=1
    ZRAM_ID=$(cat /sys/class/zram-control/hot_add)
    echo "$SIZE" >"/sys/block/zram$ZRAM_ID/disksize"
    mkfs.xfs -q "/dev/zram$ZRAM_ID"
    MNT=$(mktemp -d /tmp/weir-zram.XXXXXX)
    mount "/dev/zram$ZRAM_ID" "$MNT"
    DIR=$MNT/explore
    echo "explore-repeat: XFS on /dev/zram$ZRAM_ID ($SIZE) at $MNT" >&2
fi
mkdir -p "$DIR" "$OUT"

for n in 1 2; do
    echo "explore-repeat: map $n ($REGIME, goal $GOAL) from $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    # shellcheck disable=SC2086  # EXPLORE_ARGS is a list of flags
    "$WEIR" explore --dir "$DIR" --write-regime "$REGIME" --goal "$GOAL" --out "$OUT/map$n" \
        $EXPLORE_ARGS >"$OUT/map$n.log" 2>&1
    grep -E '^(pure loads|[0-9]+ points)' "$OUT/map$n.log" >&2 || true
done
"$WEIR" explore --compare "$OUT/map1/explore.json" "$OUT/map2/explore.json" | tee "$OUT/compare.txt"
