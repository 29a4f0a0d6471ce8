#!/usr/bin/env bash
# Library crates take their configuration as values and leave the process to the program
# that embeds them: no environment variables, no printing to stdout or stderr, no signal
# handlers. Only the `weir` binary (crates/weir) does those. Test code (tests/, examples/,
# benches/, `*_tests.rs` and `tests.rs` module files, and a file's inline `#[cfg(test)] mod`,
# which comes last in the file by convention) may print, and weir-testfs, which only tests
# depend on, prints its SKIP lines. Exits 1 and names file:line for every use found.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='std::env::var|env::var_os|env::var\\(|eprintln!|println!|eprint!|[^_]print!|io::stderr\\(|io::stdout\\(|libc::sigaction|libc::signal\\(|signal_hook|ctrlc::'
found=0
while IFS= read -r file; do
  # Only the part of the file before its inline test module: a `#[cfg(test)]` followed (past
  # other attributes) by `mod NAME {`. `#[cfg(test)] mod NAME;` only declares a test file,
  # and the code after it is still library code.
  hits=$(awk -v pat="$pattern" '
    /^#\[cfg\(test\)\]/ { pending = 1; next }
    pending && /^#\[/ { next }
    pending && /^(pub(\([a-z]+\))? )?mod [a-z_0-9]+ *\{/ { exit }
    { pending = 0 }
    /^[[:space:]]*\/\/[\/!]/ { next }
    $0 ~ pat { printf "%s:%d: %s\n", FILENAME, FNR, $0 }
  ' "$file")
  if [ -n "$hits" ]; then
    printf '%s\n' "$hits"
    found=1
  fi
done < <(find crates -path '*/src/*' -name '*.rs' \
           -not -path 'crates/weir/*' -not -path 'crates/weir-testfs/*' \
           -not -name '*_tests.rs' -not -name 'tests.rs' | sort)
if [ "$found" -ne 0 ]; then
  echo "check-library-manners: library code above reads the environment, prints or handles" \
       "signals; take the value as configuration, return it in a typed error or result, or" \
       "move it to crates/weir (the binary)" >&2
  exit 1
fi
echo "check-library-manners: no environment reads, printing or signal handlers in library crates"
