#!/usr/bin/env bash
# tune-vs-fio.sh: the four numbers of `weir tune` against fio on the same directory, measured
# in interleaved rounds so that both see the same disk, plus weir's run time and run-to-run spread.
#
# Usage: bench/tune-vs-fio.sh [DIR]        (default DIR: /var/tmp/weir-tune-bench)
#        ZRAM=6G bench/tune-vs-fio.sh      (the zram tier: XFS on a RAM disk of our own)
#
# Tiers. Without ZRAM the figures come from DIR (on this VM: the virtio disk, which moves
# +-20% minute to minute, so a 5% question cannot be settled there). With ZRAM=SIZE (root
# only) the script makes its own zram device through /sys/class/zram-control/hot_add (never
# zram0), sets its disksize to SIZE, puts XFS on it, mounts it with discard (removed files give
# their RAM back) and runs everything there; the device is unmounted, reset and removed at
# exit. zram is CPU-bound and repeats within ~2% when the machine is quiet, so it settles the
# meter itself: weir within 5% of fio's best-of-depth, consecutive weir runs within 3%. Its
# defaults shrink to fit: READ_FILE_BYTES 2G, WRITE_FILE_BYTES 3G, ROUNDS 2 (the two weir
# runs are then back to back: round 1 runs fio then weir, round 2 weir then fio), SETTLE_S 1.
# The load average is printed at the start and the end: on a shared machine a busy CPU moves
# zram's figures, and both sides should have seen the same load.
#
# Write regime (zram tier, WRITE_REGIME): `fresh` (default) resets the zram device and makes a
# new XFS on it before each tool's turn in every round and before every fio sweep point of
# sequential writes, so both tools write into never-used sectors of an empty filesystem and
# an empty zram pool; `reused` keeps one filesystem for the whole run (before session 9: each
# side wrote where the other's removed files had been, discarded or not yet, and fio's own two
# rounds of 1 MiB writes read 2,144 and 3,449 MB/s). The regime is printed with the results.
#
# 1. Depth sweep (fio only): every total depth in QDS for each figure, RAMP_S + SWEEP_S per point;
#    the best depth of each figure is kept. (Skip it with FIO_DEPTHS="SW SR RW RR", total depths
#    for sequential write, sequential read, random write, random read.)
# 2. ROUNDS rounds. Each round runs fio at those depths for the four figures (RAMP_S + RUNTIME
#    per point; RUNTIME defaults to the window weir's figures come from: 13 samples of 100 ms)
#    and one default `weir tune`, with SETTLE_S idle seconds before each tool so writes buffered
#    below the guest by the other drain first; odd rounds run fio first, even rounds weir (keep
#    ROUNDS even so each side leads equally often: whoever runs second in a round has often
#    seen a faster disk here).
# 3. Printed: every round's values (drift is visible), medians of each side, median ratios
#    weir/fio, weir's run-to-run spread (largest and consecutive-run differences) and wall time.
# 4. Read bandwidth on tune's own data (TUNE_DATA=1, default): in weir's turn, tune's files are
#    kept (hard links) and fio reads their first READ_FILE_BYTES at its swept depth, the meter
#    beside it, right after the tune. On zram the data one writer laid down read 0.8-1.2x the
#    other's whoever read it (docs/tune-zram.md, session 13), so weir/fio on the same data is the
#    figure that compares the meters; weir/fio on fio's own layout is printed beside it.
#
# Both sides load the disk alike: JOBS fio jobs with a file each (weir: as many shards, a file
# each), total depth split evenly, direct=1, io_uring, 1 MiB sequential and 4 KiB random requests
# (random offsets uniform with replacement: norandommap, like weir), job i on CPU i as weir's
# shard i (FIO_PLACEMENT), fixed buffers and files as weir's meter registers (FIO_FEATURES),
# and tune's own meter beside each fio point at fio's shape on fio's files (SAME_SHAPE), so a
# weir/fio ratio splits into the engine (meter/fio) and the tune (tune/meter). File state:
#   - sequential writes go into new files (fallocate=none: each write extends its file) large
#     enough that a point never wraps onto blocks it wrote (overwrites run ~2x faster here than
#     first writes);
#   - fio writes random bytes without its per-write "scramble" stamps (FIO_BUFFERS), as weir
#     does (bench/tune-write-factors.sh shows what the stamps cost zram);
#   - reads and random writes use a file written just before, in the same round (weir reads
#     data it wrote seconds earlier; a file written minutes ago may sit differently in the
#     host's cache), the random reads before the random writes (weir tune's reads never read
#     what its random writes wrote, since session 12), about as large as what weir writes before its reads (8-11 GB here: its
#     `written_bytes`, printed at the end), written into a pre-truncated file as weir fills
#     its own (FIO_LAYOUT=holes; `extend` lets each write extend the file instead).
#
# Environment: ROUNDS (4), QDS ("2 4 8 16 32 64 128 256", total in flight; weir's sweep goes up
# to the device's nr_requests, 256 on vda), JOBS (nproc), RAMP_S (1), SWEEP_S (2), RUNTIME (1300ms),
# SETTLE_S (3), FIO_BUFFERS (what fio writes; see below), READ_FILE_BYTES (10G, all jobs
# together), WRITE_FILE_BYTES (32G, sparse, all jobs),
# TUNE_DATA (1; 0 skips step 4), WEIR (a built weir binary; default: cargo build --release -p weir), KEEP (a directory to keep
# raw outputs in), LOCK (a lock file: when set, the script takes it exclusively for the sweep
# and for each round separately, so others can use the disk in between; otherwise wrap the
# whole script in `flock /work/bench.lock` on shared machines, never both).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ZRAM=${ZRAM:-}
ZRAM_ID=""
ZRAM_MNT=""
if [[ -n "$ZRAM" ]]; then
    if [[ $(id -u) != 0 ]]; then
        echo "SKIP tune-vs-fio zram tier: needs root (zram device, mkfs.xfs, mount)" >&2
        exit 0
    fi
    for tool in mkfs.xfs mount umount; do
        command -v "$tool" >/dev/null || { echo "tune-vs-fio: $tool is required" >&2; exit 2; }
    done
    READ_FILE_BYTES=${READ_FILE_BYTES:-2G}
    WRITE_FILE_BYTES=${WRITE_FILE_BYTES:-3G}
    ROUNDS=${ROUNDS:-2}
    SETTLE_S=${SETTLE_S:-1}
    # zram compresses every page and does not deduplicate: buffers filled once with random
    # bytes cost its compressor what weir's do, and refilling them would only spend CPU that
    # this CPU-bound tier measures (see FIO_BUFFERS below).
    FIO_BUFFERS=${FIO_BUFFERS:-"--scramble_buffers=0"}
    WRITE_REGIME=${WRITE_REGIME:-fresh}
    case $WRITE_REGIME in
        fresh | reused) ;;
        *) echo "tune-vs-fio: WRITE_REGIME must be fresh or reused, not '$WRITE_REGIME'" >&2; exit 2 ;;
    esac
fi
WRITE_REGIME=${WRITE_REGIME:-reused}

DIR=${1:-/var/tmp/weir-tune-bench}
ROUNDS=${ROUNDS:-4}
QDS=${QDS:-"2 4 8 16 32 64 128 256"}
JOBS=${JOBS:-$(nproc)}
RAMP_S=${RAMP_S:-1}
SWEEP_S=${SWEEP_S:-2}
RUNTIME=${RUNTIME:-1300ms}
SETTLE_S=${SETTLE_S:-3}
READ_FILE_BYTES=${READ_FILE_BYTES:-10G}
WRITE_FILE_BYTES=${WRITE_FILE_BYTES:-32G}
LOCK=${LOCK:-}
# What fio writes. fio's default (random buffers, "scrambled" per write) stamps a zero word and
# the offset/time into every 512 B: the pages stay too big for zram to keep compressed, yet its
# LZO compressor works through them at ~2x the CPU per byte of random data (measured: fio
# default 1.8-2.1 CPU-s per GB written into zram XFS, fio unscrambled 0.9-1.5, weir 0.5-1.6),
# and zstd shrinks them to 89%. weir writes random blocks that are unique per write (stamped
# with offset and sequence, like a database's compressed SSTables), so fio gets the same:
# refilled random buffers on every write (unique blocks for a deduplicating host too).
FIO_BUFFERS=${FIO_BUFFERS:-"--scramble_buffers=0 --refill_buffers=1"}
# Where fio's jobs run, and how the CPU scheduler weighs them. weir pins shard i to CPU i (one
# ring per CPU); fio's jobs float by default. And fio forks each job as a process that calls
# setsid(): with sched_autogroup_enabled=1 (this VM) every job is then an autogroup of its own
# and gets a whole group's share of a CPU against other sessions, where weir's shards are
# threads of one process sharing one group. Under other engineers' builds that gave fio ~2x
# weir's CPU at the same CPU per I/O (docs/tune-zram-sessions-10-12.md, session 10). The default gives fio weir's
# shape: threads of one process (`--thread`, in the script's session, as weir's shards are),
# job i on CPU i. FIO_PLACEMENT="" restores fio's defaults (before session 10).
FIO_PLACEMENT=${FIO_PLACEMENT-"--thread --cpus_allowed=0-$(($(nproc) - 1)) --cpus_allowed_policy=split"}
# The io_uring features weir tune's meter uses (since session 10 it registers its buffers and
# files, as `weir run` does): fio gets the same. FIO_FEATURES="" gives fio's plain path (the
# meter's counterpart is meter_point with UNREGISTERED=1). On XFS over zram a RWF_NOWAIT read
# succeeds, so neither side forces io-wq (no force_async; the raw zram device refuses it).
FIO_FEATURES=${FIO_FEATURES-"--fixedbufs=1 --registerfiles=1"}
# SAME_SHAPE=1 (default) runs weir tune's own meter (crates/weir-tune/examples/meter_point.rs)
# right after each fio point of a round, at fio's shape on fio's files: weir's engine against
# fio with everything else equal, so a weir/fio ratio away from 1 can be split into the engine
# (meter/fio at the same shape) and the tune (its figure/meter: its own files, depth, window).
SAME_SHAPE=${SAME_SHAPE:-1}
REPO=$(cd "$(dirname "$0")/.." && pwd)
source "$REPO/bench/tune-files.sh"

for tool in fio python3 flock; do
    command -v "$tool" >/dev/null || { echo "tune-vs-fio: $tool is required" >&2; exit 2; }
done
if [[ -z "${WEIR:-}" ]]; then
    (cd "$REPO" && cargo build --release -p weir >&2)
    WEIR="${CARGO_TARGET_DIR:-$REPO/target}/release/weir"
fi
[[ -x "$WEIR" ]] || { echo "tune-vs-fio: no weir binary at $WEIR" >&2; exit 2; }
METER=""
if [[ $SAME_SHAPE == 1 ]]; then
    METER=${METER:-"${CARGO_TARGET_DIR:-$REPO/target}/release/examples/meter_point"}
    (cd "$REPO" && cargo build --release -p weir-tune --example meter_point >&2)
fi

WORK=${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/weir-tune-bench.XXXXXX")}
mkdir -p "$WORK"
cleanup() {
    [[ -n "${KEEP:-}" ]] || rm -rf "$WORK"
    rm -f "$DIR"/fio-tune-* "$DIR"/weir-*.data "$DIR"/tune-data.* 2>/dev/null || true
    zram_release "$ZRAM_MNT" "$ZRAM_ID" umount_retry
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A new XFS on a freshly reset zram device (the reset frees every page zram held).
zram_mkfs() {
    echo "$ZRAM" >"/sys/block/zram$ZRAM_ID/disksize"
    mkfs.xfs -q -f "/dev/zram$ZRAM_ID"
    mount -o discard "/dev/zram$ZRAM_ID" "$ZRAM_MNT"
}


# Before a tool writes, in the `fresh` regime: the same empty device and filesystem for both.
fresh_state() {
    [[ -n "$ZRAM" && $WRITE_REGIME == fresh ]] || return 0
    umount_retry "$ZRAM_MNT"
    echo 1 >"/sys/block/zram$ZRAM_ID/reset"
    zram_mkfs
}

if [[ -n "$ZRAM" ]]; then
    ZRAM_ID=$(cat /sys/class/zram-control/hot_add)
    ZRAM_MNT=$(mktemp -d /tmp/weir-tune-zram.XXXXXX)
    zram_mkfs
    DIR=$ZRAM_MNT
    echo "zram tier: /dev/zram$ZRAM_ID ($ZRAM, XFS, discard) at $DIR, write regime $WRITE_REGIME" >&2
fi
mkdir -p "$DIR"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

bytes() { python3 -c "
s='$1'; m={'K':1<<10,'M':1<<20,'G':1<<30,'T':1<<40}
print(int(s[:-1])*m[s[-1]] if s[-1] in m else int(s))"; }
READ_BYTES=$(bytes "$READ_FILE_BYTES")
WRITE_BYTES=$(bytes "$WRITE_FILE_BYTES")

lock() { [[ -z "$LOCK" ]] || { exec 9>"$LOCK"; flock 9; }; }
unlock() { [[ -z "$LOCK" ]] || { flock -u 9; exec 9>&-; }; }

# One fio point: prints "iops bytes_per_s" summed over the jobs. Writes get FIO_BUFFERS.
fio_point() { # rw bs total_qd name file_bytes seconds [extra fio args...]
    local rw=$1 bs=$2 qd=$3 name=$4 file_bytes=$5 seconds=$6
    shift 6
    if [[ $rw == *write* ]]; then
        # shellcheck disable=SC2086 # FIO_BUFFERS is a list of options
        set -- $FIO_BUFFERS "$@"
    fi
    # shellcheck disable=SC2086 # FIO_PLACEMENT and FIO_FEATURES are lists of options
    # (engine options such as --fixedbufs are known to fio only after --ioengine)
    fio --name="$name" --directory="$DIR" --numjobs="$JOBS" --group_reporting $FIO_PLACEMENT \
        --size=$((file_bytes / JOBS)) --direct=1 --ioengine=io_uring $FIO_FEATURES --norandommap \
        --rw="$rw" --bs="$bs" --iodepth=$((qd / JOBS)) --ramp_time="$RAMP_S" --runtime="$seconds" \
        --time_based --output-format=json "$@" 2>/dev/null |
        python3 -c 'import json,sys
j = json.load(sys.stdin)["jobs"][0]
s = j["read"] if j["read"]["io_bytes"] else j["write"]
print(int(s["iops"]), int(s["bw_bytes"]))'
}

# Files removed in the middle of a tool's turn: XFS discards their blocks in the background
# (zram then frees its pages on a kernel worker), so a measurement started right after an `rm`
# of 3 GB shares the CPUs with that work; weir tune never removes files until it ends. So every
# removal syncs, trims what is free (zram tier) and idles SETTLE_S before the next point.
remove_settled() { # files...
    rm -f "$@"
    sync
    [[ -z "$ZRAM" ]] || fstrim "$DIR" 2>/dev/null || true
    sleep "$SETTLE_S"
}

# Sequential writes into new files, each write extending its file (fio does not pre-size a
# write-only job's file; weir fills a pre-truncated one: the same cost on zram XFS), removed
# afterwards.
fio_seq_write() { # total_qd seconds
    fio_point write 1M "$1" fio-tune-w "$WRITE_BYTES" "$2" --fallocate=none
    remove_settled "$DIR"/fio-tune-w.*
}

# A freshly written file for the reads and random writes of this round. FIO_LAYOUT=holes
# (default) writes it as weir tune writes its own: into a pre-truncated (sparse) file, filling
# the holes; `extend` lets each write extend the file, as before session 10. On zram XFS, tune's
# meter read 1 MiB requests 1.45-2.15x faster from files it had filled into holes than from
# fio's extended files (docs/tune-zram-sessions-10-12.md, session 10).
fio_layout() {
    rm -f "$DIR"/fio-tune-data.*
    if [[ ${FIO_LAYOUT:-holes} == holes ]]; then
        for ((j = 0; j < JOBS; j++)); do
            truncate -s $((READ_BYTES / JOBS)) "$DIR/fio-tune-data.$j.0"
        done
    fi
    # shellcheck disable=SC2086 # FIO_BUFFERS and FIO_PLACEMENT are lists of options
    fio --name=fio-tune-data --directory="$DIR" --numjobs="$JOBS" --size=$((READ_BYTES / JOBS)) \
        $FIO_BUFFERS $FIO_PLACEMENT --direct=1 --ioengine=io_uring --rw=write --bs=1M --iodepth=8 --fallocate=none \
        --output-format=json >/dev/null 2>&1
}

# weir tune's meter at fio's shape: the same total depth over JOBS shards (one pinned thread
# and ring each), the same ramp and window, on fio's data files (reads, random writes)
# or on new files extended like fio's (sequential writes, removed afterwards). Prints
# "iops bytes_per_s" over the window after the same RAMP_S ramp as fio's.
meter_point() { # rw request_bytes total_qd seconds [data_name]
    local rw=$1 bytes=$2 qd=$3 data=${5:-fio-tune-data} seconds files=()
    seconds=$(python3 -c "s='$4'; print(float(s[:-2]) / 1000 if s.endswith('ms') else float(s.rstrip('s')))")
    for ((j = 0; j < JOBS; j++)); do
        if [[ $rw == write ]]; then files+=("$DIR/meter-tune-w.$j"); else files+=("$DIR/$data.$j.0"); fi
    done
    RAMP_MS=$(python3 -c "print(int(float('$RAMP_S') * 1000))") WRITE_LIMIT_BYTES=$((WRITE_BYTES / JOBS)) "$METER" "$rw" "$bytes" "$qd" "$seconds" "${files[@]}"
    [[ $rw != write ]] || remove_settled "$DIR"/meter-tune-w.*
}

# One figure's fio point, and (SAME_SHAPE=1) the meter at the same shape right beside it, in
# an order that alternates with the round so neither always runs second.
# Prints "figure qd fio_iops fio_bytes_per_s meter_iops meter_bytes_per_s".
point_pair() { # figure qd seconds round fio_cmd... -- meter_args...
    local figure=$1 qd=$2 seconds=$3 round=$4 fio_out="" meter_out="0 0"
    shift 4
    local fio_cmd=() meter_args=()
    while [[ $1 != -- ]]; do fio_cmd+=("$1"); shift; done
    shift
    meter_args=("$@")
    # meter_args: rw request_bytes [data_name]
    meter_args=("${meter_args[0]}" "${meter_args[1]}" "$qd" "$seconds" "${meter_args[@]:2}")
    if [[ -n "$METER" ]] && ((round % 2 == 0)); then meter_out=$(meter_point "${meter_args[@]}"); fi
    fio_out=$("${fio_cmd[@]}")
    if [[ -n "$METER" ]] && ((round % 2 == 1)); then meter_out=$(meter_point "${meter_args[@]}"); fi
    echo "$figure $qd $fio_out $meter_out"
}

# fio's four figures at the given depths, each with the meter beside it:
# lines "figure qd iops bytes_per_s meter_iops meter_bytes_per_s".
fio_four() { # sw_qd sr_qd rw_qd rr_qd seconds round
    local s=$5 r=$6
    point_pair seq_write "$1" "$s" "$r" fio_seq_write "$1" "$s" -- write $((1 << 20))
    fio_layout
    sleep "$SETTLE_S"
    point_pair seq_read "$2" "$s" "$r" fio_point read 1M "$2" fio-tune-data "$READ_BYTES" "$s" -- read $((1 << 20))
    # The same point again: a later pass over data that is no longer fresh from the writes
    # (on the development VM the first read pass after writing runs up to ~2x later ones).
    echo "seq_read_again $2 $(fio_point read 1M "$2" fio-tune-data "$READ_BYTES" "$s") 0 0"
    # Random reads before random writes: weir tune's random reads read data written once, never
    # by its random writes (weir_tune::target, session 12), and fio's read the same state.
    point_pair rand_read "$4" "$s" "$r" fio_point randread 4k "$4" fio-tune-data "$READ_BYTES" "$s" -- randread 4096
    point_pair rand_write "$3" "$s" "$r" fio_point randwrite 4k "$3" fio-tune-data "$READ_BYTES" "$s" -- randwrite 4096
    rm -f "$DIR"/fio-tune-data.*
}

SWEEP=""
for qd in $QDS; do
    if ((qd >= JOBS)); then SWEEP="$SWEEP $qd"; fi
done

if [[ -z "${FIO_DEPTHS:-}" ]]; then
    lock
    sleep "$SETTLE_S"
    echo "fio depth sweep on $DIR: $JOBS jobs, total QD$SWEEP, ${RAMP_S}+${SWEEP_S} s per point" >&2
    : >"$WORK/sweep.txt"
    for qd in $SWEEP; do
        fresh_state
        echo "seq_write $qd $(fio_seq_write "$qd" "$SWEEP_S")" >>"$WORK/sweep.txt"
    done
    fio_layout
    for qd in $SWEEP; do
        echo "seq_read $qd $(fio_point read 1M "$qd" fio-tune-data "$READ_BYTES" "$SWEEP_S")" >>"$WORK/sweep.txt"
    done
    for qd in $SWEEP; do
        echo "rand_read $qd $(fio_point randread 4k "$qd" fio-tune-data "$READ_BYTES" "$SWEEP_S")" >>"$WORK/sweep.txt"
    done
    for qd in $SWEEP; do
        echo "rand_write $qd $(fio_point randwrite 4k "$qd" fio-tune-data "$READ_BYTES" "$SWEEP_S")" >>"$WORK/sweep.txt"
    done
    rm -f "$DIR"/fio-tune-data.*
    unlock
    FIO_DEPTHS=$(python3 - "$WORK/sweep.txt" <<'EOF'
import sys
best = {}
for line in open(sys.argv[1]):
    name, qd, iops, bw = line.split()[:4]
    v = float(iops if name.startswith("rand") else bw)
    if v > best.get(name, (0, 0))[0]:
        best[name] = (v, qd)
print(" ".join(best[n][1] for n in ("seq_write", "seq_read", "rand_write", "rand_read")))
EOF
)
fi
echo "fio depths (seq write, seq read, rand write, rand read): $FIO_DEPTHS" >&2
read -r SW_QD SR_QD RW_QD RR_QD <<<"$FIO_DEPTHS"

run_weir() { # round
    local start end pid
    start=$(date +%s.%N)
    "$WEIR" tune --dir "$DIR" --properties-file "$WORK/io-$1.yaml" --format json \
        >"$WORK/weir-$1.json" 2>"$WORK/weir-$1.log" &
    pid=$!
    [[ $TUNE_DATA != 1 ]] || keep_tune_files "$pid" "$DIR" "$JOBS" tune-data. .0
    wait "$pid"
    end=$(date +%s.%N)
    python3 -c "print($end - $start)" >"$WORK/wall-$1.txt"
    [[ $TUNE_DATA != 1 ]] || read_tune_data "$1"
}

# TUNE_DATA=1 (default): the read-bandwidth point of fio (at its swept depth), with the meter
# beside it, also runs on the data weir tune itself read, right after tune ends. The bench's
# own layout and tune's files can read 0.8-1.2x apart on zram whoever reads them (session 13,
# bench/tune-zram-state.sh tunefiles; fio and the meter agree on each), so only the same data
# compares the two meters. Hard links made while tune runs keep its files past its cleanup.
# Each is cut to exactly the bytes tune's sequential reads read (`sequential_read_ranges_bytes`
# in its JSON: the gaps between the ranges collapsed out with `fallocate --collapse-range`,
# which moves extents, not data, and the rest truncated), then all to the shortest shard's.
# Before session 14 each kept its first READ_FILE_BYTES / JOBS instead: on zram that region
# read 1.3-1.4x costlier per GB than the rest of tune's read data (CPU s per GB, 6 rotated
# rounds), so "weir/fio on tune's data" compared different bytes. fio and the meter read them
# at fio's swept depth and, when it differs, at tune's own read depth (seq_read_tune_shape).
TUNE_DATA=${TUNE_DATA:-1}
read_tune_data() { # round
    local j cut tune_qd shortest=$((1 << 62)) size
    for ((j = 0; j < JOBS; j++)); do
        [[ -e "$DIR/tune-data.$j.0" ]] || { echo "tune-vs-fio: tune's file $j was not kept" >&2; return 0; }
        # Lines "offset length" (the gaps, last first, so earlier offsets stay put), then the size.
        cut=$(python3 - "$WORK/weir-$1.json" "$j" $((READ_BYTES / JOBS)) <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))["dirs"][0]["report"]
# A weir from before session 14 does not say: its first READ_FILE_BYTES / JOBS, as then.
ranges = report.get("sequential_read_ranges_bytes", [[[0, int(sys.argv[3])]]] * (int(sys.argv[2]) + 1))[int(sys.argv[2])]
ranges = sorted(tuple(r) for r in ranges)
gaps, at = [], 0
for start, end in ranges:
    if start > at:
        gaps.append((at, start - at))
    at = max(at, end)
for offset, length in reversed(gaps):
    print(offset, length)
print(sum(end - start for start, end in ranges))
EOF
)
        while read -r a b; do
            if [[ -n $b ]]; then fallocate --collapse-range -o "$a" -l "$b" "$DIR/tune-data.$j.0"; else size=$a; fi
        done <<<"$cut"
        truncate -s "$size" "$DIR/tune-data.$j.0"
        ((size < shortest)) && shortest=$size
    done
    shortest=$((shortest & ~((1 << 20) - 1)))
    for ((j = 0; j < JOBS; j++)); do truncate -s "$shortest" "$DIR/tune-data.$j.0"; done
    sync
    [[ -z "$ZRAM" ]] || fstrim "$DIR" 2>/dev/null || true
    sleep "$SETTLE_S"
    point_pair seq_read_tune_data "$SR_QD" "$RUNTIME" "$1" fio_point read 1M "$SR_QD" tune-data $((shortest * JOBS)) \
        "$RUNTIME" -- read $((1 << 20)) tune-data >"$WORK/tune-data-$1.txt"
    tune_qd=$(python3 -c "import json; print(json.load(open('$WORK/weir-$1.json'))['dirs'][0]['report']['read_bandwidth']['depth_best'])")
    if [[ $tune_qd != "$SR_QD" ]] && ((tune_qd >= JOBS)); then
        point_pair seq_read_tune_shape "$tune_qd" "$RUNTIME" "$1" fio_point read 1M "$tune_qd" tune-data $((shortest * JOBS)) \
            "$RUNTIME" -- read $((1 << 20)) tune-data >>"$WORK/tune-data-$1.txt"
    fi
    echo "tune_read_bytes_per_shard $shortest" >>"$WORK/tune-data-$1.txt"
    # A hole inside the bytes tune read would read as zeros without touching the disk (6x faster
    # on zram, session 10): count the bytes before the first hole of each cut file (SEEK_HOLE).
    python3 - "$DIR"/tune-data.* >>"$WORK/tune-data-$1.txt" <<'EOF'
import os, sys
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    size, hole = os.fstat(fd).st_size, os.lseek(fd, 0, os.SEEK_HOLE)
    os.close(fd)
    print("tune_data_first_hole", os.path.basename(path), hole, "of", size)
EOF
    remove_settled "$DIR"/tune-data.*
}

for ((round = 1; round <= ROUNDS; round++)); do
    lock
    if ((round % 2 == 1)); then order="fio weir"; else order="weir fio"; fi
    for tool in $order; do
        fresh_state
        sleep "$SETTLE_S"
        echo "round $round: $tool" >&2
        if [[ $tool == fio ]]; then
            fio_four "$SW_QD" "$SR_QD" "$RW_QD" "$RR_QD" "$RUNTIME" "$round" >"$WORK/fio-$round.txt"
        else
            run_weir "$round"
        fi
    done
    unlock
done

# The depth the scheduler drives (issue 24): two shards x 64 random 4 KiB reads in flight
# (io_tester's parallelism 32 per class x 2 classes), `weir run --no-scheduler`, SCHED_ROUNDS
# times after the tune rounds. Printed beside tune's read IOPS: the price the scheduler's cost
# model starts from against what the disk gives at the depth the scheduler actually keeps.
SCHED_ROUNDS=${SCHED_ROUNDS:-2}
SCHED_DURATION=${SCHED_DURATION:-5s}
cat >"$WORK/sched-depth.yaml" <<YAML
- name: reads
  type: randread
  shards: all
  data_size: $((READ_BYTES / 2 / (1 << 20)))MB
  shard_info:
    parallelism: 64
    reqsize: 4kB
YAML
for ((round = 1; round <= SCHED_ROUNDS; round++)); do
    lock
    sleep "$SETTLE_S"
    echo "scheduler depth round $round: weir run --no-scheduler, 2 shards x 64" >&2
    "$WEIR" run "$WORK/sched-depth.yaml" --dir "$DIR" --duration "$SCHED_DURATION" --shards 2 \
        --keep-files --no-scheduler --output json >"$WORK/sched-$round.json" 2>"$WORK/sched-$round.log"
    unlock
done
rm -f "$DIR"/weir-*.data
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$WORK" "$ROUNDS" "$JOBS" "$RAMP_S" "$RUNTIME" "$SCHED_ROUNDS" "${ZRAM:+zram $ZRAM XFS}" "$LOAD_START" "$LOAD_END" "$WRITE_REGIME" "${FIO_PLACEMENT:-floating}" "${FIO_FEATURES:-none}" <<'EOF'
import json, statistics, sys
work, rounds, jobs, ramp_s, runtime_s = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
sched_rounds, tier, load_start, load_end = int(sys.argv[6]), sys.argv[7] or "DIR", sys.argv[8], sys.argv[9]
regime = {"fresh": "fresh (zram reset + new XFS before each tool's turn and each fio sweep write point)",
          "reused": "reused (one filesystem throughout; each side writes where the other's removed files were)"}[sys.argv[10]]
names = ("rand_read", "rand_write", "seq_read", "seq_write")
labels = {"rand_read": "read IOPS (4 KiB)", "rand_write": "write IOPS (4 KiB)",
          "seq_read": "read bandwidth (1 MiB)", "seq_write": "write bandwidth (1 MiB)"}
keys = {"rand_read": "read_iops", "rand_write": "write_iops",
        "seq_read": "read_bandwidth", "seq_write": "write_bandwidth"}
fio = {n: [] for n in names}
meter = {n: [] for n in names}
weir = {n: [] for n in names}
sweep_best = {n: [] for n in names}
walls, sectors, written = [], [], []
for r in range(1, rounds + 1):
    for line in open(f"{work}/fio-{r}.txt"):
        name, qd, iops, bw, m_iops, m_bw = line.split()
        fio.setdefault(name, []).append((float(iops if name.startswith("rand") else bw), int(qd)))
        meter.setdefault(name, []).append(float(m_iops if name.startswith("rand") else m_bw))
    rep = json.load(open(f"{work}/weir-{r}.json"))["dirs"][0]["report"]
    for n in names:
        f = rep[keys[n]]
        weir[n].append((f["value"], f["depth_best"]))
        sweep_best[n].append(f.get("sweep_best", f["value"]))
    second = [n for n in names if rep[keys[n]].get("depth_sweep_best", rep[keys[n]]["depth_best"])
              != rep[keys[n]]["depth_best"]]
    extra = len(rep["sweeps"]["confirms"]) - 4
    print(f"weir round {r}: {extra} second opinion(s); figure at another depth than the sweep's best step: "
          + (", ".join(f"{labels[n]} (sweep x{rep[keys[n]]['depth_sweep_best']}, figure x{rep[keys[n]]['depth_best']})"
                       for n in second) or "none"))
    walls.append(float(open(f"{work}/wall-{r}.txt").read()))
    sectors.append(rep["physical_sector_bytes"])
    written.append(rep.get("written_bytes", 0))

def fmt(name, v):
    return f"{v/1e3:.1f} K" if name.startswith("rand") else f"{v/1e6:,.0f} MB/s"

print("per round (fio at its swept depth | weir at its best depth):")
print("| figure | " + " | ".join(f"round {r} fio | round {r} weir" for r in range(1, rounds + 1)) + " |")
print("|---|" + "---|---|" * rounds)
for n in names:
    cells = []
    for r in range(rounds):
        (fv, fq), (wv, wq) = fio[n][r], weir[n][r]
        cells += [f"{fmt(n, fv)} ({fq})", f"{fmt(n, wv)} ({wq}) {wv / fv:.2f}x"]
    print(f"| {labels[n]} | " + " | ".join(cells) + " |")

print("\nmedians over the rounds:")
print("| figure | fio median (QD) | weir median | weir/fio | fio spread (max-min)/median | weir spread | largest consecutive weir change |")
print("|---|---|---|---|---|---|---|")
verdicts = []
for n in names:
    fvs = [v for v, _ in fio[n]]
    fv = statistics.median(fvs)
    fio_spread = (max(fvs) - min(fvs)) / fv
    wvs = [v for v, _ in weir[n]]
    wv = statistics.median(wvs)
    spread = (max(wvs) - min(wvs)) / wv
    consecutive = max((abs(b / a - 1) for a, b in zip(wvs, wvs[1:])), default=0.0)
    print(f"| {labels[n]} | {fmt(n, fv)} ({fio[n][0][1]}) | {fmt(n, wv)} | {wv / fv:.3f} "
          f"| {100 * fio_spread:.1f}% | {100 * spread:.1f}% | {100 * consecutive:.1f}% |")
    verdicts.append(f"{labels[n]}: weir/fio within 5% {'yes' if abs(wv / fv - 1) <= 0.05 else 'no'}, "
                    f"consecutive weir runs within 3% {'yes' if consecutive <= 0.03 else 'no'}")
print("issue 20's targets (medians; only a quiet machine settles them): " + "; ".join(verdicts))
if all(v > 0 for n in names for v in meter[n]):
    print("\nweir tune's meter at fio's shape (same files, depth, ramp and window, run beside fio's point):")
    print("| figure | meter/fio per round | median meter/fio (the engine) | median tune/meter (tune's files, depth, window) |")
    print("|---|---|---|---|")
    for n in names:
        per = [m / f for m, (f, _) in zip(meter[n], fio[n])]
        tune_per = [w / m for (w, _), m in zip(weir[n], meter[n])]
        print(f"| {labels[n]} | " + " / ".join(f"{x:.2f}" for x in per)
              + f" | {statistics.median(per):.3f} | {statistics.median(tune_per):.3f} |")
print("\nweir's figure is a confirming measurement at the depth its sweep chose; the sweep's best")
print("short step (the luckiest of several) would have read, median over the rounds:")
for n in names:
    sb = statistics.median(sweep_best[n])
    print(f"  {labels[n]}: {fmt(n, sb)} ({sb / statistics.median(v for v, _ in weir[n]):.3f}x the figure, "
          f"{sb / statistics.median(v for v, _ in fio[n]):.3f}x fio)")
again = [v for v, _ in fio.get("seq_read_again", [])]
if again:
    av = statistics.median(again)
    wv = statistics.median(v for v, _ in weir["seq_read"])
    print("\nread bandwidth, fio's second pass over the same data right after its first: "
          + ", ".join(f"{v/1e6:,.0f}" for v in again)
          + f" MB/s (median {av/1e6:,.0f}; weir/fio second pass {wv / av:.3f})")
import os
def tune_data(r):
    return {l.split()[0]: l.split() for l in open(f"{work}/tune-data-{r}.txt") if l.strip()}
tdr = [tune_data(r) for r in range(1, rounds + 1) if os.path.exists(f"{work}/tune-data-{r}.txt")]
td = [rows["seq_read_tune_data"][:6] for rows in tdr if "seq_read_tune_data" in rows]
if len(td) == rounds:
    shard_bytes = [rows.get("tune_read_bytes_per_shard", ["", "0"])[1] for rows in tdr]
    holed = [r + 1 for r in range(len(tdr)) for l in open(f"{work}/tune-data-{r + 1}.txt")
             if l.startswith("tune_data_first_hole") and l.split()[2] != l.split()[4]]
    if holed:
        print(f"\nWARNING: tune's read data held a hole in round(s) {holed}: it read zeros there")
    print("\nread bandwidth on weir tune's own data (its files kept, cut to exactly the bytes its sequential reads")
    print("read: " + ", ".join(f"{int(b) / 2**30:.2f}" for b in shard_bytes) + " GiB per shard by round; read by fio at its")
    print("swept depth and by the meter right after the tune; same bytes, so only the meters differ):")
    print("| round | weir tune (depth) | fio on tune's data (QD) | meter on tune's data | weir/fio on its data | meter/fio |")
    print("|---|---|---|---|---|---|")
    per, mper = [], []
    for r, (name, qd, _, fbw, _, mbw) in enumerate(td):
        wv, wq = weir["seq_read"][r]
        fbw, mbw = float(fbw), float(mbw)
        per.append(wv / fbw)
        mper.append(mbw / fbw if mbw else float("nan"))
        print(f"| {r + 1} | {wv/1e6:,.0f} MB/s ({wq}) | {fbw/1e6:,.0f} MB/s ({qd}) | {mbw/1e6:,.0f} MB/s "
              f"| {wv / fbw:.3f} | {mbw / fbw if mbw else 0:.3f} |")
    m = statistics.median(per)
    print(f"read bandwidth, weir/fio on the same data: median {m:.3f} (within 5% {'yes' if abs(m - 1) <= 0.05 else 'no'}); "
          f"weir/fio on fio's layout: {statistics.median(v for v, _ in weir['seq_read']) / statistics.median(v for v, _ in fio['seq_read']):.3f}")
    shape = [(r, rows["seq_read_tune_shape"]) for r, rows in enumerate(tdr) if "seq_read_tune_shape" in rows]
    if shape:
        print("at tune's own read depth, same bytes (weir/meter is then tune's step against its own meter):")
        print("| round | weir tune (depth) | fio (QD) | meter | weir/fio | weir/meter |")
        print("|---|---|---|---|---|---|")
        for r, (_, qd, _, fbw, _, mbw) in shape:
            wv, wq = weir["seq_read"][r]
            fbw, mbw = float(fbw), float(mbw)
            print(f"| {r + 1} | {wv/1e6:,.0f} MB/s ({wq}) | {fbw/1e6:,.0f} MB/s ({qd}) | {mbw/1e6:,.0f} MB/s "
                  f"| {wv / fbw:.3f} | {wv / mbw if mbw else 0:.3f} |")
print(f"\nfio: {jobs} jobs, one file each, {ramp_s} s ramp + {runtime_s} per point, placement "
      f"{sys.argv[11]}, io_uring features {sys.argv[12]}; weir: its default shards (one per CPU, "
      "pinned, buffers and files registered)")
print("weir tune wall time: " + ", ".join(f"{w:.1f} s" for w in walls) + " (iotune default: ~144 s)")
print("physical sector: " + ", ".join(f"{s} B" for s in sectors))
print("weir's read region (bytes it wrote): " + ", ".join(f"{w / 1e9:.1f} GB" for w in written))
sched = [json.load(open(f"{work}/sched-{r}.json"))["jobs"][0]["iops"] for r in range(1, sched_rounds + 1)]
if sched:
    rr = statistics.median(v for v, _ in weir["rand_read"])
    sm = statistics.median(sched)
    print("\nat the scheduler's depth (weir run --no-scheduler, 2 shards x 64 random 4 KiB reads): "
          + ", ".join(f"{v/1e3:.1f} K" for v in sched)
          + f" IOPS (median {sm/1e3:.1f} K); weir tune's read IOPS / that: {rr / sm:.3f}")
print(f"tier: {tier}; write regime: {regime}; load average (1, 5, 15 min) at start "
      f"{load_start}, at end {load_end} (on {jobs} CPUs)")
EOF
