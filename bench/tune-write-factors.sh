#!/usr/bin/env bash
# tune-write-factors.sh: why weir tune's write figures and fio's differ on zram (issue 20), one
# factor at a time, on the same file state. Root only: XFS on a zram device of its own
# (/sys/class/zram-control/hot_add, never zram0), mounted with discard, removed at exit.
#
# Writers, alternated within each round so CPU contention hits all alike:
#   fio-default     fio's default buffers (random, "scrambled" per write: a zero word and the
#                   offset/time stamped into every 512 B)
#   fio-unscrambled --scramble_buffers=0 (random buffers filled once)
#   fio-refilled    --scramble_buffers=0 --refill_buffers=1 (fresh random bytes every write)
#   weir-meter      weir tune's own meter (crates/weir-tune/examples/meter_point.rs): random
#                   buffers, each 4 KiB block stamped with offset and sequence per write
# File states for 1 MiB sequential writes: `extend` (empty files, every write extends them, as
# fio writes a new file) and `holes` (pre-truncated sparse files, as weir tune writes). 4 KiB
# random writes run over files written just before (overwrites, as both tools do).
#
# Printed per writer and state: the rate each tool reports and the CPU the whole process used
# (user + system, io_uring's io-wq workers included: they are its threads and do zram's
# compression) per GB that reached the zram device (/sys/block/zramN/stat) — on a shared
# machine the rate moves with other people's load, the CPU per byte much less.
#
# Environment: SIZE (zram disksize, 6G), ROUNDS (3), SECONDS_PER_POINT (1), QD (per job or
# shard, 4 for writes of 1 MiB; 8 for 4 KiB), FILE_BYTES (1400M per file), KEEP (keep raw
# output there).
set -euo pipefail
[[ $(id -u) == 0 ]] || { echo "SKIP tune-write-factors: needs root (zram, mkfs.xfs, mount)" >&2; exit 0; }
for tool in fio mkfs.xfs python3; do
    command -v "$tool" >/dev/null || { echo "tune-write-factors: $tool is required" >&2; exit 2; }
done
SIZE=${SIZE:-6G}
ROUNDS=${ROUNDS:-3}
SECONDS_PER_POINT=${SECONDS_PER_POINT:-1}
QD=${QD:-4}
FILE_BYTES=${FILE_BYTES:-1400M}
REPO=$(cd "$(dirname "$0")/.." && pwd)
(cd "$REPO" && cargo build --release -p weir-tune --example meter_point >&2)
METER="${CARGO_TARGET_DIR:-$REPO/target}/release/examples/meter_point"

WORK=${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/weir-write-factors.XXXXXX")}
mkdir -p "$WORK"
ZID="" MNT=""
cleanup() {
    [[ -n "${KEEP:-}" ]] || rm -rf "$WORK"
    if [[ -n "$MNT" ]]; then
        # The meter's rings drop their registered files in a kernel worker after it exits:
        # an unmount right after can meet EBUSY for a moment.
        for ((i = 0; i < 50; i++)); do umount "$MNT" 2>/dev/null && break; sleep 0.1; done
        rmdir "$MNT" 2>/dev/null || true
    fi
    if [[ -n "$ZID" ]]; then
        echo 1 >"/sys/block/zram$ZID/reset" 2>/dev/null || true
        echo "$ZID" >/sys/class/zram-control/hot_remove 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ZID=$(cat /sys/class/zram-control/hot_add)
echo "$SIZE" >"/sys/block/zram$ZID/disksize"
mkfs.xfs -q -f "/dev/zram$ZID"
MNT=$(mktemp -d /tmp/weir-write-factors.XXXXXX)
mount -o discard "/dev/zram$ZID" "$MNT"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
FILE_MIB=$(( $(numfmt --from=iec "$FILE_BYTES") >> 20 ))

# Two files, one per fio job / weir shard, in the named state.
prepare() { # extend|holes|written
    rm -f "$MNT"/f.*
    case $1 in
        extend) ;;
        holes) truncate -s "$FILE_BYTES" "$MNT/f.0" "$MNT/f.1" ;;
        written)
            for i in 0 1; do
                fio --name=layout --filename="$MNT/f.$i" --size="$FILE_BYTES" --direct=1 \
                    --ioengine=io_uring --rw=write --bs=1M --iodepth=8 --scramble_buffers=0 \
                    --refill_buffers=1 --output-format=json >/dev/null
            done
            ;;
    esac
    sync
}

sectors_written() { awk '{print $7}' "/sys/block/zram$ZID/stat"; }

# One point: prints "writer state rate cpu_s bytes_to_device".
point() { # writer state rw bs qd
    local writer=$1 state=$2 rw=$3 bs=$4 qd=$5 rate s0 s1 buffers=""
    case $writer in
        fio-unscrambled) buffers="--scramble_buffers=0" ;;
        fio-refilled) buffers="--scramble_buffers=0 --refill_buffers=1" ;;
    esac
    s0=$(sectors_written)
    if [[ $writer == weir-meter ]]; then
        /usr/bin/time -f "%U %S" -o "$WORK/time" env WRITE_LIMIT_BYTES=$((FILE_MIB << 20)) \
            "$METER" "$rw" "$(numfmt --from=iec "$bs")" $((2 * qd)) "$SECONDS_PER_POINT" \
            "$MNT/f.0" "$MNT/f.1" >"$WORK/out"
        rate=$(awk -v rw="$rw" '{print (rw ~ /rand/) ? $1 : $2}' "$WORK/out")
    else
        # shellcheck disable=SC2086 # buffers is a list of options
        /usr/bin/time -f "%U %S" -o "$WORK/time" fio --group_reporting --size="$FILE_BYTES" \
            --direct=1 --ioengine=io_uring --norandommap --rw="$rw" --bs="$bs" --iodepth="$qd" \
            --ramp_time=0.5 --runtime="$SECONDS_PER_POINT" --time_based --fallocate=none \
            $buffers --output-format=json --name=j0 --filename="$MNT/f.0" \
            --name=j1 --filename="$MNT/f.1" >"$WORK/out"
        rate=$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"]
assert len(j) == 1 and j[0]["error"] == 0, "fio failed"
w = j[0]["write"]
print(w["iops"] if "rand" in sys.argv[2] else w["bw_bytes"])' "$WORK/out" "$rw")
    fi
    s1=$(sectors_written)
    echo "$writer $state $rw $rate $(awk '{print $1 + $2}' "$WORK/time") $(((s1 - s0) * 512))"
}

WRITERS="fio-default fio-unscrambled fio-refilled weir-meter"
: >"$WORK/points.txt"
for ((round = 1; round <= ROUNDS; round++)); do
    echo "round $round" >&2
    for state in extend holes; do
        for writer in $WRITERS; do
            prepare "$state"
            point "$writer" "$state" write 1M "$QD" >>"$WORK/points.txt"
        done
    done
    prepare written
    for writer in $WRITERS; do
        point "$writer" written randwrite 4K $((2 * QD)) >>"$WORK/points.txt"
    done
done
rm -f "$MNT"/f.*
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$WORK/points.txt" "$ROUNDS" "$LOAD_START" "$LOAD_END" <<'EOF'
import collections, statistics, sys
points = collections.defaultdict(list)
for line in open(sys.argv[1]):
    writer, state, rw, rate, cpu_s, dev_bytes = line.split()
    points[(rw, state, writer)].append((float(rate), float(cpu_s), int(dev_bytes)))
print(f"| load | file state | writer | rate (median of {sys.argv[2]}) | per round | CPU s per GB to the device (median) | per round |")
print("|---|---|---|---|---|---|---|")
for (rw, state, writer), ps in points.items():
    unit = (lambda v: f"{v/1e3:.1f} K IOPS") if rw == "randwrite" else (lambda v: f"{v/1e6:,.0f} MB/s")
    rates = [p[0] for p in ps]
    cpu = [p[1] / (p[2] / 1e9) for p in ps if p[2] > 0]
    label = "4 KiB random write" if rw == "randwrite" else "1 MiB sequential write"
    print(f"| {label} | {state} | {writer} | {unit(statistics.median(rates))} | "
          + ", ".join(unit(r) for r in rates)
          + f" | {statistics.median(cpu):.2f} | " + ", ".join(f"{c:.2f}" for c in cpu) + " |")
print(f"load average (1, 5, 15 min) at start {sys.argv[3]}, at end {sys.argv[4]}")
EOF
