#!/usr/bin/env bash
# shares-depth.sh: what the disk gives, unscheduled, at each depth (issue 24; a benchmark).
#
# bench/shares.sh's 4 KiB read rows run two classes of PARALLELISM (32) requests per class
# per shard on 2 shards: 128 in flight unscheduled. Through the scheduler at 1000:100 the
# 1000-share class has only its 64 in the disk plus the 100-share class's tenth of that
# (~70): the share hold's bound, Little's law for two classes with the same in-disk latency.
# And the latency goal bounds the queue a request finds (its wait beyond a lone read).
# This prints the unscheduled rate and mean latency at 64 / 72 / 96 / 128 in flight (two
# jobs x two shards x P), rounds rotated, so a reader sees which of the two limits the 0.95
# target meets first: the rate at ~70 in flight against the rate at 128, and the latency
# the rate at 0.95 of 128 needs against a lone read + the goal (docs/scheduler-rate.md
# section 20). Time: ROUNDS x 4 rows x (DUR + ~0.5 s): ~55 s with the defaults.
# Usage: bench/shares-depth.sh   Environment: WEIR (default target/release/weir), DIR
#   (/var/tmp/weir-shares-depth), PS ("16 18 24 32": parallelism per job per shard), ROUNDS
#   (3), DUR (4s), PROPS (bench/vda-quiet.yaml; weir run needs a model, unused unscheduled).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
WEIR=${WEIR:-$REPO/target/release/weir}
DIR=${DIR:-/var/tmp/weir-shares-depth}
mkdir -p "$DIR"
PS=${PS:-"16 18 24 32"}; ROUNDS=${ROUNDS:-3}; DUR=${DUR:-4s}
PROPS=${PROPS:-$REPO/bench/vda-quiet.yaml}
JOB=$(mktemp /tmp/weir-shares-depth.XXXXXX.yaml); OUT=$(mktemp /tmp/weir-shares-depth.XXXXXX.json)
trap 'rm -f "$JOB" "$OUT" "$DIR"/test-*' EXIT
echo "shares-depth: $(date -u +%FT%TZ) weir $WEIR, load average $(cut -d" " -f1-3 /proc/loadavg)"
for r in $(seq 1 $ROUNDS); do
  arr=($PS); n=${#arr[@]}
  for ((k=0;k<n;k++)); do p=${arr[$(((k+r-1)%n))]}
    cat > "$JOB" <<EOJ
- name: a
  type: randread
  shards: all
  data_size: 1GB
  shard_info: {parallelism: $p, reqsize: 4kB}
- name: b
  type: randread
  shards: all
  data_size: 1GB
  shard_info: {parallelism: $p, reqsize: 4kB}
EOJ
    "$WEIR" run "$JOB" --dir "$DIR" --duration "$DUR" --shards 2 --keep-files --no-scheduler \
      --output json --io-properties "$PROPS" > "$OUT"
    python3 - "$OUT" "$r" "$p" <<'EOP'
import json, sys
d = json.load(open(sys.argv[1])); j = d["jobs"]
mbps = sum(x["bandwidth_bytes_per_s"] for x in j) / 1e6
lat = sum(x["latency_us"]["avg"] for x in j) / len(j)
print(f"round {sys.argv[2]} in flight {4 * int(sys.argv[3]):4d}: {mbps:7.1f} MB/s, mean latency "
      f"{lat:6.0f} us, load average {open('/proc/loadavg').read().split()[0]}")
EOP
  done
done
