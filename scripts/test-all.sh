#!/usr/bin/env bash
# The README's test command: installs what a fresh machine lacks, then runs every test tier.
# Root-only tiers (loop-mounted XFS/ext4) run when this is root and skip with a reason otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says how long the one before it took, and the last line the whole run's time.
started=$SECONDS
step_started=$SECONDS
step() {
  if [ "${step_name:-}" ]; then
    printf '(%s: %d s)\n' "$step_name" $((SECONDS - step_started))
  fi
  step_name=$*
  step_started=$SECONDS
  printf '\n==> %s\n' "$*"
}

step "no development words in the tree"
scripts/check-dev-words.sh

step "library crates read no environment, print nothing, install no signal handler"
scripts/check-library-manners.sh

step "system packages (xfsprogs, e2fsprogs, fio)"
scripts/install-deps.sh

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked --features weir-io/tokio -- -D warnings

step "cargo test (unit, simulation, real files, loop-mounted filesystems, the system tier)"
cargo test --workspace --locked --features weir/system-tests,weir-io/tokio

step "docs: links, cli.md against --help, every runnable command in README and the guide"
CARGO_FEATURES=weir/system-tests scripts/check-docs.sh

step "cargo doc --no-deps without warnings"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --features weir-io/tokio

step "cargo package: every crate's manifest, metadata and file list"
cargo package --workspace --exclude weir-testfs --no-verify --locked --allow-dirty --quiet

step "fuzz targets: 8 s each from the seed corpus"
scripts/fuzz.sh 8

step "weir-io examples (each bounded to 60 s, in a temp dir on the real filesystem)"
cargo build -p weir-io --examples --locked --features tokio
examples_dir=$(mktemp -d /var/tmp/weir-io-examples.XXXXXX)
for example in two_classes tokio_service thread_per_core lsm; do
  timeout 60 "target/debug/examples/$example" "$examples_dir" 1 ||
    { rm -rf "$examples_dir"; echo "example $example failed" >&2; exit 1; }
done
rm -rf "$examples_dir"

if [ -f node/weir-cql/package.json ]; then
  step "weir-cql: build and test against a real Apache Cassandra"
  (cd node/weir-cql && npm ci --no-audit --no-fund && npm test)
fi

step "all tests passed"
printf 'total: %d min %d s\n' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60))
