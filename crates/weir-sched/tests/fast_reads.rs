//! Reads on a disk faster than its model and deeper than a goal (issue 24, session 15;
//! docs/scheduler-rate.md section 20). This project's virtio disk gives ~1.07-1.15x tune's
//! 4 KiB read rate, and only with far more reads in flight than a goal of model time holds;
//! with the drain speed capped at the model (1.0) the window bound and pure 4 KiB reads ran
//! at 0.88 of unscheduled in session 14's quiet bench. Here: `nvme_like` at 1.15x its own
//! model, behind a pipeline longer than the goal, two classes on two shards, judged over
//! 0.5-2 s against the same jobs unscheduled, with read samples allowed above the model
//! (`max_read_speed_factor`, default 1.25) and without (1.0, the scheduler before). Each
//! scenario prints its seed; `WEIR_SIM_SEED` replays one.

mod harness;

use harness::{assert_disk_within_goal, model_of, percentile, seed, Harness, Job};
use weir_model::device::Direction::Read;
use weir_sched::SchedConfig;
use weir_sim::SimConfig;

const S: u64 = 1_000_000_000;
const GOAL_NS: u64 = 750_000;
/// Real read rate / the model's, as vda at depth against tune.
const FASTER: f64 = 1.15;

struct Outcome {
    reach: f64,
    ratio_of_asked: f64,
    disk_p99_ns: u64,
    solo_p99_ns: u64,
    speed: f64,
}

/// The disk: `nvme_like`'s reads at `FASTER` times its rates behind `pipeline_ns`.
fn disk(seed: u64, pipeline_ns: u64) -> SimConfig {
    let mut sim = SimConfig::nvme_like(seed);
    sim.fixed_latency_ns = pipeline_ns;
    sim.read.iops *= FASTER;
    sim.read.bytes_per_sec *= FASTER;
    sim
}

/// Completed model disk time per second of the jobs named `class` in [0.5 s, 2 s).
fn class_rate(h: &Harness, class: &str) -> f64 {
    (0..h.jobs.len())
        .filter(|&j| h.jobs[j].class == class)
        .map(|j| h.disk_time_between(j, S / 2, 2 * S))
        .sum::<f64>()
        / 1.5
}

fn run(seed: u64, pipeline_ns: u64, depth: u32, shares: (u32, u32), read_max: f64) -> Outcome {
    let sim = disk(seed, pipeline_ns);
    let model = model_of(&SimConfig::nvme_like(seed));
    let config = SchedConfig {
        shards: 2,
        max_read_speed_factor: read_max,
        ..SchedConfig::default()
    };
    let jobs: Vec<Job> = (0..2)
        .flat_map(|shard| {
            [
                Job::new("a", shares.0, Read, 4096, depth).on_shard(shard),
                Job::new("b", shares.1, Read, 4096, depth).on_shard(shard),
            ]
        })
        .collect();
    let mut bare = Harness::with_model(sim.clone(), model.clone(), config.clone(), jobs.clone());
    bare.scheduled = false;
    bare.run_until(2 * S);
    let real = class_rate(&bare, "a") + class_rate(&bare, "b");
    let mut h = Harness::with_model(sim.clone(), model.clone(), config.clone(), jobs);
    h.run_until(2 * S);
    let (a, b) = (class_rate(&h, "a"), class_rate(&h, "b"));
    let mut solo = Harness::with_model(sim, model, config, vec![Job::new("s", 1, Read, 4096, 1)]);
    solo.scheduled = false;
    solo.run_until(S / 2);
    let mut solo_ns: Vec<u64> = solo.samples.iter().map(|s| s.disk_ns).collect();
    let stats = h.budget.lane_stats(Read);
    let o = Outcome {
        reach: (a + b) / real,
        ratio_of_asked: (a / b) / (f64::from(shares.0) / f64::from(shares.1)),
        disk_p99_ns: h.disk_p99_ns_since(S / 2),
        solo_p99_ns: percentile(&mut solo_ns, 99.0),
        speed: stats.speed_factor,
    };
    println!(
        "seed {seed}: pipeline {} us, x{depth}, {}:{}, read speed cap {read_max}: {:.3} of \
         unscheduled ({real:.3} model-s/s), ratio {:.3} of asked, in-disk p99 {} us (solo p99 \
         {} us), speed {:.3}, K {:.3}, window {:.0} us",
        pipeline_ns / 1000,
        shares.0,
        shares.1,
        o.reach,
        o.ratio_of_asked,
        o.disk_p99_ns / 1000,
        o.solo_p99_ns / 1000,
        o.speed,
        stats.rate_factor,
        stats.window_sec * 1e6,
    );
    o
}

/// The window's drain speed may rise above the model on reads (up to 1.25x): a disk 1.15x
/// faster than its model, which needs more reads in flight than a goal of model time and
/// its pipeline hold, gets >= 0.95 of unscheduled with the split within 5% of asked and the
/// in-disk p99 within the goal's bound, and the speed reads the disk's 1.15 (1.13-1.16).
/// With the cap at the model (printed as "read speed cap 1") the same runs gave 0.947 /
/// 0.987 / 0.947 (600 us, x32) and 0.933 each (1.2 ms, x64); now 0.988 / 1.000 / 0.988 and
/// 0.992 / 0.997 / 0.992. Two things were tried first: a cap of 2.0 with the plain sample
/// (the work ahead against the wait) overshot to 1.6-2.0, the window passed the 1000-share
/// class's 64 requests by more than the share hold's bound and the ratio fell to 0.10-0.18
/// of asked; 1.25 with it read a disk at its model's rate as 1.25x (that sample counts the
/// work in the disk's pipeline as queue) and broke `runtime_k.rs`'s pipeline test's p99.
#[test]
fn reads_faster_than_the_model_fill_a_deep_disk_and_hold_the_shares() {
    let seed = seed(255);
    for (pipeline_ns, depth) in [(600_000, 32), (1_200_000, 64)] {
        for shares in [(1000, 100), (1, 1), (100, 1000)] {
            run(seed, pipeline_ns, depth, shares, 1.0);
            let o = run(seed, pipeline_ns, depth, shares, 1.25);
            let what = format!(
                "seed {seed}: pipeline {pipeline_ns} ns, x{depth}, {}:{}",
                shares.0, shares.1
            );
            assert!(o.reach >= 0.95, "{what}: {:.3} of unscheduled", o.reach);
            assert!(
                (o.ratio_of_asked - 1.0).abs() <= 0.05,
                "{what}: ratio {:.3} of asked",
                o.ratio_of_asked
            );
            assert_disk_within_goal(&what, o.disk_p99_ns, o.solo_p99_ns, GOAL_NS);
        }
    }
}
