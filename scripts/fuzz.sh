#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for SECONDS each (default 8) from the committed seed
# corpus, on the nightly toolchain. The targets are built with cargo itself and the flags
# `cargo fuzz build --sanitizer none` passes (coverage instrumentation for libFuzzer, the
# `fuzzing` cfg, debug assertions), so a fresh machine does not compile cargo-fuzz first;
# `cargo +nightly fuzz run` works on the same targets for anyone who has it.
# New inputs and any crash go to a scratch directory, so the committed corpus stays as it is.
# Built without a sanitizer: the parsers are safe Rust, where libFuzzer catches panics, aborts
# and timeouts; the build and the executions are several times faster.
# Prints one line per target: executions, seconds, findings. Exits 1 on any finding (the
# crashing input is kept and named), 0 otherwise.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-8}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(job_file io_properties sched_groups diskplorer_import explore_json units)
fi
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
WORK=${FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/weir-fuzz.XXXXXX")}
mkdir -p "$WORK"
HOST=$(rustc +nightly -vV | sed -n 's/^host: //p')
# An explicit --target keeps these flags off build scripts and proc macros, as cargo-fuzz does.
FUZZ_RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions"
(cd fuzz && RUSTFLAGS="$FUZZ_RUSTFLAGS" cargo +nightly build --release --locked --bins \
  --target "$HOST" >&2)
findings=0
printf '%-18s %12s %8s %9s\n' target executions seconds findings
for t in "${TARGETS[@]}"; do
  mkdir -p "$WORK/$t/new" "$WORK/$t/artifacts"
  log="$WORK/$t/log"
  status=0
  # The built target directly: `cargo fuzz run` would check the build again for each one.
  "fuzz/target/$HOST/release/$t" "$WORK/$t/new" "fuzz/corpus/$t" \
    -max_total_time="$SECONDS_EACH" -artifact_prefix="$WORK/$t/artifacts/" \
    -print_final_stats=1 >"$log" 2>&1 || status=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  secs=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  found=$(find "$WORK/$t/artifacts" -type f | wc -l)
  if [ "$status" -ne 0 ] && [ "$found" -eq 0 ]; then
    echo "fuzz target $t failed to run (exit $status); its log:" >&2
    tail -30 "$log" >&2
    exit 1
  fi
  printf '%-18s %12s %8s %9s\n' "$t" "${runs:-0}" "$SECONDS_EACH" "$found"
  if [ "$found" -ne 0 ]; then
    findings=$((findings + found))
    echo "  finding(s) kept in $WORK/$t/artifacts/ (reproduce: fuzz/target/$HOST/release/$t <file>)" >&2
  fi
done
[ -z "${FUZZ_WORK:-}" ] && [ "$findings" -eq 0 ] && rm -rf "$WORK"
[ "$findings" -eq 0 ]
