//! Truth in simulation: weir-sim disks whose mixed boundary is known in closed form (half-
//! duplex, full duplex, concave, and one that fails mixed loads above a write rate). The whole
//! explore pipeline (calibration, open-loop points through weir-workload, the ray search, the
//! fits) runs on each, and must recover the boundary within 5% and pick the right model.
//!
//! The latency goal is set far above the disks' service times (50 ms against 0.8-2 ms), so the
//! goal contour sits within a few percent of the capacity boundary, which is what the disks
//! know exactly. Seeded: a failure prints the seed, and the same seed replays it.

use weir_explore::fit::ModelKind;
use weir_explore::meter::{WorkloadMeter, WriteRegime};
use weir_explore::search::{search_clocked, Judge};
use weir_explore::{Map, SearchSettings, Slice, SteadyRule};
use weir_sim::mixed::{Boundary, MixedConfig, MixedDisk, Stalls};
use weir_workload::DeviceOpenError;
use weir_workload::{DeviceFactory, RunOptions};

struct Factory {
    config: MixedConfig,
    /// Devices opened so far, per shard: each gets a seed of its own, so a load measured
    /// twice meets other service times and stalls, as a real disk's second measurement does.
    /// Counted per shard because the shards of one run open their devices from their own
    /// threads in whatever order the machine runs them: one shared counter let a loaded
    /// machine swap two shards' seeds.
    opened: std::sync::Mutex<Vec<u64>>,
}

impl Factory {
    fn new(config: &MixedConfig) -> Factory {
        Factory {
            config: config.clone(),
            opened: Default::default(),
        }
    }
}

impl DeviceFactory for Factory {
    type Device = MixedDisk;

    fn name(&self) -> String {
        "sim-mixed".into()
    }

    fn open(&self, shard: usize, _depth: u32) -> Result<MixedDisk, DeviceOpenError> {
        let n = {
            let mut opened = self
                .opened
                .lock()
                .map_err(|e| DeviceOpenError::other(e.to_string()))?;
            if opened.len() <= shard {
                opened.resize(shard + 1, 0);
            }
            opened[shard] += 1;
            opened[shard] - 1
        };
        // Shard 0 keeps the seeds a one-shard map draws from a per-run counter.
        let seed = self
            .config
            .seed
            .wrapping_add(n.wrapping_mul(0x9E37_79B9))
            .wrapping_add((shard as u64).wrapping_mul(0xBF58_476D));
        Ok(MixedDisk::new(MixedConfig {
            seed,
            ..self.config.clone()
        }))
    }

    /// Each disk keeps its own virtual clock: the sampler waits for every shard's window.
    fn simulated_clock(&self) -> bool {
        true
    }
}

const GOAL_US: f64 = 50_000.0;

/// A slower disk than the preset (fewer simulated events): 5K reads/s, 250 MB/s of writes.
fn disk(seed: u64, boundary: Boundary) -> MixedConfig {
    MixedConfig {
        read_iops: 5_000.0,
        write_bytes_per_s: 250e6,
        ..MixedConfig::new(seed, boundary)
    }
}

/// The map of `config` in `slice`, with that slice's request sizes, on one shard.
fn explore_slice(config: &MixedConfig, slice: Slice) -> Map {
    explore_on(config, slice, 1)
}

/// The map of `config` in `slice` on `shards` shards (each shard opens a disk of its own, so
/// the pure maxima are `shards` times the disk's).
fn explore_on(config: &MixedConfig, slice: Slice, shards: usize) -> Map {
    explore_judged(
        config,
        slice,
        shards,
        GOAL_US,
        Judge::Pooled,
        Verify::Settled,
    )
}

/// How long a verifying measurement runs, and what the search does around it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Verify {
    /// A fixed 8 s.
    Fixed,
    /// 8 s, or 4 s when those were a clear miss (`pooled::CLEAR_MISS_SHARE`);
    /// no settling probes.
    EndsOnClearMiss,
    /// The default: `EndsOnClearMiss`, and settling probes before the first ray. The
    /// simulated disks have no calibration wake, so here the probes only move every later
    /// point to other seeds (each measurement opens devices seeded by a counter).
    Settled,
    /// `Settled`, and refinement rays bisected from their neighbours' boundaries (measured
    /// and not kept: `refine_from_neighbours`).
    Neighbours,
}

/// The map of `config` with a goal of `goal_us`, judging loads measured twice by `judge`,
/// verifying measurements as `verify` says.
fn explore_judged(
    config: &MixedConfig,
    slice: Slice,
    shards: usize,
    goal_us: f64,
    judge: Judge,
    verify: Verify,
) -> Map {
    let (read_bytes, write_bytes) = slice.default_sizes_bytes();
    let factory = Factory::new(config);
    let rule = SteadyRule {
        warmup: std::time::Duration::from_millis(500),
        window: std::time::Duration::from_millis(500),
        max_windows: 4,
        // 8 s of reads per verifying measurement, as the full rule's 8 x 1 s, and at least
        // 4 s before a clear miss may end it (4 x 1 s); `Fixed` runs all 8 s.
        verify_windows: 16,
        verify_min_windows: match verify {
            Verify::Fixed => 16,
            _ => 8,
        },
        ..SteadyRule::full()
    };
    let mut meter = WorkloadMeter {
        factory: &factory,
        options: RunOptions {
            dir: None,
            shards,
            seed: config.seed,
            ..RunOptions::default()
        },
        read_bytes,
        write_bytes,
        regime: WriteRegime::Overwrite,
        read_region_bytes: 1 << 30,
        overwrite_region_bytes: 1 << 30,
        fresh_file_cap_bytes: 1 << 30,
        rule,
        goal_us,
    };
    let settings = SearchSettings {
        steps: 6,
        judge,
        ..SearchSettings::full(
            goal_us,
            WriteRegime::Overwrite,
            std::time::Duration::from_secs(3600),
        )
    };
    let settings = SearchSettings {
        settle_probes: match verify {
            Verify::Settled | Verify::Neighbours => settings.settle_probes,
            Verify::Fixed | Verify::EndsOnClearMiss => 0,
        },
        refine_from_neighbours: verify == Verify::Neighbours,
        ..settings
    };
    // The budget (an hour) is not what these tests check, and its wall clock would make a
    // map depend on the machine's load: the search's clock stands still.
    let clock = || std::time::Duration::ZERO;
    let outcome = search_clocked(&mut meter, &settings, &clock, &mut |_| {})
        .expect("the search runs on the sim");
    let mut map = Map::from_search(
        outcome,
        WriteRegime::Overwrite,
        goal_us,
        read_bytes,
        write_bytes,
    );
    map.set_slice(slice);
    map
}

/// The simulated disk time a map took: every point's warm-up (0.5 s) and measured windows,
/// the settling probes', and the calibration's three closed-loop runs (0.5 s + 2 x 0.5 s
/// each), twice when the map measured its drift. What a real map's time is made of, without the wall clock of a loaded
/// test machine.
fn map_seconds(map: &Map) -> f64 {
    let calibrations = if map.drift.is_some() { 2.0 } else { 1.0 };
    let points = map.points.iter().chain(&map.settling);
    calibrations * 3.0 * 1.5 + points.map(|p| 0.5 + p.seconds).sum::<f64>()
}

/// Every frontier point lies within 5% of the true boundary along its own ray (in the plane
/// normalised by the true pure maxima), and the chosen model is `want`.
fn check(name: &str, config: &MixedConfig, want: ModelKind) -> Map {
    check_slice(name, config, want, Slice::ReadIopsWriteBw)
}

fn check_slice(name: &str, config: &MixedConfig, want: ModelKind, slice: Slice) -> Map {
    let seed = config.seed;
    let map = explore_slice(config, slice);
    let ctx = format!(
        "{name} (seed {seed}):\n{}",
        weir_explore::output::summary(&map)
    );
    println!(
        "{name} (seed {seed}): {} points, simulated map time {:.0} s",
        map.points.len(),
        map_seconds(&map)
    );
    // Seven rays at least found an entry; the frontier keeps those consistent with a
    // monotone boundary (an edge measured twice keeps its outer entry).
    assert!(
        map.frontier.len() + map.frontier_dominated.len() >= 7 && map.frontier.len() >= 5,
        "{ctx}"
    );
    for f in &map.frontier {
        let x = f.read_iops / config.read_iops;
        let y = f.write_bytes_per_s / config.write_bytes_per_s;
        // The true boundary along this ray: scale (x, y) until it touches the boundary.
        let (mut lo, mut hi) = (0.0f64, 4.0f64);
        for _ in 0..60 {
            let t = (lo + hi) / 2.0;
            let on_axis = f.read_iops <= 0.02 * config.read_iops;
            let read = if on_axis {
                f.read_iops
            } else {
                t * f.read_iops
            };
            if config.holds(read, t * f.write_bytes_per_s) {
                lo = t;
            } else {
                hi = t;
            }
        }
        let radius_error = 1.0 / lo - 1.0;
        assert!(
            radius_error.abs() <= 0.05,
            "{ctx}\nfrontier point ({x:.3}, {y:.3}) is {:.1}% off the true boundary",
            radius_error * 100.0
        );
    }
    let fits = map.fits.as_ref().expect(&ctx);
    assert_eq!(fits.chosen, want, "{ctx}");
    map
}

#[test]
fn half_duplex_disk() {
    let map = check(
        "half-duplex",
        &disk(11, Boundary::HalfDuplex),
        ModelKind::HalfDuplex,
    );
    let model = map.model.expect("model");
    assert!(!model.duplex);
}

#[test]
fn full_duplex_disk() {
    let map = check(
        "full-duplex",
        &disk(12, Boundary::FullDuplex),
        ModelKind::Duplex,
    );
    assert!(map.model.expect("model").duplex);
}

#[test]
fn concave_disk() {
    let map = check(
        "concave",
        &disk(13, Boundary::Concave { exponent: 0.6 }),
        ModelKind::Curve,
    );
    let a = map.fits.expect("fits").curve.exponent.expect("exponent");
    assert!((a - 0.6).abs() <= 0.1, "exponent {a}");
}

#[test]
fn disk_failing_mixed_writes_above_a_rate() {
    let config = disk(
        14,
        Boundary::WriteCliff {
            mixed_write_limit_bytes_per_s: 100e6,
            read_slowdown: 200.0,
        },
    );
    let map = check("write cliff", &config, ModelKind::Capped);
    let fits = map.fits.expect("fits");
    let ceiling = fits.capped.mixed_write_ceiling.expect("ceiling") * fits.write_bytes_per_s_axis;
    assert!((ceiling / 100e6 - 1.0).abs() <= 0.05, "ceiling {ceiling}");
}

/// The other slice (128 KiB reads x 4 KiB writes) on the half-duplex disk: the same pipeline
/// finds the boundary (the disk charges a read 1/read_iops whatever its size, a write its
/// length / bandwidth), and the map shows it as read bandwidth x write IOPS.
#[test]
fn read_bandwidth_x_write_iops_slice() {
    let config = disk(15, Boundary::HalfDuplex);
    let map = check_slice(
        "half-duplex, read-bw-write-iops",
        &config,
        ModelKind::HalfDuplex,
        Slice::ReadBwWriteIops,
    );
    assert_eq!((map.read_bytes, map.write_bytes), (128 * 1024, 4096));
    assert_eq!(map.axes.read.unit, "B/s");
    assert_eq!(map.axes.write.unit, "IOPS");
    assert_eq!(map.frontier_in_axes.len(), map.frontier.len());
    for (f, a) in map.frontier.iter().zip(&map.frontier_in_axes) {
        // The axis values are derived from the frontier's by another float path: equal to
        // rounding (1e-12 relative), not bit for bit.
        let close = |got: f64, want: f64| (got - want).abs() <= 1e-12 * want.abs().max(1.0);
        assert!(close(a.read, f.read_iops * 131_072.0), "{a:?} vs {f:?}");
        assert!(
            close(a.write, f.write_bytes_per_s / 4096.0),
            "{a:?} vs {f:?}"
        );
    }
    // The pure-write end: 250 MB/s of 4 KiB writes is 61k IOPS.
    let most_writes = map
        .frontier_in_axes
        .iter()
        .map(|a| a.write)
        .fold(0.0, f64::max);
    assert!(
        (most_writes / (250e6 / 4096.0) - 1.0).abs() <= 0.05,
        "{most_writes}"
    );
    let summary = weir_explore::output::summary(&map);
    assert!(
        summary.contains("for each read bandwidth the highest write rate"),
        "{summary}"
    );
    // The settling probes are listed in one line, their p99s in measurement order.
    let settling = summary
        .lines()
        .find(|l| l.starts_with("settling after the calibration:"))
        .unwrap_or_else(|| panic!("no settling line:\n{summary}"));
    let p99s: Vec<String> = map
        .settling
        .iter()
        .map(|p| format!("{:.0}", p.read_latency_us.p99))
        .collect();
    assert!(
        settling.contains(&format!("read p99 {} us", p99s.join(", "))),
        "{settling}"
    );
    let svg = weir_explore::plots::heatmap(&map, weir_explore::plots::Direction::Read).to_svg();
    assert!(svg.contains("read bandwidth") && svg.contains("write rate"));
}

/// Two maps of one steady disk agree: the second map's disk is 2% faster in both directions
/// (a device's own spread between two runs) and runs on other seeds (arrivals, offsets, the
/// service jitter of +-10% per request). explore's target, "two runs' frontiers within 5%",
/// must then hold for explore's own method: the search's steps, the steady rule's windows,
/// the crossing, the envelope. Two shards, each on a disk with its own virtual clock, so one
/// shard runs ahead of the other in wall time and the windows must still be cut in step
/// (a sampler that cuts windows by wall time fails this test).
#[test]
fn two_maps_of_a_steady_disk_agree_within_5_percent() {
    let (seed_a, seed_b) = (31, 32);
    let a_config = disk(seed_a, Boundary::HalfDuplex);
    let b_config = MixedConfig {
        read_iops: a_config.read_iops * 1.02,
        write_bytes_per_s: a_config.write_bytes_per_s * 1.02,
        ..disk(seed_b, Boundary::HalfDuplex)
    };
    let json = |m: &Map| serde_json::to_string(m).expect("a map serialises");
    let (a, b) = (
        explore_on(&a_config, Slice::ReadIopsWriteBw, 2),
        explore_on(&b_config, Slice::ReadIopsWriteBw, 2),
    );
    let c = weir_explore::compare::compare_frontiers(&json(&a), "A", &json(&b), "B")
        .expect("two maps of one regime compare");
    let text = weir_explore::compare::comparison_text(&c, 0.05);
    println!(
        "seeds {seed_a}/{seed_b}: simulated map time {:.0} s and {:.0} s ({} and {} points)\n{text}",
        map_seconds(&a),
        map_seconds(&b),
        a.points.len(),
        b.points.len()
    );
    // Along rays, as the search measures and as `check` judges the truth: per read rate the
    // writes near the read axis differ by far more than the two disks do (see `radial`).
    assert!(c.radial.len() >= 5, "seeds {seed_a}/{seed_b}:\n{text}");
    assert!(
        c.max_abs_radial_difference <= 0.05,
        "seeds {seed_a}/{seed_b}: the frontiers differ by more than 5% along a ray:\n{text}"
    );
}

/// A disk whose read tail near the read limit is chance: half-duplex, but from half the read
/// limit on it freezes for 4-16 ms now and then, at a rate rising as the cube of the way to the
/// limit (50 per second there), as a zram read's shard is descheduled on two vCPUs. A 0.5 s
/// window's read p99 (about 1.4 ms without a stall) is then 3-12x the usual whenever a stall
/// falls in it, while the rates move under 1%.
fn stalling_disk(seed: u64) -> MixedConfig {
    MixedConfig {
        stalls: Some(Stalls {
            onset_read_share: 0.5,
            per_s_at_read_limit: 50.0,
            min_ns: 4_000_000,
            max_ns: 16_000_000,
        }),
        ..disk(seed, Boundary::HalfDuplex)
    }
}

/// The goal for the stalling disk: above its usual read p99 (a read holds a channel 0.8 ms),
/// below a stall.
const STALL_GOAL_US: f64 = 5_000.0;

/// Two maps of the stalling disk (other seeds, same disk), compared along rays.
fn stalling_pair(seeds: (u64, u64), judge: Judge, verify: Verify) -> (f64, String) {
    let mut points = Vec::new();
    let mut seconds = Vec::new();
    let maps = [seeds.0, seeds.1].map(|seed| {
        let map = explore_judged(
            &stalling_disk(seed),
            Slice::ReadIopsWriteBw,
            1,
            STALL_GOAL_US,
            judge,
            verify,
        );
        points.push(map.points.len());
        seconds.push(format!("{:.0} s", map_seconds(&map)));
        serde_json::to_string(&map).expect("a map serialises")
    });
    let c = weir_explore::compare::compare_frontiers(&maps[0], "A", &maps[1], "B")
        .expect("two maps of one regime compare");
    let text = format!(
        "points measured: {points:?}, simulated map time {seconds:?}\n{}",
        weir_explore::compare::comparison_text(&c, 0.05)
    );
    (c.max_abs_radial_difference, text)
}

/// Two maps of a stalling disk agree within 5%. On the stalling disk the old judgement (each
/// measurement's verdict, the last standing) puts two maps' frontiers more than 5% apart
/// along some ray, as two quiet zram maps were (22% at the read axis's end); judging each load
/// on all its reads, and verifying each ray's bracket, puts them within 5% along every ray.
/// Without settling probes, whose only effect here is to move the seeds (see `map_time`).
#[test]
fn two_maps_of_a_disk_whose_read_tail_is_chance_agree_within_5_percent() {
    let seeds = (51, 52);
    let (old, old_text) = stalling_pair(seeds, Judge::LastMeasurement, Verify::Fixed);
    println!("seeds {seeds:?}, each measurement's own verdict:\n{old_text}");
    let (new, new_text) = stalling_pair(seeds, Judge::Pooled, Verify::EndsOnClearMiss);
    println!("seeds {seeds:?}, pooled:\n{new_text}");
    assert!(
        old > 0.05,
        "seeds {seeds:?}: the stalling disk no longer reproduces the old rule's spread ({:.1}%)",
        old * 100.0
    );
    assert!(
        new <= 0.05,
        "seeds {seeds:?}: pooled frontiers differ by {:.1}% along a ray:\n{new_text}",
        new * 100.0
    );
}

/// The cost question in simulation: the stalling pair with fixed 8 s verifying measurements,
/// with measurements ended at 4 s by a clear miss, with settling probes, and with refinements
/// bisected from their neighbours, on seven seed pairs. Prints each pair's simulated map time
/// and largest difference along rays; asserts the clear-miss pairs within 5%. The settling
/// probes change nothing on these disks but the seeds every later point meets, and with them
/// 4 of the 7 pairs go over 5% (6.1-8.4%): the 5% holds on these seeds, not on every draw
/// (docs/design/explore.md). `cargo test --release -p weir-explore --test sim_truth -- --ignored
/// --nocapture map_time` (about 3 minutes in release).
#[test]
#[ignore]
fn map_time_before_and_after_on_the_stalling_disk() {
    let mut worst: f64 = 0.0;
    for seeds in [
        (41, 42),
        (43, 44),
        (45, 46),
        (47, 48),
        (49, 50),
        (51, 52),
        (53, 54),
    ] {
        let first = |t: &str| t.lines().next().unwrap_or_default().to_string();
        let mut line = format!("seeds {seeds:?}:");
        for (name, verify) in [
            ("fixed 8 s", Verify::Fixed),
            ("ends on a clear miss", Verify::EndsOnClearMiss),
            ("settled", Verify::Settled),
            ("from neighbours", Verify::Neighbours),
        ] {
            let (diff, text) = stalling_pair(seeds, Judge::Pooled, verify);
            line += &format!(" {name} {:.1}% ({});", diff * 100.0, first(&text));
            if verify == Verify::EndsOnClearMiss {
                worst = worst.max(diff);
            }
        }
        println!("{line}");
    }
    assert!(
        worst <= 0.05,
        "the largest difference along a ray is {:.1}%",
        worst * 100.0
    );
}
