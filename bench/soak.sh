#!/usr/bin/env bash
# soak.sh: the scheduler's invariants and shares over a long simulation (no disk, no root).
#
# Runs weir-sched's `a_hundred_million_requests_hold_the_shares_and_the_invariants`: 10^8
# requests over 64 shards and 100 classes on one simulated disk, the shares of every class
# drawn anew 7 times at run time. It passes when every class's disk time in every phase is
# within 1% of its shares' part, the disk's work never passes the window, and none of the
# scheduler's `debug_assert!`s fires: virtual time never goes back, the bucket never
# overdraws, no counter overflows. The build is the `soak` profile: optimized, with debug
# assertions and overflow checks on. Prints a line per phase and a summary with the time
# it took; a failure names the seed (replay with WEIR_SIM_SEED).
#
# Time: ~7 minutes of CPU (393 s user + 24 s system for 10^8 requests; 56 minutes of wall
# time on the 2-vCPU development VM under a load average of ~70). The 64 shards' wake-ups
# (1.27 x 10^9, ~13 per request), not the requests, take most of it. REQUESTS=10000000
# takes a tenth. Peak memory: 74 MB.
#
# Usage: bench/soak.sh
# Environment: REQUESTS (100000000), WEIR_SIM_SEED (4501).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

REQUESTS=${REQUESTS:-100000000}
started=$(date +%s)
WEIR_SOAK_REQUESTS=$REQUESTS cargo test --locked --profile soak -p weir-sched --test soak -- \
    --ignored --nocapture a_hundred_million_requests
echo "soak.sh: $REQUESTS requests in $(($(date +%s) - started)) s (build included)"
