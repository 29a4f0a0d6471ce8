//! The ray search against meters that know the answer.

use super::*;
use crate::point::Steady;

/// A meter that knows the answer: inside when x + y^2 <= 0.8 in units of its maxima.
struct Oracle {
    calls: usize,
}

impl Meter for Oracle {
    fn calibrate(&mut self) -> Result<Calibration, ExploreError> {
        Ok(Calibration {
            read_iops: 10_000.0,
            fresh_write_bytes_per_s: 1e9,
            overwrite_write_bytes_per_s: 2e9,
        })
    }

    fn measure(&mut self, load: Load) -> Result<PointResult, ExploreError> {
        self.calls += 1;
        let x = load.read_iops / 10_000.0;
        let y = load.write_bytes_per_s / 1e9;
        let inside = x + y * y <= 0.8;
        Ok(PointResult {
            read_iops: load.read_iops,
            write_bytes_per_s: load.write_bytes_per_s,
            achieved_read_iops: load.read_iops,
            achieved_write_bytes_per_s: load.write_bytes_per_s,
            read_latency_us: Default::default(),
            write_latency_us: Default::default(),
            read_share_over_goal: Some(if inside { 0.0 } else { 1.0 }),
            kept_up: inside,
            within_goal: inside,
            seconds: 1.0,
            steady: Steady::Agreed,
            windows: 2,
        })
    }
}

/// Misses every inside point once, marginally (p99 1.2x the goal), then answers truly.
struct Flaky {
    inner: Oracle,
    missed: Vec<(u64, u64)>,
}

impl Meter for Flaky {
    fn calibrate(&mut self) -> Result<Calibration, ExploreError> {
        self.inner.calibrate()
    }

    fn measure(&mut self, load: Load) -> Result<PointResult, ExploreError> {
        let mut p = self.inner.measure(load)?;
        let key = (load.read_iops as u64, load.write_bytes_per_s as u64);
        if p.within_goal && !self.missed.contains(&key) {
            self.missed.push(key);
            p.within_goal = false;
            p.read_latency_us.p99 = 1200.0;
            p.read_share_over_goal = Some(0.015);
        }
        Ok(p)
    }
}

#[test]
fn a_marginal_miss_is_measured_again_before_it_cuts_a_ray() {
    let mut meter = Flaky {
        inner: Oracle { calls: 0 },
        missed: Vec::new(),
    };
    let settings = SearchSettings::quick(1000.0, WriteRegime::Fresh, Duration::from_secs(3600));
    let out = search(&mut meter, &settings, &mut |_| {}).expect("search");
    assert!(!meter.missed.is_empty());
    for ray in &out.rays {
        let inside = ray.inside.expect("the retest keeps every ray");
        let x = if ray.angle_deg >= 90.0 {
            0.0
        } else {
            inside.read_iops / 10_000.0
        };
        let y = inside.write_bytes_per_s / 1e9;
        assert!(x + y * y >= 0.8 * 0.8, "{ray:?}");
    }
    // Without settling probes: a probe would spend the flaky first miss at its load.
    let without = SearchSettings {
        retest_marginal: false,
        settle_probes: 0,
        ..settings
    };
    let mut meter = Flaky {
        inner: Oracle { calls: 0 },
        missed: Vec::new(),
    };
    let out = search(&mut meter, &without, &mut |_| {}).expect("search");
    assert!(
        out.rays.iter().all(|r| r.inside.is_none()),
        "every first verdict was a miss"
    );
}

#[test]
fn rays_find_a_known_curved_boundary_and_refine_its_bend() {
    let mut meter = Oracle { calls: 0 };
    let settings = SearchSettings::full(1000.0, WriteRegime::Fresh, Duration::from_secs(3600));
    let mut seen = 0;
    let out = search(&mut meter, &settings, &mut |p| {
        seen += 1;
        assert_eq!(p.done, seen);
    })
    .expect("search");
    assert_eq!(seen, out.points.len());
    // The oracle never moves, so two settling probes agree.
    assert_eq!(out.settling.len(), 2);
    assert_eq!(meter.calls, out.points.len() + out.settling.len());
    assert!(
        out.rays.len() > settings.initial_rays,
        "a curve gets refined"
    );
    assert_eq!(out.rays.first().map(|r| r.angle_deg), Some(0.0));
    assert_eq!(out.rays.last().map(|r| r.angle_deg), Some(90.0));
    for ray in &out.rays {
        let inside = ray.inside.expect("every ray has an inside point");
        let x = inside.read_iops / 10_000.0;
        let y = inside.write_bytes_per_s / 1e9;
        let x = if ray.angle_deg >= 90.0 { 0.0 } else { x };
        // Within one bisection step (1/32 of the ray) of the boundary, on the inside.
        assert!(x + y * y <= 0.8 + 1e-9, "{ray:?}");
        assert!(x + y * y >= 0.8 * 0.88, "{ray:?}");
    }
    // The pure-write axis carries the probe reads.
    let top = out.rays.last().and_then(|r| r.inside).expect("axis");
    assert_eq!(top.read_iops, 50.0);
    // The pure loads are measured again at the end (the oracle's do not drift), unless not
    // asked for.
    assert_eq!(out.calibration_end, Some(out.calibration));
    let without = SearchSettings {
        closing_calibration: false,
        ..settings
    };
    let out = search(&mut meter, &without, &mut |_| {}).expect("search");
    assert_eq!(out.calibration_end, None);
}

/// Read p99 rises with the load and crosses the 1 ms goal on x + y^2 = 0.8; every load
/// keeps up, so the p99s on both sides of the crossing are usable.
struct Graded {
    inner: Oracle,
}

impl Meter for Graded {
    fn calibrate(&mut self) -> Result<Calibration, ExploreError> {
        self.inner.calibrate()
    }

    fn measure(&mut self, load: Load) -> Result<PointResult, ExploreError> {
        let mut p = self.inner.measure(load)?;
        let x = load.read_iops / 10_000.0;
        let y = load.write_bytes_per_s / 1e9;
        p.read_latency_us.p99 = 1000.0 * (x + y * y) / 0.8;
        p.read_share_over_goal = Some(0.01 * (x + y * y) / 0.8);
        p.kept_up = true;
        p.within_goal = p.read_latency_us.p99 <= 1000.0;
        Ok(p)
    }
}

#[test]
fn the_crossing_between_a_confirmed_pass_and_fail_lands_on_the_goal() {
    let settings = SearchSettings::full(1000.0, WriteRegime::Fresh, Duration::from_secs(3600));
    let mut meter = Graded {
        inner: Oracle { calls: 0 },
    };
    let out = search(&mut meter, &settings, &mut |_| {}).expect("search");
    for ray in out.rays.iter().filter(|r| r.angle_deg < 90.0) {
        assert_eq!(ray.confirmed, Some(true), "{ray:?}");
        let c = ray.crossing.expect("a pass and a fail bracket the goal");
        let (x, y) = (c.read_iops / 10_000.0, c.write_bytes_per_s / 1e9);
        let i = ray.inside.expect("a pass");
        let inside = i.read_iops / 10_000.0 + (i.write_bytes_per_s / 1e9).powi(2);
        // Nearer the boundary than the pass, within 1% of it (p99 is linear in x + y^2,
        // the crossing linear along the ray).
        assert!((x + y * y - 0.8).abs() <= 0.8 - inside + 1e-9, "{ray:?}");
        assert!((x + y * y - 0.8).abs() <= 0.008, "{ray:?}");
        // Both sides were measured twice.
        let o = ray.outside.expect("a fail");
        for load in [i, o] {
            let n = out.points.iter().filter(|p| p.offered() == load).count();
            assert_eq!(n, 2, "{load:?}");
        }
    }
    let quick = SearchSettings::quick(1000.0, WriteRegime::Fresh, Duration::from_secs(3600));
    let out = search(&mut meter, &quick, &mut |_| {}).expect("search");
    assert!(out
        .rays
        .iter()
        .all(|r| r.crossing.is_none() && r.confirmed.is_none()));
}

/// `inner` on a clock of its own: a calibration takes 9 s, a point 4 s, a verifying point 9 s.
struct Timed<M> {
    inner: M,
    now: std::rc::Rc<std::cell::Cell<Duration>>,
}

impl<M: Meter> Timed<M> {
    fn spend(&self, seconds: u64) {
        self.now.set(self.now.get() + Duration::from_secs(seconds));
    }
}

impl<M: Meter> Meter for Timed<M> {
    fn calibrate(&mut self) -> Result<Calibration, ExploreError> {
        self.spend(9);
        self.inner.calibrate()
    }

    fn measure(&mut self, load: Load) -> Result<PointResult, ExploreError> {
        self.spend(4);
        self.inner.measure(load)
    }

    fn measure_long(&mut self, load: Load) -> Result<PointResult, ExploreError> {
        self.spend(9);
        self.inner.measure_long(load)
    }
}

/// A full search on the timed graded meter with `budget_s`.
fn timed_search(budget_s: u64) -> SearchOutcome {
    let now = std::rc::Rc::new(std::cell::Cell::new(Duration::ZERO));
    let mut meter = Timed {
        inner: Graded {
            inner: Oracle { calls: 0 },
        },
        now: now.clone(),
    };
    let budget = Duration::from_secs(budget_s);
    let settings = SearchSettings::full(1000.0, WriteRegime::Fresh, budget);
    let clock = || now.get();
    search_clocked(&mut meter, &settings, &clock, &mut |_| {}).expect("search")
}

#[test]
fn the_whole_run_with_its_closing_calibration_ends_within_the_budget() {
    // The axes always run: a budget below them is spent on them alone.
    let axes = timed_search(1);
    let whole = timed_search(3600);
    assert!(whole.seconds > axes.seconds + 100.0, "{} s", whole.seconds);
    for budget_s in (axes.seconds as u64..whole.seconds as u64).step_by(7) {
        let out = timed_search(budget_s);
        assert!(out.calibration_end.is_some(), "budget {budget_s} s");
        assert!(
            out.seconds <= budget_s as f64,
            "budget {budget_s} s: the run took {} s ({} points, {} rays)",
            out.seconds,
            out.points.len(),
            out.rays.len()
        );
    }
}

/// `Graded` whose first `left` measurements meet the calibration's wake: read p99 4 ms,
/// halving with each.
struct Wake {
    inner: Graded,
    seen: u32,
    left: u32,
}

impl Meter for Wake {
    fn calibrate(&mut self) -> Result<Calibration, ExploreError> {
        self.inner.calibrate()
    }

    fn measure(&mut self, load: Load) -> Result<PointResult, ExploreError> {
        let mut p = self.inner.measure(load)?;
        if self.seen < self.left {
            p.read_latency_us.p99 = 4000.0 / f64::from(1 << self.seen);
            p.within_goal = false;
            self.seen += 1;
        }
        Ok(p)
    }
}

#[test]
fn the_first_ray_waits_for_the_calibrations_wake_to_pass() {
    let settings = SearchSettings::full(1000.0, WriteRegime::Fresh, Duration::from_secs(3600));
    let mut meter = Wake {
        inner: Graded {
            inner: Oracle { calls: 0 },
        },
        seen: 0,
        left: 3,
    };
    let out = search(&mut meter, &settings, &mut |_| {}).expect("search");
    // 4, 2, 1 ms, then the disk's own 0.36 ms twice.
    let p99s: Vec<f64> = out.settling.iter().map(|p| p.read_latency_us.p99).collect();
    assert_eq!(p99s.len(), 5, "{p99s:?}");
    assert_eq!(&p99s[..3], &[4000.0, 2000.0, 1000.0]);
    assert!(p99s[3] < 400.0 && p99s[3] == p99s[4], "{p99s:?}");
    let reads = out
        .rays
        .first()
        .and_then(|r| r.boundary())
        .expect("pure reads");
    assert!(reads.read_iops / 10_000.0 > 0.79, "{reads:?}");
}

#[test]
fn refinement_rays_from_their_neighbours_cost_fewer_points_and_land_as_close() {
    let settings = SearchSettings::full(1000.0, WriteRegime::Fresh, Duration::from_secs(3600));
    let mut counts = Vec::new();
    for from_neighbours in [false, true] {
        let settings = SearchSettings {
            refine_from_neighbours: from_neighbours,
            ..settings.clone()
        };
        let out = search(&mut Oracle { calls: 0 }, &settings, &mut |_| {}).expect("search");
        assert!(out.rays.len() > settings.initial_rays);
        for ray in &out.rays {
            let i = ray.inside.expect("every ray has an inside point");
            let x = if ray.angle_deg >= 90.0 {
                0.0
            } else {
                i.read_iops / 10_000.0
            };
            let y = i.write_bytes_per_s / 1e9;
            assert!(x + y * y <= 0.8 + 1e-9, "{ray:?}");
            assert!(x + y * y >= 0.8 * 0.88, "{ray:?}");
        }
        counts.push(out.points.len());
    }
    assert!(
        counts[1] < counts[0],
        "points from the whole ray, from neighbours: {counts:?}"
    );
}
