#!/usr/bin/env bash
# Captures weir's stderr and exit code for a fixed set of bad inputs, so a refactor of the
# error types can be checked byte for byte:
#
#   scripts/error-messages.sh > /tmp/before.txt      # on the old binary
#   scripts/error-messages.sh > /tmp/after.txt       # on the new one
#   diff /tmp/before.txt /tmp/after.txt
#
# WEIR picks the binary (default target/release/weir); the inputs are written under a fixed
# directory (WEIR_ERRORS_DIR, default /var/tmp/weir-errors) so paths in messages repeat.
# Every case must fail before any I/O is measured, so the whole set takes seconds. A case that
# runs longer than 20 s is printed as a hang.
set -u
weir=${WEIR:-target/release/weir}
d=${WEIR_ERRORS_DIR:-/var/tmp/weir-errors}
rm -rf "$d"
mkdir -p "$d/dir" "$d/out"
touch "$d/plain-file"

job() { # job NAME CONTENT: writes a job file under $d
    printf '%b' "$2" >"$d/$1"
}

case_() { # case_ LABEL ARGS...: runs weir ARGS and prints exit code and stderr
    local label=$1
    shift
    echo "== $label"
    local err rc
    err=$(timeout 20 "$weir" "$@" 2>&1 >/dev/null)
    rc=$?
    [ "$rc" = 124 ] && echo "HANG (20 s)"
    echo "exit $rc"
    # clap names the binary as invoked, and align's file names carry the process id.
    printf '%s\n' "$err" | sed -E 's/^Usage: [^ ]+ /Usage: weir /; s/-align-[0-9]+-/-align-PID-/'
}

ok='- name: r\n  type: randread\n  data_size: 2MB\n  shard_info:\n    parallelism: 1\n'
job ok.yaml "$ok"
job malformed.yaml '- name: r\n  type: [randread\n'
job misspelled.yaml '- name: r\n  type: randread\n  shard_info:\n    paralelism: 2\n'
job unknown-type.yaml '- name: r\n  type: randrw\n'
job no-name.yaml '- type: randread\n'
job no-type.yaml '- name: r\n'
job bad-unit.yaml '- name: r\n  type: randread\n  shard_info:\n    reqsize: 4kX\n'
job zero-reqsize.yaml '- name: r\n  type: randread\n  shard_info:\n    reqsize: 0\n'
job neg-parallelism.yaml '- name: r\n  type: randread\n  shard_info:\n    parallelism: -1\n'
job zero-parallelism.yaml '- name: r\n  type: randread\n  shard_info:\n    parallelism: 0\n'
job huge-data.yaml '- name: r\n  type: randread\n  data_size: 100000TB\n'
job shard-out.yaml '- name: r\n  type: randread\n  shards: [5]\n  data_size: 2MB\n'
job shards-word.yaml '- name: r\n  type: randread\n  shards: some\n'
job empty.yaml ''
job tabs.yaml '- name: r\n\ttype: randread\n'
job dup.yaml '- name: r\n  type: randread\n  data_size: 2MB\n- name: r\n  type: randread\n  data_size: 2MB\n'
job bad-think.yaml '- name: r\n  type: randread\n  shard_info:\n    think_time: soon\n'
job misaligned.yaml '- name: r\n  type: randread\n  data_size: 2MB\n  shard_info:\n    reqsize: 1000\n'
job not-a-list.yaml 'name: r\ntype: randread\n'
job string-parallelism.yaml '- name: r\n  type: randread\n  shard_info:\n    parallelism: many\n'
job class-unknown.yaml '- name: r\n  type: randread\n  data_size: 2MB\n  shard_info:\n    class: nosuch\n'
job cpu.yaml '- name: c\n  type: cpu\n  shard_info:\n    execution_time: lots\n'
job unlink-no-count.yaml '- name: u\n  type: unlink\n  data_size: 2MB\n'
job bad-options.yaml '- name: r\n  type: randread\n  options:\n    sleep_type: nap\n'
job vector-bad.yaml '- name: r\n  type: randread\n  shard_info:\n    reqsize: 64kB\n    vectorized: true\n    iov_count: 3\n'
job groups-malformed.yaml '- name: g\n  shares: [1\n'
job groups-parent.yaml '- name: g\n  shares: 100\n  parent: nosuch\n'
job groups-ok.yaml '- name: g\n  shares: 100\n'
job props-malformed.yaml 'disks:\n  - mountpoint: /\n    read_iops: [1\n'
job props-missing.yaml 'disks:\n  - mountpoint: /\n    read_iops: 1000\n'
job props-strings.yaml 'disks:\n  - mountpoint: /\n    read_iops: many\n    read_bandwidth: 1000000\n    write_iops: 1000\n    write_bandwidth: 1000000\n'
job props-elsewhere.yaml 'disks:\n  - mountpoint: /nonexistent-mount\n    read_iops: 1000\n    read_bandwidth: 1000000\n    write_iops: 1000\n    write_bandwidth: 1000000\n'
job props-ok.yaml 'disks:\n  - mountpoint: /\n    read_iops: 1000\n    read_bandwidth: 1000000\n    write_iops: 1000\n    write_bandwidth: 1000000\n'
job props-zero.yaml 'disks:\n  - mountpoint: /\n    read_iops: 0\n    read_bandwidth: 0\n    write_iops: 0\n    write_bandwidth: 0\n'
job sim-bad.yaml 'nonsense: [\n'
job explore.json '{ "not": "explore" }\n'
job diskplorer.json 'not json\n'

r=(run --duration 100ms --dir "$d/dir")
case_ run-missing-jobfile "${r[@]}" "$d/nope.yaml"
case_ run-jobfile-is-dir "${r[@]}" "$d/dir"
for f in malformed misspelled unknown-type no-name no-type bad-unit zero-reqsize \
    neg-parallelism zero-parallelism huge-data shard-out shards-word empty tabs dup bad-think \
    misaligned not-a-list string-parallelism class-unknown cpu unlink-no-count bad-options \
    vector-bad; do
    case_ "run-job-$f" "${r[@]}" "$d/$f.yaml"
done
case_ run-dir-missing run --duration 100ms --dir "$d/nope" "$d/ok.yaml"
case_ run-dir-is-file run --duration 100ms --dir "$d/plain-file" "$d/ok.yaml"
case_ run-duration-bad run --duration x --dir "$d/dir" "$d/ok.yaml"
case_ run-duration-zero run --duration 0s --dir "$d/dir" "$d/ok.yaml"
case_ run-backend-bad "${r[@]}" --backend foo "$d/ok.yaml"
case_ run-shards-zero "${r[@]}" --shards 0 "$d/ok.yaml"
case_ run-dir-and-device "${r[@]}" --device /dev/nope "$d/ok.yaml"
case_ run-device-missing run --duration 100ms --device "$d/nope-dev" "$d/ok.yaml"
case_ run-device-regular run --duration 100ms --device "$d/plain-file" "$d/ok.yaml"
case_ run-verify-devnull run --duration 100ms --dir /dev/null --verify "$d/ok.yaml"
case_ run-metrics-no-props "${r[@]}" --metrics "$d/out/m.prom" "$d/ok.yaml"
case_ run-props-missing "${r[@]}" --io-properties "$d/nope.yaml" "$d/ok.yaml"
for f in malformed missing strings elsewhere zero; do
    case_ "run-props-$f" "${r[@]}" --io-properties "$d/props-$f.yaml" "$d/ok.yaml"
done
case_ run-goal-bad "${r[@]}" --latency-goal fast "$d/ok.yaml"
case_ run-goal-bad-props "${r[@]}" --io-properties "$d/props-ok.yaml" --latency-goal fast "$d/ok.yaml"
case_ run-groups-missing "${r[@]}" --sched-groups "$d/nope.yaml" "$d/ok.yaml"
case_ run-groups-malformed "${r[@]}" --sched-groups "$d/groups-malformed.yaml" "$d/ok.yaml"
case_ run-groups-parent "${r[@]}" --sched-groups "$d/groups-parent.yaml" "$d/ok.yaml"
case_ run-groups-class "${r[@]}" --sched-groups "$d/groups-ok.yaml" "$d/class-unknown.yaml"
case_ run-simulate-missing run --duration 100ms --simulate "$d/nope.yaml" "$d/ok.yaml"
case_ run-simulate-bad run --duration 100ms --simulate "$d/sim-bad.yaml" "$d/ok.yaml"
case_ run-plot-unwritable "${r[@]}" --plot /proc/nope/p.svg "$d/ok.yaml"
case_ run-buffered-device run --duration 100ms --buffered --device "$d/plain-file" "$d/ok.yaml"

case_ tune-dir-missing tune --duration 5s --properties-file "$d/out/p.yaml" --dir "$d/nope"
case_ tune-dir-is-file tune --duration 5s --properties-file "$d/out/p.yaml" --dir "$d/plain-file"
case_ tune-tmpfs tune --duration 5s --properties-file "$d/out/p.yaml" --dir /dev/shm
case_ tune-duration-bad tune --duration x --dir "$d/dir"
case_ tune-backend-bad tune --duration 5s --properties-file "$d/out/p.yaml" --backend foo --dir "$d/dir"
case_ tune-properties-unwritable tune --duration 5s --properties-file /proc/nope/p.yaml --dir "$d/dir"
case_ tune-shards-zero tune --duration 5s --properties-file "$d/out/p.yaml" --shards 0 --dir "$d/dir"

case_ explore-dir-missing explore --quick --dir "$d/nope" --out "$d/out"
case_ explore-dir-is-file explore --quick --dir "$d/plain-file" --out "$d/out"
case_ explore-goal-bad explore --quick --goal x --dir "$d/dir" --out "$d/out"
case_ explore-budget-bad explore --budget x --dir "$d/dir" --out "$d/out"
case_ explore-regime-bad explore --quick --write-regime sideways --dir "$d/dir" --out "$d/out"
case_ explore-read-size-bad explore --quick --read-size 4kX --dir "$d/dir" --out "$d/out"
case_ explore-compare-one explore --compare "$d/explore.json"
case_ explore-compare-bad explore --compare "$d/explore.json" "$d/explore.json"
case_ explore-import-missing explore --import "$d/nope.json" --out "$d/out"
case_ explore-import-bad explore --import "$d/diskplorer.json" --out "$d/out"
case_ explore-backend-bad explore --quick --backend foo --dir "$d/dir" --out "$d/out"
case_ explore-tmpfs explore --quick --dir /dev/shm --out "$d/out"

case_ align-dir-missing align "$d/nope"
case_ align-file-size align --file-size 1MB --request-size 3000 "$d/dir"
case_ align-request-size-bad align --request-size 4kX "$d/dir"
case_ align-modes-bad align --modes sideways "$d/dir"
case_ align-backend-bad align --backend foo "$d/dir"
case_ align-depth-zero align --depth 0 "$d/dir"
case_ align-tmpfs align /dev/shm

case_ qualify-dir-missing qualify "$d/nope"
case_ qualify-tmpfs qualify /dev/shm
case_ qualify-ios-zero qualify --ios 0 "$d/dir"

case_ doctor-dir-missing doctor "$d/nope"
case_ doctor-dir-is-file doctor "$d/plain-file"

case_ report-dir-missing report --dir "$d/nope" --out "$d/out/r.html"
case_ report-out-unwritable report --quick --dir "$d/dir" --out /proc/nope/r.html
case_ report-backend-bad report --quick --backend foo --dir "$d/dir" --out "$d/out/r.html"
