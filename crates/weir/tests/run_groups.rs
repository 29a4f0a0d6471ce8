//! `weir run --sched-groups`: io_tester's group file, jobs joined by `class`, and its errors.

mod common;

use common::*;

const GROUPS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/sched-groups.yaml"
);

const JOBS: &str = "\
- name: queries
  type: randread
  data_size: 4MB
  shard_info:
    parallelism: 8
    class: statement
- name: compacting
  type: randread
  data_size: 4MB
  shard_info:
    parallelism: 8
    class: compaction
- name: backing_up
  type: randread
  data_size: 4MB
  shard_info:
    parallelism: 8
    class: backup
";

#[test]
fn groups_schedule_jobs_by_class_with_a_model() {
    let s = Scratch::new();
    let props = s.job(
        "io-properties.yaml",
        &format!(
            "disks:\n  - mountpoint: {}\n    read_iops: 20000\n    read_bandwidth: 500M\n    \
             write_iops: 20000\n    write_bandwidth: 500M\n",
            s.dir().display()
        ),
    );
    let job = s.job("jobs.yaml", JOBS);
    let args = [
        "--duration",
        "500ms",
        "--shards",
        "1",
        "--output",
        "json",
        "--sched-groups",
        GROUPS,
        "--io-properties",
        props.to_str().expect("utf-8"),
    ];
    let o = run(&job, s.dir(), &args);
    assert_exit(&o, 0);
    let v = json(&o);
    let classes = v["scheduler"]["classes"].as_array().expect("classes");
    let shares: Vec<(&str, u64)> = classes
        .iter()
        .filter_map(|c| Some((c["name"].as_str()?, c["shares"].as_u64()?)))
        .collect();
    // The groups' shares, not the jobs' default 10.
    assert_eq!(
        shares,
        [("statement", 1000), ("compaction", 200), ("backup", 100)],
        "{v}"
    );
    let supergroups: Vec<Option<&str>> = classes.iter().map(|c| c["supergroup"].as_str()).collect();
    assert_eq!(
        supergroups,
        [None, Some("maintenance"), Some("maintenance")],
        "{v}"
    );
    assert_eq!(classes[1]["supergroup_shares"], 100, "{v}");
}

#[test]
fn without_a_model_the_groups_are_checked_and_the_run_says_what_they_do() {
    let s = Scratch::new();
    let job = s.job("jobs.yaml", JOBS);
    let args = [
        "--duration",
        "200ms",
        "--shards",
        "1",
        "--sched-groups",
        GROUPS,
    ];
    let o = run(&job, s.dir(), &args);
    assert_exit(&o, 0);
    assert!(
        stderr(&o).contains("Pass --io-properties to apply"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_group_files_and_joins_are_usage_errors_with_their_place() {
    let s = Scratch::new();
    let job = s.job("jobs.yaml", JOBS);
    let bad = s.job("bad.yaml", "- name: a\n  shares: 10\n  parent: nope\n");
    let o = run(
        &job,
        s.dir(),
        &["--sched-groups", bad.to_str().expect("utf-8")],
    );
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("bad.yaml:3:3: group `a`: parent `nope`"),
        "{err}"
    );
    let other = s.job("other.yaml", "- name: statement\n  shares: 10\n");
    let o = run(
        &job,
        s.dir(),
        &["--sched-groups", other.to_str().expect("utf-8")],
    );
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("class `compaction` is neither a group"),
        "{err}"
    );
}
