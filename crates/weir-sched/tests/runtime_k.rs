//! Run-time K over simulated disks whose real rate is not the model's: 0.6x, 1.0x,
//! 1.3x and 2x, at 4 KiB, 128 KiB and a read/write mix, two classes at 1000:100 on two shards
//! (parallelism 32 per class per shard, as `bench/shares.sh` runs them). Each scenario prints its
//! seed; `WEIR_SIM_SEED` replays one.

mod harness;

use harness::{
    assert_disk_within_goal, duplex_model_of, model_of, nvme_scaled, on_every_shard, percentile,
    seed, Harness, Job,
};
use weir_model::cost::CostModel;
use weir_model::device::Direction::{self, Read, Write};
use weir_sched::SchedConfig;
use weir_sim::SimConfig;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;
const GOAL_NS: u64 = 750_000;
/// The disk factors checked: real rate / model rate.
const FACTORS: [f64; 4] = [0.6, 1.0, 1.3, 2.0];

/// A disk `factor` times as fast as `nvme_like`, whose model stays `nvme_like`'s.
fn disk(seed: u64, factor: f64) -> SimConfig {
    nvme_scaled(seed, factor, factor)
}

fn sched() -> SchedConfig {
    SchedConfig {
        shards: 2,
        ..SchedConfig::default()
    }
}

/// `sched()` with K's disk-queue knee on (`SchedConfig::knee_in_disk`).
fn sched_knee() -> SchedConfig {
    SchedConfig {
        knee_in_disk: true,
        ..sched()
    }
}

#[derive(Clone, Copy, Debug)]
enum Load {
    /// Both classes do the same op of this size and direction.
    Same(Direction, u64),
    /// The high class reads 4 KiB, the low one writes 128 KiB, on a duplex model (as
    /// `bench/qos.sh` runs this project's disk): each direction has its own K.
    Mixed,
}

/// Class `a` (1000 shares) and `b` (100 shares), each on both shards.
fn jobs(load: Load) -> Vec<Job> {
    let (a, b) = match load {
        Load::Same(dir, len) => ((dir, len), (dir, len)),
        Load::Mixed => ((Read, 4096), (Write, 128 << 10)),
    };
    on_every_shard(
        &[
            Job::new("a", 1000, a.0, a.1, 32),
            Job::new("b", 100, b.0, b.1, 32),
        ],
        2,
    )
}

/// Model disk time per second that class `class` (0 = a, 1 = b) completed in [from, to).
fn class_rate(h: &Harness, class: usize, from: u64, to: u64) -> f64 {
    (0..h.jobs.len())
        .filter(|&j| j % 2 == class && !h.jobs[j].neighbour)
        .map(|j| h.disk_time_between(j, from, to))
        .sum::<f64>()
        / ((to - from) as f64 / 1e9)
}

fn total_rate(h: &Harness, from: u64, to: u64) -> f64 {
    class_rate(h, 0, from, to) + class_rate(h, 1, from, to)
}

struct Outcome {
    /// Scheduled / unscheduled model disk time per second, from 0.5 s to 2 s.
    reach: f64,
    /// When a 10 ms window first reached 0.95 of the unscheduled rate.
    reached_at_ns: Option<u64>,
    share_ratio: f64,
    /// In-disk latency p99, scheduled.
    disk_p99_ns: u64,
    /// The p99 of the same requests alone on the disk, one at a time (the unloaded latency
    /// the goal's queueing adds to); in the mix, 1.5x the slower direction's, as the
    /// simulated disk serves reads 1.5x slower beside writes (as `tests/sim.rs` judges it).
    solo_p99_ns: u64,
    rate_factor: f64,
}

/// The in-disk p99 of each op of `load` alone, one request at a time, unscheduled.
fn solo_p99(sim: &SimConfig, load: Load) -> u64 {
    let ops = match load {
        Load::Same(dir, len) => vec![(dir, len)],
        Load::Mixed => vec![(Read, 4096), (Write, 128 << 10)],
    };
    let worst = ops
        .into_iter()
        .map(|(dir, len)| {
            let mut h = Harness::new(sim.clone(), sched(), vec![Job::new("solo", 1, dir, len, 1)]);
            h.scheduled = false;
            h.run_until(S / 2);
            let mut disk_ns: Vec<u64> = h.samples.iter().map(|s| s.disk_ns).collect();
            percentile(&mut disk_ns, 99.0)
        })
        .max()
        .unwrap_or(0);
    if matches!(load, Load::Mixed) {
        worst * 3 / 2
    } else {
        worst
    }
}

fn run(seed: u64, factor: f64, load: Load) -> Outcome {
    let sim = disk(seed, factor);
    let base = model_of(&SimConfig::nvme_like(seed));
    let model = if matches!(load, Load::Mixed) {
        duplex_model_of(&SimConfig::nvme_like(seed))
    } else {
        base
    };
    let bare = Harness::unscheduled((&sim, &model, &sched()), jobs(load), 2 * S);
    let real = total_rate(&bare, S / 2, 2 * S);
    let mut h = Harness::with_model(sim, model, sched(), jobs(load));
    h.run_until(2 * S);
    let reached_at_ns = (0..200u64)
        .map(|i| i * 10 * MS)
        .find(|&t| total_rate(&h, t, t + 10 * MS) >= 0.95 * real)
        .map(|t| t + 10 * MS);
    let solo_p99_ns = solo_p99(&disk(seed, factor), load);
    let lane = if matches!(load, Load::Same(Write, _)) {
        Write
    } else {
        Read
    };
    let outcome = Outcome {
        reach: total_rate(&h, S / 2, 2 * S) / real,
        reached_at_ns,
        share_ratio: class_rate(&h, 0, S / 2, 2 * S) / class_rate(&h, 1, S / 2, 2 * S),
        disk_p99_ns: h.disk_p99_ns_since(S / 2),
        solo_p99_ns,
        rate_factor: h.budget.lane_stats(lane).rate_factor,
    };
    println!(
        "disk {factor}x, {load:?}: {:.3} of unscheduled ({real:.3} model-s/s), 0.95 reached at {} ms, \
         ratio {:.2}, in-disk p99 {} us (solo p99 {} us), K {:.3}",
        outcome.reach,
        outcome.reached_at_ns.map_or(-1, |t| (t / MS) as i64),
        outcome.share_ratio,
        outcome.disk_p99_ns / 1000,
        outcome.solo_p99_ns / 1000,
        outcome.rate_factor,
    );
    outcome
}

fn check(seed: u64, load: Load, reach_min: f64) {
    for factor in FACTORS {
        let o = run(seed, factor, load);
        let what = format!("seed {seed}: disk {factor}x, {load:?}");
        assert!(
            o.reach >= reach_min,
            "{what}: {:.3} of the real rate",
            o.reach
        );
        assert!(
            o.reached_at_ns.is_some_and(|t| t <= 100 * MS),
            "{what}: 0.95 of the real rate reached at {:?} ns",
            o.reached_at_ns
        );
        assert!(
            (o.share_ratio / 10.0 - 1.0).abs() <= 0.05,
            "{what}: shares 1000:100 came out {:.2}:1",
            o.share_ratio
        );
        // The goal bounds the queueing; on the 0.6x disk the drain speed reads 5-12% high
        // (0.61-0.67), so the p99 runs up to 7% of a goal over (4 KiB: 888 us against
        // 126 + 750; the mix: 1066 against 266 + 750). Asserted: within 1.1 goals.
        assert_disk_within_goal(&what, o.disk_p99_ns, o.solo_p99_ns, GOAL_NS);
    }
}

#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn run_time_k_finds_the_real_rate_of_4k_reads() {
    check(seed(241), Load::Same(Read, 4096), 0.95);
}

#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn run_time_k_finds_the_real_rate_of_128k_reads_and_writes() {
    let seed = seed(242);
    check(seed, Load::Same(Read, 128 << 10), 0.95);
    check(seed, Load::Same(Write, 128 << 10), 0.95);
}

#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn run_time_k_finds_the_real_rate_of_a_read_write_mix() {
    // 0.95 of the real rate. Without the two rules below the mix reached 0.933-0.984: the 2x
    // and 1.3x disks' reads were cut at knees that one write landing beside them faked.
    // With a knee confirmed over two periods (`rate.rs`) and the share hold across lanes
    // (`queue/hold.rs`), seeds 1-20 reach 0.975-0.986 at a split of 9.99-10.02.
    check(seed(243), Load::Mixed, 0.95);
}

#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn run_time_k_never_creeps_down_over_ten_simulated_minutes() {
    // A 1.3x disk, 128 KiB reads, then 128 KiB writes (the lift acts on both: a disk that
    // only reads, or only writes, may be found faster than its model): saturating minutes
    // alternate with light ones (one request of class a on shard 0, the rest idle). K must
    // not fall in a light minute, and every saturating minute must run at >= 0.95 of the
    // disk's real rate (1.3 model-seconds per second).
    let seed = seed(244);
    for direction in [Read, Write] {
        ten_minutes(seed, direction);
    }
}

fn ten_minutes(seed: u64, direction: Direction) {
    let model = model_of(&SimConfig::nvme_like(seed));
    let mut h = Harness::with_model(
        disk(seed, 1.3),
        model,
        // The write lift is off by default; asked for here, so its no-creep is checked too.
        SchedConfig {
            max_write_speed_factor: 1.25,
            ..sched()
        },
        jobs(Load::Same(direction, 128 << 10)),
    );
    let minute = 60 * S;
    for m in 1..=10u64 {
        let light = m % 2 == 0;
        for (j, job) in h.jobs.iter_mut().enumerate() {
            job.parallelism = match (light, j) {
                (false, _) => 32,
                (true, 0) => 1,
                (true, _) => 0,
            };
        }
        // K as the light load settles (the backlog the saturating minute left goes first,
        // at K, and may still end a probe at a knee).
        h.run_until((m - 1) * minute + S / 10);
        let k_before = h.budget.lane_stats(direction).rate_factor;
        h.run_until(m * minute);
        let k_after = h.budget.lane_stats(direction).rate_factor;
        let rate = total_rate(&h, (m - 1) * minute + S, m * minute);
        println!(
            "{direction:?} minute {m} ({}): {rate:.4} model-s/s ({:.4} of 1.3), K {k_before:.3} -> \
             {k_after:.3}",
            if light { "light" } else { "saturating" },
            rate / 1.3
        );
        if light {
            assert!(
                k_after >= k_before,
                "seed {seed}: {direction:?} minute {m}: K fell from {k_before:.3} to \
                 {k_after:.3} under light load"
            );
        } else {
            assert!(
                rate >= 0.95 * 1.3,
                "seed {seed}: {direction:?} minute {m}: {:.4} of the real rate",
                rate / 1.3
            );
        }
        h.samples.clear();
    }
}

/// What the two classes got beside a neighbour the scheduler never sees.
struct Beside {
    /// The classes' model disk time per second, 0.5-2 s.
    ours: f64,
    /// The neighbour's.
    theirs: f64,
    share_ratio: f64,
    /// The read lane's drain speed and K at the end.
    speed: f64,
    rate_factor: f64,
}

/// Classes a (1000) and b (100) read 4 KiB x32 per shard on 2 shards; a neighbour keeps
/// `depth` reads of `len` bytes in the same disk, straight to it.
fn beside_a_neighbour(seed: u64, scheduled: bool, len: u64, depth: u32) -> Beside {
    let sim = SimConfig::nvme_like(seed);
    let model = model_of(&sim);
    let mut jobs = jobs(Load::Same(Read, 4096));
    jobs.push(
        Job::new("neighbour", 1, Read, len, depth)
            .neighbour()
            .starting_at(S / 4),
    );
    let neighbour = jobs.len() - 1;
    let mut h = Harness::with_model(sim, model, sched(), jobs);
    h.scheduled = scheduled;
    if std::env::var("TRACE").is_ok() && scheduled {
        for i in 1..40 {
            h.run_until(i * 50 * MS);
            let l = h.budget.lane_stats(Read);
            println!(
                "{} ms: speed {:.3} K {:.3} window {:.1} us in flight {:.1} us pipeline {:.1} us",
                i * 50,
                l.speed_factor,
                l.rate_factor,
                l.window_sec * 1e6,
                l.in_flight_sec * 1e6,
                l.pipeline_sec * 1e6
            );
        }
    }
    h.run_until(2 * S);
    let lane = h.budget.lane_stats(Read);
    Beside {
        ours: total_rate(&h, S / 2, 2 * S),
        theirs: h.disk_time_between(neighbour, S / 2, 2 * S) / 1.5,
        share_ratio: class_rate(&h, 0, S / 2, 2 * S) / class_rate(&h, 1, S / 2, 2 * S),
        speed: lane.speed_factor,
        rate_factor: lane.rate_factor,
    }
}

#[test]
fn a_busy_neighbour_cannot_talk_the_drain_speed_down() {
    let seed = seed(245);
    for (len, depth) in [(128 << 10, 8), (128 << 10, 32), (4096, 64)] {
        let bare = beside_a_neighbour(seed, false, len, depth);
        let ours = beside_a_neighbour(seed, true, len, depth);
        println!(
            "neighbour {} KiB x{depth}: scheduled {:.3} model-s/s ({:.3} of unscheduled {:.3}), \
             neighbour {:.3} (unscheduled run {:.3}), ratio {:.2}, drain speed {:.3}, K {:.3}",
            len >> 10,
            ours.ours,
            ours.ours / bare.ours,
            bare.ours,
            ours.theirs,
            bare.theirs,
            ours.share_ratio,
            ours.speed,
            ours.rate_factor,
        );
        let what = format!("seed {seed}: neighbour {} KiB x{depth}", len >> 10);
        // Before the re-measurement the estimate fell to its floor (0.03-0.04) and stayed
        // there, the classes at 0.025-0.05 of what they got unscheduled.
        assert!(ours.speed >= 0.75, "{what}: drain speed {:.3}", ours.speed);
        assert!(
            ours.ours >= 0.4 * bare.ours,
            "{what}: the classes got {:.3} of their unscheduled rate",
            ours.ours / bare.ours
        );
        assert!(
            (ours.share_ratio / 10.0 - 1.0).abs() <= 0.05,
            "{what}: shares 1000:100 came out {:.2}:1",
            ours.share_ratio
        );
    }
}

/// A disk with a pipeline: every request spends `pipeline_ns` in the device after its service
/// (overlapping with others, as a virtio disk's host round trip does), so it needs
/// `rate x (service + pipeline)` requests in flight to reach its rate, more than a goal of
/// model time when the pipeline is longer than the goal. The model is the disk's own rates.
/// Two classes a:b at `shares` on two shards at `depth` requests per class per shard, judged
/// over 0.5-2 s against the same jobs unscheduled.
fn with_pipeline(
    seed: u64,
    pipeline_ns: u64,
    (dir, len): (Direction, u64),
    depth: u32,
    shares: (u32, u32),
) -> Outcome {
    let mut sim = SimConfig::nvme_like(seed);
    sim.fixed_latency_ns = pipeline_ns;
    let o = with_disk(sim, (dir, len), depth, shares);
    println!("  (pipeline {} us)", pipeline_ns / 1000);
    o
}

/// Two classes a:b at `shares` on two shards at `depth` requests per class per shard on the
/// disk `sim`, modelled at its own rates, judged over 0.5-2 s against the same jobs
/// unscheduled.
fn with_disk(
    sim: SimConfig,
    (dir, len): (Direction, u64),
    depth: u32,
    shares: (u32, u32),
) -> Outcome {
    let model = model_of(&sim);
    with_disk_model(sim, (model, sched()), (dir, len), depth, shares)
}

/// As `with_disk`, the scheduler given `model` instead of the disk's own rates.
fn with_disk_model(
    sim: SimConfig,
    (model, config): (CostModel, SchedConfig),
    (dir, len): (Direction, u64),
    depth: u32,
    shares: (u32, u32),
) -> Outcome {
    let seed = sim.seed;
    let jobs = on_every_shard(
        &[
            Job::new("a", shares.0, dir, len, depth),
            Job::new("b", shares.1, dir, len, depth),
        ],
        2,
    );
    let bare = Harness::unscheduled((&sim, &model, &config), jobs.clone(), 2 * S);
    let real = total_rate(&bare, S / 2, 2 * S);
    let mut h = Harness::with_model(sim.clone(), model, config, jobs);
    h.run_until(2 * S);
    let o = Outcome {
        reach: total_rate(&h, S / 2, 2 * S) / real,
        reached_at_ns: None,
        share_ratio: class_rate(&h, 0, S / 2, 2 * S) / class_rate(&h, 1, S / 2, 2 * S),
        disk_p99_ns: h.disk_p99_ns_since(S / 2),
        solo_p99_ns: solo_p99(&sim, Load::Same(dir, len)),
        rate_factor: h.budget.lane_stats(dir).rate_factor,
    };
    println!(
        "seed {seed}: {dir:?} {len} B x{depth}, {}:{}: {:.3} of unscheduled \
         ({real:.3} model-s/s), ratio {:.3} of asked, in-disk p99 {} us (solo p99 {} us), K {:.3}, \
         window {:.0} us, depth cap {:.0} us, round-bound dispatch calls {}",
        shares.0,
        shares.1,
        o.reach,
        o.share_ratio / (f64::from(shares.0) / f64::from(shares.1)),
        o.disk_p99_ns / 1000,
        o.solo_p99_ns / 1000,
        o.rate_factor,
        h.budget.lane_stats(dir).window_sec * 1e6,
        h.budget.lane_stats(dir).depth_cap_sec * 1e6,
        h.queues.iter().map(|q| q.round_bounds()).sum::<u64>(),
    );
    o
}

/// A disk that needs more requests in flight than a goal of model time holds: every request
/// also spends a pipeline (a host round trip) in it. Before the window held the pipeline, a
/// 1 ms pipeline held 4 KiB reads to 0.72 of unscheduled, K at its floor (0.969) and the
/// window full all run, as on this project's virtio disk at 4 KiB. Depth 64 per class per
/// shard: the 1000-share class must have more requests than the window for shares to hold.
#[test]
fn a_disk_that_needs_more_than_a_goal_in_flight_gets_it_and_shares_hold() {
    let seed = seed(246);
    for (dir, len) in [(Read, 4096), (Write, 128 << 10)] {
        for pipeline_ns in [500_000, 1_000_000] {
            let o = with_pipeline(seed, pipeline_ns, (dir, len), 64, (1000, 100));
            let what = format!("seed {seed}: pipeline {pipeline_ns} ns, {dir:?} {len} B");
            assert!(o.reach >= 0.95, "{what}: {:.3} of unscheduled", o.reach);
            assert!(
                (o.share_ratio / 10.0 - 1.0).abs() <= 0.05,
                "{what}: shares 1000:100 came out {:.2}:1",
                o.share_ratio
            );
            // The queue the goal bounds comes on top of the pipeline every request pays.
            assert_outcome_within_goal(&o, &what);
        }
    }
}

/// The pipeline must not move the ratio (measured on vda without the gate: 4 KiB writes at
/// 0.611 and 1.301 of the asked ratio). At the bench's depth (32 per class per shard) the
/// 1000-share class has 64 requests, all of them in the disk once the window holds ~70; a
/// window widened past that by the pipeline goes to the other class alone. A 0.5 ms pipeline
/// needs ~46 reads (or ~33 writes) in flight plus the queue, so both targets are within reach.
#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn the_pipeline_keeps_both_ratios_at_the_benchs_depth() {
    let seed = seed(247);
    for op in [(Read, 4096), (Write, 4096)] {
        for shares in [(1000, 100), (100, 1000)] {
            let o = with_pipeline(seed, 500_000, op, 32, shares);
            let what = format!("seed {seed}: {op:?} at {}:{}", shares.0, shares.1);
            assert_shares_held(&o, shares, 0.95, &what);
        }
    }
}

/// A device that is never the bottleneck at a goal's depth, as zram is (the CPU is the
/// limit): two "channels" (the cores), 5 us after service, 600 K 4 KiB reads and 350 K
/// writes a second, modelled at its own rates. A goal of its time is ~450 reads; the two
/// classes have 128, so without the depth cap every request went straight in, the fair
/// queue never queued and both splits came out 1:1 (as zram's rows did).
fn cpu_bound(seed: u64) -> SimConfig {
    let mut sim = SimConfig::nvme_like(seed);
    sim.channels = 2;
    sim.fixed_latency_ns = 5_000;
    sim.read.iops = 600_000.0;
    sim.read.bytes_per_sec = 2.4e9;
    sim.write.iops = 350_000.0;
    sim.write.bytes_per_sec = 1.4e9;
    sim
}

#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn a_cpu_bound_device_holds_the_shares() {
    let seed = seed(248);
    for op in [(Read, 4096), (Write, 4096)] {
        for shares in [(1000, 100), (100, 1000)] {
            let o = with_disk(cpu_bound(seed), op, 32, shares);
            let what = format!(
                "seed {seed}: CPU-bound, {op:?} at {}:{}",
                shares.0, shares.1
            );
            assert_shares_held(&o, shares, 0.97, &what);
        }
    }
}

/// The share hold (`queue/hold.rs`; docs/scheduler-rate.md section 13). This project's
/// virtio disk is modelled at ~107 K 4 KiB writes a second, so a goal of model time holds
/// ~80 writes, more than the bench's 1000-share class has (64: 32 per shard); once all of
/// its requests are in the disk the rest of the window went to the other class whatever its
/// shares. A bench measured 0.88 / 1.11 of the asked ratio at 4 KiB and
/// 0.78 / 1.27 at 16 KiB, reads (65 in a goal) within 0.4%. Here, without the hold, a 300 us
/// pipeline gave 0.919 / 1.088 and a 500 us one 0.851 / 1.176.
#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn fast_writes_hold_the_ratio_at_the_benchs_depth() {
    fast_writes_hold_the_ratio(seed(249), 107_000.0);
}

/// A device that completes inside the submission (`SimConfig::cpu_inline`, as zram under
/// io_uring): every request of a dispatch round completes when the whole round is served,
/// so a request that found the lane empty reads the round's CPU time as its unloaded
/// latency (zram: 132-1,170 us against a smallest seen of 9-178 us) and
/// Little's law never sees four pipes of queue. Without the trial zram ran 1:1 at 4 and
/// 16 KiB whatever the shares (docs/scheduler-rate.md section 14); here 0.100 of asked
/// without the depth cap's trial. At 16 KiB (the window binds now and then, K 1.2) the
/// trial's cap stopped at ~66 reads and the ratio at 0.75 (section 15); the round bound
/// (`ShardQueue::round_bound`: after a round the device served whole, the next dispatch
/// stops at the first class it empties, so the others keep a backlog the fair queue orders)
/// holds it at 1.000 (section 18).
#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn an_inline_device_holds_the_shares() {
    let seed = seed(250);
    for op in [(Read, 4096), (Write, 4096), (Read, 16384), (Write, 16384)] {
        for shares in [(1000, 100), (100, 1000)] {
            let o = with_disk(SimConfig::cpu_inline(seed), op, 32, shares);
            let what = format!("seed {seed}: inline, {op:?} at {}:{}", shares.0, shares.1);
            assert_shares_held(&o, shares, 0.97, &what);
        }
    }
}

/// tune priced vda's 4 KiB writes at 131 K IOPS, a window held
/// ~128 writes a shard, and the ratio came out 0.75 / 1.40 of asked: the heavy class had
/// 64 of its ~89-write fair share of the window in the disk (72%), under the share hold's
/// bound had it been three quarters. Here, with that bound: 0.491 / 2.037 (300 us pipeline) and
/// 0.422 / 2.372 (500 us). The bound is two thirds. At 150 K IOPS (57% of its share)
/// the bench's depth still cannot hold the ratio: that needs `PARALLELISM=64`.
#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn writes_at_131k_iops_hold_the_ratio_at_the_benchs_depth() {
    fast_writes_hold_the_ratio(seed(251), 131_000.0);
}

/// 4 KiB writes at 1000:100 and 100:1000 on a disk priced at `write_iops`, behind a 300 us
/// and a 500 us pipeline, at the bench's depth (32 per class per shard).
fn fast_writes_hold_the_ratio(seed: u64, write_iops: f64) {
    for pipeline_ns in [300_000, 500_000] {
        let mut sim = SimConfig::nvme_like(seed);
        sim.fixed_latency_ns = pipeline_ns;
        sim.write.iops = write_iops;
        sim.write.bytes_per_sec = 2.1e9;
        for shares in [(1000, 100), (100, 1000)] {
            let o = with_disk(sim.clone(), (Write, 4096), 32, shares);
            let what = format!(
                "seed {seed}: pipeline {pipeline_ns} ns, writes at {}:{}",
                shares.0, shares.1
            );
            assert_shares_held(&o, shares, 0.95, &what);
            assert_outcome_within_goal(&o, &what);
        }
    }
}

/// The total reached at least `min_reach` of unscheduled and the split is within 5% of asked.
fn assert_shares_held(o: &Outcome, shares: (u32, u32), min_reach: f64, what: &str) {
    let asked = f64::from(shares.0) / f64::from(shares.1);
    assert!(
        o.reach >= min_reach,
        "{what}: {:.3} of unscheduled",
        o.reach
    );
    assert!(
        (o.share_ratio / asked - 1.0).abs() <= 0.05,
        "{what}: ratio {:.3} of asked",
        o.share_ratio / asked
    );
}

/// The queue the goal bounds comes on top of what a request pays alone in the disk.
fn assert_outcome_within_goal(o: &Outcome, what: &str) {
    assert_disk_within_goal(what, o.disk_p99_ns, o.solo_p99_ns, GOAL_NS);
}

/// tune priced vda's 4 KiB writes at 183.5 K IOPS where the disk
/// gave 164 K at the bench's depth (0.9x the model). Neither the window (a goal plus the
/// pipeline held more writes than the bench has) nor the bucket (K's floor is the drain
/// speed less 1/32, and the speed read 1.0) bound once: the queue was in the disk and the
/// ratio came out 0.22 / 5.4 of asked. Here the same shape on disks at 0.7x, 0.8x and 0.9x
/// of a 183.5 K model, behind a 300 us pipeline (the disk needs ~40-51 writes in flight for
/// its rate, fewer than the 1000-share class has), 32 per class per shard: K must come down
/// at the knee so the backlog waits in the scheduler. Without that (0.8x / 0.9x): 0.527 / 0.491 of
/// asked at 1000:100, K 0.969 / 1.195. Not at 0.6x: there the drain speed falls first (0.87,
/// its samples count the pipeline as queue), the window binds at ~119 writes and owns the
/// disk's queue (ratio 0.116; docs/scheduler-rate.md section 17).
#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn k_comes_down_at_the_knee_when_the_model_overprices_writes() {
    let seed = seed(252);
    for factor in [0.7, 0.8, 0.9] {
        let mut sim = SimConfig::nvme_like(seed);
        sim.fixed_latency_ns = 300_000;
        sim.write.iops = 183_500.0 * factor;
        sim.write.bytes_per_sec = 2.1e9;
        let mut priced = sim.clone();
        priced.write.iops = 183_500.0;
        for shares in [(1000, 100), (100, 1000)] {
            let o = with_disk_model(
                sim.clone(),
                (model_of(&priced), sched_knee()),
                (Write, 4096),
                32,
                shares,
            );
            let what = format!(
                "seed {seed}: disk {factor}x of a 183.5 K model, writes at {}:{}",
                shares.0, shares.1
            );
            assert_shares_held(&o, shares, 0.95, &what);
            assert_outcome_within_goal(&o, &what);
        }
    }
}

/// The disk-queue knee never lowers K under an idle or light load: the 0.6x disk of
/// `k_comes_down_at_the_knee_when_the_model_overprices_writes` (where a saturating load
/// brings K to ~0.59), ten simulated minutes alternating idle ones with half-loaded ones
/// (4 writes per class per shard: 16 in flight where the disk needs ~37 for its rate). K
/// offers more than the disk takes all along, but no request finds a queue in the disk.
#[test]
#[ignore = "a long simulation: bench/sched-sim.sh runs it in an optimized build"]
fn the_disk_queue_knee_never_lowers_k_under_an_idle_or_half_load() {
    let seed = seed(253);
    let mut sim = SimConfig::nvme_like(seed);
    sim.fixed_latency_ns = 300_000;
    sim.write.iops = 183_500.0 * 0.6;
    sim.write.bytes_per_sec = 2.1e9;
    let mut priced = sim.clone();
    priced.write.iops = 183_500.0;
    let jobs = on_every_shard(
        &[
            Job::new("a", 1000, Write, 4096, 4),
            Job::new("b", 100, Write, 4096, 4),
        ],
        2,
    );
    let mut h = Harness::with_model(sim, model_of(&priced), sched_knee(), jobs);
    let minute = 60 * S;
    for m in 1..=10u64 {
        let idle = m % 2 == 1;
        for job in h.jobs.iter_mut() {
            job.parallelism = if idle { 0 } else { 4 };
        }
        let k_before = h.budget.lane_stats(Write).rate_factor;
        h.run_until(m * minute);
        let stats = h.budget.lane_stats(Write);
        let rate = total_rate(&h, (m - 1) * minute, m * minute);
        println!(
            "minute {m} ({}): {rate:.4} model-s/s (disk 0.6), K {k_before:.3} -> {:.3}, \
             disk-queue cuts {}",
            if idle { "idle" } else { "half-loaded" },
            stats.rate_factor,
            stats.counters.disk_knee_cuts
        );
        assert!(
            stats.rate_factor >= k_before && stats.counters.disk_knee_cuts == 0,
            "seed {seed}: minute {m}: K {k_before:.3} -> {:.3}, {} cuts under a light load",
            stats.rate_factor,
            stats.counters.disk_knee_cuts
        );
        h.samples.clear();
    }
}
