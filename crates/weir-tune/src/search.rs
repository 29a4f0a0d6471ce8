//! The searches: queue depth to the knee, request size down to the saturation length, and the
//! physical sector from random-write IOPS. Each is a short loop of [`measure`] calls under a
//! [`Budget`], so the whole tune fits its time limit whatever the disk does.

use crate::error::TuneError;
use crate::meter::{measure, Load, Measurement, Meter, Metric, StopRule};
use crate::steady::SteadyRule;

/// Tuning knobs shared by all searches.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct SearchConfig {
    pub sample_interval_ns: u64,
    /// Shortest and longest single measurement (the budget may cut the longest shorter).
    pub step_min_ns: u64,
    pub step_max_ns: u64,
    pub steady: SteadyRule,
    /// Each figure is measured once more at its best load, for this long, after its sweep:
    /// the sweep's best step is the luckiest of several short steps (biased upward), and its
    /// short window lands on whichever phase of the disk's slow swings it happens to hit.
    pub confirm_ns: u64,
    /// Samples at the start of the confirming measurement that are not counted.
    pub confirm_ramp_samples: usize,
    /// Doubling the depth goes on while it raises throughput by at least this fraction.
    pub depth_gain_min: f64,
    /// A sweep step already this far above the best so far ends early (see
    /// [`crate::meter::StopRule::decided_above`]).
    pub decided_gain: f64,
    /// A deeper step this far below the best means overload: the depth sweep stops at once.
    pub overload_drop: f64,
    /// A rate within this fraction of the best counts as reaching it (knee, saturation).
    pub accuracy: f64,
    /// Physical sector: the first size whose successor gains at most this fraction of IOPS.
    pub sector_gain_min: f64,
    /// The measured sector overrides the kernel's only when IOPS at the two sizes differ by
    /// more than this fraction (a firmware that under-reports its sector costs 25-42%; run-to-run noise on a
    /// shared virtual disk is 5-10%).
    pub sector_disagreement_min: f64,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            sample_interval_ns: 100_000_000,
            step_min_ns: 400_000_000,
            step_max_ns: 1_500_000_000,
            steady: SteadyRule {
                ramp_samples: 1,
                window_samples: 3,
                drift_max: 0.05,
            },
            confirm_ns: 1_500_000_000,
            confirm_ramp_samples: 2,
            depth_gain_min: 0.04,
            decided_gain: 0.25,
            overload_drop: 0.10,
            accuracy: 0.04,
            sector_gain_min: 0.05,
            sector_disagreement_min: 0.15,
        }
    }
}

/// Time left for measuring, on the meter's clock. Each phase gets a weighted share of what is
/// left, so time a phase does not use flows to the later ones. Time reserved up front (for the
/// confirming measurements) is not shared out until it is released.
#[derive(Debug, Clone)]
pub struct Budget {
    pub total_ns: u64,
    pub spent_ns: u64,
    pub reserved_ns: u64,
    /// Charged per measurement on top of its run time (thread start, draining).
    pub overhead_ns: u64,
}

impl Budget {
    pub fn new(total_ns: u64, overhead_ns: u64) -> Budget {
        Budget {
            total_ns,
            spent_ns: 0,
            reserved_ns: 0,
            overhead_ns,
        }
    }

    /// Time the phases may share: what is left, less what is still reserved.
    pub fn left_ns(&self) -> u64 {
        self.total_ns
            .saturating_sub(self.spent_ns)
            .saturating_sub(self.reserved_ns)
    }

    /// Keeps up to `ns` (no more than is left) out of the phases' shares.
    pub fn reserve(&mut self, ns: u64) {
        self.reserved_ns += ns.min(self.left_ns());
    }

    /// Hands up to `ns` of the reserve back; returns how much that was.
    pub fn release(&mut self, ns: u64) -> u64 {
        let released = ns.min(self.reserved_ns);
        self.reserved_ns -= released;
        released
    }

    /// Charges a measurement: its wall time when the meter knew it, else its sampled time and
    /// the fixed overhead. A deep queue of large requests costs far more than the fixed
    /// overhead to start and drain (128 MiB of buffers per shard to fill and register, then
    /// 128 MiB in flight to complete), and a budget that charged 20 ms for it ended whole
    /// default runs 0.7-2.5 s late.
    pub(crate) fn charge(&mut self, m: &Measurement) {
        self.spent_ns += match m.wall_ns {
            Some(wall_ns) => wall_ns.max(m.elapsed_ns),
            None => m.elapsed_ns + self.overhead_ns,
        };
    }
}

/// One phase's slice of the budget.
pub struct Phase<'a> {
    pub budget: &'a mut Budget,
    pub cfg: &'a SearchConfig,
    /// This phase may spend until the budget's `spent_ns` reaches this.
    until_ns: u64,
    /// Set when a search ended because its time ran out rather than by its own rule.
    pub budget_limited: bool,
    /// Time this phase holds in the budget's reserve for a last step it must not lose (the
    /// depth sweep's step at the depth it must reach), outside its share until released.
    reserve_ns: u64,
}

impl<'a> Phase<'a> {
    /// A phase with `weight` out of `weight_left` (this and all later phases) of the time left.
    pub fn new(
        budget: &'a mut Budget,
        cfg: &'a SearchConfig,
        weight: f64,
        weight_left: f64,
    ) -> Self {
        let share = (budget.left_ns() as f64 * (weight / weight_left.max(weight))) as u64;
        let until_ns = budget.spent_ns + share;
        Phase {
            budget,
            cfg,
            until_ns,
            budget_limited: false,
            reserve_ns: 0,
        }
    }

    /// [`Phase::new`] that first keeps `reserve_ns` of what is left out of the share, for one
    /// step the phase must be able to take however its share went ([`Phase::release`]).
    pub fn reserving(
        budget: &'a mut Budget,
        cfg: &'a SearchConfig,
        weight: f64,
        weight_left: f64,
        reserve_ns: u64,
    ) -> Self {
        let before = budget.reserved_ns;
        budget.reserve(reserve_ns);
        let reserve_ns = budget.reserved_ns - before;
        let mut phase = Phase::new(budget, cfg, weight, weight_left);
        phase.reserve_ns = reserve_ns;
        phase
    }

    /// Hands this phase's reserve back to it (and, once it ends, to the phases after it).
    pub fn release(&mut self) {
        let released = self.budget.release(self.reserve_ns);
        // Steps end on the first sample past their time, and a loaded machine delivers that
        // sample late: the share may be overrun by a sample or more. The reserve is for the
        // step it was kept for, so it counts from now (measured on zram with the load
        // average at 18: overruns of ~0.1 s left 0.7 s of a 0.82 s reserve, and the step
        // at the scheduler's depth was skipped).
        self.until_ns = self.until_ns.max(self.budget.spent_ns) + released;
        self.reserve_ns = 0;
    }

    /// A phase that may run for `ns` regardless of the shared budget (sustained mode).
    pub fn fixed(budget: &'a mut Budget, cfg: &'a SearchConfig, ns: u64) -> Self {
        let until_ns = budget.spent_ns + ns;
        Phase {
            budget,
            cfg,
            until_ns,
            budget_limited: false,
            reserve_ns: 0,
        }
    }

    fn left_ns(&self) -> u64 {
        self.until_ns.saturating_sub(self.budget.spent_ns)
    }

    /// Measures `load` if the phase still has time for a minimal measurement.
    pub fn measure(
        &mut self,
        meter: &mut dyn Meter,
        load: &Load,
    ) -> Result<Option<Measurement>, TuneError> {
        self.measure_deciding(meter, load, None)
    }

    /// [`Phase::measure`], ending early once the rate is clearly above `decided_above`.
    pub fn measure_deciding(
        &mut self,
        meter: &mut dyn Meter,
        load: &Load,
        decided_above: Option<f64>,
    ) -> Result<Option<Measurement>, TuneError> {
        self.measure_for(meter, load, self.cfg.step_min_ns, decided_above)
    }

    /// A sweep step that runs at least `min_ns` (and up to the longest step), if the phase
    /// still has that much time.
    fn measure_for(
        &mut self,
        meter: &mut dyn Meter,
        load: &Load,
        min_ns: u64,
        decided_above: Option<f64>,
    ) -> Result<Option<Measurement>, TuneError> {
        let left = self.left_ns().saturating_sub(self.budget.overhead_ns);
        if left < min_ns {
            self.budget_limited = true;
            return Ok(None);
        }
        let rule = StopRule {
            sample_interval_ns: self.cfg.sample_interval_ns,
            min_ns,
            max_ns: self.cfg.step_max_ns.max(min_ns).min(left),
            steady: self.cfg.steady,
            decided_above,
        };
        self.measure_with(meter, load, &rule).map(Some)
    }

    /// Measures `load` under an explicit rule (sustained runs), charging the budget.
    pub fn measure_with(
        &mut self,
        meter: &mut dyn Meter,
        load: &Load,
        rule: &StopRule,
    ) -> Result<Measurement, TuneError> {
        let m = measure(meter, load, rule)?;
        self.budget.charge(&m);
        Ok(m)
    }
}

/// Why a depth sweep stopped doubling the depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepEnd {
    /// Two steps in a row past the depth to reach gained less than `depth_gain_min`.
    Flat,
    /// A step fell more than `overload_drop` under the best.
    Overloaded,
    /// The meter's deepest depth was measured.
    DepthMax,
    /// The phase's time ran out before the sweep's own rule ended it.
    OutOfTime,
}

/// The depth sweep of one load.
#[derive(Debug, Clone, serde::Serialize)]
pub struct KneeResult {
    pub steps: Vec<Measurement>,
    /// Index in `steps` of the highest rate.
    pub best: usize,
    /// Index of the step whose load the figure was confirmed at ([`KneeResult::confirm_index`]:
    /// for IOPS the depth to reach or the shallowest within `confirm::CHOICE_MARGIN` of `best`,
    /// for bandwidth the deepest within the noise of `best`), or another depth when a second
    /// opinion there won (see [`crate::confirm`]).
    pub chosen: usize,
    /// Index of the smallest depth within `accuracy` of the best: the knee.
    pub knee: usize,
    /// The total depth the sweep had to measure before it could stop (random reads: the
    /// scheduler's depth; 1 for the others, which may stop anywhere).
    pub depth_reach: u32,
    /// Set when any step the sweep wanted (the doubling, the recheck, the deepest-depth
    /// probe) found no time left.
    pub budget_limited: bool,
    /// Why the doubling stopped.
    pub end: SweepEnd,
}

impl KneeResult {
    /// True when the doubling was cut by time while throughput was still rising: its deepest
    /// step is the best and beat every shallower step by at least `gain_min`. A sweep that
    /// ended by its own rule, whose last steps were flat, or that measured one depth only
    /// (nothing to compare: [`KneeResult::cut_after_one_depth`]) was not.
    pub fn cut_while_rising(&self, gain_min: f64) -> bool {
        if self.end != SweepEnd::OutOfTime || self.depths_measured() < 2 {
            return false;
        }
        let deepest = (0..self.steps.len())
            .max_by_key(|&i| self.steps[i].load.depth)
            .unwrap_or(0);
        let top = self.steps[deepest].rate();
        let shallower = self
            .steps
            .iter()
            .filter(|m| m.load.depth < self.steps[deepest].load.depth)
            .map(Measurement::rate)
            .fold(0.0, f64::max);
        top >= self.best().rate() && top >= shallower * (1.0 + gain_min)
    }

    /// True when time ran out before the sweep measured a second depth.
    pub fn cut_after_one_depth(&self) -> bool {
        self.end == SweepEnd::OutOfTime && self.depths_measured() == 1
    }

    fn depths_measured(&self) -> usize {
        let mut depths: Vec<u32> = self.steps.iter().map(|m| m.load.depth).collect();
        depths.sort_unstable();
        depths.dedup();
        depths.len()
    }

    pub fn best(&self) -> &Measurement {
        &self.steps[self.best]
    }

    pub fn knee(&self) -> &Measurement {
        &self.steps[self.knee]
    }

    /// The step at the depth the figure was confirmed at.
    pub fn chosen(&self) -> &Measurement {
        &self.steps[self.chosen]
    }

    /// Where a figure is confirmed: the sweep's step at the depth it had to reach
    /// ([`KneeResult::depth_reach`]) when that step is within `reach_margin` of the best (the
    /// knee's `accuracy`: it is then on the plateau), else the shallowest step within
    /// `margin`. Only the first gives the same depth in every run on a curve that keeps
    /// creeping up within the noise: zram's random reads rise ~3% from x2 to x16 on an idle
    /// machine (542 -> 558 K), so "the shallowest within 2%" lands at x8, x4, x2, x2 as each
    /// run's steps fall, and the figure moves with the depth; and in a run
    /// whose curve fell 2.5% from x2 to x128 instead, a 2% test of the reach step moved the
    /// depth just as well. The reach step is measured in every run (the sweep may not stop
    /// before it), so its depth is fixed. Sweeps without a reach (`depth_reach` at or under
    /// their first depth) keep the shallowest within `margin`.
    ///
    /// Bandwidth sweeps (large requests) are confirmed at [`deepest_within_noise`] instead.
    pub fn confirm_index(&self, reach_margin: f64, margin: f64) -> usize {
        if self.best().load.metric() == Metric::Bandwidth {
            return deepest_within_noise(&self.steps, self.best, margin, NOISE_MARGIN_MAX);
        }
        let reach_floor = self.best().rate() * (1.0 - reach_margin);
        let reach = (0..self.steps.len())
            .filter(|&i| self.steps[i].load.depth >= self.depth_reach)
            .min_by(|&a, &b| {
                let (da, db) = (self.steps[a].load.depth, self.steps[b].load.depth);
                da.cmp(&db)
                    .then(self.steps[b].rate().total_cmp(&self.steps[a].rate()))
            });
        match reach {
            Some(i)
                if self.depth_reach > self.steps[0].load.depth
                    && self.steps[i].rate() >= reach_floor =>
            {
                i
            }
            _ => knee_index(&self.steps, self.best, self.best().rate(), margin),
        }
    }

    /// Re-picks the knee against `rate`, the figure's confirming measurement, when that is
    /// below the best step: a lucky best step must not push the knee deeper than the disk needs.
    pub fn rejudge_knee(&mut self, rate: f64, accuracy: f64) {
        self.knee = knee_index(
            &self.steps,
            self.best,
            rate.min(self.best().rate()),
            accuracy,
        );
    }
}

/// The widest noise margin [`deepest_within_noise`] allows: a deeper step a quarter under the
/// best is not taken for an equal one whatever the samples did.
pub const NOISE_MARGIN_MAX: f64 = 0.25;

/// A step's per-sample spread over its judged window, as a fraction of its mean: how far one
/// 100 ms sample strays, the unit two steps' rates are compared in.
pub fn sample_noise(m: &Measurement) -> f64 {
    if m.spread.mean > 0.0 {
        m.spread.stddev / m.spread.mean
    } else {
        0.0
    }
}

/// The deepest step whose rate is within the noise of the best: `floor` on a steady disk, on
/// a noisy one the spread of the difference of two samples, one from each step (the root of the
/// sum of their squared [`sample_noise`]), at most `cap`.
/// For large requests more depth costs latency but not bandwidth, and the figure is meant to be
/// the disk's bandwidth: when the sweep cannot tell two depths apart the deeper one is at least
/// as good, and on this project's VM it usually is better. fio's best depth for 1 MiB reads
/// was 128 in two sweeps minutes apart (1486 and 2044 MB/s) while a tune whose noisy sweep
/// peaked at depth 4 (the shallowest within 2% of its best) read 0.55x that. A deeper step
/// that is truly slower shows it in its confirmation, which then reads under the sweep's best
/// and gets a second opinion at the best step's depth (see [`crate::confirm`]); a shallow
/// choice that is truly slower would agree with its own lucky step and never be corrected.
pub fn deepest_within_noise(steps: &[Measurement], best: usize, floor: f64, cap: f64) -> usize {
    let top = &steps[best];
    (0..steps.len())
        .filter(|&i| {
            let margin = sample_noise(&steps[i])
                .hypot(sample_noise(top))
                .clamp(floor, cap.max(floor));
            steps[i].rate() >= top.rate() * (1.0 - margin)
        })
        .max_by(|&a, &b| deeper_then_faster(steps, a, b))
        .unwrap_or(best)
}

/// Orders steps `a` and `b` by depth, and steps of one depth by rate: `max_by` with it picks
/// the fastest of the deepest steps.
pub(crate) fn deeper_then_faster(steps: &[Measurement], a: usize, b: usize) -> std::cmp::Ordering {
    let (da, db) = (steps[a].load.depth, steps[b].load.depth);
    da.cmp(&db)
        .then(steps[a].rate().total_cmp(&steps[b].rate()))
}

/// The smallest depth whose step is within `accuracy` of `reference`.
fn knee_index(steps: &[Measurement], best: usize, reference: f64, accuracy: f64) -> usize {
    let floor = reference * (1.0 - accuracy);
    (0..steps.len())
        .filter(|&i| steps[i].rate() >= floor)
        .min_by_key(|&i| steps[i].load.depth)
        .unwrap_or(best)
}

/// Doubles the depth from `depth_start` while throughput still rises by `depth_gain_min` over
/// the best so far. Past the knee more depth only adds latency (Little's law: depth =
/// throughput x latency), and on some disks it costs throughput, so the sweep stops after two
/// steps in a row without a gain (one noisy sample must not end it early), or at once when a
/// step falls more than `overload_drop` below the best: the disk is overloaded. The first such
/// fall is checked by measuring the best depth again: when that has fallen too, the disk
/// drifted in time (its cache filled), the best is replaced by the new measurement, and the
/// sweep goes on against the disk as it is now. A sweep that stopped short of the deepest depth
/// measures that one too (see `probe_deepest`).
///
/// Below `depth_reach` neither rule stops the sweep: it must measure the depth its figure
/// will be driven at (random requests: the scheduler's, see `TuneConfig::random_depth_per_shard`),
/// since one noisy step must not decide the price of a depth never measured. When the
/// phase's share runs out first, the sweep jumps to `depth_reach` on the time the phase
/// reserved for it ([`Phase::reserving`]).
pub fn find_knee(
    meter: &mut dyn Meter,
    load: Load,
    depth_start: u32,
    depth_reach: u32,
    phase: &mut Phase<'_>,
) -> Result<KneeResult, TuneError> {
    let depth_max = meter.depth_max().max(1);
    let depth_reach = depth_reach.min(depth_max);
    let mut depth = depth_start.clamp(1, depth_max);
    let mut steps: Vec<Measurement> = Vec::new();
    let mut best = 0usize;
    let mut flat_steps = 0u32;
    let mut rechecked = false;
    let mut end = SweepEnd::OutOfTime;
    loop {
        let decided_above = steps
            .get(best)
            .map(|b| b.rate() * (1.0 + phase.cfg.decided_gain));
        let Some(m) = phase.measure_deciding(meter, &load.with_depth(depth), decided_above)? else {
            break;
        };
        let mut best_rate = steps.get(best).map_or(0.0, Measurement::rate);
        let falls = |rate: f64, best: f64| rate < best * (1.0 - phase.cfg.overload_drop);
        if !steps.is_empty() && falls(m.rate(), best_rate) && !rechecked {
            // A drop may be the disk slowing down over time (a cache filling, a host
            // flushing) rather than overload: measure the best depth again before deciding.
            rechecked = true;
            if let Some(again) = phase.measure(meter, &steps[best].load)? {
                if falls(again.rate(), best_rate) || again.rate() < m.rate() {
                    // The best depth is no better now: the disk drifted. Judge this step
                    // against the disk as it is now.
                    steps[best] = again;
                    best_rate = steps[best].rate();
                }
            }
        }
        let gained = steps.is_empty() || m.rate() >= best_rate * (1.0 + phase.cfg.depth_gain_min);
        let overloaded = !steps.is_empty() && falls(m.rate(), best_rate);
        if steps.is_empty() || m.rate() > best_rate {
            best = steps.len();
        }
        steps.push(m);
        flat_steps = if gained { 0 } else { flat_steps + 1 };
        let reached = depth >= depth_reach;
        if reached && flat_steps >= 2 {
            end = SweepEnd::Flat;
            break;
        }
        if reached && overloaded {
            end = SweepEnd::Overloaded;
            break;
        }
        if depth >= depth_max {
            end = SweepEnd::DepthMax;
            break;
        }
        depth = depth.saturating_mul(2).min(depth_max);
    }
    // Also true when no step fitted at all: the reserve then buys the one that matters most.
    let short_of_reach = steps.iter().all(|m| m.load.depth < depth_reach);
    // A sweep without a depth to reach that kept a reserve kept it for the deepest-depth
    // probe: it runs even when the doubling used up the phase's share.
    let probe_reserved = phase.reserve_ns > 0 && depth_reach <= depth_start.max(1);
    phase.release();
    if short_of_reach {
        best = probe_depth(meter, load, depth_reach, &mut steps, best, phase)?;
    } else if !steps.is_empty() && (!phase.budget_limited || probe_reserved) {
        best = probe_deepest(meter, load, &mut steps, best, phase)?;
    }
    if steps.is_empty() {
        return Err(TuneError::NoTime {
            direction: load.direction,
            pattern: load.pattern,
        });
    }
    let knee = knee_index(&steps, best, steps[best].rate(), phase.cfg.accuracy);
    Ok(KneeResult {
        steps,
        best,
        chosen: best,
        knee,
        depth_reach,
        budget_limited: phase.budget_limited,
        end,
    })
}

/// The deepest-depth probe runs at least this many times the shortest sweep step.
pub const DEEP_STEP_MIN_STEPS: u64 = 2;

/// One step at the deepest depth after a sweep that stopped on a plateau: a curve can be flat
/// over shallow depths and rise again deep (measured on this project's virtual disk: 1 MiB
/// reads ran ~1.1 GB/s from depth 2 to 64 and up to 2.5 GB/s at 256, when the host's read-ahead
/// could work ahead of a deep queue), which doubling from the bottom never sees. It is kept
/// only when it beats the best by `depth_gain_min`; on a disk that loses throughput when
/// overloaded it simply loses. Returns the index of the best step.
fn probe_deepest(
    meter: &mut dyn Meter,
    load: Load,
    steps: &mut Vec<Measurement>,
    best: usize,
    phase: &mut Phase<'_>,
) -> Result<usize, TuneError> {
    let depth_max = meter.depth_max().max(1);
    if steps.iter().any(|m| m.load.depth >= depth_max) {
        return Ok(best);
    }
    probe_depth(meter, load, depth_max, steps, best, phase)
}

/// One long step at `depth` (see `probe_deepest` for why it is long and never decided
/// early), kept as the best when it beats it by `depth_gain_min` (or when it is the first
/// step). Returns the best's index.
fn probe_depth(
    meter: &mut dyn Meter,
    load: Load,
    depth: u32,
    steps: &mut Vec<Measurement>,
    best: usize,
    phase: &mut Phase<'_>,
) -> Result<usize, TuneError> {
    let best_rate = steps.get(best).map_or(0.0, Measurement::rate);
    // A jump straight to the deepest depth meets whatever a buffer below the guest can absorb
    // first: on this project's VM, depth-256 steps of 1 MiB writes read 1.7x (and of reads
    // 2.3x) the confirmation at the same depth, median of 4 runs, and won every sweep. So this
    // step never ends early as decided and runs at least `DEEP_STEP_MIN_STEPS` ordinary
    // steps, judged on its last window.
    let min_ns = phase.cfg.step_min_ns * DEEP_STEP_MIN_STEPS;
    let Some(m) = phase.measure_for(meter, &load.with_depth(depth), min_ns, None)? else {
        return Ok(best);
    };
    let gained = steps.is_empty() || m.rate() >= best_rate * (1.0 + phase.cfg.depth_gain_min);
    steps.push(m);
    Ok(if gained { steps.len() - 1 } else { best })
}

/// Request sizes tried below the sequential size, and the smallest that still reached the best
/// bandwidth.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SaturationResult {
    pub steps: Vec<Measurement>,
    pub saturation_bytes: u32,
    pub best_rate: f64,
    pub budget_limited: bool,
}

/// Halves the request size from the knee's, keeping the bytes in flight of the knee (so a
/// smaller size is never judged with less parallelism than the big one had: a 1 MiB
/// saturation length comes from exactly that), until bandwidth falls more than `accuracy` below
/// the best so far, which starts at `reference_rate` (the confirmed figure: the sweep's best
/// step may be a lucky one no size could reach again). A failing size gets one retry at twice
/// the depth before it is ruled out.
pub fn find_saturation(
    meter: &mut dyn Meter,
    knee: &KneeResult,
    reference_rate: f64,
    request_bytes_min: u32,
    phase: &mut Phase<'_>,
) -> Result<SaturationResult, TuneError> {
    let base = knee.knee().load;
    let in_flight_bytes = u64::from(base.depth) * u64::from(base.request_bytes);
    let mut best_rate = reference_rate;
    let mut saturation_bytes = base.request_bytes;
    let mut steps = Vec::new();
    let mut size = base.request_bytes / 2;
    let depth_max = meter.depth_max().max(1);
    while size >= request_bytes_min.max(1) {
        let depth =
            (in_flight_bytes.div_ceil(u64::from(size))).clamp(1, u64::from(depth_max)) as u32;
        let mut reached = false;
        for depth in [depth, depth.saturating_mul(2).min(depth_max)] {
            let Some(m) = phase.measure(meter, &base.with_request_bytes(size).with_depth(depth))?
            else {
                break;
            };
            reached = m.rate() >= best_rate * (1.0 - phase.cfg.accuracy);
            best_rate = best_rate.max(m.rate());
            steps.push(m);
            if reached || depth == depth_max {
                break;
            }
        }
        if !reached {
            break;
        }
        saturation_bytes = size;
        size /= 2;
    }
    Ok(SaturationResult {
        steps,
        saturation_bytes,
        best_rate,
        budget_limited: phase.budget_limited,
    })
}

/// Random-write IOPS per request size, the size where it stops improving, and the verdict
/// against the kernel's value.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SectorResult {
    /// (request bytes, IOPS), ascending sizes; the reference size holds the mean of its two
    /// measurements.
    pub points: Vec<(u32, f64)>,
    /// What the IOPS curve alone says (see [`sector_from_points`]).
    pub measured_bytes: u32,
    /// The verdict: the measured size where it significantly disagrees with the kernel's,
    /// else the kernel's (a flat curve proves nothing against it).
    pub physical_bytes: u32,
    /// How much the reference size's IOPS moved between the start and the end of the sweep,
    /// as a fraction; large drift makes the sweep inconclusive.
    pub drift: f64,
    /// Set when any measurement the sweep wanted found no time left.
    pub budget_limited: bool,
    /// Sizes of the sweep that were never measured (no time left for them).
    pub sizes_unmeasured: Vec<u32>,
    /// Whether the reference size was measured again at the end, so `drift` was checked.
    pub drift_checked: bool,
}

impl SectorResult {
    pub fn iops_at(&self, request_bytes: u32) -> Option<f64> {
        self.points
            .iter()
            .find(|p| p.0 == request_bytes)
            .map(|p| p.1)
    }
}

/// Measures random-write IOPS at each of `sizes` at the knee depth of the random-write sweep:
/// the reference size (the sweep's own) first and again last, so drift of the disk during the
/// sweep (a virtual disk flushing its host cache, an SSD starting garbage collection) is seen
/// rather than mistaken for a sector effect. Below the physical sector every write is a
/// read-modify-write, so IOPS is lower there than at the sector.
pub fn detect_sector(
    meter: &mut dyn Meter,
    knee: &KneeResult,
    sizes: &[u32],
    reported_bytes: Option<u32>,
    phase: &mut Phase<'_>,
) -> Result<SectorResult, TuneError> {
    let base = knee.knee().load;
    let reference = base.request_bytes;
    let min = meter.request_bytes_min().max(1);
    let mut points = Vec::new();
    let mut reference_iops = Vec::new();
    let others = sizes
        .iter()
        .copied()
        .filter(|&s| s >= min && s % min == 0 && s != reference);
    let order: Vec<u32> = std::iter::once(reference)
        .chain(others)
        .chain(std::iter::once(reference))
        .collect();
    for &size in &order {
        let Some(m) = phase.measure(meter, &base.with_request_bytes(size))? else {
            break;
        };
        if size == reference {
            reference_iops.push(m.iops);
        } else {
            points.push((size, m.iops));
        }
    }
    let sizes_unmeasured: Vec<u32> = order[..order.len() - 1]
        .iter()
        .copied()
        .filter(|&size| size != reference && !points.iter().any(|p: &(u32, f64)| p.0 == size))
        .collect();
    let drift_checked = reference_iops.len() == 2;
    if reference_iops.is_empty() {
        reference_iops.push(knee.knee().iops);
    }
    let reference_mean = reference_iops.iter().sum::<f64>() / reference_iops.len() as f64;
    let drift = match reference_iops.as_slice() {
        [a, b] if a.max(*b) > 0.0 => (a - b).abs() / a.max(*b),
        _ => 0.0,
    };
    points.push((reference, reference_mean));
    points.sort_by_key(|p| p.0);
    let measured_bytes = sector_from_points(&points, phase.cfg.sector_gain_min);
    let mut result = SectorResult {
        points,
        measured_bytes,
        physical_bytes: measured_bytes,
        drift,
        budget_limited: phase.budget_limited,
        sizes_unmeasured,
        drift_checked,
    };
    result.physical_bytes = verdict(&result, reported_bytes, phase.cfg.sector_disagreement_min);
    Ok(result)
}

/// The measured sector wins over the kernel's only on significant evidence of a read-modify-
/// write the kernel does not admit: the measured size is larger than the reported one, every
/// measured size from the reported one up to it is slower by more than `disagreement_min`, and
/// the reference did not drift by as much during the sweep. A curve pointing at a *smaller*
/// size proves nothing against the kernel: sizes at or above a true sector are never
/// penalized, so fast small writes only say the penalty is absent, not where the sector is.
fn verdict(r: &SectorResult, reported: Option<u32>, disagreement_min: f64) -> u32 {
    let Some(reported) = reported else {
        return r.measured_bytes;
    };
    if r.drift > disagreement_min || r.measured_bytes <= reported {
        return reported;
    }
    let Some(at_measured) = r.iops_at(r.measured_bytes) else {
        return reported;
    };
    let below: Vec<f64> = r
        .points
        .iter()
        .filter(|p| p.0 >= reported && p.0 < r.measured_bytes)
        .map(|p| p.1)
        .collect();
    let all_penalized = !below.is_empty()
        && below
            .iter()
            .all(|&iops| iops * (1.0 + disagreement_min) < at_measured);
    if all_penalized {
        r.measured_bytes
    } else {
        reported
    }
}

/// The smallest size that no larger size beats by more than `gain_min`. Below the physical
/// sector every size pays a similar read-modify-write, so IOPS is flat across 512 B .. 2 KiB
/// and jumps at the sector: comparing each size only with its neighbour would stop at 512 B.
pub fn sector_from_points(points: &[(u32, f64)], gain_min: f64) -> u32 {
    for (i, p) in points.iter().enumerate() {
        let best_larger = points[i + 1..].iter().map(|q| q.1).fold(0.0, f64::max);
        if best_larger <= p.1 * (1.0 + gain_min) {
            return p.0;
        }
    }
    points.last().map(|p| p.0).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sector_is_where_iops_stops_rising() {
        let rmw = [
            (512, 20e3),
            (1024, 30e3),
            (2048, 45e3),
            (4096, 80e3),
            (8192, 60e3),
        ];
        assert_eq!(sector_from_points(&rmw, 0.05), 4096);
        let flat_rmw = [
            (512, 20e3),
            (1024, 20.5e3),
            (2048, 20e3),
            (4096, 80e3),
            (8192, 70e3),
        ];
        assert_eq!(sector_from_points(&flat_rmw, 0.05), 4096);
        let honest = [
            (512, 80e3),
            (1024, 79e3),
            (2048, 78e3),
            (4096, 76e3),
            (8192, 60e3),
        ];
        assert_eq!(sector_from_points(&honest, 0.05), 512);
        assert_eq!(sector_from_points(&[(4096, 1.0)], 0.05), 4096);
    }

    fn result(points: &[(u32, f64)], drift: f64) -> SectorResult {
        let measured_bytes = sector_from_points(points, 0.05);
        SectorResult {
            points: points.to_vec(),
            measured_bytes,
            physical_bytes: measured_bytes,
            drift,
            budget_limited: false,
            sizes_unmeasured: Vec::new(),
            drift_checked: true,
        }
    }

    #[test]
    fn only_a_costly_under_report_overrides_the_kernel() {
        // A lying firmware: 512 B reported, every size under 4 KiB pays read-modify-write.
        let lie = result(
            &[
                (512, 35e3),
                (1024, 36e3),
                (2048, 37e3),
                (4096, 60e3),
                (8192, 50e3),
            ],
            0.01,
        );
        assert_eq!(verdict(&lie, Some(512), 0.15), 4096);
        // A noisy flat curve whose peak is at 1 KiB: no evidence against a reported 4 KiB.
        let flat = result(
            &[
                (512, 74e3),
                (1024, 83e3),
                (2048, 73e3),
                (4096, 72e3),
                (8192, 70e3),
            ],
            0.02,
        );
        assert_eq!(flat.measured_bytes, 1024);
        assert_eq!(verdict(&flat, Some(4096), 0.15), 4096);
        // The same lie measured while the disk drifted: inconclusive, the kernel's value stays.
        let drifting = result(
            &[
                (512, 35e3),
                (1024, 36e3),
                (2048, 37e3),
                (4096, 60e3),
                (8192, 50e3),
            ],
            0.3,
        );
        assert_eq!(verdict(&drifting, Some(512), 0.15), 512);
        // Without a kernel value the curve decides.
        assert_eq!(verdict(&flat, None, 0.15), 1024);
    }

    #[test]
    fn reserved_time_is_not_shared_until_released() {
        let cfg = SearchConfig::default();
        let mut budget = Budget::new(10_000_000_000, 0);
        budget.reserve(6_000_000_000);
        assert_eq!(budget.left_ns(), 4_000_000_000);
        assert_eq!(
            Phase::new(&mut budget, &cfg, 1.0, 2.0).left_ns(),
            2_000_000_000
        );
        // Never more than is there, and a release hands back at most what was reserved.
        budget.reserve(9_000_000_000);
        assert_eq!((budget.reserved_ns, budget.left_ns()), (10_000_000_000, 0));
        assert_eq!(budget.release(4_000_000_000), 4_000_000_000);
        assert_eq!(budget.left_ns(), 4_000_000_000);
        assert_eq!(budget.release(u64::MAX), 6_000_000_000);
        assert_eq!(budget.reserved_ns, 0);
    }

    #[test]
    fn a_released_reserve_is_whole_even_after_an_overrun_share() {
        let cfg = SearchConfig::default();
        let mut budget = Budget::new(10_000_000_000, 0);
        let mut phase = Phase::reserving(&mut budget, &cfg, 1.0, 10.0, 1_000_000_000);
        assert_eq!(phase.left_ns(), 900_000_000);
        // The phase's steps ran 0.2 s past its share (late samples on a busy machine).
        phase.budget.spent_ns += 1_100_000_000;
        assert_eq!(phase.left_ns(), 0);
        phase.release();
        assert_eq!(phase.left_ns(), 1_000_000_000);
        assert_eq!(phase.budget.reserved_ns, 0);
    }

    fn step(depth: u32, iops: f64) -> Measurement {
        Measurement {
            load: Load {
                direction: weir_model::device::Direction::Read,
                pattern: crate::meter::Pattern::Random,
                request_bytes: 4096,
                depth,
            },
            iops,
            bandwidth_bytes_per_s: iops * 4096.0,
            latency_us_mean: 100.0,
            depth_observed: f64::from(depth),
            spread: crate::steady::Spread::default(),
            peak_rate: iops,
            ended: crate::meter::StopReason::Steady,
            steady: true,
            elapsed_ns: 400_000_000,
            wall_ns: None,
            samples: 4,
            window_samples: 3,
        }
    }

    fn sweep(steps: &[(u32, f64)], end: SweepEnd) -> KneeResult {
        let steps: Vec<Measurement> = steps.iter().map(|&(d, r)| step(d, r)).collect();
        let best = (0..steps.len())
            .max_by(|&a, &b| steps[a].iops.total_cmp(&steps[b].iops))
            .unwrap_or(0);
        KneeResult {
            steps,
            best,
            chosen: best,
            knee: best,
            depth_reach: 1,
            budget_limited: end == SweepEnd::OutOfTime,
            end,
        }
    }

    #[test]
    fn still_rising_only_when_time_cut_a_sweep_whose_deepest_step_gained() {
        let rising = [(2, 10e3), (4, 20e3), (8, 30e3)];
        assert!(sweep(&rising, SweepEnd::OutOfTime).cut_while_rising(0.04));
        // The same curve, ended by the meter's deepest depth: not cut by time.
        assert!(!sweep(&rising, SweepEnd::DepthMax).cut_while_rising(0.04));
        // Cut by time on a plateau: the last step gained under 4%.
        let flat = [(2, 10e3), (4, 20e3), (8, 20.5e3)];
        assert!(!sweep(&flat, SweepEnd::OutOfTime).cut_while_rising(0.04));
        // Cut by time after a fall: the deepest step is not the best.
        let fell = [(2, 10e3), (4, 20e3), (8, 15e3)];
        assert!(!sweep(&fell, SweepEnd::OutOfTime).cut_while_rising(0.04));
        // A sweep that ended flat and then had no time for the deepest-depth probe.
        let mut probed = sweep(&rising, SweepEnd::Flat);
        probed.budget_limited = true;
        assert!(!probed.cut_while_rising(0.04));
        // One depth: nothing rose or fell; that is its own finding.
        let one = sweep(&[(2, 10e3)], SweepEnd::OutOfTime);
        assert!(!one.cut_while_rising(0.04));
        assert!(one.cut_after_one_depth());
        assert!(!sweep(&rising, SweepEnd::OutOfTime).cut_after_one_depth());
        // A recheck of the same depth is not a second depth.
        let again = sweep(&[(2, 10e3), (2, 11e3)], SweepEnd::OutOfTime);
        assert!(again.cut_after_one_depth() && !again.cut_while_rising(0.04));
    }

    /// A 1 MiB sequential step at `depth` whose samples spread by `noise` of its mean.
    fn bandwidth_step(depth: u32, rate: f64, noise: f64) -> Measurement {
        let mut m = step(depth, rate);
        m.load.pattern = crate::meter::Pattern::Sequential;
        m.spread = crate::steady::Spread {
            mean: m.rate(),
            stddev: noise * m.rate(),
            ..crate::steady::Spread::default()
        };
        m
    }

    fn deepest(steps: &[(u32, f64, f64)]) -> u32 {
        let steps: Vec<Measurement> = steps
            .iter()
            .map(|&(d, r, n)| bandwidth_step(d, r, n))
            .collect();
        let best = (0..steps.len())
            .max_by(|&a, &b| steps[a].rate().total_cmp(&steps[b].rate()))
            .unwrap_or(0);
        steps[deepest_within_noise(&steps, best, 0.02, NOISE_MARGIN_MAX)]
            .load
            .depth
    }

    #[test]
    fn bandwidth_is_confirmed_at_the_deepest_step_within_the_noise() {
        // Steady samples: 2% decides. A deep step 4% under the best is slower, one 1% under
        // is as fast.
        assert_eq!(
            deepest(&[(2, 90.0, 0.005), (4, 100.0, 0.005), (256, 96.0, 0.005)]),
            4
        );
        assert_eq!(
            deepest(&[(2, 90.0, 0.005), (4, 100.0, 0.005), (256, 99.0, 0.005)]),
            256
        );
        // Samples spreading 10% in both steps: 12% under the best is within their noise
        // (14%), so the deeper depth is confirmed (and a second opinion there would check it).
        assert_eq!(
            deepest(&[(2, 90.0, 0.1), (4, 100.0, 0.1), (256, 88.0, 0.1)]),
            256
        );
        // However wild the samples, a step 30% under the best is not taken for it.
        assert_eq!(
            deepest(&[(2, 90.0, 0.4), (4, 100.0, 0.4), (256, 70.0, 0.4)]),
            4
        );
        // IOPS keep the shallowest within the margin.
        let mut flat = sweep(&[(2, 100.0), (4, 99.0), (8, 99.5)], SweepEnd::Flat);
        assert_eq!(flat.confirm_index(0.04, 0.02), 0);
        for m in &mut flat.steps {
            m.load.pattern = crate::meter::Pattern::Sequential;
        }
        assert_eq!(flat.confirm_index(0.04, 0.02), 2);
    }

    #[test]
    fn phases_share_what_is_left() {
        let cfg = SearchConfig::default();
        let mut budget = Budget::new(10_000_000_000, 0);
        let phase = Phase::new(&mut budget, &cfg, 1.0, 4.0);
        assert_eq!(phase.left_ns(), 2_500_000_000);
    }
}
