#!/usr/bin/env bash
# tune-fio-depths.sh: is `weir tune`'s chosen depth as good as fio's best, and does tune repeat
# as well as fio does, in the same minutes on the same directory.
#
# Usage: bench/tune-fio-depths.sh [DIR]      (default DIR: /var/tmp/weir-tune-depths)
#
# Order, interleaved so both tools see the same disk:
#   tune run 1 (default 30 s, with --cross-check), fio depth sweep A, tune run 2 (the same),
#   fio depth sweep B.
# A fio sweep measures each figure at every total depth in DEPTHS (1 2 4 ... 128) at the
# figure's request size (4 KiB random, 1 MiB sequential), JOBS jobs with a file each, RAMP_S
# + RUN_S per point, io_uring with registered buffers and files, O_DIRECT, jobs pinned one
# per CPU (the shape tune and its cross-check use). File regimes as tune's: reads and random
# writes on data written once by 1 MiB sequential writes (DATA_BYTES per job; the random
# writes after the reads), sequential writes into a new sparse file per point (fresh
# extents). Each fio point reads its files from their start and wraps at DATA_BYTES, as tune's
# sequential reads read the first GiB per shard of their data from its start in every
# measurement: both re-read what the point before read.
# Printed per figure: tune's two figures and their spread ((max-min)/mean), fio's rate at
# tune's chosen depth and fio's best over DEPTHS in each sweep, fio's own spread at its best
# depth between the two sweeps, and tune's figure / fio's best; then the cross-check ratios
# of both tune runs and each tune's run time. The load average is printed at the start and
# the end: other work on the machine moves everything here.
#
# Environment: WEIR (default target/release/weir, built if missing), JOBS (nproc), DEPTHS,
# RAMP_S (0.5), RUN_S (1.5), DATA_BYTES (1G per job), KEEP (a directory to keep the JSON in).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-/var/tmp/weir-tune-depths}
WEIR=${WEIR:-target/release/weir}
JOBS=${JOBS:-$(nproc)}
DEPTHS=${DEPTHS:-"1 2 4 8 16 32 64 128"}
RAMP_S=${RAMP_S:-0.5}
RUN_S=${RUN_S:-1.5}
DATA_BYTES=${DATA_BYTES:-1G}
command -v fio >/dev/null || { echo "fio is not installed: scripts/install-deps.sh installs it" >&2; exit 1; }
[[ -x "$WEIR" ]] || cargo build --release -p weir
mkdir -p "$DIR"
WORK=$(mktemp -d)
cleanup() { rm -f "$DIR"/fio-data.* "$DIR"/fio-fresh.*; rm -rf "$WORK"; rmdir "$DIR" 2>/dev/null || true; }
trap cleanup EXIT
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) dir $DIR jobs $JOBS fio $(fio --version)"

fio_point() { # rw bs total_depth prefix size -> rate (IOPS for random, bytes/s for sequential)
    local rw=$1 bs=$2 depth=$3 prefix=$4 jobs=$(( $3 < JOBS ? $3 : JOBS ))
    local per=$(( depth / jobs ))
    fio --output-format=json --thread --group_reporting --direct=1 --rw="$rw" --bs="$bs" \
        --norandommap --randrepeat=0 --fallocate=none --time_based --runtime="${RUN_S}s" \
        --ramp_time="${RAMP_S}s" --ioengine=io_uring --fixedbufs=1 --registerfiles=1 \
        --numjobs="$jobs" --cpus_allowed="0-$((JOBS - 1))" --cpus_allowed_policy=split \
        --name=p --directory="$DIR" --filename_format="$prefix.\$jobnum" --size="$5" \
        --iodepth="$per" 2>/dev/null |
        python3 -c "import json,sys; d=json.load(sys.stdin)['jobs'][0]; s=d['read'] if d['read']['io_bytes'] else d['write']; print(s['iops'] if '$rw'.startswith('rand') else s['bw_bytes'])"
}

fio_sweep() { # name -> $WORK/name.txt: "figure depth rate" lines
    local out=$WORK/$1.txt
    : >"$out"
    fio --name=lay --directory="$DIR" --filename_format='fio-data.$jobnum' --numjobs="$JOBS" \
        --size="$DATA_BYTES" --rw=write --bs=1M --iodepth=1 --direct=1 --ioengine=io_uring \
        --output-format=terse >/dev/null
    for d in $DEPTHS; do echo "read_iops $d $(fio_point randread 4k "$d" fio-data "$DATA_BYTES")" >>"$out"; done
    for d in $DEPTHS; do echo "read_bandwidth $d $(fio_point read 1M "$d" fio-data "$DATA_BYTES")" >>"$out"; done
    for d in $DEPTHS; do echo "write_iops $d $(fio_point randwrite 4k "$d" fio-data "$DATA_BYTES")" >>"$out"; done
    for d in $DEPTHS; do
        echo "write_bandwidth $d $(fio_point write 1M "$d" fio-fresh 16G)" >>"$out"
        rm -f "$DIR"/fio-fresh.*
    done
    rm -f "$DIR"/fio-data.*
}

tune_run() { # name
    local t0 t1
    t0=$(date +%s.%N)
    "$WEIR" tune --dir "$DIR" --cross-check --format json --properties-file "$WORK/$1.yaml" \
        >"$WORK/$1.json" 2>"$WORK/$1.err"
    t1=$(date +%s.%N)
    echo "$1: exit 0, wall $(python3 -c "print(round($t1 - $t0, 1))") s"
}

tune_run tune1
fio_sweep fioA
tune_run tune2
fio_sweep fioB
echo "end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
[[ -n "${KEEP:-}" ]] && mkdir -p "$KEEP" && cp "$WORK"/* "$KEEP"/

python3 - "$WORK" <<'EOF'
import json, sys
work = sys.argv[1]
tunes = [json.load(open(f"{work}/tune{i}.json")) for i in (1, 2)]
def sweep(name):
    out = {}
    for line in open(f"{work}/{name}.txt"):
        fig, depth, rate = line.split()
        out.setdefault(fig, {})[int(depth)] = float(rate)
    return out
sweeps = [sweep("fioA"), sweep("fioB")]
figs = ["read_iops", "write_iops", "read_bandwidth", "write_bandwidth"]
def fmt(fig, v):
    return f"{v/1e3:.1f}K" if fig.endswith("iops") else f"{v/1e6:.0f}MB/s"
print("| figure | regime | tune 1 | tune 2 | tune spread | chosen depth 1/2 | fio at chosen (A/B) | fio best (A/B, depth) | fio spread at best | chosen/best (A/B) | tune/fio best (median) |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for fig in figs:
    f = [t["dirs"][0]["report"][fig] for t in tunes]
    vals = [x["value"] for x in f]
    spread = (max(vals) - min(vals)) / (sum(vals) / 2)
    chosen = [x["depth_best"] for x in f]
    def near(s, d):
        return s[min(s, key=lambda k: abs(k - d))]
    at_chosen = [near(sweeps[i][fig], chosen[i]) for i in range(2)]
    best = [max(s[fig].items(), key=lambda kv: kv[1]) for s in sweeps]
    fio_spread = abs(best[0][1] - best[1][1]) / ((best[0][1] + best[1][1]) / 2)
    ratio_chosen = [at_chosen[i] / best[i][1] for i in range(2)]
    tune_over_best = sorted(vals[i] / best[i][1] for i in range(2))
    print(f"| {fig} | {f[0]['regime']} | {fmt(fig, vals[0])} | {fmt(fig, vals[1])} | {100*spread:.0f}% | {chosen[0]}/{chosen[1]} | "
          f"{fmt(fig, at_chosen[0])}/{fmt(fig, at_chosen[1])} | {fmt(fig, best[0][1])} @{best[0][0]}, {fmt(fig, best[1][1])} @{best[1][0]} | "
          f"{100*fio_spread:.0f}% | {ratio_chosen[0]:.2f}/{ratio_chosen[1]:.2f} | {sum(tune_over_best)/2:.2f} |")
print()
print("cross-check (weir/fio median of 3 pairs, range; tune's figure / fio's median):")
for i, t in enumerate(tunes, 1):
    c = t["dirs"][0]["report"].get("cross_check") or {}
    row = [f"{x['figure']} {x['ratio_median']:.2f} ({x['ratio_min']:.2f}..{x['ratio_max']:.2f}; fio spread {100*x['fio_spread']:.0f}%; tune/fio {x['tune_over_fio']:.2f})" for x in c.get("figures", [])]
    print(f"  tune {i} (tuning {t['tune_elapsed_s']:.1f} s, whole command {t['elapsed_s']:.1f} s): " + "; ".join(row))
print()
print("cache probe (tune reads its first data twice before the sequential reads; >= 1.5x = cached below the device):")
for i, t in enumerate(tunes, 1):
    p = t["dirs"][0]["report"].get("cache_probe")
    if p:
        print(f"  tune {i}: {p['bytes'] >> 20} MiB at x{p['load']['depth']}: first read {p['first_read_bytes_per_s']/1e6:.0f} MB/s, "
              f"re-read {p['re_read_bytes_per_s']/1e6:.0f} MB/s ({p['ratio']:.2f}x); read bandwidth regime {t['dirs'][0]['report']['read_bandwidth']['regime']}")
print()
print("fio sweeps (rate per total depth):")
for name, s in zip("AB", sweeps):
    for fig in figs:
        print(f"  {name} {fig}: " + " ".join(f"{d}:{fmt(fig, r)}" for d, r in sorted(s[fig].items())))
EOF
