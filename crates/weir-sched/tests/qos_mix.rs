//! bench/qos.sh's shape in simulation: reads at a low depth beside
//! 128 KiB writes that want the whole disk, each in its own class, on a duplex model that is
//! a bit off the simulated disk in both directions. The write lift (`max_write_speed_factor`)
//! must not leave the writes lower than without it, nor the reads' tail over the goal.
//! Each scenario prints its seed; `WEIR_SIM_SEED` replays one.

mod harness;

use harness::{duplex_model_of, nvme_scaled, seed, Harness, Job};
use weir_model::device::Direction::{Read, Write};
use weir_sched::SchedConfig;
use weir_sim::SimConfig;

const S: u64 = 1_000_000_000;
/// The paced reads: one a millisecond at most, 1,000 a second (a fixed-rate load, which leaves
/// the disk without a read at moments; bench/qos.sh's own reads are the closed loop below).
const READ_INTERVAL_NS: u64 = 1_000_000;

struct Mix {
    /// The writes' completed bytes per second, from 0.5 s to 3 s.
    write_bytes_per_sec: f64,
    /// The reads' end-to-end (queue + disk) p99 over the same span.
    read_p99_ns: u64,
}

fn run(seed: u64, factors: (f64, f64), write_lift: f64, reads: &Job) -> Mix {
    let sched = SchedConfig {
        shards: 2,
        max_write_speed_factor: write_lift,
        ..SchedConfig::default()
    };
    let jobs = vec![
        reads.clone().on_shard(0),
        Job::new("writes", 100, Write, 128 << 10, 16).on_shard(0),
        Job::new("writes", 100, Write, 128 << 10, 16).on_shard(1),
    ];
    let mut h = Harness::with_model(
        nvme_scaled(seed, factors.0, factors.1),
        duplex_model_of(&SimConfig::nvme_like(seed)),
        sched,
        jobs,
    );
    // Judged after the first half second (the start's pile and the controllers' settling).
    let (from_ns, to_ns) = (S / 2, 3 * S);
    h.run_until(to_ns);
    let writes = (1..3)
        .map(|j| h.ops_between(j, from_ns, to_ns))
        .sum::<u64>();
    Mix {
        write_bytes_per_sec: (writes * (128 << 10)) as f64 / ((to_ns - from_ns) as f64 / 1e9),
        read_p99_ns: h.latency_percentile_ns(0, from_ns, to_ns, 99.0),
    }
}

#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn the_write_lift_never_leaves_the_mixs_writes_lower() {
    let seed = seed(18);
    for reads in [
        // Paced: the disk has moments without reads, when the write lane may lift.
        Job::new("reads", 100, Read, 4096, 8).paced(READ_INTERVAL_NS),
        // bench/qos.sh's own reads: depth 4, always outstanding.
        Job::new("reads", 1000, Read, 4096, 4),
    ] {
        check(seed, &reads);
    }
}

fn check(seed: u64, reads: &Job) {
    let goal_ns = SchedConfig::default().latency_goal.as_nanos() as u64;
    for factors in [
        (0.8, 1.3),
        (1.3, 0.8),
        (1.2, 1.2),
        (0.9, 1.1),
        (1.0, 1.5),
        (0.8, 2.0),
    ] {
        let off = run(seed, factors, 1.0, reads);
        let on = run(seed, factors, 1.25, reads);
        let what = format!(
            "seed {seed}: reads x{} every {} us: disk reads {}x writes {}x",
            reads.parallelism,
            reads.interval_ns / 1000,
            factors.0,
            factors.1
        );
        println!(
            "{what}: writes lift off {:.0} MB/s, on {:.0} MB/s ({:.3}); read p99 off {} us, on {} us",
            off.write_bytes_per_sec / 1e6,
            on.write_bytes_per_sec / 1e6,
            on.write_bytes_per_sec / off.write_bytes_per_sec,
            off.read_p99_ns / 1000,
            on.read_p99_ns / 1000,
        );
        // 2% for the lift's own noise: the seeded runs differ by 0.0-0.3%.
        assert!(
            on.write_bytes_per_sec >= 0.98 * off.write_bytes_per_sec,
            "{what}: the lift left the writes at {:.3} of without it",
            on.write_bytes_per_sec / off.write_bytes_per_sec
        );
        // The lift may lengthen the reads' tail inside the goal, never past it.
        let bound_ns = off.read_p99_ns.max(goal_ns) + goal_ns / 10;
        assert!(
            on.read_p99_ns <= bound_ns,
            "{what}: read p99 {} us with the lift, bound {} us",
            on.read_p99_ns / 1000,
            bound_ns / 1000
        );
    }
}
