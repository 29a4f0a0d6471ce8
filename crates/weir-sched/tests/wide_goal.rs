//! Shares where the latency goal's window holds the clients' whole depth.
//!
//! The share hold (`queue/hold.rs`) lets a drained class's proportion go when the class holds
//! under two thirds of its share of the window: a class that simply runs shallow must not
//! idle the disk. The window is a goal of disk time, so a wider goal makes every class
//! "shallow": on this project's virtio disk, 4 KiB reads 32 deep per class per shard at
//! 1000:100 came out 0.14-0.23 of the asked ratio at a 1.5 ms and a 3 ms goal (1.000 at
//! 0.75 ms), the light class as deep in the disk as the heavy one. Here, before the fix,
//! the 1.5 ms goal gave 0.100 of asked at 1000:100 (1:1 where 10:1 was asked) behind a
//! 300 us and a 500 us pipeline.
//!
//! A class counts as drained only with a quarter goal of its own work in the disk
//! (`queue/drained.rs`), and that floor scaled with the goal too: 32 16 KiB writes a shard
//! priced as vda's model prices them (250 us of disk time) were never drained at a 1.5 ms
//! goal, so the hold never acted (0.598 of asked here behind the 500 us pipeline; vda 0.083-0.097).
//!
//! The fix (`hold_goal_ps`, `budget/lift.rs`): the hold judges by the goal, at most the
//! default 750 us, both for the window it divides and for the quarter goal that makes a class
//! drained, so "shallow" means shallow for the disk, not for the goal. Tried first, and not
//! kept: letting the depth cap engage past a bound window in a period where the hold let go.
//! It held the read split here (1.000) but not on vda (0.23 of asked), where the cap went off
//! again within a period or two, 60-71 times a row.

mod harness;

use harness::{model_of, run_split, seed, Job};
use std::time::Duration;
use weir_model::device::Direction::{Read, Write};
use weir_sched::SchedConfig;
use weir_sim::SimConfig;

fn wide(goal_us: u64) -> SchedConfig {
    SchedConfig {
        shards: 2,
        latency_goal: Duration::from_micros(goal_us),
        ..SchedConfig::default()
    }
}

/// 4 KiB reads and 16 KiB writes, 32 per class per shard on 2 shards, at goals of 1, 2 and
/// 4 times the default, behind a 300 us and a 500 us pipeline (the device needs ~29-46 reads
/// in flight for its rate): the total at >= 0.95 of unscheduled, the split within 5% of asked, the in-disk
/// p99 within a lone read's plus the goal.
#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn the_shares_hold_at_a_goal_whose_window_holds_every_request() {
    let seed = seed(300);
    for goal_us in [750, 1500, 3000] {
        for pipeline_ns in [300_000, 500_000] {
            let mut sim = SimConfig::nvme_like(seed);
            sim.fixed_latency_ns = pipeline_ns;
            // Writes as vda's model prices them (138.2 K IOPS, 1.99 GB/s): 32 16 KiB writes
            // are 250 us of disk time, under a quarter of a 1.5 ms goal.
            sim.write.iops = 138_200.0;
            sim.write.bytes_per_sec = 1.99e9;
            let model = model_of(&sim);
            for ((a, b), (dir, len)) in [(1000, 100), (100, 1000)]
                .into_iter()
                .flat_map(|split| [(split, (Read, 4096)), (split, (Write, 16384))])
            {
                let pair = [
                    Job::new("a", a, dir, len, 32),
                    Job::new("b", b, dir, len, 32),
                ];
                let split = run_split(&sim, &model, &wide(goal_us), pair, 2);
                let what = format!(
                    "seed {seed}: {dir:?} {len} B, goal {goal_us} us, pipeline {pipeline_ns} ns, {a}:{b}"
                );
                println!(
                    "{what}: {:.3} of unscheduled, ratio {:.3} of asked, in-disk p99 {} us \
                     (solo {} us), depth cap {:.0} us",
                    split.reach,
                    split.ratio_of_asked,
                    split.disk_p99_ns / 1000,
                    split.solo_p99_ns / 1000,
                    split.stats.depth_cap_sec * 1e6
                );
                split.assert_holds(&what, goal_us * 1000);
            }
        }
    }
}

/// The reason the hold lets go: a 1000-share class 4 deep per shard beside a 100-share bulk
/// load 32 deep, at the same wide goals. The bulk load still takes the disk (>= 0.95 of
/// unscheduled): 4 reads are under two thirds of the class's share of a 750 us window.
#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn a_shallow_class_still_leaves_the_disk_to_the_bulk_load_at_a_wide_goal() {
    let seed = seed(301);
    for goal_us in [750, 1500, 3000] {
        let mut sim = SimConfig::nvme_like(seed);
        sim.fixed_latency_ns = 300_000;
        let model = model_of(&sim);
        let pair = [
            Job::new("a", 1000, Read, 4096, 4),
            Job::new("b", 100, Read, 4096, 32),
        ];
        let split = run_split(&sim, &model, &wide(goal_us), pair, 2);
        println!(
            "seed {seed}: goal {goal_us} us, shallow 1000 x4 beside bulk 100 x32: {:.3} of \
             unscheduled, ratio {:.3} of asked",
            split.reach, split.ratio_of_asked
        );
        assert!(
            split.reach >= 0.95,
            "seed {seed}: goal {goal_us} us: the shallow class idled the disk: {:.3} of unscheduled",
            split.reach
        );
    }
}
