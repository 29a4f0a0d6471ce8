#!/usr/bin/env bash
# lsm.sh: an LSM-shaped workload through weir-io against the status quo, all in one run.
#
# Usage: bench/lsm.sh --dir DIR --duration SECS --out FILE [--rounds N] [--goal-us US]
#                     [--caps MB/s,...] [--model io-properties.yaml] [--read-rate N]
#                     [--append-rate N] [--qd32-secs N] [--only MODE,...] [--spin-us US]
#                     [--qd32-workers N] [--duplex true|false]
#
# On files in DIR (a directory on the disk to measure; 2 GiB are prefilled once and kept for
# later runs), foreground 4 KiB point reads (--read-rate per second, default 2000) and 4 KiB
# commit-log appends (--append-rate, default 500) arrive open-loop while background writes
# (1 MiB overwrites, 16 in flight) run as fast as they are let, from one tokio application:
#   weir            weir-io with the scheduler: the tuned model (--model) and a goal (--goal-us)
#   none            the same weir-io loop with no scheduler
#   token-bucket-N  no scheduler; background writes capped at N MB/s by a token bucket
#                   (RocksDB/TiKV style), one row per --caps value (default 25..800, six caps)
#   tokio-fs        std pread/pwrite on tokio's blocking threads, as tokio::fs does
# plus a "solo" row (reads alone) for the target's solo read p99. Then 4 KiB random reads at
# 32 in flight: the engine's own shard loop; weir-io from a tokio runtime with its loop on its
# own thread (with and without the scheduler), and with the ring driven by the runtime's own
# thread (weir-io-driven, LocalShard::drive); weir-io thread-per-core (weir-io-local); and
# tokio-fs. Every round runs every mode, in an order rotated per round; the
# JSON holds the medians over rounds (and each round's values). Prints one summary line.
# Regimes: background writes overwrite; appends extend a fresh file; everything is O_DIRECT.
# --only runs just the named rows (LSM modes by name; QD32 rows raw-engine, weir-io,
# weir-io-scheduled, weir-io-driven, weir-io-local, tokio-fs); --spin-us sets weir-io's loop spin (DiskBuilder::spin, off by
# default); --qd32-workers sets the QD32 part's tokio worker threads (default 2, as the LSM part).
# A model file that does not say `duplex:` (tune's and iotune's do not: neither measures it) is
# read with `duplex: true`, as bench/qos.sh does: this VM's disk serves reads beside writes, and
# a half-duplex lane makes every read wait behind the write window (at a 1 ms goal, read p99
# 1.8 ms half-duplex against 1.2-1.3 ms duplex, writes 690 and 630-830 MB/s); --duplex false
# keeps the file as it is.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
source "$REPO/bench/lib.sh"
args=("$@")
dir= out=
while [[ $# -gt 0 ]]; do
    case $1 in
        --dir) dir=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --duration|--rounds|--goal-us|--caps|--model|--read-rate|--append-rate|--qd32-secs|--only|--spin-us|--qd32-workers|--duplex)
            shift 2 ;;
        *) echo "lsm.sh: unknown argument $1 (see the usage at the top of bench/lsm.sh)" >&2
           exit 2 ;;
    esac
done
[[ -n "$dir" && -n "$out" ]] || {
    echo "lsm.sh: --dir DIR and --out FILE are required; e.g. bench/lsm.sh --dir /var/tmp/lsm \
--duration 10 --out lsm.json" >&2; exit 2; }
mkdir -p "$dir"
has_model=no
for a in "${args[@]}"; do [[ $a == --model ]] && has_model=yes; done
model_args=()
[[ $has_model == no ]] && model_args=(--model "$REPO/io-properties.yaml")
(cd "$REPO" && cargo build --release --locked -q -p weir-io --features tokio --example lsm_bench)
bench_lock lsm
exec "${CARGO_TARGET_DIR:-$REPO/target}/release/examples/lsm_bench" "${model_args[@]}" "${args[@]}"
