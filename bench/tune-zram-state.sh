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
    reread) ;;
    reads) [[ $# == 3 ]] || { echo "usage: $0 reads D1 D2 (fio iodepths per job)" >&2; exit 2; } ;;
    *) echo "usage: $0 writes | reads D1 D2 | reread" >&2; exit 2 ;;
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
    umount "$MNT" 2>/dev/null || true
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

fresh_fs
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
