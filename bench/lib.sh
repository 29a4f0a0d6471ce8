# Sourced by the bench scripts: what several of them do the same way.

# bench_lock NAME: with BENCH_LOCK (or /work/bench.lock when it exists), waits for that lock
# and holds it on descriptor 9 until the script exits, so benches that share a machine run one
# at a time instead of measuring each other. NAME prefixes the waiting message.
bench_lock() {
    local lock=${BENCH_LOCK:-}
    [[ -z "$lock" && -e /work/bench.lock ]] && lock=/work/bench.lock
    [[ -n "$lock" ]] || return 0
    exec 9>"$lock"
    echo "$1: waiting for $lock" >&2
    flock 9
}

# For the scripts that make a zram device of their own (never zram0):
# zram_release MNT ID [UMOUNT]: unmounts MNT (when set; with UMOUNT, default umount) and
# removes the directory, then resets /dev/zramID (freeing every page it held) and hands the
# device back (hot_remove). Every step is best effort: it runs from EXIT traps, where a step
# that already happened (or never did) must not stop the others.
zram_release() {
    local mnt=$1 id=$2 umount_cmd=${3:-umount}
    if [[ -n "$mnt" ]]; then
        "$umount_cmd" "$mnt" 2>/dev/null || true
        rmdir "$mnt" 2>/dev/null || true
    fi
    if [[ -n "$id" ]]; then
        echo 1 >"/sys/block/zram$id/reset" 2>/dev/null || true
        echo "$id" >/sys/class/zram-control/hot_remove 2>/dev/null || true
    fi
}
