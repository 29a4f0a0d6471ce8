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
# The runs are bench/shares-locality.sh's with both classes at the same parallelism P (its
# rows print "parallelism a:b P:P"; in flight = 4 x P).
# Usage: bench/shares-depth.sh   Environment: PS ("16 18 24 32": parallelism per job per
#   shard), and shares-locality.sh's WEIR, ROUNDS (3), DUR (4s), PROPS; DIR defaults to
#   /var/tmp/weir-shares-depth.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
PS=${PS:-"16 18 24 32"}
SPLITS=""
for p in $PS; do SPLITS+="$p:$p "; done
DIR=${DIR:-/var/tmp/weir-shares-depth} SPLITS="$SPLITS" OP=randread SIZE=4kB \
  exec "$REPO/bench/shares-locality.sh"
