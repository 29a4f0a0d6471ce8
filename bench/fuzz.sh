#!/usr/bin/env bash
# The long fuzz run for docs/benchmarks.md: every target for SECONDS (default 600 = 10 min)
# each, from the committed seed corpus; prints the table of executions and findings, with the
# date, machine and toolchain it ran on. The new inputs are kept under $FUZZ_WORK (default: a
# temporary directory, named at the end) for promoting interesting ones into fuzz/corpus.
#   bench/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-600}
shift || true
export FUZZ_WORK=${FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/weir-fuzz-bench.XXXXXX")}
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); kernel: $(uname -r); cores: $(nproc);" \
  "toolchain: $(rustc +nightly --version)"
status=0
scripts/fuzz.sh "$SECONDS_EACH" "$@" || status=$?
echo "work directory (new inputs, any findings): $FUZZ_WORK"
exit "$status"
