#!/usr/bin/env bash
# tune-vs-fio.sh: the four numbers of `weir tune` against fio's best over a queue-depth sweep,
# on the same directory, plus weir's run time and its run-to-run repeatability.
#
# Usage: bench/tune-vs-fio.sh [DIR]        (default DIR: /var/tmp/weir-tune-bench)
# Environment: QDS ("1 2 4 8 16 32 64 128", total in flight), JOBS (nproc: fio jobs, one file
# each, like weir's shards), RUNTIME_S (2, per fio point, after 1 s ramp), FIO_FILE_BYTES (8G,
# all jobs together), SETTLE_S (5: idle seconds before each tool's turn, so writes buffered
# below the guest by the previous one drain first), WEIR (a built weir binary; default: cargo build --release -p weir).
# Wrap it in `flock /work/bench.lock` on shared machines; it does not lock by itself.
#
# fio (direct=1, ioengine=io_uring, JOBS jobs with a file each, like weir's shards, at
# iodepth QD/JOBS each; depths below JOBS are skipped) measures, at every total depth in QDS:
#   - 1 MiB sequential writes into a fresh sparse file (fallocate=none), like weir's writes
#     into pre-truncated files;
#   - 1 MiB sequential reads, 4 KiB random writes and 4 KiB random reads on a file written
#     once beforehand (fio's layout), like weir's reads of data it wrote;
# and keeps the best depth of each. Then `weir tune` runs twice. Printed: a table of fio best
# (and its depth), both weir runs, ratios weir/fio and run2/run1, and weir's wall time.
set -euo pipefail

DIR=${1:-/var/tmp/weir-tune-bench}
QDS=${QDS:-"1 2 4 8 16 32 64 128"}
JOBS=${JOBS:-$(nproc)}
SETTLE_S=${SETTLE_S:-5}
RUNTIME_S=${RUNTIME_S:-2}
FIO_FILE_BYTES=${FIO_FILE_BYTES:-8G}
REPO=$(cd "$(dirname "$0")/.." && pwd)

for tool in fio python3; do
    command -v "$tool" >/dev/null || { echo "tune-vs-fio: $tool is required" >&2; exit 2; }
done
if [[ -z "${WEIR:-}" ]]; then
    (cd "$REPO" && cargo build --release -p weir >&2)
    WEIR="${CARGO_TARGET_DIR:-$REPO/target}/release/weir"
fi
[[ -x "$WEIR" ]] || { echo "tune-vs-fio: no weir binary at $WEIR" >&2; exit 2; }

mkdir -p "$DIR"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/weir-tune-bench.XXXXXX")
cleanup() { rm -rf "$WORK"; rm -f "$DIR"/fio-tune-*; }
trap cleanup EXIT

# One fio point: prints "iops bytes_per_s" summed over the jobs.
fio_point() { # rw bs total_qd name [extra fio args...]
    local rw=$1 bs=$2 qd=$3 name=$4
    shift 4
    fio --name="$name" --directory="$DIR" --numjobs="$JOBS" --group_reporting \
        --size=$((FIO_BYTES / JOBS)) --direct=1 --ioengine=io_uring \
        --rw="$rw" --bs="$bs" --iodepth=$((qd / JOBS)) --ramp_time=1 --runtime="$RUNTIME_S" \
        --time_based --output-format=json "$@" 2>/dev/null |
        python3 -c 'import json,sys
j = json.load(sys.stdin)["jobs"][0]
s = j["read"] if j["read"]["io_bytes"] else j["write"]
print(int(s["iops"]), int(s["bw_bytes"]))'
}
FIO_BYTES=$(python3 -c "
s='$FIO_FILE_BYTES'; m={'K':1<<10,'M':1<<20,'G':1<<30,'T':1<<40}
print(int(s[:-1])*m[s[-1]] if s[-1] in m else int(s))")
SWEEP=""
for qd in $QDS; do
    if ((qd >= JOBS)); then SWEEP="$SWEEP $qd"; fi
done

sleep "$SETTLE_S"
echo "fio sweep on $DIR: $JOBS jobs, total QD$SWEEP, ${RUNTIME_S}s per point" >&2
: >"$WORK/fio.txt"
for qd in $SWEEP; do
    echo "seq_write $qd $(fio_point write 1M "$qd" "fio-tune-w$qd" --fallocate=none)" >>"$WORK/fio.txt"
    rm -f "$DIR"/fio-tune-w"$qd".*
done
fio --name=fio-tune-data --directory="$DIR" --numjobs="$JOBS" --size=$((FIO_BYTES / JOBS)) \
    --direct=1 --ioengine=io_uring --rw=write --bs=1M --iodepth=8 --output-format=json >/dev/null 2>&1
for qd in $SWEEP; do
    echo "seq_read $qd $(fio_point read 1M "$qd" fio-tune-data)" >>"$WORK/fio.txt"
done
for qd in $SWEEP; do
    echo "rand_write $qd $(fio_point randwrite 4k "$qd" fio-tune-data)" >>"$WORK/fio.txt"
done
for qd in $SWEEP; do
    echo "rand_read $qd $(fio_point randread 4k "$qd" fio-tune-data)" >>"$WORK/fio.txt"
done
rm -f "$DIR"/fio-tune-data.*

for run in 1 2; do
    sleep "$SETTLE_S"
    echo "weir tune run $run" >&2
    start=$(date +%s.%N)
    "$WEIR" tune --dir "$DIR" --properties-file "$WORK/io-$run.yaml" --format json >"$WORK/weir-$run.json"
    end=$(date +%s.%N)
    python3 -c "print($end - $start)" >"$WORK/wall-$run.txt"
done

python3 - "$WORK" "$JOBS" <<'EOF'
import json, sys
work = sys.argv[1]
fio = {}
for line in open(f"{work}/fio.txt"):
    name, qd, iops, bw = line.split()
    key = "iops" if name.startswith("rand") else "bw"
    value = float(iops if key == "iops" else bw)
    if value > fio.get(name, (0, 0))[0]:
        fio[name] = (value, int(qd))
runs = []
for run in (1, 2):
    doc = json.load(open(f"{work}/weir-{run}.json"))
    r = doc["dirs"][0]["report"]
    wall = float(open(f"{work}/wall-{run}.txt").read())
    runs.append(({
        "rand_read": (r["read_iops"]["value"], r["read_iops"]["depth_best"]),
        "rand_write": (r["write_iops"]["value"], r["write_iops"]["depth_best"]),
        "seq_read": (r["read_bandwidth"]["value"], r["read_bandwidth"]["depth_best"]),
        "seq_write": (r["write_bandwidth"]["value"], r["write_bandwidth"]["depth_best"]),
    }, wall, r["physical_sector_bytes"]))
def fmt(name, v):
    return f"{v/1e3:.1f} K IOPS" if name.startswith("rand") else f"{v/1e6:.0f} MB/s"
labels = {"rand_read": "read IOPS (4 KiB)", "rand_write": "write IOPS (4 KiB)",
          "seq_read": "read bandwidth (1 MiB)", "seq_write": "write bandwidth (1 MiB)"}
print("| figure | fio best (QD) | weir run 1 (depth) | weir run 2 (depth) | run1/fio | run2/fio | run2/run1 |")
print("|---|---|---|---|---|---|---|")
for name in ("rand_read", "rand_write", "seq_read", "seq_write"):
    fv, fq = fio.get(name, (0.0, 0))
    (a, ad), (b, bd) = runs[0][0][name], runs[1][0][name]
    r1 = a / fv if fv else float("nan")
    r2 = b / fv if fv else float("nan")
    rr = b / a if a else float("nan")
    print(f"| {labels[name]} | {fmt(name, fv)} ({fq}) | {fmt(name, a)} ({ad}) | {fmt(name, b)} ({bd}) | {r1:.3f} | {r2:.3f} | {rr:.3f} |")
print(f"\nfio: {sys.argv[2]} jobs, one file each; weir: its default shards (one per CPU)")
print(f"weir tune wall time: run 1 {runs[0][1]:.1f} s, run 2 {runs[1][1]:.1f} s (iotune default: ~144 s)")
print(f"physical sector: run 1 {runs[0][2]} B, run 2 {runs[1][2]} B")
EOF
