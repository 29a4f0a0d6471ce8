//! Small writes on a disk faster than its model that queues them inside (the write
//! lift's failure on vda, docs/scheduler-rate.md 21.3, and its fix, docs/scheduler-rate-lift.md
//! section 22). vda's 4 KiB writes are priced at 138.2 K a second (`bench/vda-quiet.yaml`),
//! so a goal of model time holds ~104 of them and the bench's 1000-share class has 32 a
//! shard: the share hold is what keeps the 100-share class's requests out of the disk, by a
//! margin of 1.4% at the model's speed. With `max_write_speed_factor` 1.25 the lifted
//! window loosened the hold and the split fell to 0.37-0.89 / 1.33-2.21 of asked on vda.
//! Here the same model over disks 1.2-1.3x faster, whose service saturates at 4-8 requests
//! (plus a 40-200 us pipeline) and whose latency grows linearly beyond; service +-50%
//! (vda's writes complete in bursts). Two classes on two shards, 32 deep a shard, judged
//! over 0.5-2 s against the same jobs unscheduled. Each scenario prints its seed;
//! `WEIR_SIM_SEED` replays one.

mod harness;

use harness::{model_of, run_split, seed, Job, Split};
use weir_model::device::Direction::Write;
use weir_sched::SchedConfig;
use weir_sim::SimConfig;

const GOAL_NS: u64 = 750_000;
const WRITE_BYTES: u64 = 4096;

/// The disk as `bench/vda-quiet.yaml` prices it (the scheduler's model).
fn vda_priced(seed: u64) -> SimConfig {
    let mut sim = SimConfig::nvme_like(seed);
    sim.read.iops = 83_000.0;
    sim.read.bytes_per_sec = 1.18e9;
    sim.write.iops = 138_200.0;
    sim.write.bytes_per_sec = 1.99e9;
    sim
}

/// A disk whose writes run `faster` times the model on `channels` channels behind
/// `pipeline_ns`: saturated at about `channels` x (1 + pipeline / service) requests.
#[derive(Clone, Copy, Debug)]
struct Disk {
    faster: f64,
    channels: u32,
    pipeline_ns: u64,
}

const DISKS: [Disk; 3] = [
    Disk {
        faster: 1.2,
        channels: 4,
        pipeline_ns: 40_000,
    },
    Disk {
        faster: 1.3,
        channels: 4,
        pipeline_ns: 200_000,
    },
    Disk {
        faster: 1.2,
        channels: 8,
        pipeline_ns: 100_000,
    },
];

fn sim_of(seed: u64, disk: Disk) -> SimConfig {
    let mut sim = vda_priced(seed);
    sim.write.iops *= disk.faster;
    sim.write.bytes_per_sec *= disk.faster;
    sim.channels = disk.channels;
    sim.fixed_latency_ns = disk.pipeline_ns;
    sim.jitter = 0.5;
    sim
}

fn run(seed: u64, disk: Disk, shares: (u32, u32), write_lift: f64) -> Split {
    let config = SchedConfig {
        shards: 2,
        max_write_speed_factor: write_lift,
        ..SchedConfig::default()
    };
    let pair = [
        Job::new("a", shares.0, Write, WRITE_BYTES, 32),
        Job::new("b", shares.1, Write, WRITE_BYTES, 32),
    ];
    let model = model_of(&vda_priced(seed));
    let o = run_split(&sim_of(seed, disk), &model, &config, pair, 2);
    let stats = &o.stats;
    println!(
        "seed {seed}: 4 KiB writes x{} on {} channels, pipeline {} us, {}:{}, write speed cap \
         {write_lift}: {:.3} of unscheduled, ratio {:.3} of asked, in-disk p99 {} us (solo p99 \
         {} us), speed {:.3}, K {:.3}, window {:.0} us, Little ratio max {:.1}",
        disk.faster,
        disk.channels,
        disk.pipeline_ns / 1000,
        shares.0,
        shares.1,
        o.reach,
        o.ratio_of_asked,
        o.disk_p99_ns / 1000,
        o.solo_p99_ns / 1000,
        stats.speed_factor,
        stats.rate_factor,
        stats.window_sec * 1e6,
        stats.counters.queue_ratio_max,
    );
    o
}

/// With the write lift on (1.25, the default), 4 KiB writes on a disk that queues them
/// inside keep the split within 5% of asked, reach >= 0.95 of unscheduled and hold the
/// in-disk p99 within a lone write's plus the goal's bound. Printed beside: the lift off
/// (1.0). With the share hold judged against the lifted window the lifted rows
/// gave 0.503 / 1.987, 0.805 / 1.242 and 0.446 / 2.241 of asked at 1000:100
/// / 100:1000 on the three disks, in-disk p99 737 / 584 / 747 us: this test failed.
#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn small_writes_on_a_disk_that_queues_them_keep_the_split_with_the_lift() {
    let seed = seed(255);
    for disk in DISKS {
        for shares in [(1000, 100), (1, 1), (100, 1000)] {
            run(seed, disk, shares, 1.0);
            let o = run(
                seed,
                disk,
                shares,
                SchedConfig::default().max_write_speed_factor,
            );
            let what = format!("seed {seed}: {disk:?}, {}:{}", shares.0, shares.1);
            o.assert_holds(&what, GOAL_NS);
        }
    }
}
