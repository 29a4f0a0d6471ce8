#!/usr/bin/env bash
# shares-locality.sh: does the split of one load between the two classes' files move what
# the disk gives, unscheduled (issue 24; a benchmark; docs/scheduler-rate.md section 21.2)?
#
# bench/shares.sh's rows give each class its own files (2 jobs x 2 shards, 1 GB each). At
# 1000:100 ~91% of the reads go to the 1000-share class's files, at 1:1 (and unscheduled)
# half to each: the same depth over a working set twice as large. A virtio disk whose host
# caches part of its image (vda's smallest 4 KiB read: 17-19 us, a lone read's typical
# ~290) may serve the concentrated split faster whatever the scheduler does. This runs the
# same 4 KiB random reads, same total in flight, unscheduled, with the per-class parallelism
# split evenly and unevenly (rounds rotated), and prints the rate and mean latency of each.
# Time: ROUNDS x 3 rows x (DUR + ~0.5 s): ~40 s with the defaults.
# Usage: bench/shares-locality.sh   Environment: WEIR (default target/release/weir), DIR
#   (/var/tmp/weir-shares-locality), SPLITS ("32:32 58:6 6:58": parallelism per job per
#   shard, a:b), ROUNDS (3), DUR (4s), SIZE (4kB), OP (randread; randwrite overwrites the
#   laid-out files), PROPS (bench/vda-quiet.yaml; unused unscheduled, weir run needs one).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
WEIR=${WEIR:-$REPO/target/release/weir}
DIR=${DIR:-/var/tmp/weir-shares-locality}
mkdir -p "$DIR"
SPLITS=${SPLITS:-"32:32 58:6 6:58"}; ROUNDS=${ROUNDS:-3}; DUR=${DUR:-4s}; SIZE=${SIZE:-4kB}
OP=${OP:-randread}
PROPS=${PROPS:-$REPO/bench/vda-quiet.yaml}
JOB=$(mktemp /tmp/weir-shares-locality.XXXXXX.yaml); OUT=$(mktemp /tmp/weir-shares-locality.XXXXXX.json)
trap 'rm -f "$JOB" "$OUT" "$DIR"/weir-*.data' EXIT
echo "shares-locality: $(date -u +%FT%TZ) weir $WEIR, $OP $SIZE, load average $(cut -d" " -f1-3 /proc/loadavg)"
for r in $(seq 1 "$ROUNDS"); do
  arr=($SPLITS); n=${#arr[@]}
  for ((k=0;k<n;k++)); do split=${arr[$(((k+r-1)%n))]}; pa=${split%:*}; pb=${split#*:}
    cat > "$JOB" <<EOJ
- name: a
  type: $OP
  shards: all
  data_size: 1GB
  shard_info: {parallelism: $pa, reqsize: $SIZE}
- name: b
  type: $OP
  shards: all
  data_size: 1GB
  shard_info: {parallelism: $pb, reqsize: $SIZE}
EOJ
    "$WEIR" run "$JOB" --dir "$DIR" --duration "$DUR" --shards 2 --keep-files --no-scheduler \
      --output json --io-properties "$PROPS" > "$OUT"
    python3 - "$OUT" "$r" "$split" <<'EOP'
import json, sys
d = json.load(open(sys.argv[1])); j = d["jobs"]
mbps = sum(x["bandwidth_bytes_per_s"] for x in j) / 1e6
lat = sum(x["latency_us"]["avg"] * x["bandwidth_bytes_per_s"] for x in j) / max(1, sum(x["bandwidth_bytes_per_s"] for x in j))
print(f"round {sys.argv[2]} parallelism a:b {sys.argv[3]:>6}: {mbps:7.1f} MB/s, mean latency "
      f"{lat:6.0f} us (weighted by rate), load average {open('/proc/loadavg').read().split()[0]}")
EOP
  done
done
