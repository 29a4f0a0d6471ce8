#!/usr/bin/env bash
# qos.sh: weir's scheduler against the kernel's on one disk (a benchmark, not a test).
#
# Workload (the seeds' and peers.md's): 4 KiB random reads, parallelism 4, class `query`
# (shares 1000), against 128 KiB sequential writes, parallelism 64, class `compaction`
# (shares 100), DURATION each (default 10s), one shard. Writes go to a fresh sparse 32 GB file
# on both sides (weir's `pretruncate`, fio's truncate + fallocate=none), not wrapped in rows of up to ~9 s. Rows:
#   reads alone, writes alone, reads alone through weir's scheduler, mixed without a scheduler,
#   mixed with weir's scheduler (io-properties measured on this disk), and the same mix with fio
#   under the kernel's mq-deadline, kyber and bfq; then a sweep of the latency goal
#   (0.25, 0.5, 1, 2, 4 ms) printing read p99 against write MB/s. One table with ratios at the end.
# The four rows the targets compare (reads alone, reads through the scheduler, writes alone,
# mixed with weir) run ROUNDS times in rotated order: the disk under the development VM moves
# by 10-20% within minutes, so a target is judged on each round's own pair and the table
# prints the medians and every round's ratios.
#
# Usage: bench/qos.sh [DIR]     (default /var/tmp/weir-qos; must be on DEV)
# Environment: DURATION (10s), DEV (the disk under DIR, default vda), WEIR (a built weir;
#   default: cargo build --release -p weir), GOAL (0.75ms), TUNE_DURATION (30s),
#   SWEEP ("0.25ms 0.5ms 1ms 2ms 4ms"; SWEEP="" skips the sweep), ROUNDS (3), BENCH_LOCK (/work/bench.lock if present),
#   PROPS (use this io-properties file), PROPS_FROM (tune | fio: how to measure the disk when
#   PROPS is not given; fio measures 4 KiB random IOPS at QD32 and 1 MiB bandwidth at QD8),
#   DUPLEX (true: add `duplex: true` to a measured or given model that does not say).
# Against the map: the same run maps the disk with `weir explore --quick` (fresh
# writes, like the rows' writes; goal GOAL), then runs the query class open-loop at the
# frontier's read rate QUERY_RPS (Poisson arrivals, latency from arrival to completion, as the
# map measures it) beside the compaction writes, through the scheduler with the tuned model
# and with the explored model (its io-properties.yaml), ROUNDS rounds each, order rotated. It
# prints scheduled writes / frontier writes at that read rate and read p99 vs the goal: the
# median over rounds and the lowest round (target with the explored model: median >= 0.9,
# no round below 0.8, read p99 <= goal).
#   MAP (an explore.json to use instead of mapping; MAP=none skips the map rows),
#   MAP_ARGS (extra `weir explore` flags, e.g. "--budget 5m" or "--quick"; default --quick),
#   QUERY_RPS (default: the mixed frontier point nearest half the largest read rate),
#   ALT_GOAL (e.g. 492us: a third model row, "explored-alt", runs the explored model with
#   this in-disk goal instead of the file's, in the same rotated rounds: an A/B of the goal),
#   MAP_ONLY (1: only the map rows: no paired rows, no unscheduled row, no kernel-scheduler
#   rows, no sweep; vda's kernel scheduler is never switched. With PROPS= a tuned model and
#   MAP= a map it runs in ROUNDS x 2 x DURATION).
#   KERNEL_ROWS (1; 0 skips the fio rows under the kernel's schedulers, and the script then
#   never writes DEV's scheduler file: for a machine whose disk others are benchmarking on).
# Needs root for the kernel-scheduler rows (it switches /sys/block/DEV/queue/scheduler and
# ALWAYS restores the original, also on Ctrl-C). Holds BENCH_LOCK for the whole run.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DIR=${1:-/var/tmp/weir-qos}
DURATION=${DURATION:-10s}
DEV=${DEV:-vda}
GOAL=${GOAL:-0.75ms}
TUNE_DURATION=${TUNE_DURATION:-30s}
SWEEP=${SWEEP-"0.25ms 0.5ms 1ms 2ms 4ms"}
ROUNDS=${ROUNDS:-3}
PROPS_FROM=${PROPS_FROM:-tune}
MAP_ONLY=${MAP_ONLY:-}
MAP=${MAP:-}
MAP_ARGS=${MAP_ARGS:---quick}
QUERY_RPS=${QUERY_RPS:-}
ALT_GOAL=${ALT_GOAL:-}
DUPLEX=${DUPLEX:-true}
KERNEL_ROWS=${KERNEL_ROWS:-1}
[[ $KERNEL_ROWS == 0 || $KERNEL_ROWS == 1 ]] || {
    echo "qos: KERNEL_ROWS=$KERNEL_ROWS: accepted values are 0 and 1" >&2
    exit 2
}
REPO=$(cd "$(dirname "$0")/.." && pwd)
SCHED_FILE=/sys/block/$DEV/queue/scheduler
DURATION_S=$(python3 -c "import sys; s=sys.argv[1]; print(float(s[:-2])/1000 if s.endswith('ms') else float(s.rstrip('s')))" "$DURATION")

for tool in fio python3; do
    command -v "$tool" >/dev/null || { echo "qos: $tool is required" >&2; exit 2; }
done
if [[ -z "${WEIR:-}" ]]; then
    (cd "$REPO" && cargo build --release -p weir >&2)
    WEIR="${CARGO_TARGET_DIR:-$REPO/target}/release/weir"
fi
[[ -x "$WEIR" ]] || { echo "qos: no weir binary at $WEIR" >&2; exit 2; }

bench_lock qos

mkdir -p "$DIR"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/weir-qos.XXXXXX")
ORIGINAL_SCHED=""
if [[ $KERNEL_ROWS == 1 && -w $SCHED_FILE ]]; then
    ORIGINAL_SCHED=$(sed -E 's/.*\[([^]]+)\].*/\1/' "$SCHED_FILE")
fi
restore() {
    if [[ -n "$ORIGINAL_SCHED" ]]; then
        echo "$ORIGINAL_SCHED" >"$SCHED_FILE" 2>/dev/null || true
    fi
    rm -rf "$WORK"
    rm -f "$DIR"/weir-*.data "$DIR"/fio-qos-*
}
trap restore EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- job files
reads_job() {
    cat <<EOF
- name: reads
  type: randread
  shards: [0]
  data_size: 1GB
  shard_info:
    parallelism: 4
    reqsize: 4kB
    class: query
    shares: 1000
EOF
}
writes_job() {
    cat <<EOF
- name: writes
  type: seqwrite
  shards: [0]
  data_size: 32GB
  prepare: pretruncate
  shard_info:
    parallelism: 64
    reqsize: 128kB
    class: compaction
    shares: 100
EOF
}
reads_job >"$WORK/reads.yaml"
writes_job >"$WORK/writes.yaml"
{ reads_job; writes_job; } >"$WORK/mixed.yaml"

# ---------------------------------------------------------------- io-properties
PROPS_FILE=${PROPS:-}
PROPS=$WORK/io-properties.yaml
if [[ -n "$PROPS_FILE" ]]; then
    cp "$PROPS_FILE" "$PROPS"
    echo "qos: io-properties from $PROPS_FILE:" >&2
elif [[ "$PROPS_FROM" == tune ]] \
    && "$WEIR" tune --dir "$DIR" --duration "$TUNE_DURATION" --properties-file "$PROPS" >&2 \
    && [[ -s "$PROPS" ]]; then
    echo "qos: io-properties from weir tune:" >&2
else
    echo "qos: measuring the four numbers with fio (4 KiB random at QD32, 1 MiB sequential at QD8)" >&2
    fio_rate() { # rw bs qd -> iops bytes_per_s
        fio --name=p --filename="$DIR/fio-qos-props" --size=4G --direct=1 --ioengine=io_uring \
            --rw="$1" --bs="$2" --iodepth="$3" --ramp_time=1 --runtime=4 --time_based \
            --output-format=json 2>/dev/null | python3 -c 'import json,sys
j = json.load(sys.stdin)["jobs"][0]
s = j["read"] if j["read"]["io_bytes"] else j["write"]
print(int(s["iops"]), int(s["bw_bytes"]))'
    }
    read -r WIOPS _ < <(fio_rate randwrite 4k 32)
    read -r _ WBW < <(fio_rate write 1M 8)
    read -r RIOPS _ < <(fio_rate randread 4k 32)
    read -r _ RBW < <(fio_rate read 1M 8)
    printf 'disks:\n  - mountpoint: %s\n    read_iops: %s\n    read_bandwidth: %s\n    write_iops: %s\n    write_bandwidth: %s\n' \
        "$DIR" "$RIOPS" "$RBW" "$WIOPS" "$WBW" >"$PROPS"
fi
# A measured model says nothing about duplex (neither iotune nor weir tune measures it); this
# disk serves reads beside writes, and the README's runs 9-11 used `duplex: true`
# (docs/design/scheduler.md). DUPLEX=false keeps the file half-duplex.
if [[ "$DUPLEX" == true ]] && ! grep -q 'duplex:' "$PROPS"; then
    [[ -n "$(tail -c1 "$PROPS")" ]] && echo >>"$PROPS"
    echo "    duplex: true" >>"$PROPS"
fi
cat "$PROPS" >&2

# ---------------------------------------------------------------- rows
RESULTS=$WORK/results.jsonl
weir_row() { # label jobfile [weir run flags...]; ROUND (if set) tags the row
    local label=$1 jobs=$2
    shift 2
    echo "qos: $label" >&2
    local metrics=()
    rm -f "$WORK/row.prom"
    # The write lane's controller counters of the scheduled mixed rows (which one held the
    # writes: window, bucket, depth cap, tail guard).
    [[ $label == mixed,\ weir* ]] && metrics=(--metrics "$WORK/row.prom")
    "$WEIR" run "$jobs" --dir "$DIR" --duration "$DURATION" --shards 1 --output json \
        "${metrics[@]}" "$@" >"$WORK/row.json"
    python3 - "$label" "$WORK/row.json" "${ROUND:-}" "$WORK/row.prom" >>"$RESULTS" <<'EOF'
import json, os, re, sys
label, path, rnd, prom = sys.argv[1:5]
r = json.load(open(path))
row = {"label": label, "round": int(rnd) if rnd else None}
for j in r["jobs"]:
    if j["name"] == "reads":
        row.update(read_iops=j["iops"], read_p50_us=j["latency_us"]["p50"],
                   read_p99_us=j["latency_us"]["p99"],
                   read_queue_p99_us=j.get("queue_latency_us", {}).get("p99"),
                   read_disk_p99_us=j.get("disk_latency_us", {}).get("p99"))
    if j["name"] == "writes":
        # The regime the writes ran in (pretruncate: a fresh sparse file every row, removed
        # after it), so "writes alone" and the mixed row are seen to write alike.
        row.update(write_mbps=j["bandwidth_bytes_per_s"] / 1e6, write_prepare=j.get("prepare"))
# The scheduler's state at the end of the row: what a round over the goal had (its window,
# measured drain speed, tail guard and run-time K; docs/design/scheduler.md).
s = r.get("scheduler") or {}
if s.get("limiting"):
    row.update(window_us=s.get("latency_goal_us"), speed_factor=s.get("speed_factor"),
               tail_guard=s.get("tail_guard"), runtime_k=s.get("rate_factor"))
if os.path.exists(prom):
    lane = {}
    for line in open(prom):
        m = re.match(r'weir_io_lane_(\w+)\{[^}]*direction="write"\} (\S+)', line)
        if m:
            lane[m.group(1)] = float(m.group(2))
    n = max(lane.get("periods", 0.0), 1.0)
    row["write_lane"] = (
        f"speed {lane.get('speed_factor', 0):.2f} K {lane.get('rate_factor', 0):.2f} guard "
        f"{lane.get('tail_guard', 0):.2f}, window {lane.get('window_sec', 0) * 1e6:.0f} us; of "
        f"{n:.0f} periods window bound {lane.get('window_bound_periods', 0) / n:.2f}, bucket bound "
        f"{lane.get('bucket_bound_periods', 0) / n:.2f}, solo probe {lane.get('solo_probe_periods', 0) / n:.2f}; "
        f"depth cap {lane.get('depth_cap_engagements', 0):.0f} engagements, on "
        f"{lane.get('depth_cap_periods', 0) * lane.get('period_sec', 0):.2f} s; unloaded "
        f"{lane.get('unloaded_sec', 0) * 1e6:.0f} us")
print(json.dumps(row))
EOF
}

fio_row() { # kernel-scheduler
    local sched=$1
    if [[ -z "$ORIGINAL_SCHED" ]]; then
        echo "qos: not switching $SCHED_FILE (KERNEL_ROWS=$KERNEL_ROWS, or not root); skipping fio/$sched" >&2
        return
    fi
    if ! grep -qw "$sched" "$SCHED_FILE"; then
        echo "qos: kernel has no $sched; skipping" >&2
        return
    fi
    echo "$sched" >"$SCHED_FILE"
    echo "qos: fio mixed under $sched" >&2
    # Like weir's writes job: a fresh sparse 32 GB file that a row does not wrap (9 s at 3.5 GB/s), so both sides
    # pay for allocating writes (on XFS these take about twice as long in the disk as
    # overwrites of written blocks, which a reused file would give fio).
    rm -f "$DIR/fio-qos-writes"
    truncate -s 32G "$DIR/fio-qos-writes"
    fio --output-format=json --direct=1 --ioengine=io_uring --time_based --runtime="$DURATION_S" \
        --name=reads --filename="$DIR/fio-qos-reads" --size=1G --rw=randread --bs=4k --iodepth=4 \
        --name=writes --filename="$DIR/fio-qos-writes" --size=32G --fallocate=none --rw=write \
        --bs=128k --iodepth=64 \
        >"$WORK/fio.json" 2>/dev/null
    echo "$ORIGINAL_SCHED" >"$SCHED_FILE"
    python3 - "fio mixed, $sched" "$WORK/fio.json" >>"$RESULTS" <<'EOF'
import json, sys
label, path = sys.argv[1], sys.argv[2]
jobs = {j["jobname"]: j for j in json.load(open(path))["jobs"]}
r, w = jobs["reads"]["read"], jobs["writes"]["write"]
pct = r["clat_ns"]["percentile"]
print(json.dumps({"label": label, "read_iops": r["iops"],
                  "read_p50_us": pct["50.000000"] / 1e3, "read_p99_us": pct["99.000000"] / 1e3,
                  "write_mbps": w["bw_bytes"] / 1e6}))
EOF
}

# fio needs its files laid out before the timed rows.
[[ "$MAP_ONLY" == 1 ]] || fio --name=lay --filename="$DIR/fio-qos-reads" --size=1G --rw=write \
    --bs=1M --direct=1 --ioengine=io_uring --iodepth=8 >/dev/null 2>&1

paired_row() { # index in the rotation
    case $1 in
    0) weir_row "reads alone" "$WORK/reads.yaml" ;;
    1) weir_row "reads alone, weir scheduler" "$WORK/reads.yaml" --io-properties "$PROPS" \
        --latency-goal "$GOAL" ;;
    2) weir_row "writes alone" "$WORK/writes.yaml" ;;
    3) weir_row "mixed, weir goal $GOAL" "$WORK/mixed.yaml" --io-properties "$PROPS" \
        --latency-goal "$GOAL" ;;
    esac
}
if [[ "$MAP_ONLY" != 1 ]]; then
    for ((round = 1; round <= ROUNDS; round++)); do
        for ((k = 0; k < 4; k++)); do
            ROUND=$round paired_row $(((k + round - 1) % 4))
        done
    done
    weir_row "mixed, no scheduler" "$WORK/mixed.yaml" --io-properties "$PROPS" --no-scheduler
    for sched in mq-deadline kyber bfq; do
        fio_row "$sched"
    done
    for goal in $SWEEP; do
        weir_row "sweep: weir goal $goal" "$WORK/mixed.yaml" --io-properties "$PROPS" --latency-goal "$goal"
    done
fi

# ---------------------------------------------------------------- against the map
if [[ "$MAP" != none ]]; then
    if [[ -z "$MAP" ]]; then
        echo "qos: mapping the disk: weir explore $MAP_ARGS --write-regime fresh --goal $GOAL" >&2
        # shellcheck disable=SC2086  # MAP_ARGS is a list of flags
        "$WEIR" explore --dir "$DIR" --write-regime fresh --goal "$GOAL" --out "$WORK/map" \
            $MAP_ARGS >&2
        MAP=$WORK/map/explore.json
    fi
    EXPLORED=$(dirname "$MAP")/io-properties.yaml
    # The query rate and the frontier's writes there (linear between frontier entries).
    # (`read` fails on no input: the map had no query rate, said on stderr; skipped below.)
    read -r QUERY_RPS FRONTIER_W < <(python3 - "$MAP" "$QUERY_RPS" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
if m.get("write_regime") != "fresh":
    print(f"qos: warning: the map measured {m.get('write_regime')} writes; the rows write a "
          "fresh file, so the frontier is another regime's", file=sys.stderr)
f = sorted((p["read_iops"], p["write_bytes_per_s"]) for p in m["frontier"])
mixed = [p for p in f if p[0] > 0 and p[1] > 0]
if not mixed:
    sys.exit("qos: the map has no mixed frontier point (no load with reads and writes was "
             "within the goal): raise GOAL or map a quieter disk")
if sys.argv[2]:
    r = float(sys.argv[2])
else:
    top = max(p[0] for p in mixed)
    r = min(mixed, key=lambda p: abs(p[0] - top / 2))[0]
w = None
for (r0, w0), (r1, w1) in zip(f, f[1:]):
    if r0 <= r <= r1:
        w = w0 if r1 == r0 else w0 + (w1 - w0) * (r - r0) / (r1 - r0)
        break
if w is None:
    sys.exit(f"qos: QUERY_RPS {r:.0f} is outside the map's frontier ({f[0][0]:.0f}-{f[-1][0]:.0f} reads/s)")
print(round(r), round(w))
EOF
    ) || FRONTIER_W=""
    if [[ -z "${FRONTIER_W:-}" ]]; then
        echo "qos: no query rate on the map (above); skipping the map rows" >&2
    elif [[ ! -s "$EXPLORED" ]]; then
        echo "qos: $EXPLORED is missing (the map has no fit); skipping the map rows" >&2
    else
        echo "qos: query class at $QUERY_RPS reads/s; the frontier writes $FRONTIER_W B/s there" >&2
        # Four fibers share the rate (rps is per fiber), Poisson gaps, as explore's reads.
        sed -e "s/    parallelism: 4/    parallelism: 4\n    rps: $(((QUERY_RPS + 3) / 4))/" \
            -e 's/^  data_size: 1GB/  data_size: 1GB\n  options:\n    pause_distribution: poisson/' \
            "$WORK/reads.yaml" >"$WORK/query.yaml"
        { cat "$WORK/query.yaml"; writes_job; } >"$WORK/map-mixed.yaml"
        # The tuned model runs with GOAL as its in-disk window; the explored model with the in-disk goal explore derived for the map's
        # goal (io-properties.yaml `weir_latency_goal_us`: no --latency-goal, so weir run
        # takes it from the file; docs/design/explore.md).
        EXPLORED_GOAL=$(sed -n 's/^ *weir_latency_goal_us: *//p' "$EXPLORED")
        if [[ -n "$EXPLORED_GOAL" ]]; then
            echo "qos: explored model: in-disk goal $EXPLORED_GOAL us from the map" >&2
        else
            echo "qos: explored model: no weir_latency_goal_us in $EXPLORED, so weir run takes 0.75ms" >&2
        fi
        base=("tuned:$PROPS" "explored:$EXPLORED")
        [[ -n "$ALT_GOAL" ]] && base+=("explored-alt:$EXPLORED")
        for ((round = 1; round <= ROUNDS; round++)); do
            # Rotated by one each round, so no model always runs first or last.
            models=()
            for ((k = 0; k < ${#base[@]}; k++)); do
                models+=("${base[(k + round - 1) % ${#base[@]}]}")
            done
            for m in "${models[@]}"; do
                goal_args=(--latency-goal "$GOAL")
                [[ ${m%%:*} == explored ]] && goal_args=()
                [[ ${m%%:*} == explored-alt ]] && goal_args=(--latency-goal "$ALT_GOAL")
                ROUND=$round weir_row "map: query at $QUERY_RPS/s, ${m%%:*} model" \
                    "$WORK/map-mixed.yaml" --io-properties "${m#*:}" "${goal_args[@]}"
            done
        done
    fi
fi

# ---------------------------------------------------------------- table
python3 - "$RESULTS" "$GOAL" "$DURATION" "${FRONTIER_W:-}" "${QUERY_RPS:-}" "${EXPLORED_GOAL:-}" "$ALT_GOAL" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
frontier_w, query_rps, explored_goal, alt_goal = sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
goal, duration = sys.argv[2], sys.argv[3]
goal_us = float(goal[:-2]) * 1000 if goal.endswith("ms") else float(goal[:-2])
FIELDS = ("read_iops", "read_p50_us", "read_p99_us", "write_mbps")
WEIR = f"mixed, weir goal {goal}"

# One line per label in first-seen order; rows repeated over rounds show their medians.
labels, by_label = [], {}
for r in rows:
    if r["label"] not in by_label:
        labels.append(r["label"])
        by_label[r["label"]] = []
    by_label[r["label"]].append(r)
def median_row(label):
    rs = by_label.get(label, [])
    out = {"label": label, "n": len(rs)}
    for k in FIELDS:
        vals = [r[k] for r in rs if k in r]
        if vals:
            out[k] = statistics.median(vals)
    return out
table = [median_row(l) for l in labels]
solo_r, solo_w = median_row("reads alone"), median_row("writes alone")
def f(v, fmt):
    return format(v, fmt) if isinstance(v, (int, float)) else "-"
print(f"\nqos: 4 KiB randread x4 (query, 1000) vs 128 KiB seq write x64 (compaction, 100), {duration} per row")
print(f"{'row':44} {'read IOPS':>10} {'p50 us':>8} {'p99 us':>9} {'write MB/s':>10} {'p99/solo':>9} {'write/solo':>10}")
for r in table:
    p99_ratio = r["read_p99_us"] / solo_r["read_p99_us"] if "read_p99_us" in r and "read_p99_us" in solo_r else None
    w_ratio = r["write_mbps"] / solo_w["write_mbps"] if "write_mbps" in r and "write_mbps" in solo_w else None
    label = r["label"] + (f" (median of {r['n']})" if r["n"] > 1 else "")
    print(f"{label:44} {f(r.get('read_iops'), '10.0f')} {f(r.get('read_p50_us'), '8.0f')} "
          f"{f(r.get('read_p99_us'), '9.0f')} {f(r.get('write_mbps'), '10.0f')} "
          f"{f(p99_ratio, '9.2f')} {f(w_ratio, '10.2f')}")

# Each target is judged on the rows of one round (run within a minute of each other).
rounds = sorted({r["round"] for r in rows if r.get("round")})
def in_round(label, n):
    return next((r for r in by_label.get(label, []) if r.get("round") == n), None)
per_round = []
for n in rounds:
    ra, rs = in_round("reads alone", n), in_round("reads alone, weir scheduler", n)
    wa, mw = in_round("writes alone", n), in_round(WEIR, n)
    if not (ra and rs and wa and mw):
        continue
    per_round.append({"round": n, "p99": mw["read_p99_us"], "limit": goal_us + ra["read_p99_us"],
                      "write_share": mw["write_mbps"] / wa["write_mbps"],
                      "read_share": rs["read_iops"] / ra["read_iops"],
                      "mixed_w": mw["write_mbps"], "alone_w": wa["write_mbps"],
                      "regimes": (wa.get("write_prepare"), mw.get("write_prepare")),
                      "lane": mw.get("write_lane")})
if per_round:
    print("\nper round (rows of one round ran back to back, order rotated):")
    for p in per_round:
        print(f"  round {p['round']}: read p99 {p['p99']:.0f} us (limit {p['limit']:.0f}), writes "
              f"{p['write_share']:.2f} of alone ({p['mixed_w']:.0f} / {p['alone_w']:.0f} MB/s; "
              f"writes prepared {p['regimes'][0]} alone, {p['regimes'][1]} mixed), pure reads through the scheduler {p['read_share']:.3f}")
        if p["lane"]:
            print(f"    mixed row's write lane: {p['lane']}")
    med = lambda k: statistics.median(p[k] for p in per_round)
    met = lambda ok: "yes" if ok else "NO"
    held = sum(p["p99"] <= p["limit"] for p in per_round)
    print("\ntargets (medians of the per-round figures):")
    print(f"  read p99 {med('p99'):.0f} us <= goal + solo p99 = {med('limit'):.0f} us: "
          f"{met(med('p99') <= med('limit'))} (held in {held} of {len(per_round)} rounds)")
    print(f"  writes {med('write_share'):.2f} of writes alone (>= 0.85): {met(med('write_share') >= 0.85)}")
    print(f"  pure 4 KiB randread through the scheduler: {med('read_share'):.3f} of unscheduled IOPS "
          f"(>= 0.95): {met(med('read_share') >= 0.95)}")
weir = median_row(WEIR)
if "write_mbps" in weir:
    kernel = [r for r in table if r["label"].startswith("fio mixed") and r["write_mbps"] <= weir["write_mbps"]]
    if kernel:
        best = min(kernel, key=lambda r: r["read_p99_us"])
        x = best["read_p99_us"] / weir["read_p99_us"]
        print(f"  vs best kernel scheduler at <= weir's write MB/s ({best['label']}): read p99 {x:.1f}x lower "
              f"(>= 4x): {'yes' if x >= 4 else 'NO'}")
    else:
        print("  no kernel-scheduler row wrote at or below weir's write MB/s")
    # The sweep is weir's read-tail/write-rate curve: the first goal that writes as much as a
    # kernel row shows what that write rate costs the reads under each.
    sweep = [r for r in table if r["label"].startswith("sweep:")]
    for k in (r for r in table if r["label"].startswith("fio mixed")):
        match = next((s for s in sweep if s["write_mbps"] >= k["write_mbps"]), None)
        if match:
            print(f"  at {k['label'].split(', ', 1)[1]}'s write rate ({k['write_mbps']:.0f} MB/s): {match['label'][7:]} "
                  f"read p99 {match['read_p99_us']:.0f} us vs {k['read_p99_us']:.0f} us")
        else:
            print(f"  no sweep goal wrote as much as {k['label'].split(', ', 1)[1]} ({k['write_mbps']:.0f} MB/s)")

# Against the map: scheduled writes as a share of the frontier's at the query rate.
if frontier_w:
    fw = float(frontier_w)
    print(f"\nagainst the map (query class at {query_rps} reads/s, open loop; frontier writes "
          f"{fw / 1e6:.0f} MB/s there; goal read p99 {goal_us:.0f} us from arrival):")
    windows = {"tuned": f"in-disk goal {goal}",
               "explored": f"in-disk goal {explored_goal} us from the map" if explored_goal else "in-disk goal 0.75ms (the map wrote none)",
               "explored-alt": f"the map's model, in-disk goal {alt_goal} (ALT_GOAL)"}
    for model in ("tuned", "explored", "explored-alt"):
        rs = [r for l, rr in by_label.items() if l.startswith("map:") and l.endswith(f"{model} model") for r in rr]
        if not rs:
            continue
        shares = [r.get("write_mbps", 0) * 1e6 / fw for r in rs]
        p99s = [r.get("read_p99_us", float("inf")) for r in rs]
        got = [r.get("read_iops", 0) for r in rs]
        within = sum(p <= goal_us for p in p99s)
        line = (f"  {model:8} model ({windows[model]}): writes {statistics.median(shares):.2f} of the frontier (median of "
                f"{len(rs)}; lowest round {min(shares):.2f}; rounds {' '.join(f'{x:.2f}' for x in shares)}), "
                f"read p99 {statistics.median(p99s):.0f} us (within the goal in {within} of {len(rs)}), "
                f"reads {statistics.median(got):.0f}/s")
        if model.startswith("explored"):
            ok = statistics.median(shares) >= 0.9 and min(shares) >= 0.8 and within == len(rs)
            line += f"; target (>= 0.9, no round < 0.8, p99 <= goal): {'yes' if ok else 'NO'}"
        print(line)
        # Each round's figures: which round went over and what the scheduler had then. The
        # read p99 from arrival is about its queue (wait for a place in the window) plus its
        # time in the disk; speed < 1 means the disk drained slower than modelled, a tail
        # guard < 1 that the reads' tail held the writes back.
        for r in sorted(rs, key=lambda r: r.get("round") or 0):
            g = lambda k, fmt: format(r[k], fmt) if isinstance(r.get(k), (int, float)) else "-"
            over = "OVER" if r.get("read_p99_us", float("inf")) > goal_us else "ok"
            print(f"    round {r.get('round')}: writes {r.get('write_mbps', 0) * 1e6 / fw:.2f} of the frontier "
                  f"({g('write_mbps', '.0f')} MB/s), read p99 {g('read_p99_us', '.0f')} us {over} "
                  f"(queue p99 {g('read_queue_p99_us', '.0f')}, in-disk p99 {g('read_disk_p99_us', '.0f')}), "
                  f"window {g('window_us', '.0f')} us, speed {g('speed_factor', '.2f')}, "
                  f"tail guard {g('tail_guard', '.2f')}, run-time K {g('runtime_k', '.2f')}")
EOF
