//! Seeded noisy-sweep tier: large sequential requests on a disk whose bandwidth keeps rising
//! with depth by less than one sample's noise per doubling (this project's VM: 1 MiB reads at
//! 1.1 GB/s from depth 2 to 16 and ~2 GB/s at 128, per-sample swings of 10-20%). Which step of
//! such a sweep reads highest is chance, so the depth chosen for a bandwidth figure must not be
//! the shallowest near the luckiest step: it is the deepest within the noise of the best, and a
//! deeper depth that is truly slower is caught by its confirmation. Each assertion prints its
//! seed.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use weir_model::device::Direction;
use weir_tune::meter::{Control, Sample};
use weir_tune::{tune, Load, Meter, Pattern, TuneConfig, TuneError, TuneReport};

/// A meter whose true rate is `curve(load)` (ops per second); every 100 ms sample is off by
/// a factor drawn around 1 with a spread of `sample_noise` (uniform, so its standard deviation
/// is `sample_noise / sqrt(3)`), and every run by a slow swing of up to `run_noise`.
struct Noisy {
    curve: fn(&Load) -> f64,
    rng: SmallRng,
    sample_noise: f64,
    run_noise: f64,
}

impl Meter for Noisy {
    fn shards(&self) -> u32 {
        2
    }

    fn depth_max(&self) -> u32 {
        256
    }

    fn request_bytes_min(&self) -> u32 {
        512
    }

    fn run(
        &mut self,
        load: &Load,
        sample_interval_ns: u64,
        on_sample: &mut dyn FnMut(&Sample) -> Control,
    ) -> Result<(), TuneError> {
        let swing = 1.0 + self.rng.gen_range(-self.run_noise..=self.run_noise);
        let rate = (self.curve)(load) * swing;
        let (mut ops, mut latency_ns) = (0.0f64, 0.0f64);
        let mut s = Sample::default();
        loop {
            let factor = 1.0 + self.rng.gen_range(-self.sample_noise..=self.sample_noise);
            let n = rate * factor * sample_interval_ns as f64 / 1e9;
            ops += n;
            latency_ns += n * f64::from(load.depth) / rate * 1e9;
            s.elapsed_ns += sample_interval_ns;
            s.ops = ops as u64;
            s.bytes = s.ops * u64::from(load.request_bytes);
            s.latency_ns_sum = latency_ns as u64;
            if on_sample(&s) == Control::Stop {
                return Ok(());
            }
        }
    }
}

/// Bytes per second at `depth` for 1 MiB reads and writes: creeps up from 1 GB/s at depth 2 to
/// 1.35 GB/s at 128 (under 6% per doubling, less than one sample's noise) and stays there.
fn creeping_bandwidth(depth: u32) -> f64 {
    let doublings = f64::from(depth.clamp(2, 128)).log2() - 1.0;
    1e9 * (1.0 + 0.35 * doublings / 6.0)
}

fn vm_like(l: &Load) -> f64 {
    match l.pattern {
        Pattern::Sequential => creeping_bandwidth(l.depth) / f64::from(l.request_bytes),
        Pattern::Random if l.direction == Direction::Read => 80_000.0,
        Pattern::Random => 60_000.0,
    }
}

/// A disk whose large requests reach their bandwidth at depth 4 (half of it at 1, 0.8 at 2)
/// and lose 30% of it with more than 16 in flight: overloaded.
fn overloaded_deep(l: &Load) -> f64 {
    if l.pattern != Pattern::Sequential {
        return vm_like(l);
    }
    let share = match l.depth {
        0..=1 => 0.5,
        2..=3 => 0.8,
        4..=16 => 1.0,
        _ => 0.7,
    };
    1e9 * share / f64::from(l.request_bytes)
}

fn tune_noisy(curve: fn(&Load) -> f64, seed: u64, sample_noise: f64, run_noise: f64) -> TuneReport {
    let mut meter = Noisy {
        curve,
        rng: SmallRng::seed_from_u64(seed),
        sample_noise,
        run_noise,
    };
    match tune(&mut meter, &TuneConfig::new(27_000_000_000)) {
        Ok(r) => r,
        Err(e) => panic!("seed {seed}: tune failed: {e}"),
    }
}

/// The true bandwidth at `depth` over the best true bandwidth at any depth from 1 to 128
/// (fio's sweep), for `curve`'s 1 MiB reads or writes.
fn over_best(curve: fn(&Load) -> f64, direction: Direction, depth: u32) -> f64 {
    let at = |depth| {
        let l = Load {
            direction,
            pattern: Pattern::Sequential,
            request_bytes: 1 << 20,
            depth,
        };
        curve(&l) * f64::from(l.request_bytes)
    };
    let best = (0..=7).map(|i| at(1 << i)).fold(0.0, f64::max);
    at(depth) / best
}

/// The depth the rule before this one chose: the shallowest step within 2% of the best.
fn shallowest_within_2_percent(k: &weir_tune::search::KneeResult) -> u32 {
    let floor = k.best().rate() * 0.98;
    k.steps
        .iter()
        .filter(|m| m.rate() >= floor)
        .map(|m| m.load.depth)
        .min()
        .unwrap_or(k.best().load.depth)
}

#[test]
fn a_noisy_bandwidth_sweep_is_confirmed_deep_enough() {
    let seeds: Vec<u64> = (1..=24).collect();
    let (mut met, mut met_before) = (0, 0);
    let figures = seeds.len() * 2;
    for &seed in &seeds {
        let r = tune_noisy(vm_like, seed, 0.3, 0.15);
        for (name, f, k, direction) in [
            (
                "read",
                &r.read_bandwidth,
                &r.sweeps.sequential_read,
                Direction::Read,
            ),
            (
                "write",
                &r.write_bandwidth,
                &r.sweeps.sequential_write,
                Direction::Write,
            ),
        ] {
            let steps: Vec<(u32, u64)> = k
                .steps
                .iter()
                .map(|m| (m.load.depth, (m.rate() / 1e6) as u64))
                .collect();
            let ratio = over_best(vm_like, direction, f.depth_best);
            let before = over_best(vm_like, direction, shallowest_within_2_percent(k));
            eprintln!(
                "seed {seed} {name}: depth {} ({ratio:.2} of the best; the shallowest within 2%: {before:.2}), figure {:.0} MB/s, sweep (depth, MB/s) {steps:?}",
                f.depth_best,
                f.value / 1e6
            );
            met += usize::from(ratio >= 0.9);
            met_before += usize::from(before >= 0.9);
            assert!(
                ratio >= 0.75,
                "seed {seed} {name}: depth {} gives {ratio:.2} of the best: {f:?}",
                f.depth_best
            );
        }
    }
    eprintln!(
        "seeds {seeds:?}: chosen depth >= 0.9 of the best in {met} of {figures} figures (the shallowest within 2%: {met_before})"
    );
    // Under ±30% noise per sample a few figures still pick a noisy step (43 of 48 do not);
    // the rule before this one met 30 of 48.
    assert!(
        met * 100 >= figures * 85,
        "seeds {seeds:?}: only {met} of {figures} figures chose a depth within 0.9 of the best"
    );
    assert!(
        met > met_before,
        "seeds {seeds:?}: {met} against {met_before} for the shallowest within 2%"
    );
}

#[test]
fn a_disk_overloaded_deep_keeps_its_shallower_depth() {
    for seed in 1..=6u64 {
        // Steady samples: the deep steps' loss is plain, none is within the noise.
        let steady = tune_noisy(overloaded_deep, seed, 0.02, 0.01);
        // Noisy samples: a deep step may read within the noise of the best in the sweep, and
        // then its confirmation reads under the sweep's best and a second opinion at the best
        // step's depth wins.
        let noisy = tune_noisy(overloaded_deep, seed, 0.3, 0.05);
        for (tier, r) in [("steady", &steady), ("noisy", &noisy)] {
            for (name, f, direction) in [
                ("read", &r.read_bandwidth, Direction::Read),
                ("write", &r.write_bandwidth, Direction::Write),
            ] {
                let ratio = over_best(overloaded_deep, direction, f.depth_best);
                assert!(
                    ratio >= 0.9,
                    "seed {seed} {tier} {name}: depth {} gives {ratio:.2} of the best: {f:?}\n{:?}",
                    f.depth_best,
                    r.sweeps.confirms
                );
                if tier == "steady" {
                    assert!(f.depth_best <= 16, "seed {seed} {name}: {f:?}");
                }
            }
        }
    }
}
