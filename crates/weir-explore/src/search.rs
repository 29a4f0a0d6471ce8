//! Finding the boundary: bisection along rays from the origin, refined where it bends.
//!
//! A dense grid spends most of its points far inside or far outside the boundary (Diskplorer's
//! 21 x 21 grid takes hours). The boundary is what matters, so the search works in the plane
//! normalised by the calibrated maxima (read IOPS x write bandwidth, each with headroom above
//! the closed-loop maximum, since open-loop arrivals at deeper queues can exceed it), walks
//! rays from the origin at fixed angles and bisects each for the last point *within the
//! goal* (kept up, read p99 <= goal). Both pure axes are rays. After the first rays, the
//! vertices where the boundary bends most (farthest from the chord of their neighbours) get
//! a ray on each side, as long as the budget allows.

use std::time::{Duration, Instant};

/// Time since the search started (the wall clock, or a test's own).
pub type Clock<'a> = &'a dyn Fn() -> Duration;

use serde::Serialize;

use crate::error::ExploreError;
use crate::meter::{Calibration, Meter, WriteRegime};
use crate::point::{Load, PointResult, Steady};
use crate::pooled::{tail_miss, Pooled};

#[path = "budget.rs"]
mod budget;
#[path = "settle.rs"]
mod settle;
#[path = "verify.rs"]
mod verify;

/// How a load measured more than once is judged (see `pooled`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judge {
    /// Each measurement's own verdict, the last one standing; the crossing
    /// between the mean p99s. Kept so the simulation can show what pooling fixes.
    LastMeasurement,
    /// Every read measured at a load judged together; a miss one bad second can explain is
    /// measured again, and the ray's last pass and first fail are verified until both have
    /// been measured twice and still bracket the goal.
    Pooled,
}

/// How the search spends its points.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchSettings {
    pub goal_us: f64,
    pub regime: WriteRegime,
    /// Rays in the first pass, both axes included (at least 2).
    pub initial_rays: usize,
    /// Rays the refinement may add.
    pub extra_rays: usize,
    /// Bisection steps per ray: the boundary is found within 1/2^steps of the ray's range.
    pub steps: u32,
    /// The whole run's time, closing calibration included: no ray starts that the mean ray so
    /// far says would end past it, and no point starts that would (the axes excepted).
    pub budget: Duration,
    /// The ray range beyond the calibrated closed-loop maxima.
    pub read_headroom: f64,
    pub write_headroom: f64,
    /// The pure-write axis carries this share of the read maximum as a probe, so read latency
    /// exists there (Diskplorer runs at least 10 reads/s everywhere).
    pub probe_read_share: f64,
    /// A vertex is refined when it lies this far (share of its radius) off its neighbours'
    /// chord.
    pub bend_threshold: f64,
    /// Measure a marginal miss twice (see `marginal`).
    pub retest_marginal: bool,
    /// After a ray's bisection, measure its last pass and last fail once more and put the
    /// frontier where read p99 crosses the goal between them (see `Search::cross`).
    pub confirm_crossing: bool,
    pub judge: Judge,
    /// Extra measurements a ray's verification may spend beyond its pass and fail's second
    /// (`Judge::Pooled`: when a second measurement overturns a verdict, the bracket moves).
    pub max_verify_extra: usize,
    /// Measure the pure loads again after the last ray (`drift`); the budget keeps room for it.
    pub closing_calibration: bool,
    /// Read-only probes before the first ray, until two agree (see `settle`); 0: none.
    pub settle_probes: usize,
    /// A refinement ray bisects from its neighbours' boundaries (see `refinement_start`)
    /// rather than from the whole ray. Off: in simulation it saved no time and put 3 of 7
    /// stalling-disk pairs over 5%.
    pub refine_from_neighbours: bool,
}

impl SearchSettings {
    /// The full map: 7 rays + up to 4 refinements, 5 steps each.
    pub fn full(goal_us: f64, regime: WriteRegime, budget: Duration) -> Self {
        SearchSettings {
            goal_us,
            regime,
            initial_rays: 7,
            extra_rays: 4,
            steps: 5,
            budget,
            read_headroom: 1.15,
            write_headroom: 1.3,
            probe_read_share: 0.005,
            bend_threshold: 0.03,
            retest_marginal: true,
            confirm_crossing: true,
            judge: Judge::Pooled,
            max_verify_extra: 6,
            closing_calibration: true,
            settle_probes: 6,
            refine_from_neighbours: false,
        }
    }

    /// `--quick`: 5 rays, 2 refinements, 4 steps, no confirmation of the crossing.
    pub fn quick(goal_us: f64, regime: WriteRegime, budget: Duration) -> Self {
        SearchSettings {
            initial_rays: 5,
            extra_rays: 2,
            steps: 4,
            confirm_crossing: false,
            ..SearchSettings::full(goal_us, regime, budget)
        }
    }
}

/// One ray's result: the last load within the goal and the first outside it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ray {
    /// 0 = pure reads, 90 = pure writes (in the normalised plane).
    pub angle_deg: f64,
    pub inside: Option<Load>,
    pub outside: Option<Load>,
    /// `inside` met the goal when measured again (`Judge::LastMeasurement`) or on a verifying
    /// measurement (`Judge::Pooled`); None: not measured again.
    pub confirmed: Option<bool>,
    /// Where read p99 crosses the goal, linear between the mean p99 of `inside` and of
    /// `outside` (each measured twice, both kept up); None when that pair does not bracket the
    /// goal. An estimate between two measured loads, not a measured load.
    pub crossing: Option<Load>,
}

impl Ray {
    /// The ray's frontier entry: the crossing where there is one, else the last pass.
    pub fn boundary(&self) -> Option<Load> {
        self.crossing.or(self.inside)
    }
}

/// What the search hands the progress display after each point.
#[derive(Debug, Clone)]
pub struct SearchProgress<'a> {
    pub point: &'a PointResult,
    pub done: usize,
    pub planned: usize,
    pub elapsed: Duration,
    pub left_estimate: Duration,
}

/// The search's result.
#[derive(Debug, Clone)]
pub struct SearchOutcome {
    pub calibration: Calibration,
    /// The same closed-loop runs after the last ray (None when interrupted or not asked for).
    pub calibration_end: Option<Calibration>,
    /// The probes run before the first ray while the calibration's writes settled.
    pub settling: Vec<PointResult>,
    pub points: Vec<PointResult>,
    /// Sorted by angle.
    pub rays: Vec<Ray>,
    pub seconds: f64,
    /// The budget ended the search before every planned ray ran.
    pub stopped_by_budget: bool,
    /// Ctrl-C or SIGTERM ended it: the points and rays so far are kept.
    pub interrupted: bool,
}

/// Why a pass over the rays ended before its last angle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The next ray would not fit in the time budget.
    Budget,
    /// Ctrl-C or SIGTERM.
    Interrupted,
}

struct Search<'a> {
    meter: &'a mut dyn Meter,
    settings: &'a SearchSettings,
    scale: (f64, f64),
    probe_read_iops: f64,
    clock: Clock<'a>,
    /// Kept free at the end of the budget for the closing calibration.
    reserve: Duration,
    points: Vec<PointResult>,
    /// Per point: a verifying measurement (`Meter::measure_long`).
    verifying: Vec<bool>,
    /// Per point: how long it took.
    point_times: Vec<Duration>,
    /// Per ray run to its end: how long it took, and its points.
    ray_times: Vec<Duration>,
    ray_points: Vec<usize>,
    /// When the ray being bisected began, and the points before it.
    ray_began: (Duration, usize),
    /// Rays the search means to run (the first pass and the refinements).
    rays_planned: usize,
    /// Points are refused when they would end past the budget (not on the axes).
    guarded: bool,
    on_point: &'a mut dyn FnMut(&SearchProgress),
}

impl Search<'_> {
    fn load(&self, angle_deg: f64, t: f64) -> Load {
        let (s, c) = angle_deg.to_radians().sin_cos();
        let (c, s) = (
            if angle_deg >= 90.0 { 0.0 } else { c },
            if angle_deg <= 0.0 { 0.0 } else { s },
        );
        let m = c.max(s);
        let read_iops = t * c / m * self.scale.0;
        Load {
            read_iops: if c == 0.0 {
                self.probe_read_iops
            } else {
                read_iops
            },
            write_bytes_per_s: t * s / m * self.scale.1,
        }
    }

    /// Measures `load`; a miss that may be chance (marginal, or with `Judge::Pooled` a tail
    /// miss) is measured once more and judged again, so one unlucky window on a noisy disk does
    /// not cut a ray short.
    fn measure(&mut self, load: Load) -> Result<bool, ExploreError> {
        self.measure_once(load)?;
        let goal = self.settings.goal_us;
        let pooled = self.settings.judge == Judge::Pooled;
        let retest = self.settings.retest_marginal
            && !self.verdict(load)
            && self
                .points
                .last()
                .is_some_and(|p| marginal(p, goal) || (pooled && tail_miss(p, goal)));
        if retest && pooled {
            self.measure_long_once(load)?;
        } else if retest {
            self.measure_once(load)?;
        }
        Ok(self.verdict(load))
    }

    /// The verdict on `load` from what was measured there (false when nothing was).
    fn verdict(&self, load: Load) -> bool {
        match self.settings.judge {
            Judge::LastMeasurement => self.measured(load).last().is_some_and(|p| p.within_goal),
            Judge::Pooled => self.pooled(load).is_some_and(|p| p.within_goal),
        }
    }

    /// The load's verdict on its verifying measurements where it has any, else on all. A
    /// short measurement stops on what it saw (two agreeing windows, one far tail), so its
    /// share over the goal is biased by its own stopping; a verifying one runs a fixed time.
    fn pooled(&self, load: Load) -> Option<Pooled> {
        let all = self.measured_with_kind(load);
        let long: Vec<&PointResult> = all.iter().filter(|m| m.1).map(|m| m.0).collect();
        let chosen = if long.is_empty() {
            all.iter().map(|m| m.0).collect()
        } else {
            long
        };
        Pooled::of(load, &chosen, self.settings.goal_us)
    }

    /// The measurements of `load`, each with whether it was a verifying one.
    fn measured_with_kind(&self, load: Load) -> Vec<(&PointResult, bool)> {
        self.points
            .iter()
            .zip(&self.verifying)
            .filter(|(p, _)| p.offered() == load)
            .map(|(p, &v)| (p, v))
            .collect()
    }

    fn measure_once(&mut self, load: Load) -> Result<bool, ExploreError> {
        self.check_time(false)?;
        let start = self.elapsed();
        let point = self.meter.measure(load)?;
        Ok(self.record(point, false, start))
    }

    fn measure_long_once(&mut self, load: Load) -> Result<bool, ExploreError> {
        self.check_time(true)?;
        let start = self.elapsed();
        let point = self.meter.measure_long(load)?;
        Ok(self.record(point, true, start))
    }

    /// Keeps a measured point (begun at `start`) and shows it to the progress display; its
    /// own verdict.
    fn record(&mut self, point: PointResult, verifying: bool, start: Duration) -> bool {
        let inside = point.within_goal;
        self.points.push(point);
        self.verifying.push(verifying);
        self.point_times.push(self.elapsed().saturating_sub(start));
        let done = self.points.len();
        let (planned, left_estimate) = self.plan_left();
        let progress = SearchProgress {
            point: &self.points[done - 1],
            done,
            planned,
            elapsed: self.elapsed(),
            left_estimate,
        };
        (self.on_point)(&progress);
        inside
    }

    /// Bisects the ray at `angle_deg` from `start` (shares of the ray: (0, 1), or a
    /// refinement's guess from its neighbours) down to one step; a guess that misses the
    /// boundary widens to the ray's end on the side it missed.
    fn bisect(&mut self, angle_deg: f64, start: (f64, f64)) -> Result<Ray, ExploreError> {
        let step = 0.5f64.powi(self.settings.steps as i32);
        let (mut lo, mut hi) = start;
        let mut ray = Ray {
            angle_deg,
            inside: None,
            outside: None,
            confirmed: None,
            crossing: None,
        };
        let mut tried = Vec::new();
        loop {
            while hi - lo > step * 1.01 {
                let t = (lo + hi) / 2.0;
                tried.push(t);
                let load = self.load(angle_deg, t);
                if self.measure(load)? {
                    lo = t;
                    ray.inside = Some(load);
                } else {
                    hi = t;
                    ray.outside = Some(load);
                }
            }
            if ray.outside.is_none() && hi < 1.0 {
                hi = 1.0;
            } else if ray.inside.is_none() && lo > 0.0 {
                lo = 0.0;
            } else {
                break;
            }
        }
        if self.settings.confirm_crossing {
            match self.settings.judge {
                Judge::LastMeasurement => self.cross(&mut ray, lo, hi)?,
                Judge::Pooled => self.verify(&mut ray, &tried)?,
            }
        }
        Ok(ray)
    }

    /// The measurements of `load` so far.
    fn measured(&self, load: Load) -> Vec<&PointResult> {
        self.points.iter().filter(|p| p.offered() == load).collect()
    }

    /// Bisection ends on one pass/fail pair, each verdict from one measurement of a noisy
    /// p99: the pair decides the frontier, so each is measured a second time (a fail that the
    /// marginal retest measured twice, or that was abandoned, is not), and the frontier goes
    /// where the goal lies between the two mean p99s rather than on the pass, up to a whole
    /// step inside. No crossing when the pass does not hold its mean under the goal or the
    /// fail did not keep up (its p99 then says nothing about where the goal is crossed).
    fn cross(&mut self, ray: &mut Ray, lo: f64, hi: f64) -> Result<(), ExploreError> {
        let Some(inside) = ray.inside else {
            return Ok(());
        };
        self.measure_once(inside)?;
        let passes = self.measured(inside);
        ray.confirmed = passes.last().map(|p| p.within_goal);
        let p_lo = mean_p99(&passes);
        let Some(outside) = ray.outside else {
            return Ok(());
        };
        let fails = self.measured(outside);
        let abandoned = fails.iter().any(|p| p.steady == Steady::Abandoned);
        if fails.len() < 2 && !abandoned {
            self.measure_once(outside)?;
        }
        let fails = self.measured(outside);
        let goal = self.settings.goal_us;
        if let (Some(p_lo), Some(p_hi)) = (p_lo, mean_p99(&fails)) {
            if p_lo <= goal && goal < p_hi {
                let t = lo + (hi - lo) * (goal - p_lo) / (p_hi - p_lo);
                ray.crossing = Some(self.load(ray.angle_deg, t));
            }
        }
        Ok(())
    }

    /// Normalised boundary point of a ray (the origin when nothing was inside).
    fn vertex(&self, ray: &Ray) -> (f64, f64) {
        ray.boundary().map_or((0.0, 0.0), |l| {
            let read = if ray.angle_deg >= 90.0 {
                0.0
            } else {
                l.read_iops
            };
            (read / self.scale.0, l.write_bytes_per_s / self.scale.1)
        })
    }

    /// Bisects each angle in turn, pushing its ray onto `rays`; the first `always` angles run
    /// whatever the budget. Returns why it stopped before the last angle, if it did (the rays
    /// so far are kept either way).
    fn bisect_all(
        &mut self,
        angles: Vec<(f64, (f64, f64))>,
        always: usize,
        rays: &mut Vec<Ray>,
    ) -> Result<Option<Stop>, ExploreError> {
        for (i, (angle, start)) in angles.into_iter().enumerate() {
            self.guarded = i >= always;
            if self.guarded && !self.ray_fits() {
                return Ok(Some(Stop::Budget));
            }
            let began = self.elapsed();
            self.ray_began = (began, self.points.len());
            match self.bisect(angle, start) {
                Ok(ray) => rays.push(ray),
                Err(ExploreError::Interrupted) => return Ok(Some(Stop::Interrupted)),
                Err(ExploreError::BudgetSpent) => return Ok(Some(Stop::Budget)),
                Err(e) => return Err(e),
            }
            self.ray_times.push(self.elapsed().saturating_sub(began));
            self.ray_points.push(self.points.len() - self.ray_began.1);
        }
        Ok(None)
    }

    /// Angles to add, beside the vertices that bend most, each with where its bisection
    /// starts (see `refinement_start`).
    fn refinements(&self, rays: &[Ray]) -> Vec<(f64, (f64, f64))> {
        let mut bends: Vec<(f64, usize)> = Vec::new();
        for i in 1..rays.len().saturating_sub(1) {
            let (a, b, c) = (
                self.vertex(&rays[i - 1]),
                self.vertex(&rays[i]),
                self.vertex(&rays[i + 1]),
            );
            let chord = ((c.0 - a.0).powi(2) + (c.1 - a.1).powi(2)).sqrt();
            let radius = (b.0 * b.0 + b.1 * b.1).sqrt();
            if chord <= 0.0 || radius <= 0.0 {
                continue;
            }
            let cross = ((c.0 - a.0) * (a.1 - b.1) - (a.0 - b.0) * (c.1 - a.1)).abs();
            let bend = cross / chord / radius;
            if bend > self.settings.bend_threshold {
                bends.push((bend, i));
            }
        }
        bends.sort_by(|x, y| y.0.total_cmp(&x.0));
        let mut angles: Vec<(f64, (f64, f64))> = Vec::new();
        for (_, i) in bends {
            for j in [i - 1, i + 1] {
                let mid = (rays[i].angle_deg + rays[j].angle_deg) / 2.0;
                if !angles.iter().any(|a| (a.0 - mid).abs() < 0.01) {
                    angles.push((mid, self.refinement_start(&rays[i], &rays[j])));
                }
            }
        }
        angles.truncate(self.settings.extra_rays);
        angles
    }
}

impl Search<'_> {
    /// Where a refinement ray between `a` and `b` starts bisecting: around its neighbours'
    /// boundaries (shares of their rays, which are comparable: a load's share is its larger
    /// normalised coordinate), widened by a quarter either way for the bend. Bisecting the
    /// whole ray costs a vda map 5 steps per refinement although its neighbours have already
    /// put the boundary within a tenth of the ray; from their bracket 2-3 steps reach the same
    /// width. The whole ray when either neighbour found nothing inside, or not asked for.
    fn refinement_start(&self, a: &Ray, b: &Ray) -> (f64, f64) {
        let share = |r: &Ray| {
            let (x, y) = self.vertex(r);
            x.max(y)
        };
        let (sa, sb) = (share(a), share(b));
        if !self.settings.refine_from_neighbours || sa <= 0.0 || sb <= 0.0 {
            return (0.0, 1.0);
        }
        (sa.min(sb) * 0.8, (sa.max(sb) * 1.25).min(1.0))
    }
}

/// The mean read p99 of measurements that all kept up and were not abandoned.
fn mean_p99(points: &[&PointResult]) -> Option<f64> {
    let usable = points
        .iter()
        .all(|p| p.kept_up && p.steady != Steady::Abandoned);
    (usable && !points.is_empty())
        .then(|| points.iter().map(|p| p.read_latency_us.p99).sum::<f64>() / points.len() as f64)
}

/// A miss close enough to the line to be chance: read p99 within 1.5x of the goal and at
/// least 90% of the offered load completed, not abandoned.
fn marginal(p: &PointResult, goal_us: f64) -> bool {
    let near = |done: f64, asked: f64| asked <= 0.0 || done >= 0.9 * asked;
    p.steady != Steady::Abandoned
        && p.read_latency_us.p99 <= 1.5 * goal_us
        && near(p.achieved_read_iops, p.read_iops)
        && near(p.achieved_write_bytes_per_s, p.write_bytes_per_s)
}

/// Calibrates, then maps the boundary. `on_point` sees every point as it is measured.
pub fn search(
    meter: &mut dyn Meter,
    settings: &SearchSettings,
    on_point: &mut dyn FnMut(&SearchProgress),
) -> Result<SearchOutcome, ExploreError> {
    let started = Instant::now();
    search_clocked(meter, settings, &|| started.elapsed(), on_point)
}

/// [`search`] on `clock` (time since the start), so a test can give the budget a clock of
/// its own.
pub fn search_clocked(
    meter: &mut dyn Meter,
    settings: &SearchSettings,
    clock: Clock,
    on_point: &mut dyn FnMut(&SearchProgress),
) -> Result<SearchOutcome, ExploreError> {
    let calibration = meter.calibrate()?;
    let read_max = calibration.read_iops;
    let write_max = calibration.write_bytes_per_s(settings.regime);
    if !(read_max > 0.0 && write_max > 0.0) {
        return Err(ExploreError::NoCompletions {
            read_iops: read_max,
            write_bytes_per_s: write_max,
        });
    }
    let rays_n = settings.initial_rays.max(2);
    let mut search = Search {
        meter,
        settings,
        scale: (
            read_max * settings.read_headroom,
            write_max * settings.write_headroom,
        ),
        probe_read_iops: (read_max * settings.probe_read_share).max(10.0),
        clock,
        // The closing calibration takes about as long as the first one did.
        reserve: if settings.closing_calibration {
            clock()
        } else {
            Duration::ZERO
        },
        points: Vec::new(),
        verifying: Vec::new(),
        point_times: Vec::new(),
        ray_times: Vec::new(),
        ray_points: Vec::new(),
        ray_began: (Duration::ZERO, 0),
        rays_planned: rays_n + settings.extra_rays,
        guarded: false,
        on_point,
    };
    let step = 90.0 / (rays_n - 1) as f64;
    let mut angles: Vec<f64> = vec![0.0, 90.0];
    angles.extend((1..rays_n - 1).map(|i| i as f64 * step));
    let whole = angles.into_iter().map(|a| (a, (0.0, 1.0))).collect();
    let settling = match search.settle() {
        Ok(probes) => probes,
        Err(ExploreError::Interrupted) => Vec::new(),
        Err(e) => return Err(e),
    };
    let mut rays = Vec::new();
    // The axes always run: without them there is no map to normalise by.
    let mut stop = search.bisect_all(whole, 2, &mut rays)?;
    rays.sort_by(|a, b| a.angle_deg.total_cmp(&b.angle_deg));
    if stop.is_none() {
        let refinements = search.refinements(&rays);
        stop = search.bisect_all(refinements, 0, &mut rays)?;
    }
    let stopped_by_budget = stop == Some(Stop::Budget);
    let mut interrupted = stop == Some(Stop::Interrupted);
    let mut calibration_end = None;
    if settings.closing_calibration && !interrupted {
        match search.meter.calibrate() {
            Ok(c) => calibration_end = Some(c),
            Err(ExploreError::Interrupted) => interrupted = true,
            Err(e) => return Err(e),
        }
    }
    rays.sort_by(|a, b| a.angle_deg.total_cmp(&b.angle_deg));
    Ok(SearchOutcome {
        calibration,
        calibration_end,
        settling,
        points: search.points,
        rays,
        seconds: clock().as_secs_f64(),
        stopped_by_budget,
        interrupted,
    })
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
