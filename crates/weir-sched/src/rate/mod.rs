//! Run-time K: the rate the token bucket refills at, found from completions.
//!
//! The model (`weir tune`'s io-properties) is a measurement taken once, at depths and sizes
//! that are not the workload's: on this project's disk tune priced 4 KiB reads at 73k IOPS
//! where the disk gave 86k at the scheduler's depth, so a bucket refilled at the model's rate
//! held a pure 4 KiB load to 0.82 of the disk. Pricing the model higher by hand
//! moved the queue into the disk instead, where shares mean nothing. So the bucket's rate is
//! a factor K on the model that this controller moves at run time, once per *period* (a few
//! latency goals), from what the period showed:
//!
//! - **Probe** (the bucket bound, the disk kept up): the scheduler dispatched at K for the
//!   whole period and the disk's in-flight work did not grow, so the disk took everything it
//!   was given and may take more: K rises by a step (doubling on consecutive probes, up to
//!   1/8 per period, and reset to 1/64 at every knee, so it climbs fast far from the knee
//!   and creeps near it).
//! - **Knee** (the bucket bound, the disk fell behind): in-flight work grew by more than an
//!   eighth of the window (or one request) in one period while the scheduler dispatched at K:
//!   latency grew with no gain in rate. K drops to the period's *delivered* rate less 1/32,
//!   minus what piled up (so the pile drains in the next period), then cruises at delivered
//!   less 1/32. The bucket thus settles just under the disk's real rate, the disk's queue
//!   stays near the depth where its rate stops rising, and the backlog waits in the
//!   scheduler, where shares apply. The knee must show in two periods running (the second
//!   measures the pile from where the first began): one period's growth is often a swing
//!   (see `maybe_close`). Not with the opt-in disk-queue knee (`rate/disk.rs`).
//! - **Window** (the window bound for a whole period, the tail guard not shrinking it, and
//!   the bucket had slack): the disk's drain speed, which sizes the window, is what limits;
//!   K snaps to the delivered rate so that the bucket, not a goal's worth of queue in the
//!   disk, becomes what binds. Where the bucket bound as well, K already is what binds and
//!   the verdict holds.
//! - **Hold** (anything else: idle, light or bursty load, or the tail guard holding the
//!   write window below the drain speed): K does not move. A light load dispatches less than
//!   K offers, which says nothing about the disk, so K never creeps down.
//!
//! K never scales the in-disk window. The window (latency goal x drain speed x tail guard)
//! bounds how much work a read can find ahead of it; letting a run-time factor above 1 grow
//! it is what made mixed read p99 5x worse on this project's disk when `max_speed_factor` was
//! 2.0 (host-cached writes completed fast, the window doubled, and reads queued behind it
//! when the host flushed). K only lets work *enter* faster; the window still caps what is in
//! the disk, so the latency signals (tail guard first, then the drain speed) win whenever
//! the window binds, and K steers only while the bucket binds: the two never act at once.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Fixed point: 1.0 = the model's rate (as `SPEED_ONE` in the budget).
pub(crate) const RATE_SHIFT: u32 = 16;
pub(crate) const RATE_ONE: u64 = 1 << RATE_SHIFT;
/// The lowest K (1/32 of the model), as for the drain speed.
const RATE_MIN: u64 = RATE_ONE / 32;
/// Probe steps: the first after a knee, the first ever, and the largest.
const STEP_AFTER_KNEE: u64 = RATE_ONE / 64;
const STEP_FIRST: u64 = RATE_ONE / 16;
const STEP_MAX: u64 = RATE_ONE / 8;
/// The largest probe step once the disk's own queue proved where the knee is.
const STEP_NEAR_KNEE_MAX: u64 = RATE_ONE / 32;
/// K settles this far under the delivered rate at a knee (1/32).
const MARGIN_DIV: u64 = 32;
/// `RateControl::knee_from_ps` when no knee waits for confirmation.
const NO_KNEE: u64 = u64::MAX;
/// A period is at least this long, so it holds enough completions to judge.
const PERIOD_MIN_NS: u64 = 1_000_000;
/// ... and this many latency goals.
const PERIOD_GOALS: u64 = 4;

/// What one period showed, in picoseconds of model disk time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Period {
    pub elapsed_ps: u64,
    /// Disk time the bucket granted in the period.
    pub dispatched_ps: u64,
    /// Disk time of the requests that completed in the period.
    pub completed_ps: u64,
    pub in_flight_start_ps: u64,
    pub in_flight_end_ps: u64,
    /// The in-disk window at the end of the period.
    pub window_ps: u64,
    /// The largest piece granted in the period: in-flight work moves by whole requests.
    pub largest_piece_ps: u64,
    /// The window turned a request away during the period.
    pub window_refused: bool,
    /// The tail guard holds the window below the drain speed's (guard < 1).
    pub guard_binds: bool,
}

/// The controller's verdict on one period (for tests and the docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Probe,
    Knee,
    Window,
    Hold,
}

/// Run-time K of one lane. Only the shard that closes a period writes `rate_q16`, `step_q16`
/// and `cruise_q16`; the accumulators take relaxed adds from every shard.
#[derive(Debug)]
pub(crate) struct RateControl {
    rate_q16: AtomicU64,
    step_q16: AtomicU64,
    /// The rate to return to after a knee's one draining period (0: not draining).
    cruise_q16: AtomicU64,
    /// Work in flight when a period began that was judged a knee and held for confirmation
    /// (`NO_KNEE`: none; see `maybe_close`).
    knee_from_ps: AtomicU64,
    /// Whether a knee waits for a second period's confirmation: not where the disk-queue
    /// knee (`rate/disk.rs`, opt-in) judges the disk's queue itself. There the wait cost the
    /// split (`k_comes_down_at_the_knee_when_the_model_overprices_writes`, 0.9x disk:
    /// 0.870 of asked against 0.995), as the held period's credit was banked and the
    /// disk-queue knee's own bookkeeping saw a hold where a cut had been due.
    confirm_knees: bool,
    period_start_ns: AtomicU64,
    granted_at_start_ps: AtomicU64,
    in_flight_at_start_ps: AtomicU64,
    completed_ps: AtomicU64,
    window_refusals: AtomicU64,
    largest_piece_ps: AtomicU64,
    /// The disk's own queue proved a knee under a slack bucket (`rate/disk.rs`): K's floor
    /// is RATE_MIN, not the drain speed's, until the window binds or the other lane is busy.
    floor_lifted: AtomicBool,
    /// Times that knee lowered K, and times a cut drained nothing (for the lane's counters).
    disk_knees: AtomicU64,
    disk_knee_misses: AtomicU64,
    /// Periods until the last cut must show its queue gone (0: none due); periods left to ignore the signal after one
    /// that did not, and the next such wait.
    drain_due: AtomicU64,
    /// K before the last cut (restored if the cut drained nothing).
    before_cut_q16: AtomicU64,
    /// The latency the disk's queue added when K was last cut (`rate/disk.rs`).
    excess_at_cut_x16: AtomicU64,
    /// ... and the disk's queue then (work in flight over the pipe).
    queue_at_cut_ps: AtomicU64,
    standing_wait: AtomicU64,
    standing_backoff: AtomicU64,
}

impl RateControl {
    pub(crate) fn new(confirm_knees: bool) -> Self {
        RateControl {
            confirm_knees,
            rate_q16: AtomicU64::new(RATE_ONE),
            step_q16: AtomicU64::new(STEP_FIRST),
            cruise_q16: AtomicU64::new(0),
            knee_from_ps: AtomicU64::new(NO_KNEE),
            period_start_ns: AtomicU64::new(0),
            granted_at_start_ps: AtomicU64::new(0),
            in_flight_at_start_ps: AtomicU64::new(0),
            completed_ps: AtomicU64::new(0),
            window_refusals: AtomicU64::new(0),
            largest_piece_ps: AtomicU64::new(0),
            floor_lifted: AtomicBool::new(false),
            disk_knees: AtomicU64::new(0),
            disk_knee_misses: AtomicU64::new(0),
            drain_due: AtomicU64::new(0),
            before_cut_q16: AtomicU64::new(0),
            excess_at_cut_x16: AtomicU64::new(0),
            queue_at_cut_ps: AtomicU64::new(0),
            standing_wait: AtomicU64::new(0),
            standing_backoff: AtomicU64::new(disk::BACKOFF_MIN),
        }
    }

    /// Times the disk's own queue lowered K (`rate/disk.rs`).
    pub(crate) fn disk_knees(&self) -> u64 {
        self.disk_knees.load(Relaxed)
    }

    pub(crate) fn disk_knee_misses(&self) -> u64 {
        self.disk_knee_misses.load(Relaxed)
    }

    /// K now (fixed point).
    pub(crate) fn rate_q16(&self) -> u64 {
        self.rate_q16.load(Relaxed)
    }

    pub(crate) fn note_granted(&self, cost_ps: u64) {
        if self.largest_piece_ps.load(Relaxed) < cost_ps {
            self.largest_piece_ps.fetch_max(cost_ps, Relaxed);
        }
    }

    pub(crate) fn note_window_refused(&self) {
        self.window_refusals.fetch_add(1, Relaxed);
    }

    pub(crate) fn note_completed(&self, cost_ps: u64) {
        self.completed_ps.fetch_add(cost_ps, Relaxed);
    }

    /// The period length for a latency goal.
    pub(crate) fn period_ns(goal_ps: u64) -> u64 {
        (goal_ps / 1000 * PERIOD_GOALS).max(PERIOD_MIN_NS)
    }

    /// Closes the period if `period_ns` has passed since it began. `lane_now` reads the lane
    /// as (granted total, in flight, window, guard binds). K stays within `[floor, max]`.
    /// Returns the verdict and the period when this call closed one.
    pub(crate) fn maybe_close(
        &self,
        now_ns: u64,
        period_ns: u64,
        (floor_q16, max_q16): (u64, u64),
        lane_now: impl FnOnce() -> (u64, u64, u64, bool),
    ) -> Option<(Verdict, Period)> {
        let start = self.period_start_ns.load(Relaxed);
        if now_ns < start.saturating_add(period_ns)
            || self
                .period_start_ns
                .compare_exchange(start, now_ns, Relaxed, Relaxed)
                .is_err()
        {
            return None;
        }
        let (granted_ps, in_flight_ps, window_ps, guard_binds) = lane_now();
        let period = Period {
            elapsed_ps: (now_ns - start).saturating_mul(1000),
            dispatched_ps: granted_ps
                .saturating_sub(self.granted_at_start_ps.swap(granted_ps, Relaxed)),
            completed_ps: self.completed_ps.swap(0, Relaxed),
            in_flight_start_ps: self.in_flight_at_start_ps.swap(in_flight_ps, Relaxed),
            in_flight_end_ps: in_flight_ps,
            window_ps,
            largest_piece_ps: self.largest_piece_ps.swap(0, Relaxed),
            window_refused: self.window_refusals.swap(0, Relaxed) > 0,
            guard_binds,
        };
        // The first period starts at time 0, before anything ran: it judges nothing.
        if start == 0 {
            return Some((Verdict::Hold, period));
        }
        let rate = self.rate_q16.load(Relaxed);
        // A knee must show in two periods running: one period's growth is often a swing,
        // not a pile. A lane's work in flight sampled at the period's end moves with whatever
        // just landed (a 128 KiB write slows the reads beside it 1.5x in simulation; zram
        // completes whole rounds at once), and each such cut cost a probe's climb back (the
        // simulated mix's reads on the 2x disk sat at 0.86-0.95 of the real rate for 100-300
        // ms, cut every few periods). So the first period judged a knee holds K; the next
        // confirms it if the pile is still there, measured from where the first began (so the
        // drain takes both periods' growth).
        let knee_from = self.knee_from_ps.swap(NO_KNEE, Relaxed);
        let pending = knee_from != NO_KNEE;
        let judged = Period {
            in_flight_start_ps: if pending {
                knee_from
            } else {
                period.in_flight_start_ps
            },
            ..period
        };
        let (verdict, next) = match judge(rate, &judged) {
            (Verdict::Knee, _) if !pending && self.confirm_knees => {
                self.knee_from_ps.store(period.in_flight_start_ps, Relaxed);
                (Verdict::Hold, rate)
            }
            judged => judged,
        };
        let next = self.next_rate(verdict, rate, next, &period);
        let floor = if self.floor_lifted.load(Relaxed) {
            RATE_MIN
        } else {
            floor_q16.clamp(RATE_MIN, max_q16)
        };
        self.rate_q16
            .store(next.clamp(floor, max_q16.max(floor)), Relaxed);
        Some((verdict, period))
    }

    /// The rate after a period judged `verdict`: a probe climbs (or goes back to cruising
    /// after a knee's drain); a knee or a full window cruises just under what the disk
    /// delivered. `judged_next` is the rate `judge` proposed.
    fn next_rate(&self, verdict: Verdict, rate: u64, judged_next: u64, period: &Period) -> u64 {
        match verdict {
            Verdict::Probe => {
                let cruise = self.cruise_q16.swap(0, Relaxed);
                if cruise > 0 {
                    // The period after a knee drained the pile; go back to cruising.
                    cruise
                } else {
                    let step = self.step_q16.load(Relaxed);
                    // Once the disk's own queue showed the knee (the `disk` module), it is near:
                    // a step of 1/8 there put twice the pipe in the disk in one period.
                    let most = if self.floor_lifted.load(Relaxed) {
                        STEP_NEAR_KNEE_MAX
                    } else {
                        STEP_MAX
                    };
                    self.step_q16.store((step * 2).min(most), Relaxed);
                    rate + ((u128::from(rate) * u128::from(step)) >> RATE_SHIFT) as u64
                }
            }
            Verdict::Knee | Verdict::Window => {
                self.step_q16.store(STEP_AFTER_KNEE, Relaxed);
                let delivered = rate_of(period.completed_ps, period.elapsed_ps);
                self.cruise_q16
                    .store((delivered - delivered / MARGIN_DIV).max(RATE_MIN), Relaxed);
                judged_next
            }
            Verdict::Hold => judged_next,
        }
    }
}

/// Disk time per second of wall time, fixed point.
pub(crate) fn rate_of(disk_ps: u64, elapsed_ps: u64) -> u64 {
    ((u128::from(disk_ps) << RATE_SHIFT) / u128::from(elapsed_ps.max(1))) as u64
}

/// The pure decision: the verdict and the next K (before probing's step, which needs state).
pub(crate) fn judge(rate_q16: u64, p: &Period) -> (Verdict, u64) {
    let offered_ps = ((u128::from(p.elapsed_ps) * u128::from(rate_q16)) >> RATE_SHIFT) as u64;
    // The scheduler dispatched (nearly) all K offered: the demand was above K all period.
    // A light or bursty load dispatches less and is never evidence either way.
    let saturated = p.dispatched_ps >= offered_ps - offered_ps / 8;
    let growth_ps = p.in_flight_end_ps.saturating_sub(p.in_flight_start_ps);
    let threshold_ps = (p.window_ps / 8).max(p.largest_piece_ps);
    let delivered = rate_of(p.completed_ps, p.elapsed_ps);
    if saturated && growth_ps > threshold_ps {
        // The disk fell behind K: back to just under what it delivered, minus the pile.
        let pile = rate_of(growth_ps, p.elapsed_ps);
        let cruise = delivered - delivered / MARGIN_DIV;
        return (Verdict::Knee, cruise.saturating_sub(pile).max(cruise / 2));
    }
    let half = p.window_ps / 2;
    let window_full_all_period =
        p.window_refused && p.in_flight_start_ps >= half && p.in_flight_end_ps >= half;
    // Only with slack in the bucket: where the bucket bound too, what the disk delivered is
    // K itself (less noise), and cutting K to it less the margin and the pile every such
    // period ratchets K down to its floor (measured: vda and zram at equal splits with K at
    // its floor, the window binding in 0.75-0.88 of periods).
    if window_full_all_period && !p.guard_binds && !saturated && delivered < rate_q16 {
        // The disk holds a goal's worth of queue and takes no more: the same knee, reached
        // through the window. Drain half the window's pile in the next period, then cruise.
        let pile = rate_of(p.in_flight_end_ps / 2, p.elapsed_ps);
        let cruise = delivered - delivered / MARGIN_DIV;
        return (Verdict::Window, cruise.saturating_sub(pile).max(cruise / 2));
    }
    // A window that turned work away is a latency signal's doing (drain speed or tail
    // guard): more rate would only queue in the scheduler, so K only probes past it when
    // the window never bound.
    if saturated && !p.window_refused {
        return (Verdict::Probe, rate_q16);
    }
    (Verdict::Hold, rate_q16)
}

mod disk;
pub(crate) use disk::DiskQueue;

#[cfg(test)]
mod tests {
    use super::*;

    const MS_PS: u64 = 1_000_000_000;

    fn period(dispatched_ms: u64, completed_ms: u64, start_ms: u64, end_ms: u64) -> Period {
        // Values in milliseconds of disk time over a 4 ms period, window 0.75 ms.
        Period {
            elapsed_ps: 4 * MS_PS,
            dispatched_ps: dispatched_ms * MS_PS / 100,
            completed_ps: completed_ms * MS_PS / 100,
            in_flight_start_ps: start_ms * MS_PS / 100,
            in_flight_end_ps: end_ms * MS_PS / 100,
            window_ps: 75 * MS_PS / 100,
            largest_piece_ps: MS_PS / 100,
            window_refused: false,
            guard_binds: false,
        }
    }

    #[test]
    fn a_saturated_period_the_disk_kept_up_with_probes() {
        // K = 1.0: 4 ms offered, 4 ms dispatched and completed, in flight flat.
        let (v, _) = judge(RATE_ONE, &period(400, 400, 10, 12));
        assert_eq!(v, Verdict::Probe);
    }

    #[test]
    fn a_pile_growing_under_a_saturated_bucket_is_the_knee() {
        // Dispatched 4.4 ms at K = 1.1, completed 4.0 ms: 0.4 ms piled up in the disk.
        let rate = RATE_ONE + RATE_ONE / 10;
        let (v, next) = judge(rate, &period(440, 400, 10, 50));
        assert_eq!(v, Verdict::Knee);
        // Under the delivered 1.0, and under its cruise (31/32) by the pile's 0.1.
        let next = next as f64 / RATE_ONE as f64;
        assert!((next - (1.0 - 1.0 / 32.0 - 0.1)).abs() < 1e-3, "{next}");
    }

    #[test]
    fn light_or_bursty_load_never_moves_k() {
        // Half of what K offers, a burst that filled the window at the end: hold.
        let mut p = period(200, 150, 0, 60);
        p.window_refused = true;
        assert_eq!(judge(RATE_ONE * 2, &p), (Verdict::Hold, RATE_ONE * 2));
        // Idle.
        assert_eq!(
            judge(RATE_ONE, &period(0, 0, 0, 0)),
            (Verdict::Hold, RATE_ONE)
        );
    }

    #[test]
    fn a_window_full_all_period_hands_k_to_the_delivered_rate_unless_the_guard_holds_it() {
        let mut p = period(300, 300, 70, 72);
        p.window_refused = true;
        let (v, next) = judge(RATE_ONE * 2, &p);
        assert_eq!(v, Verdict::Window);
        // Delivered 0.75, less 1/32, less half the 0.72 ms pile over the 4 ms period.
        let next = next as f64 / RATE_ONE as f64;
        assert!((next - (0.75 * 31.0 / 32.0 - 0.09)).abs() < 1e-3, "{next}");
        p.guard_binds = true;
        assert_eq!(judge(RATE_ONE * 2, &p), (Verdict::Hold, RATE_ONE * 2));
    }

    #[test]
    fn a_window_full_under_a_bound_bucket_holds_k_instead_of_ratcheting_it_down() {
        // K = 1.0, all of it dispatched and delivered less noise, the window full all
        // period: the bucket bound too, so the delivered rate is K's own and no evidence.
        let mut p = period(400, 396, 70, 72);
        p.window_refused = true;
        let mut k = RATE_ONE;
        for _ in 0..100 {
            let (v, next) = judge(k, &p);
            assert_eq!(v, Verdict::Hold, "K {}", k as f64 / RATE_ONE as f64);
            k = next;
        }
        assert_eq!(k, RATE_ONE);
    }

    #[test]
    fn probing_doubles_its_step_and_a_knee_resets_it_then_drains_once() {
        let control = RateControl::new(true);
        let period_ns = 4_000_000;
        let lane = |granted, in_flight| move || (granted, in_flight, 75 * MS_PS / 100, false);
        // The first close only starts the clock.
        assert_eq!(
            control
                .maybe_close(
                    period_ns,
                    period_ns,
                    (RATE_MIN, RATE_ONE * 4),
                    lane(0, MS_PS / 10)
                )
                .map(|(v, _)| v),
            Some(Verdict::Hold)
        );
        let mut granted = 0;
        let mut now = period_ns;
        let mut rates = Vec::new();
        for _ in 0..3 {
            // Dispatch exactly what K offers; the disk keeps up.
            let offered = ((u128::from(4 * MS_PS) * u128::from(control.rate_q16())) >> 16) as u64;
            granted += offered;
            control.note_completed(offered);
            now += period_ns;
            let v = control.maybe_close(
                now,
                period_ns,
                (RATE_MIN, RATE_ONE * 4),
                lane(granted, MS_PS / 10),
            );
            assert_eq!(v.map(|(v, _)| v), Some(Verdict::Probe));
            rates.push(control.rate_q16() as f64 / RATE_ONE as f64);
        }
        // Steps 1/16, 1/8, 1/8.
        assert!((rates[0] - 1.0625).abs() < 1e-3, "{rates:?}");
        assert!((rates[1] - 1.0625 * 1.125).abs() < 1e-3, "{rates:?}");
        // A knee: the disk completed 4 ms while 0.5 ms piled up, two periods running (the
        // first is held until the second confirms it).
        let held = control.rate_q16();
        for (in_flight_ps, verdict) in [
            (MS_PS * 6 / 10, Verdict::Hold),
            (MS_PS * 11 / 10, Verdict::Knee),
        ] {
            let offered = ((u128::from(4 * MS_PS) * u128::from(control.rate_q16())) >> 16) as u64;
            granted += offered;
            control.note_completed(4 * MS_PS);
            now += period_ns;
            let v = control.maybe_close(
                now,
                period_ns,
                (RATE_MIN, RATE_ONE * 4),
                lane(granted, in_flight_ps),
            );
            assert_eq!(v.map(|(v, _)| v), Some(verdict));
            if verdict == Verdict::Hold {
                assert_eq!(control.rate_q16(), held, "a lone knee moved K");
            }
        }
        // Under the delivered 1.0 by the margin and both periods' pile (1.0 ms over 4 ms).
        let drain = control.rate_q16() as f64 / RATE_ONE as f64;
        assert!((drain - (1.0 - 1.0 / 32.0 - 0.25)).abs() < 1e-3, "{drain}");
        // The next saturated period returns to cruise (31/32 of delivered), not a probe step.
        let offered = ((u128::from(4 * MS_PS) * u128::from(control.rate_q16())) >> 16) as u64;
        granted += offered;
        control.note_completed(offered);
        now += period_ns;
        control.maybe_close(
            now,
            period_ns,
            (RATE_MIN, RATE_ONE * 4),
            lane(granted, MS_PS / 10),
        );
        let cruise = control.rate_q16() as f64 / RATE_ONE as f64;
        assert!((cruise - (1.0 - 1.0 / 32.0)).abs() < 1e-3, "{cruise}");
    }

    #[test]
    fn a_swing_of_work_in_flight_that_drains_back_never_cuts_k() {
        let control = RateControl::new(true);
        let period_ns = 4_000_000;
        let lane = |granted, in_flight| move || (granted, in_flight, 75 * MS_PS / 100, false);
        let bounds = (RATE_MIN, RATE_ONE * 4);
        control.maybe_close(period_ns, period_ns, bounds, lane(0, MS_PS / 10));
        let (mut granted, mut now) = (0, period_ns);
        // Saturated periods whose end samples alternate high and low: a swing, not a pile.
        for i in 0..20 {
            let offered = ((u128::from(4 * MS_PS) * u128::from(control.rate_q16())) >> 16) as u64;
            granted += offered;
            let in_flight_ps = if i % 2 == 0 {
                MS_PS * 6 / 10
            } else {
                MS_PS / 10
            };
            control.note_completed(if i % 2 == 0 {
                offered - MS_PS / 2
            } else {
                offered + MS_PS / 2
            });
            now += period_ns;
            let v = control.maybe_close(now, period_ns, bounds, lane(granted, in_flight_ps));
            assert_ne!(v.map(|(v, _)| v), Some(Verdict::Knee), "period {i}");
        }
        assert!(control.rate_q16() > RATE_ONE, "K {}", control.rate_q16());
    }
}
