#!/bin/bash
# Runs a command beside one CPU-bound competitor pinned to CPU 1 (the bench client's CPU),
# the shape of a client host that is busy with other work; the competitor ends with it.
#   bench/cql/hog.sh COMMAND...   e.g. bench/cql/hog.sh node bench/cql/ab.js weir-cql select 2000 4 WEIR_CQL_WORKER_POLICY=batch
taskset -c 1 bash -c 'while :; do :; done' &
hog=$!
trap 'kill $hog 2>/dev/null' EXIT
"$@"
