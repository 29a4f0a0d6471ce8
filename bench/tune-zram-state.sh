#!/usr/bin/env bash
# tune-zram-state.sh: which state of an XFS on zram makes a 1 MiB figure repeat (docs/tune-zram.md,
# session 12). Root only; makes its own zram device (never zram0), removes it at exit.
#
#   bench/tune-zram-state.sh writes            # fio 1 MiB sequential writes: fresh, over x2,
#                                              # rm + fstrim, fresh, over; CYCLES times
#   bench/tune-zram-state.sh reads D1 D2       # two pairs of 1 GiB files written by fio at
#                                              # iodepth D1 then D2 per job, then tune's meter
#                                              # reading each pair (1 MiB x 4), ROUNDS rotated
#   bench/tune-zram-state.sh reread            # one pair (iodepth 1), read by the meter
#                                              # (1 MiB x 4) every 4 s, 10 times: does the same
#                                              # data read slower later?
#   bench/tune-zram-state.sh settle            # fio 1 MiB sequential writes into a new XFS, made
#                                              # SHORT_S or LONG_S (0.2 / 8 s) after the zram
#                                              # reset, alternating, CYCLES times each, with the
#                                              # guest's free page reporting (to the host) before
#                                              # and during each: do writes repeat once the freed
#                                              # memory has been handed back to the host?
#   bench/tune-zram-state.sh tunefiles         # one `weir tune` run whose files are kept (hard
#                                              # links made while it runs, cut to their first
#                                              # 1 GiB), then fio's layout pair beside them; fio
#                                              # and tune's meter each read both pairs (1 MiB x 2)
#                                              # in ROUNDS rotated rounds: is tune's read data
#                                              # faster whoever reads it?
#
# Wrap it in `flock /tmp/weir-bench.lock` on a shared machine. Prints one line per pass with
# the load average, zram's mm_stat (mem_used, huge_pages, pages_compacted) and, for writes, the
# /proc/vmstat counters that would show compaction, THP or reclaim.
# Environment: ZRAM (6G), CYCLES (3), ROUNDS (3), METER (tune's meter_point example; built if unset).
set -euo pipefail
[[ $(id -u) == 0 ]] || { echo "SKIP tune-zram-state: needs root (zram, mkfs.xfs, mount)" >&2; exit 0; }
MODE=${1:-}
case $MODE in
    writes) ;;
    reread | tunefiles | settle) ;;
    reads) [[ $# == 3 ]] || { echo "usage: $0 reads D1 D2 (fio iodepths per job)" >&2; exit 2; } ;;
    *) echo "usage: $0 writes | reads D1 D2 | reread | tunefiles | settle" >&2; exit 2 ;;
esac
ZRAM=${ZRAM:-6G}
CYCLES=${CYCLES:-3}
ROUNDS=${ROUNDS:-3}
REPO=$(cd "$(dirname "$0")/.." && pwd)
if [[ $MODE != writes && -z "${METER:-}" ]]; then
    (cd "$REPO" && cargo build --release -p weir-tune --example meter_point >&2)
    METER="${CARGO_TARGET_DIR:-$REPO/target}/release/examples/meter_point"
fi

ID=$(cat /sys/class/zram-control/hot_add)
MNT=$(mktemp -d /tmp/weir-zram-state.XXXXXX)
cleanup() {
    for _ in 1 2 3 4 5; do umount "$MNT" 2>/dev/null && break; sleep 0.5; done
    rmdir "$MNT" 2>/dev/null || true
    echo 1 >"/sys/block/zram$ID/reset" 2>/dev/null || true
    echo "$ID" >/sys/class/zram-control/hot_remove 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fresh_fs() {
    # A ring with registered files (fio --registerfiles, tune's meter) drops them in a kernel
    # worker after its process exits: the unmount can meet EBUSY for a moment.
    local i
    for ((i = 0; i < 50; i++)); do
        mountpoint -q "$MNT" || break
        umount "$MNT" 2>/dev/null && break
        sleep 0.1
    done
    echo 1 >"/sys/block/zram$ID/reset"
    echo "$ZRAM" >"/sys/block/zram$ID/disksize"
    mkfs.xfs -q -f "/dev/zram$ID"
    mount -o discard "/dev/zram$ID" "$MNT"
}
load() { cut -d' ' -f1 /proc/loadavg; }
mm() { awk '{printf "mem_used=%.0f huge_pages=%.0f pages_compacted=%.0f", $3, $8, $7}' "/sys/block/zram$ID/mm_stat"; }
vm() { awk '/^(compact_stall|compact_migrate_scanned|thp_fault_alloc|pgalloc_normal|allocstall_normal|pgscan_direct) /{printf "%s %s\n", $1, $2}' /proc/vmstat; }
# fio's 1 MiB sequential writes at tune's shape: 2 pinned threads, unscrambled buffers, registered.
FIO_COMMON=(--directory="$MNT" --rw=write --bs=1M --numjobs=2 --size=1G --direct=1 --ioengine=io_uring
    --thread --cpus_allowed=0-1 --cpus_allowed_policy=split --scramble_buffers=0 --fixedbufs=1
    --registerfiles=1 --group_reporting --output-format=json)

write_pass() { # cycle label
    local before after mbs
    before=$(vm)
    mbs=$(fio --name=w --filename_format='$jobname.$jobnum' --iodepth=1 "${FIO_COMMON[@]}" 2>/dev/null |
        python3 -c 'import json,sys; print(int(json.load(sys.stdin)["jobs"][0]["write"]["bw_bytes"] / 1e6))')
    after=$(vm)
    echo "cycle $1 $2: $mbs MB/s load $(load) $(mm) vmstat deltas: $(join <(echo "$before") <(echo "$after") |
        awk '{printf "%s=%d ", $1, $3 - $2}')"
}

# KiB of free memory the guest has reported to the host so far (virtio-balloon free page
# reporting: the host discards those pages, and the guest's next use of each faults on the
# host). Empty when the kernel does not export it.
reported_kib() { cat /sys/module/page_reporting/parameters/reported_kib 2>/dev/null || echo 0; }

if [[ $MODE == settle ]]; then
    SHORT_S=${SHORT_S:-0.2}
    LONG_S=${LONG_S:-8}
    for ((c = 1; c <= CYCLES; c++)); do
        if ((c % 2)); then order="$SHORT_S $LONG_S"; else order="$LONG_S $SHORT_S"; fi
        for wait_s in $order; do
            r0=$(reported_kib)
            fresh_fs
            sleep "$wait_s"
            r1=$(reported_kib)
            rm -f "$MNT"/w.*
            write_pass "$c" "written ${wait_s}s after reset (reported to the host while waiting: $(((r1 - r0) / 1024)) MiB)"
            echo "    reported during the write: $((($(reported_kib) - r1) / 1024)) MiB"
        done
    done
    exit 0
fi
if [[ $MODE == writes ]]; then
    for ((c = 1; c <= CYCLES; c++)); do
        fresh_fs
        write_pass "$c" fresh
        write_pass "$c" over1
        write_pass "$c" over2
        rm -f "$MNT"/w.*; sync; fstrim "$MNT"; sleep 1
        write_pass "$c" trimmed-fresh
        write_pass "$c" trimmed-over1
    done
    exit 0
fi

# Tune's meter reading pair `d$1` (1 MiB x 4, 1.3 s after a 1 s ramp): prints MB/s.
meter_read() { # depth-of-the-pair
    local bps
    read -r _ bps < <(RAMP_MS=1000 "$METER" read $((1 << 20)) 4 1.3 "$MNT/d$1.0.0" "$MNT/d$1.1.0")
    echo $((bps / 1000000))
}

write_pair() { # fio iodepth per job
    for j in 0 1; do truncate -s 1G "$MNT/d$1.$j.0"; done
    fio --name="d$1" --iodepth="$1" --fallocate=none "${FIO_COMMON[@]}" >/dev/null 2>&1
    echo "written at iodepth $1 per job: extents $(filefrag "$MNT/d$1.0.0" | awk '{print $2}') / $(filefrag "$MNT/d$1.1.0" | awk '{print $2}'), $(mm)"
}

# The bench's read shape (bench/tune-vs-fio.sh at fio's best depth in the quiet windows):
# 1 MiB sequential reads, 1 in flight per job / shard, 1 s ramp + 1.3 s. Prints MB/s.
fio_read_pair() { # name (files NAME.0.0 and NAME.1.0)
    fio --name="$1" --directory="$MNT" --rw=read --bs=1M --numjobs=2 --size=1G --direct=1 \
        --ioengine=io_uring --thread --cpus_allowed=0-1 --cpus_allowed_policy=split --fixedbufs=1 \
        --registerfiles=1 --group_reporting --iodepth=1 --ramp_time=1 --runtime=1300ms --time_based \
        --output-format=json 2>/dev/null |
        python3 -c 'import json,sys; print(int(json.load(sys.stdin)["jobs"][0]["read"]["bw_bytes"] / 1e6))'
}
meter_read_pair() { # name
    local bps
    read -r _ bps < <(RAMP_MS=1000 "$METER" read $((1 << 20)) 2 1.3 "$MNT/$1.0.0" "$MNT/$1.1.0")
    echo $((bps / 1000000))
}

fresh_fs
if [[ $MODE == tunefiles ]]; then
    WEIR=${WEIR:-"${CARGO_TARGET_DIR:-$REPO/target}/release/weir"}
    [[ -x $WEIR ]] || (cd "$REPO" && cargo build --release -p weir >&2)
    "$WEIR" tune --dir "$MNT" --properties-file /dev/null --format json >"$MNT.tune.json" 2>"$MNT.tune.log" &
    tune_pid=$!
    # Hard links made while tune runs keep its data after it removes its own names.
    while kill -0 "$tune_pid" 2>/dev/null; do
        for j in 0 1; do
            [[ -e "$MNT/tune.$j.0" ]] && continue
            f=$(find "$MNT" -maxdepth 1 -name ".weir-tune-*-$j" -print -quit)
            [[ -n $f ]] && ln "$f" "$MNT/tune.$j.0" 2>/dev/null || true
        done
        sleep 0.05
    done
    wait "$tune_pid" || { echo "weir tune failed: $(tail -3 "$MNT.tune.log")" >&2; exit 1; }
    grep -E 'sequential (write|read):' "$MNT.tune.log" | sed 's/^ */tune: /'
    python3 -c "import json; r=json.load(open('$MNT.tune.json'))['dirs'][0]['report']; print('tune: read_bandwidth', int(r['read_bandwidth']['value']/1e6), 'MB/s at depth', r['read_bandwidth']['depth_best'], 'read region', r.get('written_bytes'))"
    rm -f "$MNT.tune.json" "$MNT.tune.log"
    # Tune's reads read from offset 0 (its first, shallow writes): keep each file's first 1 GiB,
    # the size of fio's files, and give the rest back.
    for j in 0 1; do
        fallocate -p -o 1G -l 64G "$MNT/tune.$j.0"
        truncate -s 1G "$MNT/tune.$j.0"
    done
    sync; fstrim "$MNT"; sleep 1
    for j in 0 1; do truncate -s 1G "$MNT/fio.$j.0"; done
    fio --name=fio --iodepth=8 --fallocate=none "${FIO_COMMON[@]}" >/dev/null 2>&1
    echo "tune's files: extents $(filefrag "$MNT/tune.0.0" | awk '{print $2}') / $(filefrag "$MNT/tune.1.0" | awk '{print $2}'); fio's layout (iodepth 8): $(filefrag "$MNT/fio.0.0" | awk '{print $2}') / $(filefrag "$MNT/fio.1.0" | awk '{print $2}'); $(mm)"
    sleep 1
    for ((r = 1; r <= ROUNDS; r++)); do
        if ((r % 2)); then order="tune fio"; else order="fio tune"; fi
        line="round $r:"
        for files in $order; do line="$line fio reads $files $(fio_read_pair "$files") MB/s,"; done
        for files in $order; do line="$line meter reads $files $(meter_read_pair "$files") MB/s,"; done
        echo "$line load $(load)"
    done
    exit 0
fi
if [[ $MODE == reread ]]; then
    write_pair 1
    start_s=$(date +%s)
    for ((i = 1; i <= 10; i++)); do
        echo "t+$(($(date +%s) - start_s)) s: $(meter_read 1) MB/s load $(load)"
        sleep 1
    done
    exit 0
fi
for d in "$2" "$3"; do write_pair "$d"; done
for ((r = 1; r <= ROUNDS; r++)); do
    if ((r % 2)); then order="$2 $3"; else order="$3 $2"; fi
    for d in $order; do
        echo "round $r, pair written at iodepth $d: $(meter_read "$d") MB/s load $(load)"
    done
done
