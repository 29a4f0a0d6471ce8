#!/usr/bin/env bash
# sched-sim.sh: the scheduler's long simulations, each of which proves one property once
# (shares on disks off their model, run-time K, the lift, the tail guard, inline devices,
# CPU-bound shards), run in the `soak` profile: optimized, with the scheduler's
# `debug_assert!` invariants and overflow checks on. `cargo test` runs the quick ones; these
# are `#[ignore]`d there. The 10^8-request soak is bench/soak.sh's.
#
# Each test prints its seed; replay one with WEIR_SIM_SEED. Time: a few minutes on the
# development VM.
#
# Usage: bench/sched-sim.sh [TEST-NAME-FILTER]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

started=$(date +%s)
cargo test --locked --profile soak -p weir-sched -- --ignored --skip a_hundred_million_requests "$@"
echo "sched-sim.sh: done in $(($(date +%s) - started)) s (build included)"
