//! The two-level share hierarchy (supergroups, then classes inside one) over the simulated
//! disk, on virtual time. Each test prints its seed; set `WEIR_SIM_SEED` to replay one.

mod harness;

use harness::{seed, Harness, Job};
use std::time::Duration;
use weir_model::device::Direction::{Read, Write};
use weir_sched::SchedConfig;
use weir_sim::SimConfig;

const S: u64 = 1_000_000_000;

/// Disk time (s) of every job between 0.5 s and 2.5 s of a run on `shards` shards.
fn disk_times(shards: usize, seed: u64, jobs: Vec<Job>) -> Vec<f64> {
    let sched = SchedConfig {
        shards,
        latency_goal: Duration::from_micros(750),
        ..Default::default()
    };
    let count = jobs.len();
    let mut h = Harness::new(SimConfig::nvme_like(seed), sched, jobs);
    h.run_until(5 * S / 2);
    let times: Vec<f64> = (0..count)
        .map(|j| h.disk_time_between(j, S / 2, 5 * S / 2))
        .collect();
    println!("disk time per job (s, of 2.0): {times:.3?}");
    times
}

fn assert_ratio(seed: u64, what: &str, got: f64, want: f64) {
    assert!(
        (got / want - 1.0).abs() <= 0.05,
        "seed {seed}: {what} came out {got:.3}:1, want {want}:1 within 5%"
    );
}

/// Seastar's apps/io_tester/sched.yaml: `statement` (1000) beside the supergroup
/// `maintenance` (100) holding `compaction` (200) and `backup` (100).
fn sched_yaml(write_bytes: u64) -> [Job; 3] {
    [
        Job::new("statement", 1000, Write, write_bytes, 64),
        Job::new("compaction", 200, Write, write_bytes, 64).in_group("maintenance", 100),
        Job::new("backup", 100, Write, write_bytes, 64).in_group("maintenance", 100),
    ]
}

#[test]
fn both_levels_hold_within_a_shard() {
    let seed = seed(41);
    let t = disk_times(1, seed, sched_yaml(128 << 10).to_vec());
    assert_ratio(seed, "statement : maintenance", t[0] / (t[1] + t[2]), 10.0);
    assert_ratio(seed, "compaction : backup", t[1] / t[2], 2.0);
}

#[test]
fn both_levels_hold_with_reads_and_writes_mixed() {
    let seed = seed(42);
    let jobs = vec![
        Job::new("query", 300, Read, 4096, 128),
        Job::new("flush", 300, Write, 128 << 10, 64).in_group("background", 100),
        Job::new("compaction", 100, Write, 128 << 10, 64).in_group("background", 100),
    ];
    let t = disk_times(1, seed, jobs);
    assert_ratio(seed, "query : background", t[0] / (t[1] + t[2]), 3.0);
    assert_ratio(seed, "flush : compaction", t[1] / t[2], 3.0);
}

#[test]
fn both_levels_hold_across_shards() {
    // The top level on different shards, and a supergroup whose classes sit on a shard of
    // their own.
    let seed = seed(43);
    let [statement, compaction, backup] = sched_yaml(128 << 10);
    let jobs = vec![
        statement.on_shard(0),
        compaction.on_shard(1),
        backup.on_shard(1),
    ];
    let t = disk_times(2, seed, jobs);
    assert_ratio(seed, "statement : maintenance", t[0] / (t[1] + t[2]), 10.0);
    assert_ratio(seed, "compaction : backup", t[1] / t[2], 2.0);
    // Every job on both shards (io_tester's `shards: all`): each shard's instances compete
    // in the disk's one virtual time, so the totals keep both ratios.
    let mut jobs = Vec::new();
    for shard in 0..2 {
        jobs.extend(sched_yaml(128 << 10).map(|j| j.on_shard(shard)));
    }
    let t = disk_times(2, seed, jobs);
    let (statement, compaction, backup) = (t[0] + t[3], t[1] + t[4], t[2] + t[5]);
    assert_ratio(
        seed,
        "statement : maintenance, all shards",
        statement / (compaction + backup),
        10.0,
    );
    assert_ratio(
        seed,
        "compaction : backup, all shards",
        compaction / backup,
        2.0,
    );
}

#[test]
fn an_idle_class_leaves_its_turns_to_its_siblings() {
    // Without `backup` the supergroup still gets its 100 shares: all of them go to
    // `compaction` (a flat queue would give compaction only its own 200 against 1000).
    let seed = seed(44);
    let mut jobs = sched_yaml(128 << 10).to_vec();
    jobs[2].start_ns = 10 * S; // never starts within the run
    let t = disk_times(1, seed, jobs);
    assert_ratio(seed, "statement : compaction alone", t[0] / t[1], 10.0);
}

#[test]
fn a_supergroup_of_one_class_is_that_class_at_the_top_level() {
    let seed = seed(45);
    let jobs = vec![
        Job::new("a", 1000, Write, 128 << 10, 64),
        Job::new("b", 7, Write, 128 << 10, 64).in_group("g", 250),
    ];
    let t = disk_times(1, seed, jobs);
    assert_ratio(seed, "a : g", t[0] / t[1], 4.0);
}

#[test]
fn a_supergroup_is_per_shard_like_a_class() {
    // `compaction` on shard 1 and `backup` on shard 2: each shard has its own instance of
    // `maintenance` with its 100 shares (as io_tester's per-shard jobs each have their
    // shares), so the two do not divide one instance's part: 1000 : 100 : 100.
    let seed = seed(46);
    let [statement, compaction, backup] = sched_yaml(128 << 10);
    let jobs = vec![
        statement.on_shard(0),
        compaction.on_shard(1),
        backup.on_shard(2),
    ];
    let t = disk_times(3, seed, jobs);
    assert_ratio(seed, "statement : compaction", t[0] / t[1], 10.0);
    assert_ratio(seed, "statement : backup", t[0] / t[2], 10.0);
}
