//! The workload driver on the seeded simulated disk (`weir-sim`) through the public API, as
//! `weir tune` would use it. Each test prints its seed on failure so it replays exactly.

use std::time::Duration;

mod common;

use common::Sim;
use weir_sim::SimConfig;
use weir_workload::{run_with, Control, Job, JobType, Plan, RunOptions};

fn run_once(seed: u64, parallelism: u32) -> weir_workload::Report {
    let mut job = Job::new("reads", JobType::RandRead);
    job.parallelism = parallelism;
    job.data_size_bytes = Some(1 << 30);
    let options = RunOptions {
        dir: None,
        duration: Duration::from_secs(1),
        shards: 1,
        seed,
        ..RunOptions::default()
    };
    let sim = Sim {
        config: SimConfig::nvme_like(seed),
    };
    run_with(&Plan::new(vec![job]), &options, &sim, &mut |_| {
        Control::Continue
    })
    .unwrap_or_else(|e| panic!("seed {seed}: {e}"))
}

#[test]
fn queue_depth_raises_iops_on_the_simulated_nvme() {
    let seed = 7;
    let qd1 = run_once(seed, 1).jobs[0].throughput.iops;
    let qd32 = run_once(seed, 32).jobs[0].throughput.iops;
    // The preset: ~88 us at QD1 (~11K IOPS), ~85K IOPS at QD32.
    assert!((8_000.0..14_000.0).contains(&qd1), "seed {seed}: QD1 {qd1}");
    assert!(
        (60_000.0..100_000.0).contains(&qd32),
        "seed {seed}: QD32 {qd32}"
    );
}

#[test]
fn same_seed_same_report() {
    let seed = 11;
    let a = run_once(seed, 8);
    let b = run_once(seed, 8);
    assert_eq!(
        a.jobs[0].throughput.ops, b.jobs[0].throughput.ops,
        "seed {seed}"
    );
    assert_eq!(
        a.jobs[0].latencies.latency_us, b.jobs[0].latencies.latency_us,
        "seed {seed}"
    );
}

/// The scheduled mix of the qos benchmark (4 KiB reads x4 in `query`, 128 KiB sequential
/// writes x64 in `compaction`) on the simulated virtio disk whose writes cost per request.
/// Returns (read p99 us, write MB/s, merged requests).
fn scheduled_sparse_mix(seed: u64, merge_adjacent: bool) -> (f64, f64, u64) {
    let sim = SimConfig::virtio_sparse_writes(seed);
    let mut reads = Job::new("reads", JobType::RandRead);
    reads.parallelism = 4;
    reads.data_size_bytes = Some(1 << 30);
    reads.class = Some("query".into());
    reads.shares = 1000;
    let mut writes = Job::new("writes", JobType::SeqWrite);
    writes.parallelism = 64;
    writes.request_bytes = 128 << 10;
    writes.data_size_bytes = Some(32 << 30);
    writes.class = Some("compaction".into());
    writes.shares = 100;
    // Priced as `weir tune` measures it (4 KiB and 1 MiB requests), as in weir-sched's test.
    let model = weir_model::cost::CostModel::new(
        sim.read.iops,
        sim.read.bytes_per_sec,
        39_109.0,
        2.616e9,
        1.0,
        true,
    )
    .expect("model");
    let options = RunOptions {
        dir: None,
        duration: Duration::from_secs(1),
        shards: 1,
        seed,
        scheduler: Some(weir_workload::run::SchedulerOptions {
            model,
            config: weir_sched::SchedConfig::default(),
            mountpoint: "/sim".into(),
            merge_adjacent,
            groups: None,
        }),
        ..RunOptions::default()
    };
    let factory = Sim { config: sim };
    let report = run_with(
        &Plan::new(vec![reads, writes]),
        &options,
        &factory,
        &mut |_| Control::Continue,
    )
    .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    let merged = report
        .scheduler
        .as_ref()
        .expect("scheduler")
        .merged
        .requests;
    (
        report.jobs[0].latencies.latency_us.p99,
        report.jobs[1].throughput.bandwidth_bytes_per_s / 1e6,
        merged,
    )
}

#[test]
fn merging_adjacent_writes_buys_write_bandwidth_at_the_same_read_tail() {
    // WEIR_SIM_SEED replays another seed, as in weir-sched's simulation tests.
    let seed = std::env::var("WEIR_SIM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(91);
    let (p99_single, mbps_single, merged_single) = scheduled_sparse_mix(seed, false);
    let (p99_merged, mbps_merged, merged) = scheduled_sparse_mix(seed, true);
    println!(
        "seed {seed}: one by one: read p99 {p99_single:.0} us, writes {mbps_single:.0} MB/s; \
         merged ({merged} requests): read p99 {p99_merged:.0} us, writes {mbps_merged:.0} MB/s"
    );
    assert_eq!(merged_single, 0, "seed {seed}");
    assert!(merged > 0, "seed {seed}: nothing merged");
    // Before run-time K merging bought 1.12-1.20x here; K now paces the one-by-one writes
    // closer to the disk (1,690-1,730 MB/s at seeds 1-6 and 91, against ~1,550-1,700), and
    // where the bucket binds it releases one piece per wake-up, so merging buys 1.0-1.17x
    // (seed 91: 1.095; seeds 2 and 4 hardly merge, an open item). Asserted: merging still
    // buys at least 5% at this seed.
    assert!(
        mbps_merged >= 1.05 * mbps_single,
        "seed {seed}: merged writes {mbps_merged:.0} MB/s, one by one {mbps_single:.0}"
    );
    assert!(
        p99_merged <= 1.1 * p99_single,
        "seed {seed}: merged read p99 {p99_merged:.0} us, one by one {p99_single:.0}"
    );
}

/// Two shards, each on its own simulated disk and virtual clock, so in wall time one shard
/// runs far ahead of the other. Every sampled window must still hold exactly one window of
/// each shard: evenly paced reads at 2,000/s per shard give 2 x 200 reads per 100 ms window.
/// (A sampler that sums whatever each shard has published when shard 0's window ends puts
/// several windows of a shard ahead of shard 0 into one, and a shard behind's window into the
/// next: a two-shard `weir explore` on zram then sees a pure-read point at exactly half its
/// offered rate.)
#[test]
fn every_sampled_window_holds_one_window_of_every_shard() {
    let seed = 21;
    let mut job = Job::new("reads", JobType::RandRead);
    job.parallelism = 16;
    job.data_size_bytes = Some(1 << 30);
    job.bandwidth_bytes_per_s = Some(2_000 * 4096);
    let options = RunOptions {
        dir: None,
        duration: Duration::from_secs(1),
        sample_interval: Some(Duration::from_millis(100)),
        shards: 2,
        seed,
        ..RunOptions::default()
    };
    let sim = Sim {
        config: SimConfig::nvme_like(seed),
    };
    let mut windows = Vec::new();
    run_with(&Plan::new(vec![job]), &options, &sim, &mut |p| {
        windows.push(p.jobs[0].recent_ops);
        Control::Continue
    })
    .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    assert!(windows.len() >= 8, "seed {seed}: windows {windows:?}");
    // The first window may miss a read still in flight at its end; every later one holds
    // that read instead of its own last.
    for (i, &reads) in windows.iter().enumerate() {
        assert!(
            (398..=402).contains(&reads),
            "seed {seed}: window {i} has {reads} reads, not 2 x 200: {windows:?}"
        );
    }
}
