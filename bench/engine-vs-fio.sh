#!/usr/bin/env bash
# engine-vs-fio.sh: weir's engine against fio (io_uring, O_DIRECT) on the same 1 GiB file.
#
# Usage: bench/engine-vs-fio.sh [DIR]      (default DIR: /var/tmp/weir-bench)
# Environment: TIER (vda: a file in DIR; zram: a RAM-backed block device this script makes
# with /sys/class/zram-control/hot_add and removes at exit), ROUNDS (5), DURATION_S (10),
# SETTLE_S (3), BACKENDS ("uring aio"),
# WORKLOADS ("randread_qd1 randread_qd32 write128k_qd8"), LOCK (a lock file taken
# exclusively around each sample, e.g. /work/bench.lock; default none), WEIR (path to a built
# weir binary; default: build it with `cargo build --release -p weir`).
#
# Three workloads, one shard / one fio job each: 4 KiB random reads at QD1 and QD32, and
# 128 KiB sequential writes at QD8. Both sides do the same thing to the same pre-written file:
# O_DIRECT, io_uring (fio) or io_uring/AIO (weir) at the same depth and request size,
# sequential writes from offset 0 wrapping at 1 GiB, incompressible data (fio's random,
# scrambled buffers; weir's random buffers stamped per write, see weir_engine::payload).
# weir sends RWF_NOWAIT and reports how many requests came back EAGAIN (0 on this file).
#
# The disk under the development VM drifts by +-20% within minutes and the host buffers
# writes, so the order of the sides rotates every round (fio/aio/uring, then aio/uring/fio,
# ...), each sample starts after `sync` and a SETTLE_S pause so the previous side's buffered
# writes have drained, and every round's weir/fio ratio is printed so drift is visible.
# The zram tier (TIER=zram) reads 4 KiB at random from a RAM-backed block device, pre-written
# with incompressible data, at QD1 and QD32: there the disk is not the limit, the CPU each
# side spends per I/O is, and rounds repeat within a few percent. fio runs three times: plain
# io_uring, io_uring with the features weir uses (`fio_reg`: fixedbufs + registerfiles; weir
# does not poll, so no sqthread_poll), and libaio reaping completions from the ring in user
# space as weir's AIO backend does (`fio_aio`: userspace_reap); weir runs on the raw device
# (`--device`) with both backends. Each weir row is compared with the fio row given the same
# interface and features: weir_uring with fio_reg, weir_aio with fio_aio, and weir_auto
# (`--backend auto`: weir probes the device and picks) with whichever fio row is faster on
# that workload. Default there: BACKENDS "uring uring_inline aio auto", SETTLE_S 1, WORKLOADS
# "randread_qd1 randread_qd32".
# zram refuses non-blocking requests, so weir's ring sends every request on it with
# IOSQE_ASYNC (weir_engine::iowq): fio_async is fio_reg plus fio's same switch
# (`force_async=1`) and is weir_uring's anchor; `uring_inline` is weir with that switch off
# (WEIR_URING_PUNT=inline: the kernel's try-inline-then-punt path),
# the paired A/B of the change. Every weir row's IOPS ratio to every fio row follows the table.
# The engine's wait policies are rows too (see weir_env below), e.g. BACKENDS="uring
# uring_split uring_spin20_nodefer": each against fio_async.
# Why both interfaces on zram: zram is a bio-based driver without REQ_NOWAIT support, so
# io_uring cannot issue a read inline and hands every one to an io-wq worker thread, which
# then wakes the submitter (~0.5-2 context switches per I/O on either side); Linux AIO's
# io_submit runs zram's synchronous read in the submitting thread (no switch at all).
# Printed: IOPS, MB/s, p50/p99 latency (submission to completion), CPU seconds per I/O
# (user+sys of the whole process from /usr/bin/time over its completed I/Os: the process's
# io_uring io-wq and SQPOLL threads are its own threads, so they are included) and the
# whole machine's busy CPU per I/O over the same seconds (/proc/stat; on a shared machine
# it includes everyone else's work, so compare it only on a quiet one), context switches
# per I/O (voluntary + involuntary, all the process's threads, from /usr/bin/time) and, with
# COUNT_SYSCALLS=1 (needs perf and root), the system calls into the I/O interface per I/O
# (io_uring_enter, io_submit, io_getevents): these two are counts, far less sensitive to a
# busy machine than IOPS or CPU seconds. Counting syscalls is off by default because enabling
# a syscall tracepoint sends every system call of the counted process through the kernel's
# slow entry path, which costs the side making more calls (fio) more. Medians over
# rounds, ratios of the medians, and the median of the per-round ratios (each round's pair
# ran within seconds of each other, so that one is the less drift-prone estimate).
set -euo pipefail

DIR=${1:-/var/tmp/weir-bench}
TIER=${TIER:-vda}
ROUNDS=${ROUNDS:-5}
LOCK=${LOCK:-}
DURATION_S=${DURATION_S:-10}
case "$TIER" in
    vda)
        SETTLE_S=${SETTLE_S:-3}
        WORKLOADS=${WORKLOADS:-"randread_qd1 randread_qd32 write128k_qd8"}
        BACKENDS=${BACKENDS-"uring aio"}
        FIO_SIDES=${FIO_SIDES:-"fio"}
        ;;
    zram)
        SETTLE_S=${SETTLE_S:-1}
        WORKLOADS=${WORKLOADS:-"randread_qd1 randread_qd32"}
        BACKENDS=${BACKENDS-"uring uring_inline aio auto"}
        FIO_SIDES=${FIO_SIDES:-"fio fio_reg fio_async fio_aio"}
        ;;
    *) echo "engine-vs-fio: TIER must be vda or zram, not '$TIER'" >&2; exit 2 ;;
esac
REPO=$(cd "$(dirname "$0")/.." && pwd)
JOB=bench
FILE="$DIR/weir-$JOB-0.data"
FILE_BYTES=$((1 << 30))

for tool in fio python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "engine-vs-fio: $tool is required" >&2; exit 2; }
done

if [[ -z "${WEIR:-}" ]]; then
    (cd "$REPO" && cargo build --release -p weir >&2)
    WEIR="${CARGO_TARGET_DIR:-$REPO/target}/release/weir"
fi
[[ -x "$WEIR" ]] || { echo "engine-vs-fio: no weir binary at $WEIR" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/weir-bench.XXXXXX")
ZRAM_ID=
cleanup() {
    rm -rf "$WORK"
    if [[ -n "$ZRAM_ID" ]]; then
        echo 1 >"/sys/block/zram$ZRAM_ID/reset" || true
        echo "$ZRAM_ID" >/sys/class/zram-control/hot_remove || true
    fi
}
trap cleanup EXIT
# A killed run must still remove its zram device: bash skips the EXIT trap on a signal it
# does not trap.
trap 'exit 130' INT
trap 'exit 143' TERM

# Keep weir from deleting (or re-filling) the shared file when it supports that.
KEEP=()
if "$WEIR" run --help 2>/dev/null | grep -q -- '--keep-files'; then KEEP=(--keep-files); fi
TARGET=(--dir "$DIR")

if [[ $TIER == zram ]]; then
    [[ -w /sys/class/zram-control/hot_add ]] || {
        echo "engine-vs-fio: TIER=zram needs root and the zram module (modprobe zram)" >&2
        exit 2
    }
    # A device of our own (never zram0, which may be swap), removed at exit.
    ZRAM_ID=$(cat /sys/class/zram-control/hot_add)
    echo 2G >"/sys/block/zram$ZRAM_ID/disksize"
    FILE=/dev/zram$ZRAM_ID
    TARGET=(--device "$FILE")
    KEEP=()
    # fio's default buffers are random: zram stores them uncompressed, so reads decompress
    # nothing and never hit zram's same-page shortcut for zero pages.
    fio --name=prewrite --filename="$FILE" --rw=write --bs=1m --size=1g --direct=1 \
        --ioengine=io_uring --iodepth=8 --output=/dev/null
    echo "zram$ZRAM_ID: $(cat "/sys/block/zram$ZRAM_ID/mm_stat")" >&2
else
    mkdir -p "$DIR"
fi

prewrite() {
    [[ $TIER == zram ]] && return 0
    local size
    size=$(stat -c %s "$FILE" 2>/dev/null || echo 0)
    if [[ "$size" != "$FILE_BYTES" ]]; then
        echo "pre-writing $FILE (1 GiB)" >&2
        fio --name=prewrite --filename="$FILE" --rw=write --bs=1m --size=1g --direct=1 \
            --ioengine=io_uring --iodepth=8 --output=/dev/null
        # weir reuses only files that carry its mark; this one was written by fio for both sides.
        python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.weir.owner", b"weir kept")' "$FILE"
    fi
}

# One timed sample: flush what earlier samples left in the host's buffers, pause, then run
# the command (under the exclusive LOCK, when given, so nothing else uses the disk meanwhile).
# The machine's busy CPU jiffies (/proc/stat: all but idle and iowait) go to OUT.busy, read
# just before and just after the command.
sample() { # out command...
    local out=$1
    shift
    # shellcheck disable=SC2016
    local settle=(bash -c '
        busy() { awk "/^cpu /{print \$2+\$3+\$4+\$7+\$8+\$9}" /proc/stat; }
        sync; sleep "$1"; out=$2; shift 2
        b0=$(busy); "$@"; rc=$?; echo "$b0 $(busy)" >"$out.busy"; exit $rc' _ "$SETTLE_S" "$out")
    if [[ -n "$LOCK" ]]; then flock "$LOCK" "${settle[@]}" "$@"; else "${settle[@]}" "$@"; fi
}

# System calls into the I/O interfaces, counted by perf around each sample (COUNT_SYSCALLS=1).
SYSCALL_EVENTS=
if [[ ${COUNT_SYSCALLS:-0} == 1 ]]; then
    SYSCALL_EVENTS=syscalls:sys_enter_io_uring_enter,syscalls:sys_enter_io_submit,syscalls:sys_enter_io_getevents
    if ! perf stat -x, -e "$SYSCALL_EVENTS" -o /dev/null true 2>/dev/null; then
        echo "engine-vs-fio: perf cannot count syscall tracepoints here (root and perf needed)" >&2
        exit 2
    fi
fi
counted() { # out: the perf prefix for a sample (empty when not counting)
    [[ -n $SYSCALL_EVENTS ]] && echo perf stat -x, -o "$1.perf" -e "$SYSCALL_EVENTS" --
    return 0
}

# workload name -> fio args and weir job file
declare -A FIO_ARGS=(
    [write128k_qd8]="--rw=write --bs=128k --iodepth=8"
)
write_job() { # name type parallelism reqsize
    cat >"$WORK/$1.yaml" <<YAML
- name: $JOB
  shards: [0]
  type: $2
  data_size: 1GB
  shard_info:
    parallelism: $3
    reqsize: $4
YAML
}
write_job write128k_qd8 overwrite 8 128kB
# Any 4 KiB random-read depth is a workload (randread_qd<N>), e.g. a sweep of the crossover
# between wait policies: WORKLOADS="randread_qd1 randread_qd2 randread_qd4 randread_qd8".
for w in $WORKLOADS; do
    if [[ $w =~ ^randread_qd([1-9][0-9]{0,3})$ ]]; then
        FIO_ARGS[$w]="--rw=randread --bs=4k --iodepth=${BASH_REMATCH[1]}"
        write_job "$w" randread "${BASH_REMATCH[1]}" 4kB
    elif [[ -z ${FIO_ARGS[$w]:-} ]]; then
        echo "engine-vs-fio: unknown workload '$w' (randread_qd<N> with N 1-9999, or write128k_qd8)" >&2
        exit 2
    fi
done

# CPU per completed I/O of the whole machine over the sample (jiffies of 10 ms).
machine_cpu_py='
def machine_cpu(out, ios):
    b0, b1 = map(int, open(out + ".busy").read().split())
    return (b1 - b0) / 100 / max(ios, 1)
def syscalls(out, ios):
    try:
        lines = open(out + ".perf").read().splitlines()
    except OSError:
        return float("nan")
    counts = [l.split(",")[0] for l in lines if "syscalls:" in l]
    if not counts or not all(c.isdigit() for c in counts):
        return float("nan")
    return sum(map(int, counts)) / max(ios, 1)
'

run_fio() { # workload round side (fio: plain; fio_reg: with weir's io_uring features;
    #                             fio_aio: libaio, reaping in user space as weir does)
    local out="$WORK/$3-$1-$2" features=(--ioengine=io_uring)
    [[ $3 == fio_reg* || $3 == fio_async* ]] && features+=(--fixedbufs=1 --registerfiles=1)
    [[ $3 == fio_async* ]] && features+=(--force_async=1)
    [[ $3 == fio_aio ]] && features=(--ioengine=libaio --userspace_reap=1)
    # fio_reg_batch / fio_async_batch: fio reaping at least half the depth per wait
    # (iodepth_batch_complete_min), as weir's deferred-submit variant does on zram (the default
    # waits for a quarter: fio_reg_batch8 at QD32; fio moves under 2% between the two).
    # fio_reg_batch<N> / fio_async_batch<N>: at least N (the row to set beside weir's
    # WEIR_URING_BATCH=<N>, bench row uring_batch<N>).
    if [[ $3 =~ _batch([0-9]+)$ ]]; then
        features+=(--iodepth_batch_complete_min="${BASH_REMATCH[1]}")
    elif [[ $3 == *_batch* && $1 =~ _qd([0-9]+)$ ]]; then
        local qd=${BASH_REMATCH[1]}
        features+=(--iodepth_batch_complete_min=$((qd / 2 > 1 ? qd / 2 : 1)))
    fi
    prewrite
    # shellcheck disable=SC2086,SC2046
    if ! sample "$out" /usr/bin/time -f '%U %S %w %c' -o "$out.time" $(counted "$out") \
        fio --name=bench \
        --filename="$FILE" --size=1g --direct=1 "${features[@]}" \
        --time_based --runtime="$DURATION_S" \
        --lat_percentiles=1 --clat_percentiles=0 --norandommap --randrepeat=0 \
        ${FIO_ARGS[$1]} --output-format=json --output="$out.json"; then
        echo "fio failed ($1, round $2, $3); this sample is skipped" >&2
        return 0
    fi
    python3 - "$out" "$3" "$machine_cpu_py" <<'PY' >>"$WORK/results.tsv"
import json, sys
out, side = sys.argv[1], sys.argv[2]
exec(sys.argv[3])
j = json.load(open(out + ".json"))["jobs"][0]
d = j["read"] if j["read"]["total_ios"] > 0 else j["write"]
pct = d["lat_ns"]["percentile"]
user, sys_s, vcs, ics = map(float, open(out + ".time").read().split()[-4:])
ios = d["total_ios"]
print("\t".join(map(str, [*out.split("/")[-1].split("-")[1:3], side, d["iops"],
      d["bw_bytes"] / 1e6, pct["50.000000"] / 1e3, pct["99.000000"] / 1e3,
      (user + sys_s) / max(ios, 1), machine_cpu(out, ios), (vcs + ics) / max(ios, 1),
      syscalls(out, ios)])))
PY
}

# A weir row's backend and the engine's A/B switches, from its name: plain `uring` is the
# engine's default (on zram the wait is chosen from the depth: spin up to QD4, IOSQE_ASYNC to
# two io-wq workers above (inline on one CPU),
# see weir_engine::uring_wait); uring_<variant>... fixes it, with variants async (IOSQE_ASYNC
# and one enter: WEIR_URING_PUNT=async), inline (WEIR_URING_PUNT=inline:
# no IOSQE_ASYNC on zram), split (submit and wait in two enters, as fio does:
# WEIR_URING_WAIT=split), spin<N> (split, then watch the completion queue N us before blocking:
# WEIR_URING_WAIT=spin:N) and nodefer (a ring without DEFER_TASKRUN: WEIR_URING_DEFER=off),
# e.g. uring_spin20_nodefer; batch<N> (a wait for one completion waits
# for N while more are in flight: WEIR_URING_BATCH=N), ringfd (the ring entered by its
# registered index: WEIR_URING_RINGFD=on), iowq<N> (io-wq workers bounded to N:
# WEIR_URING_IOWQ_MAX=N); deepasync (a deep ring on zram sends IOSQE_ASYNC to
# two io-wq workers instead of the default inline: WEIR_URING_DEEP=async; deepinline names the
# default explicitly: WEIR_URING_DEEP=inline) and nosqarray
# (a ring without the SQ index array: WEIR_URING_NOSQARRAY=on); atime (the
# device opened without O_NOATIME: WEIR_DEVICE_ATIME=on), deferred (a
# deep punting ring leaves lone submits for the turn's wait:
# WEIR_URING_SUBMIT=deferred, usually with batch16 at QD32) and eager
# (the default, named explicitly: WEIR_URING_SUBMIT=eager). async, inline, split and
# spin<N> turn the depth choice off (async is implied unless inline is named); nodefer,
# batch, ringfd, iowq, deepasync, deepinline and nosqarray keep it.
weir_env() { # row name -> "backend VAR=value..."
    local backend=${1%%_*} envs=(WEIR_URING_WAIT=auto) v variants
    [[ $1 == *_* ]] || { echo "$backend ${envs[*]}"; return; }
    IFS=_ read -r -a variants <<<"${1#*_}"
    for v in "${variants[@]}"; do
        case $v in
            async) envs+=(WEIR_URING_PUNT=async) ;;
            inline) envs+=(WEIR_URING_PUNT=inline) ;;
            split) envs+=(WEIR_URING_PUNT=async WEIR_URING_WAIT=split) ;;
            spin[0-9]*) envs+=(WEIR_URING_PUNT=async WEIR_URING_WAIT=spin:${v#spin}) ;;
            nodefer) envs+=(WEIR_URING_DEFER=off) ;;
            batch[0-9]*) envs+=(WEIR_URING_BATCH=${v#batch}) ;;
            ringfd) envs+=(WEIR_URING_RINGFD=on) ;;
            iowq[0-9]*) envs+=(WEIR_URING_IOWQ_MAX=${v#iowq}) ;;
            nosqarray) envs+=(WEIR_URING_NOSQARRAY=on) ;;
            deepinline) envs+=(WEIR_URING_DEEP=inline) ;;
            deepasync) envs+=(WEIR_URING_DEEP=async) ;;
            atime) envs+=(WEIR_DEVICE_ATIME=on) ;;
            eager) envs+=(WEIR_URING_SUBMIT=eager) ;;
            deferred) envs+=(WEIR_URING_SUBMIT=deferred) ;;
            *) echo "engine-vs-fio: unknown variant '$v' in BACKENDS row '$1'" >&2; exit 2 ;;
        esac
    done
    echo "$backend ${envs[*]}"
}

run_weir() { # workload round row (see weir_env)
    local out="$WORK/weir_$3-$1-$2" backend envs
    read -r backend envs <<<"$(weir_env "$3")"
    prewrite
    # shellcheck disable=SC2046,SC2086
    if ! sample "$out" env $envs /usr/bin/time -f '%U %S %w %c' -o "$out.time" $(counted "$out") "$WEIR" run "$WORK/$1.yaml" \
        "${TARGET[@]}" --duration "${DURATION_S}s" --shards 1 --backend "$backend" --output json \
        "${KEEP[@]}" >"$out.json" 2>"$out.err"; then
        echo "weir run failed ($1, round $2, $3); this sample is skipped:" >&2
        cat "$out.err" "$out.time" >&2
        return 0
    fi
    python3 - "$out" "weir_$3" "$machine_cpu_py" <<'PY' >>"$WORK/results.tsv"
import json, sys
out, side = sys.argv[1], sys.argv[2]
exec(sys.argv[3])
doc = json.load(open(out + ".json"))

def find(node, names):
    """The first value under any of `names`, searching depth-first (the report's layout
    belongs to weir-workload; this accepts its plausible spellings)."""
    if isinstance(node, dict):
        for n in names:
            if n in node and not isinstance(node[n], (dict, list)):
                return float(node[n])
        for v in node.values():
            r = find(v, names)
            if r is not None:
                return r
    elif isinstance(node, list):
        for v in node:
            r = find(v, names)
            if r is not None:
                return r
    return None

iops = find(doc, ["iops", "IOPS"])
bw = find(doc, ["throughput_bytes_per_s", "bandwidth_bytes_per_s", "bytes_per_s"])
if bw is None:
    kbs = find(doc, ["throughput_kbps", "throughput_kb_per_s", "throughput"])
    bw = kbs * 1024 if kbs is not None else float("nan")
p50 = find(doc, ["latency_us_p50", "p50_us", "p50", "p0.5"])
p99 = find(doc, ["latency_us_p99", "p99_us", "p99", "p0.99"])
ios = find(doc, ["ops", "total_requests", "requests", "ios", "total_ios"])
user, sys_s, vcs, ics = map(float, open(out + ".time").read().split()[-4:])
nan = float("nan")
print("\t".join(map(str, [*out.split("/")[-1].split("-")[1:3], side, iops or nan, bw / 1e6,
      p50 if p50 is not None else nan, p99 if p99 is not None else nan,
      (user + sys_s) / ios if ios else nan, machine_cpu(out, ios) if ios else nan,
      (vcs + ics) / ios if ios else nan, syscalls(out, ios) if ios else nan])))
PY
}

read -r -a sides <<<"$FIO_SIDES"
for b in $BACKENDS; do
    weir_env "$b" >/dev/null # an unknown variant stops here, before any round
    sides+=("weir_$b")
done
: >"$WORK/results.tsv"
for round in $(seq 1 "$ROUNDS"); do
    for workload in $WORKLOADS; do
        n=${#sides[@]}
        for i in $(seq 0 $((n - 1))); do
            side=${sides[$(((i + round - 1) % n))]}
            echo "round $round/$ROUNDS: $workload on $side" >&2
            if [[ $side == fio* ]]; then run_fio "$workload" "$round" "$side"
            else run_weir "$workload" "$round" "${side#weir_}"; fi
        done
    done
done

python3 - "$WORK/results.tsv" "$WORKLOADS" <<'PY'
import statistics, sys
from collections import defaultdict
rows = defaultdict(list)      # (workload, side) -> [values]
by_round = defaultdict(dict)  # (workload, round) -> side -> values
for line in open(sys.argv[1]):
    w, rnd, side, *vals = line.split("\t")
    vals = [float(v) for v in vals]
    rows[(w, side)].append(vals)
    by_round[(w, int(rnd))][side] = vals
workloads = sys.argv[2].split()
def med(w, side, k):
    vals = [r[k] for r in rows.get((w, side), []) if r[k] == r[k]]
    return statistics.median(vals) if vals else float("nan")
def ratio(a, b):
    return a / b if b and a == a and b == b else float("nan")
sides = sorted({s for _, s in rows}, key=lambda s: (not s.startswith("fio"), s))
# Each weir row is compared with the fio row given the same interface and features: weir_aio
# with fio_aio (libaio), every other row with fio_reg (io_uring with weir's features) when
# there is one, else with plain fio; every fio variant's own row is shown as well.
present = {s for _, s in rows}
base_anchor = next((s for s in ("fio_async", "fio_reg", "fio_reg_batch", "fio") if s in present),
                   min((s for s in present if s.startswith("fio")), default="fio"))
def anchor_of(side, w):
    if side == "weir_auto":
        # weir picked its interface itself: compare with fio's best interface here.
        fios = [s for s in present if s.startswith("fio")]
        return max(fios, key=lambda s: med(w, s, 0)) if fios else base_anchor
    if side == "weir_uring":
        # The engine's default chooses IOSQE_ASYNC or not (and how to wait) by depth, so its
        # anchor is fio's best io_uring row present (every switch and batch fio was
        # given, libaio aside).
        fios = [s for s in present if s.startswith("fio") and s != "fio_aio"]
        return max(fios, key=lambda s: med(w, s, 0)) if fios else base_anchor
    if "_inline" in side and "fio_reg" in present:
        return "fio_reg"  # the kernel's path on both sides
    return "fio_aio" if side == "weir_aio" and "fio_aio" in present else base_anchor
COLS = 8
print(f"{'workload':15} {'side':17} {'IOPS':>9} {'MB/s':>8} {'p50 us':>8} {'p99 us':>8} "
      f"{'CPU us/IO':>9} {'mCPU us/IO':>10} {'cs/IO':>6} {'sys/IO':>6} | {'vs':7} {'IOPS x':>6} "
      f"{'MB/s x':>6} {'CPU x':>6} {'mCPU x':>6} {'paired':>6}")
for w in workloads:
    for s in sides:
        anchor = anchor_of(s, w)
        f = [med(w, anchor, k) for k in range(COLS)]
        m = [med(w, s, k) for k in range(COLS)]
        paired = [ratio(r[s][0], r[anchor][0]) for (ww, _), r in by_round.items()
                  if ww == w and s in r and anchor in r]
        paired = statistics.median(paired) if paired else float("nan")
        print(f"{w:15} {s:17} {m[0]:9.0f} {m[1]:8.1f} {m[2]:8.1f} {m[3]:8.1f} "
              f"{m[4] * 1e6:9.2f} {m[5] * 1e6:10.2f} {m[6]:6.3f} {m[7]:6.3f} | {anchor:7} "
              f"{ratio(m[0], f[0]):6.3f} {ratio(m[1], f[1]):6.3f} {ratio(m[4], f[4]):6.3f} "
              f"{ratio(m[5], f[5]):6.3f} {paired:6.3f}")
rounds = max((r for _, r in by_round), default=0)
if "weir_uring" in present:
    print("targets, weir_uring (the default) against fio's best io_uring row "
          "(QD32: IOPS x >= 1.10 and CPU x <= 0.90; QD1: IOPS x >= 1.00):")
    for w in workloads:
        a = anchor_of("weir_uring", w)
        per = sorted(ratio(r["weir_uring"][0], r[a][0]) for (ww, _), r in by_round.items()
                     if ww == w and "weir_uring" in r and a in r)
        print(f"  {w:15} vs {a:9} IOPS x {ratio(med(w, 'weir_uring', 0), med(w, a, 0)):.3f} "
              f"CPU x {ratio(med(w, 'weir_uring', 4), med(w, a, 4)):.3f} per-round IOPS x "
              + " ".join(f"{x:.3f}" for x in per))
fio_rows = [s for s in sides if s.startswith("fio")]
print("IOPS of each weir row over each fio row (ratio of medians; paired in brackets):")
for w in workloads:
    for s in sides:
        if s.startswith("fio"):
            continue
        cells = []
        for f in fio_rows:
            paired = [ratio(r[s][0], r[f][0]) for (ww, _), r in by_round.items()
                      if ww == w and s in r and f in r]
            cells.append(f"{f} {ratio(med(w, s, 0), med(w, f, 0)):.3f} "
                         f"({statistics.median(paired) if paired else float('nan'):.3f})")
        print(f"  {w:15} {s:17} " + ", ".join(cells))
print(f"(medians of {rounds} rounds; ratios are each side / the fio row named under 'vs', of "
      "the medians; 'paired' is the median of each round's IOPS ratio; CPU = user+sys seconds "
      "of the process (its io_uring worker threads included) per completed I/O; mCPU = busy "
      "CPU of the whole machine per completed I/O, which counts other work on a shared "
      "machine; cs = voluntary + involuntary context switches of the process per I/O; sys = "
      "io_uring_enter + io_submit + io_getevents calls per I/O)")
print()
print("per-round MB/s and weir/fio ratio (the order rotates every round):")
for w in workloads:
    for rnd in range(1, rounds + 1):
        r = by_round.get((w, rnd), {})
        cells = [f"{s} {r[s][1]:7.1f}" + (f" ({ratio(r[s][1], r[anchor_of(s, w)][1]):.3f})"
                 if s != anchor_of(s, w) and anchor_of(s, w) in r else "") for s in sides if s in r]
        print(f"  {w:15} round {rnd}: " + ", ".join(cells))
PY
