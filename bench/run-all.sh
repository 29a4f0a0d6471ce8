#!/usr/bin/env bash
# run-all.sh: regenerates the figures of docs/benchmarks.md. Runs every bench the page names,
# with the page's command, one after another, and writes each one's output (what it compares
# and its medians, ratios and spreads) to bench/out/<date>/<name>.txt, headed by the date, the
# machine, the kernel and the disk it ran on. About two hours; root for the zram tiers and the
# kernel-scheduler rows.
#
# Usage: bench/run-all.sh            run them all
#        bench/run-all.sh --list     print the commands, run nothing
#        bench/run-all.sh NAME...    run only these (names as --list prints them)
# Environment: WEIR (a built weir; default: cargo build --release -p weir), and each bench's own
#   variables (see its header).
set -euo pipefail
cd "$(dirname "$0")/.."

benches=(
    "engine-vda|bench/engine-vs-fio.sh"
    "engine-zram|TIER=zram bench/engine-vs-fio.sh"
    "engine-zram-qd32|TIER=zram ROUNDS=9 DURATION_S=5 WORKLOADS=randread_qd32 BACKENDS='uring uring_eager_batch8' FIO_SIDES=fio_reg_batch bench/engine-vs-fio.sh"
    "tune-fio|bench/tune-fio-depths.sh"
    "shares|BRACKET='vda:randwrite zram:randwrite' TIERS='vda zram' ROUNDS=6 PROPS=bench/vda-quiet.yaml ZRAM_PROPS=bench/zram-quiet.yaml bench/shares.sh"
    "shares-goals|TIERS=vda SIZES=4kB OPS=randread BRACKET=all ROUNDS=6 GOALS='0.75ms 1.5ms 3ms' PROPS=bench/vda-quiet.yaml bench/shares.sh"
    "qos|GOAL=1ms DURATION=5s ROUNDS=3 SWEEP='' bench/qos.sh"
    "qos-tuned|KERNEL_ROWS=0 PROPS=bench/vda-quiet.yaml GOAL=1ms DURATION=5s ROUNDS=8 SWEEP='' MAP=none bench/qos.sh"
    "sched-cost|bench/sched-cost.sh"
    "sched-cost-hog|HOG=2 bench/sched-cost.sh"
    "explore-vda|mkdir -p /var/tmp/weir-explore && \"\${WEIR:-target/release/weir}\" explore --dir /var/tmp/weir-explore --out /var/tmp/weir-explore-out"
    "explore-repeat|SIZE=8G bench/explore-repeat.sh"
    "explore-replay|bench/explore-replay.sh /var/tmp/weir-explore-out/explore.json"
    "explore-sim-qos|bench/explore-sim-qos.sh"
    "sched-soak|bench/soak.sh"
    "sched-sim|bench/sched-sim.sh"
    "lsm|bench/lsm.sh --dir /var/tmp/weir-lsm --duration 6 --out /var/tmp/weir-lsm.json"
    "fuzz|bench/fuzz.sh"
    "cql-client-cost|cd node/weir-cql/bench && npm ci --no-audit --no-fund && node client-cost.js"
    "cql-soak|SOAK_MINUTES=30 node/weir-cql/bench/soak.sh"
)

if [[ ${1:-} == --list ]]; then
    for b in "${benches[@]}"; do printf '%-18s %s\n' "${b%%|*}" "${b#*|}"; done
    exit 0
fi

if [[ -z ${WEIR:-} ]]; then
    cargo build --release -p weir
    export WEIR=$PWD/target/release/weir
fi
out=bench/out/$(date -u +%Y-%m-%d)
mkdir -p "$out"
disk=$(findmnt -n -o SOURCE --target /var/tmp 2>/dev/null || echo unknown)
failed=0
for b in "${benches[@]}"; do
    name=${b%%|*} cmd=${b#*|}
    if [[ $# -gt 0 ]] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi
    {
        echo "# $name: $cmd"
        echo "# $(date -u '+%Y-%m-%d') on $(hostname): $(nproc) CPUs, Linux $(uname -r), disk $disk," \
            "load average $(cut -d' ' -f1-3 /proc/loadavg)"
    } >"$out/$name.txt"
    echo "==> $name ($out/$name.txt)"
    if ! bash -c "$cmd" >>"$out/$name.txt" 2>&1; then
        echo "    $name failed: see $out/$name.txt" >&2
        failed=$((failed + 1))
    fi
done
[[ $failed -eq 0 ]] || { echo "$failed bench(es) failed" >&2; exit 1; }
