# tune-files.sh: helpers sourced by bench/tune-repeat.sh and bench/tune-vs-fio.sh (not run alone).
#
# keep_tune_files PID DIR JOBS PREFIX SUFFIX: while `weir tune` (PID) runs, hard-links each of
# its shard files in DIR (`.weir-tune-PID-J`, removed by tune when it ends) to
# DIR/PREFIX<J>SUFFIX, so a bench can read exactly the bytes tune wrote after tune is gone.
# A link that exists already is kept (the first file of each shard is the one tune read).
keep_tune_files() {
    local pid=$1 dir=$2 jobs=$3 prefix=$4 suffix=$5 j f
    while kill -0 "$pid" 2>/dev/null; do
        for ((j = 0; j < jobs; j++)); do
            [[ -e "$dir/$prefix$j$suffix" ]] && continue
            f=$(find "$dir" -maxdepth 1 -name ".weir-tune-$pid-$j" -print -quit)
            [[ -z $f ]] || ln "$f" "$dir/$prefix$j$suffix" 2>/dev/null || true
        done
        sleep 0.05
    done
}

# umount_retry MOUNTPOINT: a ring with registered files (weir's meter, fio --registerfiles)
# drops them in a kernel worker after its process exits, so an unmount right after can meet
# EBUSY for a moment: retried for up to 5 s, then once more with its error shown.
umount_retry() {
    local i
    for ((i = 0; i < 50; i++)); do
        umount "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    umount "$1"
}
