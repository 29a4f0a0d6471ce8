//! One direction on a disk faster than its model (docs/scheduler-rate.md sections
//! 20-21): reads deeper than a goal, and 128 KiB writes (vda
//! overwrites at ~1.2x its model, and with the writes' speed capped at the model K sat at
//! its floor under it and held the bench's write rows to 0.90-0.94 of unscheduled). This project's virtio disk gives ~1.07-1.15x tune's
//! 4 KiB read rate, and only with far more reads in flight than a goal of model time holds;
//! with the drain speed capped at the model (1.0) the window bound and pure 4 KiB reads ran
//! at 0.88 of unscheduled on vda. Here: `nvme_like` at 1.15x its own
//! model, behind a pipeline longer than the goal, two classes on two shards, judged over
//! 0.5-2 s against the same jobs unscheduled, with read samples allowed above the model
//! (`max_read_speed_factor`, default 1.25) and without (1.0); the
//! writes the same with `max_write_speed_factor`. Each scenario prints its seed;
//! `WEIR_SIM_SEED` replays one.

mod harness;

use harness::{model_of, run_split, seed, Job, Split};
use weir_model::device::Direction::{self, Read, Write};
use weir_sched::SchedConfig;
use weir_sim::SimConfig;

const GOAL_NS: u64 = 750_000;
/// Real read rate / the model's, as vda at depth against tune.
const FASTER_READS: f64 = 1.15;
/// Real write rate / the model's, as vda overwriting 128 KiB (~2.4 GB/s) against the quiet
/// model's 1.99 GB/s.
const FASTER_WRITES: f64 = 1.2;

/// What the classes do: one direction, one size, on a disk this much faster than the model
/// whose service time varies by +- `jitter`.
#[derive(Clone, Copy)]
struct Op {
    direction: Direction,
    len_bytes: u64,
    faster: f64,
    jitter: f64,
}

const READS_4K: Op = Op {
    direction: Read,
    len_bytes: 4096,
    faster: FASTER_READS,
    jitter: 0.1,
};
const WRITES_128K: Op = Op {
    direction: Write,
    len_bytes: 128 << 10,
    faster: FASTER_WRITES,
    // vda's writes complete in bursts (the host caches them): a window a goal of model time
    // wide refused in 0.20-0.66 of periods with only 3-8 writes in the disk on average, so
    // run-time K, which only rises in a period the window never refused, sat at its floor
    // (section 20). +-50% service time gives the same bursts: with the speed capped at the
    // model the split rows ran at 0.939-0.947 of unscheduled here.
    jitter: 0.5,
};

/// The disk: `nvme_like` with `op`'s direction `op.faster` times its rates, behind
/// `pipeline_ns`.
fn disk(seed: u64, pipeline_ns: u64, op: Op) -> SimConfig {
    let mut sim = SimConfig::nvme_like(seed);
    sim.fixed_latency_ns = pipeline_ns;
    let rates = match op.direction {
        Read => &mut sim.read,
        Write => &mut sim.write,
    };
    rates.iops *= op.faster;
    rates.bytes_per_sec *= op.faster;
    sim.jitter = op.jitter;
    sim
}

fn run(seed: u64, pipeline_ns: u64, depth: u32, shares: (u32, u32), op: Op, lift: f64) -> Split {
    let model = model_of(&SimConfig::nvme_like(seed));
    let config = SchedConfig {
        shards: 2,
        max_read_speed_factor: lift,
        max_write_speed_factor: lift,
        ..SchedConfig::default()
    };
    let (direction, len) = (op.direction, op.len_bytes);
    let pair = [
        Job::new("a", shares.0, direction, len, depth),
        Job::new("b", shares.1, direction, len, depth),
    ];
    let o = run_split(&disk(seed, pipeline_ns, op), &model, &config, pair, 2);
    let (real, stats) = (o.real, &o.stats);
    println!(
        "seed {seed}: {:?} {} KiB x{}, pipeline {} us, x{depth}, {}:{}, speed cap {lift}: {:.3} of \
         unscheduled ({real:.3} model-s/s), ratio {:.3} of asked, in-disk p99 {} us (solo p99 \
         {} us), speed {:.3}, K {:.3}, window {:.0} us",
        direction,
        len / 1024,
        op.faster,
        pipeline_ns / 1000,
        shares.0,
        shares.1,
        o.reach,
        o.ratio_of_asked,
        o.disk_p99_ns / 1000,
        o.solo_p99_ns / 1000,
        stats.speed_factor,
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
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn reads_faster_than_the_model_fill_a_deep_disk_and_hold_the_shares() {
    let seed = seed(255);
    for (pipeline_ns, depth) in [(600_000, 32), (1_200_000, 64)] {
        check(seed, pipeline_ns, depth, READS_4K);
    }
}

fn check(seed: u64, pipeline_ns: u64, depth: u32, op: Op) {
    for shares in [(1000, 100), (1, 1), (100, 1000)] {
        run(seed, pipeline_ns, depth, shares, op, 1.0);
        let o = run(seed, pipeline_ns, depth, shares, op, 1.25);
        let what = format!(
            "seed {seed}: {:?}, pipeline {pipeline_ns} ns, x{depth}, {}:{}",
            op.direction, shares.0, shares.1
        );
        o.assert_holds(&what, GOAL_NS);
    }
}

/// Writes may lift the drain speed too, on a disk that has never been granted a read
/// (`max_write_speed_factor`, 1.25): 128 KiB writes on a disk 1.2x faster than its model
/// whose writes complete in bursts (vda overwriting) get >= 0.95 of unscheduled with the
/// split within 5% of asked and the in-disk p99 within a lone write's plus the goal's
/// bound. Printed beside: the same with the cap at the model (1.0),
/// 0.939-0.947 of unscheduled at 1000:100, which fails the assertion.
#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn writes_faster_than_the_model_fill_the_disk_and_hold_the_shares() {
    let seed = seed(255);
    for pipeline_ns in [0, 300_000, 600_000] {
        check(seed, pipeline_ns, 32, WRITES_128K);
    }
}
