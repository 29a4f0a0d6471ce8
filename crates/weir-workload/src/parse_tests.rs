use super::*;

/// Seastar's doc/io-tester.md example, verbatim.
const SEASTAR_DOC_EXAMPLE: &str = "\
- name: big_writes
  type: seqread
  shards: all
  shard_info:
    parallelism: 10
    reqsize: 256kB
    shares: 10
    think_time: 0
";

/// Seastar's apps/io_tester/conf.yaml, verbatim (it uses `seqwrite`, which io_tester itself
/// no longer accepts but weir does).
const SEASTAR_CONF: &str = "\
- name: big_writes
  shards: all
  type: seqwrite
  shard_info:
    parallelism: 10
    reqsize: 256kB
    shares: 10
    think_time: 0

- name: latency_reads
  shards: [0]
  type: randread
  shard_info:
    parallelism: 1
    reqsize: 512
    shares: 100
    think_time: 1000us
";

fn error(text: &str) -> ParseError {
    parse_plan(text).expect_err("must be rejected")
}

#[test]
fn seastar_documented_example_parses() {
    let plan = parse_plan(SEASTAR_DOC_EXAMPLE).expect("doc example");
    let job = &plan.jobs[0];
    assert_eq!(job.name, "big_writes");
    assert_eq!(job.job_type, JobType::SeqRead);
    assert_eq!(job.shards, ShardSet::All);
    assert_eq!(job.parallelism, 10);
    assert_eq!(job.request_bytes, 256 * 1024);
    assert_eq!(job.shares, 10);
    assert_eq!(job.think_time, Duration::ZERO);
    assert_eq!(job.prepare(), Prepare::Overwrite);
}

#[test]
fn seastar_conf_parses() {
    let plan = parse_plan(SEASTAR_CONF).expect("conf.yaml");
    assert_eq!(plan.jobs.len(), 2);
    assert_eq!(plan.jobs[0].prepare(), Prepare::Pretruncate);
    let reads = &plan.jobs[1];
    assert_eq!(reads.shards, ShardSet::List(vec![0]));
    assert_eq!(reads.request_bytes, 512);
    assert_eq!(reads.think_time, Duration::from_micros(1000));
    assert_eq!(reads.class_name(), "latency_reads");
}

#[test]
fn every_documented_key_is_accepted() {
    let text = "\
- name: open
  type: randwrite
  shards: [1, 0]
  data_size: 64MB
  prepare: fallocate
  shard_info:
    parallelism: 2
    rps: 1000
    batch: 4
    limit: 100000
    shares: 200
    class: writes
    reqsize: 8k
    think_time: 10us
    think_after: 1s
  options:
    dsync: true
    sleep_type: steady
    pause_distribution: poisson
    extent_allocation_size_hint: 1MB
    fallocate: true
";
    let job = &parse_plan(text).expect("all keys").jobs[0];
    assert_eq!(job.shards, ShardSet::List(vec![0, 1]));
    assert_eq!(job.data_size_bytes, Some(64 << 20));
    assert_eq!(job.rps, Some(1000));
    assert_eq!(job.batch, 4);
    assert_eq!(job.limit, Some(100_000));
    assert_eq!(job.class_name(), "writes");
    assert!(job.dsync);
    assert_eq!(job.pause_distribution, PauseDistribution::Poisson);
    assert_eq!(job.prepare(), Prepare::Fallocate);
    assert_eq!(job.think_after, Duration::from_secs(1));
    assert!(!job.busy_poll, "steady sleeps");
    let busy = "- name: b\n  type: randread\n  options:\n    sleep_type: busyloop\n";
    assert!(parse_plan(busy).expect("busyloop").jobs[0].busy_poll);
}

#[test]
fn sloppy_and_fallocate_options_choose_a_preparation() {
    let append = "- name: a\n  type: append\n  options:\n    sloppy_size: true\n";
    assert_eq!(
        parse_plan(append).expect("sloppy").jobs[0].prepare(),
        Prepare::Sloppy
    );
    let hint = "- name: a\n  type: append\n  options:\n    sloppy_size_hint: 4MB\n";
    let job = &parse_plan(hint).expect("hint").jobs[0];
    assert_eq!(job.prepare(), Prepare::Sloppy);
    assert_eq!(job.sloppy_size_hint_bytes, Some(4 << 20));
    let falloc = "- name: w\n  type: seqwrite\n  options:\n    fallocate: true\n";
    assert_eq!(
        parse_plan(falloc).expect("fallocate").jobs[0].prepare(),
        Prepare::Fallocate
    );
}

#[test]
fn unknown_key_names_line_column_and_valid_keys() {
    let e = error("- name: a\n  type: randread\n  shard_info:\n    paralelism: 4\n");
    assert_eq!((e.line, e.column), (Some(4), Some(5)), "{e}");
    assert!(e.message.contains("paralelism"), "{e}");
    assert!(e.message.contains("parallelism"), "lists valid keys: {e}");
    let top = error("- name: a\n  type: randread\n  colour: red\n");
    assert_eq!(top.line, Some(3), "{top}");
    assert!(top.message.contains("shard_info"), "{top}");
    let opt = error("- name: a\n  type: randread\n  options:\n    odirect: true\n");
    assert_eq!(opt.line, Some(4), "{opt}");
    assert!(opt.message.contains("pause_distribution"), "{opt}");
}

#[test]
fn unknown_type_lists_valid_types() {
    let e = error("- name: a\n  type: randrw\n");
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.message.contains("unknown type `randrw`"), "{e}");
    assert!(
        e.message
            .contains("seqread, seqwrite, overwrite, randread, randwrite, append"),
        "{e}"
    );
    let unlink = error("- name: a\n  type: unlink\n");
    assert!(unlink.message.contains("files to create"), "{unlink}");
}

#[test]
fn malformed_yaml_has_a_location() {
    let e = error("- name: a\n  type: [randread\n");
    assert!(e.line.is_some(), "{e}");
    let map = error("name: a\ntype: randread\n");
    assert!(map.message.contains("YAML list of jobs"), "{map}");
    let missing = error("- type: randread\n");
    assert!(
        missing.message.contains("missing field `name`"),
        "{missing}"
    );
}

#[test]
fn bad_values_are_located() {
    let size = error("- name: a\n  type: randread\n  shard_info:\n    reqsize: 4 kilobytes\n");
    assert_eq!(size.line, Some(4), "{size}");
    assert!(size.message.contains("binary suffix"), "{size}");
    let time = error("- name: a\n  type: randread\n  shard_info:\n    think_time: 100\n");
    assert_eq!(time.line, Some(4), "{time}");
    assert!(time.message.contains("needs a unit"), "{time}");
    let shards = error("- name: a\n  type: randread\n  shards: some\n");
    assert_eq!(shards.line, Some(3), "{shards}");
    let pause = error("- name: a\n  type: randread\n  options:\n    pause_distribution: gauss\n");
    assert!(pause.message.contains("uniform, poisson"), "{pause}");
    let prepare = error("- name: a\n  type: seqwrite\n  prepare: zero\n");
    assert!(prepare.message.contains("pretruncate"), "{prepare}");
}

#[test]
fn semantic_errors_point_at_the_field() {
    let text = "- name: fine\n  type: randread\n- name: bad\n  type: randread\n  prepare: append\n";
    let e = error(text);
    assert_eq!((e.line, e.column), (Some(5), Some(3)), "{e}");
    assert!(e.message.contains("job `bad`, prepare"), "{e}");
    let zero = error("- name: z\n  type: randread\n  shard_info:\n    parallelism: 0\n");
    assert!(zero.message.contains("parallelism"), "{zero}");
    assert_eq!((zero.line, zero.column), (Some(4), Some(5)), "{zero}");
    // The search stays inside the job: the second job's `prepare` is not the first's.
    let second = "- name: a\n  type: randread\n  prepare: append\n- name: b\n  type: randread\n  prepare: append\n";
    assert_eq!(error(second).line, Some(3));
    let empty = error("");
    assert!(empty.message.contains("no jobs"), "{empty}");
}

#[test]
fn bandwidth_is_an_open_loop_byte_rate() {
    let plan = parse_plan(
        "- name: w\n  type: seqwrite\n  shard_info:\n    reqsize: 128kB\n    bandwidth: 10MB\n",
    )
    .expect("parses");
    let job = &plan.jobs[0];
    assert_eq!(job.bandwidth_bytes_per_s, Some(10 << 20));
    assert!(job.is_open_loop());
    // 10 MiB/s of 128 KiB requests: 80 arrivals per second.
    assert_eq!(job.arrivals_per_s(), Some(80.0));
    let batched = parse_plan(
        "- name: w\n  type: randread\n  shard_info:\n    reqsize: 4kB\n    batch: 4\n    bandwidth: 1MB\n",
    )
    .expect("parses");
    assert_eq!(batched.jobs[0].arrivals_per_s(), Some(64.0));
}

#[test]
fn bandwidth_with_rps_is_refused_at_the_field() {
    let text = "- name: w\n  type: randread\n  shard_info:\n    rps: 100\n    bandwidth: 10MB\n";
    let e = error(text);
    assert_eq!((e.line, e.column), (Some(5), Some(5)), "{e}");
    assert!(
        e.message.contains("cannot be combined with shard_info.rps"),
        "{e}"
    );
    assert!(e.to_string().starts_with("5:5: "), "{e}");
    let zero = error("- name: w\n  type: randread\n  shard_info:\n    bandwidth: 0\n");
    assert!(zero.message.contains("bandwidth: is 0"), "{zero}");
}
