#!/usr/bin/env bash
# explore-repeat.sh: do two maps of one device agree? Compares two full `weir explore` maps
# of the same device (target: frontiers within 5%) on XFS on zram; a benchmark, not a test.
#
# Makes a private zram device (hot_add, never /dev/zram0), puts XFS on it, runs two full
# `weir explore` maps back to back in one regime, prints `weir explore --compare` of the two
# (the largest frontier difference against the 5% target, beside the same runs' pure-load
# differences), then unmounts and removes the device, also on Ctrl-C.
#
# Each map gets its own new device (made, mkfs'd and mounted with `-o discard` before it,
# removed after it), so both start from the same state: zram frees a page only when the
# filesystem discards it, so on one device without discard what the first map wrote stays in
# zram's memory and the second map runs on another device (an A/A of the pure loads on such a
# device: 2.5 GiB held after map 1, 3.9 GiB after map 2, pure writes -56% / +147%). zram's mm_stat (data, compressed, memory used) is printed after
# each map so a run shows what the device held. zram is CPU work: on a busy machine the
# CPU a shard gets moves more than the device.
#
# Each map measures its pure loads again at its end (explore.json `drift`),
# and per map this prints that drift, the host's steal time (/proc/stat, the share of the
# guest's CPU time the host took back) and the load average beside it. `--compare` then
# prints both maps' drift beside the frontier spread and judges the frontier only when the
# pure loads (reads and the mapped regime's writes) held within 2% between the maps and
# within each (a device that moved more than ~2% explains a 5%
# frontier spread by itself).
#
# Usage: bench/explore-repeat.sh [OUTDIR]      (default /tmp/weir-explore-repeat; needs root)
# Environment: REGIME (overwrite), GOAL (1ms), SIZE (8G, the zram disksize), WEIR (a built
#   weir; default: cargo build --release -p weir), EXPLORE_ARGS (extra flags, e.g. --quick),
#   DIR (map this directory instead of a zram device: the vda spread, no device is made),
#   AA (1: an A/A of the pure loads alone: calibration and the two pure axes, `--quick
#   --budget 1s`, instead of full maps), ONE_DEVICE (1: the old way, one device without
#   discard for both maps, to show the difference).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

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
    zram_release "$MNT" "$ZRAM_ID"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

AA=${AA:-}
ONE_DEVICE=${ONE_DEVICE:-}
[[ "$AA" == 1 ]] && EXPLORE_ARGS="--quick --budget 1s $EXPLORE_ARGS"
[[ -n "$DIR" || $(id -u) -eq 0 ]] || { echo "explore-repeat: making a zram device needs root (or set DIR)" >&2; exit 2; }

make_device() {
    [[ -e /sys/class/zram-control/hot_add ]] || modprobe zram num_devices=1
    ZRAM_ID=$(cat /sys/class/zram-control/hot_add)
    echo "$SIZE" >"/sys/block/zram$ZRAM_ID/disksize"
    mkfs.xfs -q "/dev/zram$ZRAM_ID"
    MNT=$(mktemp -d /tmp/weir-zram.XXXXXX)
    local opts=discard
    [[ "$ONE_DEVICE" == 1 ]] && opts=defaults
    mount -o "$opts" "/dev/zram$ZRAM_ID" "$MNT"
    MAP_DIR=$MNT/explore
    mkdir -p "$MAP_DIR"
    echo "explore-repeat: XFS on /dev/zram$ZRAM_ID ($SIZE, mount -o $opts) at $MNT" >&2
}
cpu_ticks() { awk '/^cpu /{print $2+$3+$4+$5+$6+$7+$8+$9, $9}' /proc/stat; }   # total, steal
zram_state() { # what the device holds: mm_stat's data, compressed, memory used (MiB), same and huge pages
    [[ -n "$ZRAM_ID" ]] || return 0
    read -r orig compr used _ _ same _ huge _ <"/sys/block/zram$ZRAM_ID/mm_stat"
    echo "explore-repeat: zram$ZRAM_ID holds $((orig >> 20)) MiB of data in $((compr >> 20)) MiB, memory used $((used >> 20)) MiB, same_pages $same, huge_pages ${huge:-0}; guest $(awk '/^MemFree/{f=$2}/^Cached/{c=$2}END{printf "MemFree %d MiB, Cached %d MiB", f/1024, c/1024}' /proc/meminfo)" >&2
}

mkdir -p "$OUT"
for n in 1 2; do
    if [[ -n "$DIR" ]]; then
        MAP_DIR=$DIR
        mkdir -p "$DIR"
    elif [[ -z "$ZRAM_ID" ]]; then
        make_device
    fi
    echo "explore-repeat: map $n ($REGIME, goal $GOAL${EXPLORE_ARGS:+, $EXPLORE_ARGS}) from $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    zram_state
    read -r total0 steal0 < <(cpu_ticks)
    # shellcheck disable=SC2086  # EXPLORE_ARGS is a list of flags
    "$WEIR" explore --dir "$MAP_DIR" --write-regime "$REGIME" --goal "$GOAL" --out "$OUT/map$n" \
        $EXPLORE_ARGS >"$OUT/map$n.log" 2>&1
    read -r total1 steal1 < <(cpu_ticks)
    grep -E '^(pure loads|device drift|[0-9]+ points)' "$OUT/map$n.log" >&2 || true
    echo "explore-repeat: map $n ended $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg), host steal $(awk -v s=$((steal1 - steal0)) -v t=$((total1 - total0)) 'BEGIN{printf "%.2f%%", (t > 0 ? 100 * s / t : 0)}') of the guest's CPU time" >&2
    zram_state
    # A new device for the next map, unless asked to keep the old way.
    [[ "$ONE_DEVICE" == 1 ]] || cleanup
    [[ "$ONE_DEVICE" == 1 ]] || { ZRAM_ID=""; MNT=""; }
done
"$WEIR" explore --compare "$OUT/map1/explore.json" "$OUT/map2/explore.json" | tee "$OUT/compare.txt"
