#!/usr/bin/env bash
# shares.sh: do two classes get their shares AND the whole disk? Compares weir's scheduler at
# three share splits against the same jobs unscheduled (a benchmark, not a test).
#
# Two classes doing the same op (random 4/16/128 KiB reads, then random writes over the same
# laid-out files: the overwrite regime, no block is allocated during a row), parallelism PARALLELISM (32)
# per class per shard, 2 shards, shares 1000:100,
# 1:1 and 100:1000, through weir's scheduler (the model from `weir tune` on the same
# filesystem), against the same two jobs without the scheduler (`--no-scheduler`). Every
# round runs each op x size's four rows (unscheduled, then the three share splits) in an
# order rotated by the round, so each scheduled row is judged against the unscheduled row of
# its own round (the disk moves 10-20% within minutes). Printed: every round's total MB/s,
# scheduled / unscheduled, and the share ratio measured / asked; then per op x size x split
# the median of the rounds and the spread (max - min) of the per-round ratios. Under every
# scheduled row: the backend (and the unscheduled row's), EAGAIN retries, requests in flight
# and in the disk per class, and the scheduler's lane counters from `--metrics` (speed, K,
# window, pipeline; the share of periods the window / bucket bound, the pipeline was open,
# the share gate shut, the solo probe ran; depth-cap engagements and time on, and why it
# stayed off; Little's ratio against the unloaded latency; how often run-time K was cut at a
# queue in the disk and how many cuts were undone; cross-shard stalls), so a row
# says which controller held the disk (docs/design/scheduler.md).
#
# Tiers: `vda` (DIR, default /var/tmp/weir-shares, on the virtio disk) and `zram` (a zram
# device of our own from /sys/class/zram-control/hot_add, never zram0, with ext4 on it,
# removed afterwards; CPU-bound, so the scheduler's own cost per I/O shows). TIERS picks.
#
# Time: each tier lays its four files (2 jobs x 2 shards, DATA_SIZE per job) out once, before
# its first row, and every row reuses them (`--keep-files`; weir run reuses a fully written
# file of the right size), so a row costs its DURATION plus ~0.4 s of start-up. The
# unscheduled row does not depend on the split, so each round runs it once per op x size.
# Whole vda tier (2 ops x 3 sizes x 4 rows x 3 rounds of 5 s, tune 30 s): ~7 min; zram
# tier (3 s rows): ~5 min. Every row's wall time is printed; a row that takes longer than
# DURATION + 30 s is stopped and reported (a hung row must not eat the bench's window).
#
# Usage: bench/shares.sh [DIR]
# Environment: DURATION (5s per row on vda), ZRAM_DURATION (3s per row on zram), ROUNDS (3),
#   SIZES ("4kB 16kB 128kB"), OPS ("randread randwrite"), SPLITS ("1000:100 1:1 100:1000"),
#   TIERS ("vda zram"), DATA_SIZE (1GB per job on vda), ZRAM_SIZE (4G), ZRAM_DATA_SIZE
#   (512MB per job on zram), GOAL (0.75ms), GOALS (default "$GOAL": a list such as "0.75ms
#   1.5ms" runs every split once per latency goal in the same round, rotated with the others,
#   so a reader sees what the goal costs the total),
#   TUNE_DURATION (30s),
#   PROPS (a model to use on the vda tier instead of tuning; bench/vda-quiet.yaml holds
#   figures tuned on an idle machine, for runs on a loaded one), ZRAM_PROPS (the same for the
#   zram tier: bench/zram-quiet.yaml), WEIR (a built weir),
#   PARALLELISM (32 requests per class per shard),
#   KNEE (0; 1 or on switches on K's opt-in disk-queue knee, docs/design/scheduler.md,
#   by setting WEIR_SCHED_KNEE for the scheduled rows; unscheduled rows always get 0),
#   KNEES (default "$KNEE": a list such as "0 1" runs every split once per value in the same
#   round, rotated with the others, so knee off and on share one model and one minute),
#   WRITE_PRICES (default "1": a list of factors such as "1 1.3"; each prices the model's
#   writes, IOPS and bandwidth, at that multiple of the model (a model overpriced by hand,
#   docs/design/scheduler.md) for its own set of scheduled rows),
#   WEIR_B (a second built weir, e.g. the build before a change: every split then runs once
#   per binary in the same rotated round, variant "bin A" = WEIR, "bin B" = WEIR_B; the
#   unscheduled rows always run WEIR), BRACKET ("zram:randwrite": the tier:op pairs whose
#   scheduled rows are each judged against the unscheduled rows run right before and right
#   after them, U S U S U S U in every round, instead of the round's one unscheduled row; a
#   device whose rate moves between rows (zram's writes: 1,335-1,537 MB/s between two
#   runs on an idle machine) then moves both sides alike, and each row prints the two baselines'
#   spread, flagged when it is over 5%, the target's margin; "all" brackets every row,
#   "" none),
#   BOUND (0; 1 adds, for every unequal split, the "depth bound" row: the same two jobs
#   without the scheduler, the heavier at PARALLELISM and the lighter at PARALLELISM x its
#   share of the heavier's (at least 1), so their in-flight requests, and with one op and one
#   size their rates, already stand in the asked ratio. It is what any scheduler that holds
#   the ratio can reach at this shape: the heavier class cannot have more than PARALLELISM
#   in flight per shard, and with equal latencies each class's rate is its in-flight count
#   over that latency (Little's law), so the lighter may have only its share of that. The
#   summary prints bound / unscheduled, and scheduled / bound per round),
#   BENCH_LOCK (/work/bench.lock if present).
# The zram tier needs root (it skips with the reason otherwise).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DIR=${1:-/var/tmp/weir-shares}
DURATION=${DURATION:-5s}
ZRAM_DURATION=${ZRAM_DURATION:-3s}
DATA_SIZE=${DATA_SIZE:-1GB}
ZRAM_SIZE=${ZRAM_SIZE:-4G}
ZRAM_DATA_SIZE=${ZRAM_DATA_SIZE:-512MB}
ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:-"4kB 16kB 128kB"}
OPS=${OPS:-"randread randwrite"}
SPLITS=${SPLITS:-"1000:100 1:1 100:1000"}
TIERS=${TIERS:-"vda zram"}
GOAL=${GOAL:-0.75ms}
TUNE_DURATION=${TUNE_DURATION:-30s}
# Requests per class per shard. At 32 the 1000-share class has 64 in flight at most, so at
# 1000:100 it stays backlogged only while the window is under ~70 requests; 64 separates the
# disk's depth limit from the workload's (docs/design/scheduler.md).
PARALLELISM=${PARALLELISM:-32}
# K's disk-queue knee for the scheduled rows (weir run reads WEIR_SCHED_KNEE;
# docs/design/scheduler.md): KNEE=0 and KNEE=1 runs are the A/B. Set explicitly for every row, so an inherited
# WEIR_SCHED_KNEE never decides it; the unscheduled rows always get 0.
KNEE=${KNEE:-0}
case $KNEE in
0 | 1 | on | off) ;;
*) echo "shares: KNEE=$KNEE: accepted values are 0, 1, on and off" >&2; exit 2 ;;
esac
KNEES=${KNEES:-$KNEE}
GOALS=${GOALS:-$GOAL}
for g in $GOALS; do
    [[ $g =~ ^[0-9]+(\.[0-9]+)?(us|ms|s)$ ]] || {
        echo "shares: GOALS=\"$GOALS\": each goal is a duration with its unit, such as 0.75ms or 1500us" >&2
        exit 2
    }
done
BOUND=${BOUND:-0}
case $BOUND in
0 | 1) ;;
*) echo "shares: BOUND=$BOUND: accepted values are 0 (no depth-bound rows) and 1" >&2; exit 2 ;;
esac
WRITE_PRICES=${WRITE_PRICES:-1}
BRACKET=${BRACKET-zram:randwrite}
for k in $KNEES; do
    case $k in
    0 | 1 | on | off) ;;
    *) echo "shares: KNEES=\"$KNEES\": accepted values are 0, 1, on and off" >&2; exit 2 ;;
    esac
done
for p in $WRITE_PRICES; do
    [[ $p =~ ^[0-9]+(\.[0-9]+)?$ ]] || {
        echo "shares: WRITE_PRICES=\"$WRITE_PRICES\": each factor is a number such as 1.3" >&2
        exit 2
    }
done
# The scheduled variants of every split: knee value / write price factor / binary / goal.
BINS="A"
[[ -n "${WEIR_B:-}" ]] && BINS="A B"
VARIANTS=()
for p in $WRITE_PRICES; do
    for k in $KNEES; do
        for b in $BINS; do
            for g in $GOALS; do
                VARIANTS+=("$k/$p/$b/$g")
            done
        done
    done
done
REPO=$(cd "$(dirname "$0")/.." && pwd)

command -v python3 >/dev/null || { echo "shares: python3 is required" >&2; exit 2; }
if [[ -z "${WEIR:-}" ]]; then
    (cd "$REPO" && cargo build --release -p weir >&2)
    WEIR="${CARGO_TARGET_DIR:-$REPO/target}/release/weir"
fi
[[ -x "$WEIR" ]] || { echo "shares: no weir binary at $WEIR" >&2; exit 2; }
if [[ -n "${WEIR_B:-}" && ! -x "$WEIR_B" ]]; then
    echo "shares: WEIR_B=$WEIR_B is not an executable weir; build the other binary first" >&2
    exit 2
fi
ROW_WEIR=$WEIR
ROW_BIN=A
ROW_GOAL=$GOAL
ROW_SEQ=0

bench_lock shares

# The header line (stdout, above the summary; stderr too, above the rows' progress).
HEADER="shares: $(date -u +%Y-%m-%dT%H:%M:%SZ) weir $WEIR${WEIR_B:+ (bin A) and $WEIR_B (bin B)}, bracketed $BRACKET, knee values $KNEES (WEIR_SCHED_KNEE\
 on the scheduled rows), write price factors $WRITE_PRICES (one model per tier, shared by every\
 variant), load average $(cut -d' ' -f1-3 /proc/loadavg), tiers $TIERS, ops $OPS, sizes $SIZES, splits $SPLITS, rounds $ROUNDS,\
 parallelism $PARALLELISM, goals $GOALS, depth-bound rows $BOUND"
echo "$HEADER"
echo "$HEADER" >&2

WORK=$(mktemp -d "${TMPDIR:-/tmp}/weir-shares.XXXXXX")
ZRAM_ID=""
ZRAM_MNT=""
cleanup() {
    zram_release "$ZRAM_MNT" "$ZRAM_ID"
    # weir run --keep-files leaves weir-<job>-<shard>.data behind.
    rm -f "$DIR"/weir-*.data 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
RESULTS=$WORK/results.jsonl
: >"$RESULTS"
FAILED_ROWS=""

job_file() { # op size shares_a shares_b [parallelism_a parallelism_b] -> stdout
    local op=$1 size=$2 sa=$3 sb=$4 pa=${5:-$PARALLELISM} pb=${6:-$PARALLELISM} name shares depth
    for name in a b; do
        shares=$sa depth=$pa
        [[ $name == b ]] && shares=$sb depth=$pb
        cat <<EOF
- name: $name
  type: $op
  shards: all
  data_size: $DATA_SIZE
  shard_info:
    parallelism: $depth
    reqsize: $size
    class: $name
    shares: $shares
EOF
    done
}

depth_split() { # shares_a shares_b -> "parallelism_a parallelism_b" of the depth-bound row
    local sa=$1 sb=$2 hi lo light
    hi=$((sa > sb ? sa : sb)) lo=$((sa > sb ? sb : sa))
    # The lighter class's share of the heavier's depth, rounded, at least one request.
    light=$(((PARALLELISM * lo + hi / 2) / hi))
    ((light > 0)) || light=1
    if ((sa >= sb)); then echo "$PARALLELISM $light"; else echo "$light $PARALLELISM"; fi
}

seconds_of() { # 5s | 500ms -> whole seconds, rounded up
    python3 -c "import sys,math; v=sys.argv[1]; print(math.ceil(float(v[:-2])/1000) if v.endswith('ms') else int(math.ceil(float(v.rstrip('s')))))" "$1"
}

row() { # tier dir duration op size split round knee props [flags...]
    local tier=$1 dir=$2 duration=$3 op=$4 size=$5 split=$6 round=$7 knee=$8 props=$9
    shift 9
    # The unscheduled row's shares do nothing (no scheduler): any pair will do.
    local pair=${split#bound-} depths=()
    [[ $pair == none ]] && pair=1:1
    local sa=${pair%%:*} sb=${pair##*:}
    # A depth-bound row: unscheduled, with the jobs' depths in the asked ratio.
    [[ $split == bound-* ]] && read -r -a depths <<<"$(depth_split "$sa" "$sb")"
    job_file "$op" "$size" "$sa" "$sb" "${depths[@]}" >"$WORK/job.yaml"
    local t0=$SECONDS limit=$(($(seconds_of "$duration") + 30)) metrics=()
    rm -f "$WORK/row.prom"
    # The scheduler's lane counters (which controller held the disk, and for how long).
    [[ $split != none && $split != bound-* ]] && metrics=(--metrics "$WORK/row.prom")
    # weir run stops gracefully on SIGTERM (it drains what is in flight): KILL 10 s later.
    ROW_SEQ=$((ROW_SEQ + 1))
    local bracket=0
    [[ $BRACKET == all || " $BRACKET " == *" $tier:$op "* ]] && bracket=1
    if ! WEIR_SCHED_KNEE=$knee timeout -k 10 "$limit" "$ROW_WEIR" run "$WORK/job.yaml" --dir "$dir" \
        --duration "$duration" --shards 2 --keep-files --output json "${metrics[@]}" \
        --io-properties "$props" "$@" >"$WORK/row.json"; then
        echo "shares: FAILED $tier $op $size $split round $round: failed or ran over $limit s;" \
            "the row is left out of the summary" >&2
        FAILED_ROWS="$FAILED_ROWS $tier/$op/$size/$split/$round"
        return 0
    fi
    echo "shares: $tier $op $size $split round $round: $((SECONDS - t0)) s${depths[*]:+ (depths ${depths[*]} per shard)}" \
        "(bin $ROW_BIN, goal $ROW_GOAL, WEIR_SCHED_KNEE=$knee, model $(basename "$props") $*), load $(cut -d' ' -f1 /proc/loadavg)" >&2
    python3 - "$tier" "$op" "$size" "$split" "$round" "$WORK/row.json" "$WORK/row.prom" \
        "$knee" "$props" "$ROW_BIN" "$ROW_SEQ" "$bracket" "$ROW_GOAL" >>"$RESULTS" <<'EOF'
import json, os, re, sys
tier, op, size, split, rnd, path, prom, knee, props, binary, seq, bracket, goal = sys.argv[1:]
def priced(props):  # the model this row ran with: what it prices each direction at
    v = dict(re.findall(r'(\w+): *([0-9.]+)', open(props).read()))
    f = lambda k: float(v.get(k, "nan"))
    return (f"r {f('read_iops') / 1e3:.1f} K IOPS {f('read_bandwidth') / 1e6:.0f} MB/s, "
            f"w {f('write_iops') / 1e3:.1f} K IOPS {f('write_bandwidth') / 1e6:.0f} MB/s")
doc = json.load(open(path))
jobs = {j["name"]: j for j in doc["jobs"]}
def in_flight(job):  # Little's law: completions a second x mean latency (queue + disk)
    return job["iops"] * job["latency_us"]["avg"] / 1e6
load = open("/proc/loadavg").read().split()[0]
row = {"tier": tier, "op": op, "size": size, "split": split, "round": int(rnd),
       "variant": "-" if split == "none" or split.startswith("bound-") else f"knee {knee}, {os.path.basename(props)[:-5]}, bin {binary}, goal {goal}",
       "seq": int(seq), "bracket": bracket == "1",
       "model": priced(props), "load": float(load),
       "a": jobs["a"]["bandwidth_bytes_per_s"] / 1e6,
       "b": jobs["b"]["bandwidth_bytes_per_s"] / 1e6,
       "backend": doc["backend"], "eagain": doc["eagain_retries"],
       "inflight_a": in_flight(jobs["a"]), "inflight_b": in_flight(jobs["b"])}
sched = doc.get("scheduler")
if sched:
    classes = {c["name"]: c for c in sched["classes"]}
    # In the disk per class: completions a second x mean in-disk latency.
    for n in "ab":
        c = classes[n]
        row["indisk_" + n] = c["iops"] * c["disk_latency_us"]["avg"] / 1e6
if os.path.exists(prom):
    lane = "write" if "write" in op else "read"
    for line in open(prom):
        m = re.match(r'weir_io_queue_lag_stalls\{[^}]*\} (\S+)', line)
        if m:
            row["lag_stalls"] = row.get("lag_stalls", 0.0) + float(m.group(1))
        m = re.match(r'weir_io_queue_lag_short_wakes\{[^}]*\} (\S+)', line)
        if m:
            row["short_wakes"] = row.get("short_wakes", 0.0) + float(m.group(1))
        m = re.match(r'weir_io_queue_lag_overdue_skips\{[^}]*\} (\S+)', line)
        if m:
            row["overdue_skips"] = row.get("overdue_skips", 0.0) + float(m.group(1))
        m = re.match(r'weir_io_queue_round_bounds\{[^}]*\} (\S+)', line)
        if m:
            row["round_bounds"] = row.get("round_bounds", 0.0) + float(m.group(1))
        m = re.match(r'weir_io_lane_(\w+)\{[^}]*direction="(\w+)"\} (\S+)', line)
        if m and m.group(2) == lane:
            row["lane_" + m.group(1)] = float(m.group(3))
print(json.dumps(row))
EOF
}

lay_out() { # dir: writes the four files once (a short unscheduled read row), timed
    local t0=$SECONDS
    job_file randread 4kB 1 1 >"$WORK/job.yaml"
    "$WEIR" run "$WORK/job.yaml" --dir "$1" --duration 1s --shards 2 --keep-files \
        --no-scheduler --output json >/dev/null
    echo "shares: laid out 2 jobs x 2 shards ($DATA_SIZE per job) in $1 in $((SECONDS - t0)) s;" \
        "every row reuses them, and the write rows overwrite them" >&2
}

run_tier() { # tier dir props duration
    local tier=$1 dir=$2 props=$3 duration=$4 op size round k t0=$SECONDS
    lay_out "$dir"
    for op in $OPS; do
        for size in $SIZES; do
            # The rows of one op x size: unscheduled, then each split x variant (knee / write
            # price) through the scheduler, all in one rotation.
            local rows=("none") split v
            for split in $SPLITS; do
                for v in "${VARIANTS[@]}"; do
                    rows+=("$split@$v")
                done
                ((BOUND)) && [[ ${split%%:*} != "${split##*:}" ]] && rows+=("bound-$split")
            done
            local bracket=0
            [[ $BRACKET == all || " $BRACKET " == *" $tier:$op "* ]] && bracket=1
            for ((round = 1; round <= ROUNDS; round++)); do
                # Rotated; bracketed: the unscheduled row before every scheduled one and
                # after the last (U S U S U S U), so each has a baseline on either side.
                local order=()
                for ((k = 0; k < ${#rows[@]}; k++)); do
                    local r=${rows[$(((k + round - 1) % ${#rows[@]}))]}
                    if ((bracket)); then
                        [[ $r == none ]] && continue
                        order+=(none)
                    fi
                    order+=("$r")
                done
                ((bracket)) && order+=(none)
                for r in "${order[@]}"; do
                    if [[ $r == none || $r == bound-* ]]; then
                        ROW_WEIR=$WEIR ROW_BIN=A ROW_GOAL=-
                        row "$tier" "$dir" "$duration" "$op" "$size" "$r" "$round" 0 \
                            "$props" --no-scheduler
                    else
                        local v=${r#*@}
                        local knee price bin goal
                        IFS=/ read -r knee price bin goal <<<"$v"
                        ROW_BIN=$bin ROW_WEIR=$WEIR ROW_GOAL=$goal
                        [[ $bin == B ]] && ROW_WEIR=$WEIR_B
                        row "$tier" "$dir" "$duration" "$op" "$size" "${r%@*}" "$round" \
                            "$knee" "$(priced_model "$tier" "$props" "$price")" \
                            --latency-goal "$goal"
                    fi
                done
            done
        done
    done
    echo "shares: $tier tier: $((SECONDS - t0)) s of rows and layout" >&2
}

priced_model() { # tier props factor -> path of the model with its writes priced at factor x
    local out="$WORK/$1-w$3x.yaml"
    if [[ ! -e $out ]]; then
        python3 - "$2" "$3" >"$out" <<'EOF'
import re, sys
text, factor = open(sys.argv[1]).read(), float(sys.argv[2])
scale = lambda m: f"{m.group(1)}{round(float(m.group(2)) * factor)}"
print(re.sub(r'(write_(?:iops|bandwidth): *)([0-9.]+)', scale, text), end="")
EOF
    fi
    echo "$out"
}

tune_into() { # dir props
    "$WEIR" tune --dir "$1" --duration "$TUNE_DURATION" --properties-file "$2" >&2
    echo "shares: model for $1:" >&2
    cat "$2" >&2
}

for tier in $TIERS; do
    case $tier in
    vda)
        mkdir -p "$DIR"
        if [[ -n "${PROPS:-}" ]]; then
            cp "$PROPS" "$WORK/vda.yaml"
        else
            tune_into "$DIR" "$WORK/vda.yaml"
        fi
        run_tier vda "$DIR" "$WORK/vda.yaml" "$DURATION"
        ;;
    zram)
        if [[ $EUID -ne 0 || ! -w /sys/class/zram-control/hot_add ]]; then
            echo "SKIP zram tier: needs root and /sys/class/zram-control (modprobe zram)" >&2
            continue
        fi
        ZRAM_ID=$(cat /sys/class/zram-control/hot_add)
        # A device of ZRAM_SIZE (4G: small enough to share a machine's memory) holding
        # ZRAM_DATA_SIZE per job (512MB: 2 GB laid out, with room for ext4).
        echo "$ZRAM_SIZE" >"/sys/block/zram$ZRAM_ID/disksize"
        mkfs.ext4 -q "/dev/zram$ZRAM_ID"
        ZRAM_MNT=$(mktemp -d /tmp/weir-shares-zram.XXXXXX)
        mount "/dev/zram$ZRAM_ID" "$ZRAM_MNT"
        if [[ -n "${ZRAM_PROPS:-}" ]]; then
            # A model from a quiet tune: under load, the tune in the run prices zram at a
            # tenth of quiet and the bucket, not the device, then holds every row.
            cp "$ZRAM_PROPS" "$WORK/zram.yaml"
        else
            tune_into "$ZRAM_MNT" "$WORK/zram.yaml"
        fi
        vda_data_size=$DATA_SIZE
        DATA_SIZE=$ZRAM_DATA_SIZE
        run_tier zram "$ZRAM_MNT" "$WORK/zram.yaml" "$ZRAM_DURATION"
        DATA_SIZE=$vda_data_size
        umount "$ZRAM_MNT" && rmdir "$ZRAM_MNT" && ZRAM_MNT=""
        echo 1 >"/sys/block/zram$ZRAM_ID/reset"
        echo "$ZRAM_ID" >/sys/class/zram-control/hot_remove && ZRAM_ID=""
        ;;
    *) echo "shares: unknown tier $tier (vda, zram)" >&2; exit 2 ;;
    esac
done

[[ -n "$FAILED_ROWS" ]] && echo "shares: rows that failed or overran:$FAILED_ROWS" >&2

python3 - "$RESULTS" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def key(r):
    return (r["tier"], r["op"], r["size"])
bare = {(key(r), r["round"]): r["a"] + r["b"] for r in rows if r["split"] == "none"}
bare_rows = {(key(r), r["round"]): r for r in rows if r["split"] == "none"}
by_seq = {r["seq"]: r for r in rows}
def anchor_of(r):
    """The unscheduled total a scheduled row is judged against, and the baselines it came
    from: bracketed rows, the mean of the unscheduled rows right before and after; else the
    round's one unscheduled row."""
    if r.get("bracket"):
        sides = [by_seq.get(r["seq"] + d) for d in (-1, 1)]
        sides = [x["a"] + x["b"] for x in sides if x and x["split"] == "none" and key(x) == key(r)]
        if sides:
            return statistics.mean(sides), sides
    a = bare.get((key(r), r["round"]))
    return a, [a] if a else []
def controllers(r):
    """One line of what the scheduler did in a row (docs/design/scheduler.md)."""
    u = bare_rows.get((key(r), r["round"]), {})
    text = (f"backend {r.get('backend')} (unsched {u.get('backend')}), eagain {r.get('eagain')}; "
            f"in flight a {r.get('inflight_a', 0):.1f} b {r.get('inflight_b', 0):.1f} "
            f"(in disk {r.get('indisk_a', 0):.1f} / {r.get('indisk_b', 0):.1f}; unsched "
            f"{u.get('inflight_a', 0):.1f} / {u.get('inflight_b', 0):.1f})")
    if "lane_periods" not in r:
        return text
    g = lambda k: r.get("lane_" + k, 0.0)
    n = max(g("periods"), 1)
    return (text + f"\n       speed {g('speed_factor'):.2f} K {g('rate_factor'):.2f} "
            f"guard {g('tail_guard'):.2f} window {g('window_sec') * 1e6:.0f} us "
            f"pipeline {g('pipeline_sec') * 1e6:.0f} us; of {n:.0f} periods: window bound "
            f"{g('window_bound_periods') / n:.2f}, bucket bound {g('bucket_bound_periods') / n:.2f}, "
            f"pipeline open {g('pipeline_open_periods') / n:.2f}, share gate shut "
            f"{g('share_gate_periods') / n:.2f}, solo probe {g('solo_probe_periods') / n:.2f}; depth cap: {g('depth_cap_engagements'):.0f} "
            f"engagements, on {g('depth_cap_periods') * g('period_sec'):.2f} s, queueing "
            f"uncapped {g('depth_queueing_periods'):.0f} periods (bound "
            f"{g('depth_blocked_bound'):.0f}, other lane {g('depth_blocked_other_lane'):.0f}, "
            f"idle {g('depth_blocked_idle'):.0f}), Little ratio max {g('queue_ratio_max'):.1f} "
            f"last {g('queue_ratio_last'):.1f} (cap engages at 4; unloaded latency "
            f"{g('unloaded_sec') * 1e6:.0f} us, smallest seen {g('min_latency_sec') * 1e6:.0f} us); "
            f"K cut at a queue in the disk {g('disk_knee_cuts'):.0f} times ({g('disk_knee_misses'):.0f} "
            f"undone: not our queue); "
            f"cross-shard stalls "
            f"{r.get('lag_stalls', 0):.0f} (woken at the laggard's next call: "
            f"{r.get('short_wakes', 0):.0f}; leads let go for a laggard off its CPU, "
            f"{r.get('overdue_skips', 0):.0f}); dispatch calls bound to the first class emptied after a "
            f"round served whole (an inline device) {r.get('round_bounds', 0):.0f}")
def asked(split):  # "bound-1000:100" or "1000:100" -> (1000, 100)
    sa, sb = (int(x) for x in split.removeprefix("bound-").split(":"))
    return sa, sb
# The depth-bound rows (BOUND=1): unscheduled, depths in the asked ratio, by the split and
# round they bound.
bounds = {}
for r in rows:
    if r["split"].startswith("bound-"):
        anchor, _ = anchor_of(r)
        bounds[key(r) + (r["split"][6:], r["round"])] = (r["a"] + r["b"], anchor, r)
print("\nevery round: total MB/s (scheduled / unscheduled of the same round), ratio a:b (measured / asked)")
groups = {}
for r in rows:
    if r["split"] == "none":
        continue
    if r["split"].startswith("bound-"):
        sa, sb = asked(r["split"])
        total, anchor, _ = bounds[key(r) + (r["split"][6:], r["round"])]
        print(f"  {r['tier']:4} {r['op']:9} {r['size']:>6} {r['split'][6:]:>9} [depth bound, unscheduled] round {r['round']}: "
              f"{total:8.1f} MB/s / {anchor or float('nan'):8.1f} = {total / anchor if anchor else float('nan'):.3f}, "
              f"ratio {r['a'] / max(r['b'], 1e-9):7.3f} ({(r['a'] / max(r['b'], 1e-9)) / (sa / sb):.3f} of asked); "
              f"in flight a {r.get('inflight_a', 0):.1f} b {r.get('inflight_b', 0):.1f}")
        continue
    sa, sb = asked(r["split"])
    total = r["a"] + r["b"]
    anchor, sides = anchor_of(r)
    share = (r["a"] / r["b"]) / (sa / sb) if r["b"] > 0 else float("nan")
    frac = total / anchor if anchor else float("nan")
    moved = (max(sides) - min(sides)) / anchor if anchor and len(sides) == 2 else float("nan")
    groups.setdefault(key(r) + (r["split"], r["variant"]), []).append((frac, share, total, anchor, moved, r["round"]))
    print(f"  {r['tier']:4} {r['op']:9} {r['size']:>6} {r['split']:>9} [{r['variant']}] round {r['round']}: "
          f"{total:8.1f} MB/s / {anchor or float('nan'):8.1f} = {frac:.3f}, ratio {r['a'] / max(r['b'], 1e-9):7.3f} "
          f"({share:.3f} of asked)")
    print(f"       model {r['model']}; load average {r['load']:.1f}")
    if r.get("bracket"):
        flag = " DEVICE MOVED MORE THAN THE 5% MARGIN: this row's fraction is noise" if moved > 0.05 else ""
        print(f"       baselines right before / after: " + " / ".join(f"{x:.1f}" for x in sides)
              + f" MB/s, spread {moved:.3f} of their mean{flag}")
    print("       " + controllers(r))
print("\nmedians over rounds (spread = max - min of the per-round figure)")
print(f"  {'tier':4} {'op':9} {'size':>6} {'split':>9} {'variant (knee, model, bin, goal)':>32} {'unsched MB/s':>12} {'sched MB/s':>10} "
      f"{'sched/unsched':>13} {'spread':>6} {'ratio/asked':>11} {'spread':>6}  baselines moved (bracketed rows)")
for k, v in groups.items():
    fr = [x[0] for x in v]
    sh = [x[1] for x in v]
    print(f"  {k[0]:4} {k[1]:9} {k[2]:>6} {k[3]:>9} {k[4]:>22} {statistics.median(x[3] for x in v):12.1f} "
          f"{statistics.median(x[2] for x in v):10.1f} {statistics.median(fr):13.3f} "
          f"{max(fr) - min(fr):6.3f} {statistics.median(sh):11.3f} {max(sh) - min(sh):6.3f}  "
          + " ".join(f"{x[4]:.3f}" for x in v if x[4] == x[4]))
if bounds:
    print("\ndepth bound (BOUND=1): what a scheduler holding the asked ratio can reach at this depth;"
          " medians over rounds, spread = max - min, sched / bound paired by round")
    print(f"  {'tier':4} {'op':9} {'size':>6} {'split':>9} {'variant (knee, model, bin, goal)':>32} {'bound/unsched':>13} {'spread':>6} "
          f"{'bound ratio/asked':>17} {'sched/bound':>11} {'spread':>6}")
    for k, v in groups.items():
        b = [bounds.get(k[:3] + (k[3], x[5])) for x in v]
        pairs = [(x[2] / bb[0], bb[0] / bb[1]) for x, bb in zip(v, b) if bb and bb[1]]
        if not pairs:
            continue
        sa, sb = asked(k[3])
        brs = [(bb[2]["a"] / max(bb[2]["b"], 1e-9)) / (sa / sb) for bb in b if bb]
        sched_b = [p[0] for p in pairs]
        bound_u = [p[1] for p in pairs]
        print(f"  {k[0]:4} {k[1]:9} {k[2]:>6} {k[3]:>9} {k[4]:>22} {statistics.median(bound_u):13.3f} "
              f"{max(bound_u) - min(bound_u):6.3f} {statistics.median(brs):17.3f} "
              f"{statistics.median(sched_b):11.3f} {max(sched_b) - min(sched_b):6.3f}")
# The README's shares table: one line per tier x op x size, the splits side by side.
splits = list(dict.fromkeys(k[3] for k in groups))
models = {r["variant"]: r["model"] for r in rows if r["split"] != "none" and not r["split"].startswith("bound-")}
print("\nmodels (what each variant priced the disk at):")
for variant, model in models.items():
    print(f"  {variant}: {model}")
print("\nREADME table (medians of the rounds; the write rows overwrite laid-out files: no block"
      " is allocated during a row)\n")
print("| tier, op, size, variant | unscheduled MB/s | "
      + " | ".join(f"{s}: sched / unsched, ratio of asked" for s in splits) + " |")
print("|---" * (2 + len(splits)) + "|")
for tos in dict.fromkeys(k[:3] + k[4:] for k in groups):
    cells = []
    for s in splits:
        v = groups.get(tos[:3] + (s,) + tos[3:], [])
        cells.append(f"{statistics.median(x[0] for x in v):.2f}, "
                     f"{statistics.median(x[1] for x in v):.3f}" if v else "-")
    anchors = [x[3] for s in splits for x in groups.get(tos[:3] + (s,) + tos[3:], []) if x[3]]
    anchor = statistics.median(anchors) if anchors else float("nan")
    print(f"| {tos[0]} {tos[1]} {tos[2]}, {tos[3]} | {anchor:.1f} | "
          + " | ".join(cells) + " |")
EOF
