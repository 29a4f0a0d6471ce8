#!/usr/bin/env bash
# explore-pure-rounds.sh: do explore's pure loads repeat on zram? Paired rounds of A and B
# (two weir binaries, or one) in rotated order (A B B A A B ...), each on a new private zram
# device with XFS (a benchmark, not a test; issue 22's "two frontiers within 5%" needs the pure
# loads to repeat first).
#
# Each run is `weir explore --quick --budget 1s` (the calibration, closed loop: reads QD64,
# writes QD16 in both regimes; then the two pure axes open loop). Per run it prints the
# calibration, the pure-read axis (offered -> achieved reads/s, p99), zram's mm_stat
# (orig/compr/used MiB, same_pages, huge_pages), the load average and the CPU steal of the
# run, so a spread can be told apart from the machine's. Then, per binary, the median and
# spread (max/min - 1) of each pure load.
#
# Usage: bench/explore-pure-rounds.sh [OUTDIR]        (needs root)
# Environment: A (a weir binary; default: cargo build --release -p weir), B (another binary;
#   default: A, an A/A), ROUNDS (3 pairs), SIZE (4G, the zram disksize), REGIME (overwrite),
#   SHARDS (explore's --shards; default: one per core), EXPLORE_ARGS (more flags).
set -euo pipefail

OUT=${1:-/tmp/weir-explore-pure-rounds}
ROUNDS=${ROUNDS:-3}
SIZE=${SIZE:-4G}
REGIME=${REGIME:-overwrite}
EXPLORE_ARGS=${EXPLORE_ARGS:-}
[[ -n "${SHARDS:-}" ]] && EXPLORE_ARGS="--shards $SHARDS $EXPLORE_ARGS"
REPO=$(cd "$(dirname "$0")/.." && pwd)
[[ $(id -u) -eq 0 ]] || { echo "explore-pure-rounds: making a zram device needs root" >&2; exit 2; }
if [[ -z "${A:-}" ]]; then
    (cd "$REPO" && cargo build --release -p weir >&2)
    A="${CARGO_TARGET_DIR:-$REPO/target}/release/weir"
fi
B=${B:-$A}
for w in "$A" "$B"; do [[ -x "$w" ]] || { echo "explore-pure-rounds: no weir binary at $w" >&2; exit 2; }; done

ZRAM_ID="" MNT=""
cleanup() {
    [[ -n "$MNT" ]] && { umount "$MNT" 2>/dev/null || true; rmdir "$MNT" 2>/dev/null || true; }
    if [[ -n "$ZRAM_ID" ]]; then
        echo 1 >"/sys/block/zram$ZRAM_ID/reset" 2>/dev/null || true
        echo "$ZRAM_ID" >/sys/class/zram-control/hot_remove 2>/dev/null || true
    fi
    ZRAM_ID="" MNT=""
}
trap cleanup EXIT
trap 'exit 130' INT TERM

steal() { awk '/^cpu /{print $9}' /proc/stat; }   # USER_HZ ticks, all CPUs

one_run() { # label binary n
    local label=$1 weir=$2 n=$3
    ZRAM_ID=$(cat /sys/class/zram-control/hot_add)
    echo "$SIZE" >"/sys/block/zram$ZRAM_ID/disksize"
    mkfs.xfs -q "/dev/zram$ZRAM_ID"
    MNT=$(mktemp -d /tmp/weir-zram.XXXXXX)
    mount -o discard "/dev/zram$ZRAM_ID" "$MNT"
    local load s0 s1 dir=$OUT/$label$n
    load=$(cut -d' ' -f1 /proc/loadavg)
    s0=$(steal)
    # shellcheck disable=SC2086  # EXPLORE_ARGS is a list of flags
    "$weir" explore --dir "$MNT" --write-regime "$REGIME" --quick --budget 1s --out "$dir" \
        $EXPLORE_ARGS >"$dir.log" 2>&1 || { echo "explore-pure-rounds: $label$n failed, see $dir.log" >&2; cleanup; return 1; }
    s1=$(steal)
    read -r orig compr used _ _ same _ huge _ <"/sys/block/zram$ZRAM_ID/mm_stat"
    python3 - "$dir/explore.json" "$label" "$n" "$load" "$((s1 - s0))" \
        "$((orig >> 20))/$((compr >> 20))/$((used >> 20))" "$same" "${huge:-0}" <<'PY'
import json, sys
path, label, n, load, steal, mib, same, huge = sys.argv[1:]
j = json.load(open(path))
c = j["calibration"]
axis = [p for p in j["points"] if p["write_bytes_per_s"] == 0]
axis_text = " ".join(
    f"{p['read_iops']/1e3:.0f}k->{p['achieved_read_iops']/1e3:.0f}k/p99 {p['read_latency_us']['p99']:.0f}us"
    for p in axis)
print(f"{label}{n} reads {c['read_iops']/1e3:.1f}k IOPS, writes fresh {c['fresh_write_bytes_per_s']/1e9:.2f} "
      f"GB/s, overwrite {c['overwrite_write_bytes_per_s']/1e9:.2f} GB/s | load {load}, steal {steal} ticks | "
      f"zram MiB data/compr/used {mib}, same_pages {same}, huge_pages {huge} | read axis {axis_text}",
      flush=True)
PY
    cleanup
}

mkdir -p "$OUT"
echo "explore-pure-rounds: A=$A B=$B, $ROUNDS pairs, $SIZE zram, $REGIME, from $(date -u +%T)" >&2
order=()
for ((i = 1; i <= ROUNDS; i++)); do
    if ((i % 2)); then order+=("A $i" "B $i"); else order+=("B $i" "A $i"); fi
done
for item in "${order[@]}"; do
    read -r label n <<<"$item"
    [[ $label == A ]] && weir=$A || weir=$B
    one_run "$label" "$weir" "$n" | tee -a "$OUT/rounds.txt"
done
python3 - "$OUT" "$ROUNDS" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
for label in "AB":
    cals = [json.load(open(f"{out}/{label}{n}/explore.json"))["calibration"] for n in range(1, rounds + 1)]
    parts = []
    for key, unit, scale in [("read_iops", "k reads/s", 1e3), ("fresh_write_bytes_per_s", "GB/s fresh", 1e9),
                             ("overwrite_write_bytes_per_s", "GB/s overwrite", 1e9)]:
        v = [c[key] for c in cals]
        parts.append(f"{statistics.median(v)/scale:.2f} {unit} (spread {max(v)/min(v)-1:+.1%})")
    print(f"{label}: median of {rounds}: " + ", ".join(parts))
PY
