//! The confirming measurements: each figure is one long, unselected measurement at the depth
//! its sweep chose, plus a second opinion when that measurement disagrees with the sweep.
//!
//! # Why a second opinion
//!
//! A sweep's best step only chooses the depth; the figure is a 1.5 s re-measurement there. On a
//! disk that is CPU-bound (zram, a fast NVMe behind a busy host) two things make one
//! re-measurement an unreliable figure:
//! - the rate is flat over depth, so which depth wins the sweep is chance (zram's random reads
//!   chose depth 2 in one run and depth 8 in the next), and a depth that is truly a little
//!   slower is as likely to win as the fastest;
//! - the noise is one-sided: another runnable thread takes CPU from the load and only ever
//!   lowers the rate, for a second or more at a time. One confirmation that lands in such a
//!   burst reads low however long it is (383.7 K at depth 8 where the run before read 474.4 K
//!   at depth 2, and `weir run` read 471.7-476.2 K at 2 x 64, in both runs).
//!
//! So when the confirmation reads more than `accuracy` under the sweep's best step (the step
//! was lucky, or the confirmation was disturbed), a second opinion is taken later and for as
//! long, and the figure is the higher of the two, at its depth: at the same load when the
//! sweep's top is flat (another depth within `accuracy` of the best: a disturbance is then
//! the likely cause, and the depth stays put), at the best other depth when the best step
//! stands alone above the rest (it may have been lucky). Always running it at the best other
//! depth would move the figure's depth on a flat disk whenever that one won (4 KiB reads on
//! an idle zram confirmed at 2, 2, 2 and 256 that way). Taking the higher of two
//! windows rejects a one-sided disturbance of either; the upward bias it adds is that of the
//! symmetric part of the noise over a 1.3 s window (well under 1% on an idle zram) and of two
//! draws only, far less than the sweep's best-of-7 short steps, which is why the sweep's best
//! step itself is never the figure. When the confirmation agrees with the sweep (within
//! `accuracy`) nothing more runs, so a steady disk pays nothing.
//!
//! # Bandwidth: the deepest depth within the noise
//!
//! A bandwidth figure (large requests) is confirmed at the deepest sweep step within the
//! noise of the best ([`crate::search::deepest_within_noise`]), not the shallowest: on a disk
//! whose bandwidth keeps creeping up with depth under per-sample swings of 10-20% (this
//! project's VM), the shallowest near the luckiest step put 1 MiB reads at depth 4, 0.55x of
//! fio's best depth (128). When that deeper confirmation reads more than `accuracy` under the
//! sweep's best step, the second opinion runs at the best step's depth (or, when the first ran
//! at the best step, at the deepest step), so both depths the sweep could not settle are
//! confirmed and the higher is the figure.
//!
//! The time for the second opinions is reserved up front next to the first confirmations (one
//! per figure), and each goes back to the budget as soon as its figure's confirmation agrees
//! with its sweep, so a steady disk's later sweeps get it and the run still ends within its
//! budget. The second opinions run after all sweeps, not right after their own confirmation:
//! other measurements then separate the two windows, so one burst is less likely to cover both.

use crate::error::TuneError;
use crate::meter::{measure, Load, Measurement, Meter, Metric, StopRule};
use crate::search::{Budget, KneeResult, SearchConfig};
use crate::steady::SteadyRule;

/// How far under the sweep's best step the depth a figure is confirmed at may be: about the
/// noise of one short step on a steady disk (~2%). The knee's `accuracy` (4%) would do for
/// the depth, but the figure comes from this step's load: on the simulated flat disk of
/// `tests/tune_cpu_bound.rs` confirming at the 4% knee read 0.963 of the rate in most runs.
pub const CHOICE_MARGIN: f64 = 0.02;

/// The confirmations of a whole tune: the time kept for them in the budget's reserve, and every
/// confirming measurement run.
#[derive(Debug, Clone)]
pub struct Confirmer {
    cfg: SearchConfig,
    /// One confirmation's time, its per-measurement overhead included.
    wanted_ns: u64,
    /// Second opinions still held in the reserve: one per figure that may need one.
    second_opinions_held: u32,
    /// Every confirming measurement run so far, in order.
    pub runs: Vec<Measurement>,
}

/// One figure as the second-opinion pass sees it: its sweep and its confirmed measurement.
pub struct Pending<'a> {
    pub name: &'a str,
    pub sweep: &'a mut KneeResult,
    pub confirmed: &'a mut Option<Measurement>,
}

impl Confirmer {
    /// Keeps time for `figures` confirmations in the budget's reserve, and as many second
    /// opinions when `second_opinions` is set (each is handed back as soon as its figure's
    /// confirmation agrees with its sweep).
    pub fn reserving(
        budget: &mut Budget,
        cfg: &SearchConfig,
        figures: u32,
        second_opinions: bool,
    ) -> Confirmer {
        let wanted_ns = cfg.confirm_ns + budget.overhead_ns;
        let second_opinions_held = if second_opinions { figures } else { 0 };
        budget.reserve(u64::from(figures + second_opinions_held) * wanted_ns);
        Confirmer {
            cfg: *cfg,
            wanted_ns,
            second_opinions_held,
            runs: Vec::new(),
        }
    }

    /// The search settings the confirmations run with.
    pub fn cfg(&self) -> &SearchConfig {
        &self.cfg
    }

    /// Confirms the figure of sweep `k` at [`KneeResult::confirm_index`] (the depth the sweep
    /// had to reach when within `accuracy` of the best step, or else the shallowest within
    /// [`CHOICE_MARGIN`] of it; for bandwidth the deepest within the noise of it) and
    /// re-judges the knee against it. Not at the best step's depth: on a flat disk (zram) the
    /// best of several steps within the noise of each other is chance, and tune's 4 KiB read
    /// depth moved 8 / 16 / 32 / 64 between runs on an idle zram at equal rates, its
    /// figure with it; a depth every run measures is the same every run, and on a disk with
    /// a real knee it is at or past the knee.
    /// When it agrees with the sweep its second opinion's time goes back to the budget at
    /// once, for the sweeps after it. `None` when not even a minimal measurement fitted.
    pub fn confirm_first(
        &mut self,
        meter: &mut dyn Meter,
        k: &mut KneeResult,
        budget: &mut Budget,
    ) -> Result<Option<Measurement>, TuneError> {
        let chosen = k.confirm_index(self.cfg.accuracy, CHOICE_MARGIN);
        let confirmed = confirm(meter, &k.steps[chosen].load, budget, &self.cfg)?;
        let disagrees = confirmed
            .as_ref()
            .is_some_and(|m| self.disagrees(m.rate(), k));
        if !disagrees && self.second_opinions_held > 0 {
            self.second_opinions_held -= 1;
            budget.release(self.wanted_ns);
        }
        let Some(m) = confirmed else {
            return Ok(None);
        };
        self.runs.push(m.clone());
        k.chosen = chosen;
        k.rejudge_knee(m.rate(), self.cfg.accuracy);
        Ok(Some(m))
    }

    /// A confirmation more than `accuracy` under its sweep's best step.
    fn disagrees(&self, rate: f64, k: &KneeResult) -> bool {
        rate < k.best().rate() * (1.0 - self.cfg.accuracy)
    }

    /// After every sweep: each figure whose confirmation fell more than `accuracy` under its
    /// sweep's best step gets a second opinion (`second_opinion_step`), in tune order. Running them after all sweeps, not right after their
    /// own confirmation, puts other measurements between the two windows, so one burst of
    /// interference is less likely to cover both. The higher of the two is the figure.
    /// Returns a progress line per second opinion.
    pub fn second_opinions(
        &mut self,
        meter: &mut dyn Meter,
        figures: &mut [Pending<'_>],
        budget: &mut Budget,
    ) -> Result<Vec<String>, TuneError> {
        let mut lines = Vec::new();
        for p in figures.iter_mut() {
            let disagrees = p
                .confirmed
                .as_ref()
                .is_some_and(|m| self.disagrees(m.rate(), p.sweep));
            if !disagrees || self.second_opinions_held == 0 {
                continue;
            }
            self.second_opinions_held -= 1;
            let at = second_opinion_step(p.sweep, self.cfg.accuracy);
            let Some(second) = confirm(meter, &p.sweep.steps[at].load, budget, &self.cfg)? else {
                break;
            };
            self.runs.push(second.clone());
            let first_rate = p.confirmed.as_ref().map_or(0.0, Measurement::rate);
            lines.push(second_opinion_line(p.name, first_rate, &second, p.sweep));
            if second.rate() > first_rate {
                p.sweep.chosen = at;
                p.sweep.rejudge_knee(second.rate(), self.cfg.accuracy);
                *p.confirmed = Some(second);
            }
        }
        budget.release(u64::from(self.second_opinions_held) * self.wanted_ns);
        self.second_opinions_held = 0;
        Ok(lines)
    }
}

fn second_opinion_line(
    name: &str,
    first_rate: f64,
    second: &Measurement,
    k: &KneeResult,
) -> String {
    let ratio = second.rate() / first_rate.max(f64::MIN_POSITIVE);
    format!(
        "{name}: its confirmation read {:.1}% under the sweep's best step (x{}); second opinion at x{}: {:.3}x the first{}",
        100.0 * (1.0 - first_rate / k.best().rate().max(f64::MIN_POSITIVE)),
        k.best().load.depth,
        second.load.depth,
        ratio,
        if ratio > 1.0 { ", kept" } else { ", the first stands" }
    )
}

/// Where a figure's second opinion runs. The first confirmation's own load when another
/// depth's sweep step reads within `accuracy` of the best (a flat top: the first window was
/// most likely disturbed, and the same depth answers that without moving the depth: a second
/// opinion at the best other depth that won moved 4 KiB reads from depth 2 to 256 on an idle zram,
/// on a sweep whose steps all lay within 7%). The best other depth when the
/// best step stands more than `accuracy` above every other depth: that step may have been a
/// lucky window at a slower depth, and re-measuring it would only confirm the slower rate.
///
/// A bandwidth figure's second opinion goes to the other end of what its sweep could not
/// settle: confirmed first deeper than its best step (the deepest within the noise,
/// [`crate::search::deepest_within_noise`]), at the best step's depth; confirmed first at its
/// best step with a deeper step measured, at the deepest one, since a confirmation under its
/// sweep's best says that best was lucky or the disk moved, and for large requests the deeper
/// depth is the likelier to be faster (on this project's VM, under other load, a sweep of
/// 1 MiB reads read 390 MB/s at depth 2 and 346 at 256, its confirmation at 2 read 345, and
/// fio read 303-354 MB/s at 4 and 1263-1343 at 128 minutes later). Both are then confirmed and
/// the higher stands. Re-measuring the runner-up by rate instead let a slow swing of the disk
/// pick the depth: on a simulated disk swinging +-15% a second, creeping from 1.0 GB/s at
/// depth 2 to 1.35 at 128, it moved 3 of 24 figures from 256 to 8 (0.83 of the best).
fn second_opinion_step(k: &KneeResult, accuracy: f64) -> usize {
    let first_depth = k.chosen().load.depth;
    if k.best().load.metric() == Metric::Bandwidth {
        if first_depth != k.best().load.depth {
            return k.best;
        }
        let deepest =
            (0..k.steps.len()).max_by(|&a, &b| crate::search::deeper_then_faster(&k.steps, a, b));
        return deepest.unwrap_or(k.chosen);
    }
    let other = (0..k.steps.len())
        .filter(|&i| k.steps[i].load.depth != first_depth)
        .max_by(|&a, &b| k.steps[a].rate().total_cmp(&k.steps[b].rate()));
    match other {
        Some(i) if k.steps[i].rate() < k.best().rate() * (1.0 - accuracy) => i,
        _ => k.chosen,
    }
}

/// Measures `load` once more for the configured confirming time, from the budget's reserve (so
/// the sweeps before it can never starve it), judged on the middle half of its samples after a
/// short ramp ([`Measurement::judged_by_middle_half`]: a burst of CPU taken by another thread
/// for under a quarter of the window is left out, a change over the whole window is not). This
/// is the figure a tune reports: one unselected measurement, long enough to average over the
/// disk's slow swings. `None` when not even a minimal measurement fits.
pub fn confirm(
    meter: &mut dyn Meter,
    load: &Load,
    budget: &mut Budget,
    cfg: &SearchConfig,
) -> Result<Option<Measurement>, TuneError> {
    let wanted = cfg.confirm_ns + budget.overhead_ns;
    // The released reserve joins whatever earlier phases left unused.
    budget.release(wanted);
    let run_ns = budget
        .left_ns()
        .min(wanted)
        .saturating_sub(budget.overhead_ns);
    let ramp_ns = cfg.sample_interval_ns * (cfg.confirm_ramp_samples as u64 + 1);
    if run_ns < ramp_ns + cfg.sample_interval_ns {
        return Ok(None);
    }
    let rule = StopRule {
        sample_interval_ns: cfg.sample_interval_ns,
        min_ns: run_ns,
        max_ns: run_ns,
        steady: SteadyRule {
            ramp_samples: cfg.confirm_ramp_samples,
            window_samples: usize::MAX,
            drift_max: cfg.steady.drift_max,
        },
        decided_above: None,
    };
    let m = measure(meter, load, &rule)?;
    budget.charge(&m);
    Ok(Some(m.judged_by_middle_half()))
}
