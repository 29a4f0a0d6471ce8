# Sourced by the bench scripts that make a zram device of their own (never zram0).
#
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
