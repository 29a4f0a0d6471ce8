//! The depth cap: where the device is never the bottleneck (zram, where the CPU is the
//! limit), keep the queue in the scheduler anyway, at the depth past which the device gives
//! no more rate.
//!
//! The window is a latency goal of disk time. A device that finishes the whole client load
//! within the goal never fills it: on zram (~580 K 4 KiB reads a second) a goal is ~450
//! requests and the bench's two classes have 128, so every request goes straight in, the
//! fair queue never queues, and shares come out 1:1 where 10:1 was asked (measured on zram;
//! `a_cpu_bound_device_holds_the_shares` in simulation). The fair queue can only impose
//! a ratio on work it holds back.
//!
//! The signal is Little's law: a period that delivered rate X with N in flight had a mean
//! latency N / X. If that is four or more times the device's unloaded latency L0, then N is
//! four times what a pipe of that rate and latency needs (X x L0): most of it is queue, in the
//! device, where shares mean nothing. Then (and only while neither the window nor the bucket
//! turned anything away: a bound window already keeps the queue here; nor while the other
//! lane of a duplex disk has work in it, whose latency this lane's requests pay too: 4 KiB
//! reads capped behind 128 KiB writes saw their p99 rise from 0.89 to 1.16 ms in
//! `sparse_write_mix_keeps_reads_within_the_goal`) the cap engages at 3/4
//! of the in-flight work, remembering the rate X as the reference, and every period after
//! that the rate held (within 1/64 of the reference) it steps down by 1/8; the first period
//! that lost more gives back 1/4 and holds there for `HOLD_PERIODS` before it tries again.
//! The cap never shrinks below twice the pipe (2 X L0) nor two of the largest piece. It goes
//! off when it stops binding (the load shrank) or the window comes under it. It only ever
//! narrows what the window allows, so it cannot raise any latency, and it never acts on a
//! lane that is idle or lightly loaded (no queue in the device).
//!
//! Two additions for devices that complete inside the submission (zram under io_uring;
//! `SimConfig::cpu_inline`, docs/scheduler-rate.md section 15): the work in flight is the
//! period's mean by Little's law (sum of cost x latency over the period) where a snapshot
//! after a reap sees none, and where the law cannot see a queue because the unloaded latency
//! holds a dispatch round's CPU time, a lane of 16 requests or more tries a cut anyway
//! (`trial_due`): kept if the rate holds, dropped with a doubled wait if it does not.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Fixed point for rates (model disk time per second), as K's.
const Q: u32 = 16;
/// Periods the cap holds after a step down lost rate, before it tries another.
const HOLD_PERIODS: u64 = 32;
/// Off: no cap.
const OFF: u64 = u64::MAX;
/// Periods between trials (`DepthCap::close`) at first, and at most after failed ones.
const TRIAL_WAIT_MIN: u64 = 16;
const TRIAL_WAIT_MAX: u64 = 1024;
/// Requests (of the largest piece) a lane must hold before a trial cuts its depth.
const TRIAL_DEPTH: u64 = 16;

/// One period as the cap judges it (picoseconds of model disk time; rates fixed point).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DepthPeriod {
    /// Disk time completed per second of the period.
    pub delivered_q16: u64,
    /// Disk time dispatched and completed in the period.
    pub dispatched_ps: u64,
    pub completed_ps: u64,
    pub in_flight_ps: u64,
    /// The lane's unloaded latency (0: not yet measured).
    pub unloaded_ns: u64,
    pub window_ps: u64,
    pub largest_piece_ps: u64,
    /// The window or the bucket turned a request away in the period.
    pub other_limit_bound: bool,
    /// The other lane of a duplex disk has work in the disk: this lane's latency is not
    /// only its own queue, so Little's law says nothing about its depth.
    pub other_lane_busy: bool,
}

/// What one period's judgement did (counted per lane for the run's report, `lane_counters.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Judged {
    /// No cap, and the device holds less than four pipes: no queue in it worth capping.
    Light,
    /// No cap although the device held four pipes or more: the window or the bucket bound
    /// (`bound`), the other lane was busy, or the period was stalled (`idle`).
    Blocked {
        bound: bool,
        other_lane: bool,
        idle: bool,
    },
    /// The cap engaged this period.
    Engaged,
    /// The cap was on and stays on (stepped, gave back or held).
    Capped,
    /// The cap was on and went off.
    Released,
}

/// The cap of one lane. Only the shard that closes a period writes it.
#[derive(Debug)]
pub(crate) struct DepthCap {
    cap_ps: AtomicU64,
    reference_q16: AtomicU64,
    hold: AtomicU64,
    refused: AtomicU64,
    /// Sum over the period's completions of cost (ns) x in-disk latency (ns): Little's law
    /// gives the mean work in flight from it, where a snapshot at the period's end sees
    /// none on a device that completes inside the submission.
    cost_latency_ns2: AtomicU64,
    /// The cap came from a trial, not from Little's law (its floor ignores the pipe).
    by_trial: AtomicU64,
    /// Periods the cap judged since it engaged.
    steps: AtomicU64,
    /// Periods until the next trial, and the wait after the next failed one.
    trial_wait: AtomicU64,
    trial_backoff: AtomicU64,
}

impl DepthCap {
    pub(crate) fn new() -> Self {
        DepthCap {
            cap_ps: AtomicU64::new(OFF),
            reference_q16: AtomicU64::new(0),
            hold: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            cost_latency_ns2: AtomicU64::new(0),
            by_trial: AtomicU64::new(0),
            steps: AtomicU64::new(0),
            trial_wait: AtomicU64::new(TRIAL_WAIT_MIN),
            trial_backoff: AtomicU64::new(TRIAL_WAIT_MIN),
        }
    }

    /// Counts a completion for the period's mean in-flight work.
    pub(crate) fn note_completed(&self, cost_ps: u64, disk_ns: u64) {
        let product = (cost_ps / 1000).saturating_mul(disk_ns);
        let _ = self
            .cost_latency_ns2
            .fetch_update(Relaxed, Relaxed, |sum| Some(sum.saturating_add(product)));
    }

    /// The period's mean work in flight by Little's law (ps of model time), and a fresh
    /// sum for the next period.
    pub(crate) fn take_mean_in_flight_ps(&self, elapsed_ps: u64) -> u64 {
        let sum = self.cost_latency_ns2.swap(0, Relaxed);
        (u128::from(sum) * 1_000_000 / u128::from(elapsed_ps.max(1))).min(u128::from(u64::MAX / 8))
            as u64
    }

    /// The cap on in-flight disk time (`u64::MAX`: none).
    pub(crate) fn cap_ps(&self) -> u64 {
        self.cap_ps.load(Relaxed)
    }

    pub(crate) fn note_refused(&self) {
        self.refused.fetch_add(1, Relaxed);
    }

    /// Little's law's figure for a period: mean latency over unloaded latency, x 16 (0 while
    /// the unloaded latency is unknown). The cap engages at 4 (64 here).
    pub(crate) fn queue_ratio_x16(p: &DepthPeriod) -> u64 {
        let pipe_ps = pipe_ps(p);
        if p.unloaded_ns == 0 || pipe_ps == 0 {
            return 0;
        }
        (u128::from(p.in_flight_ps) * 16 / u128::from(pipe_ps)).min(u128::from(u64::MAX)) as u64
    }

    /// Judges the period that just closed and moves the cap.
    pub(crate) fn close(&self, p: &DepthPeriod) -> Judged {
        let bound = self.refused.swap(0, Relaxed) > 0;
        let cap = self.cap_ps.load(Relaxed);
        // Twice what a pipe of this rate and unloaded latency holds.
        let pipe_ps = pipe_ps(p);
        let floor_ps = (2 * pipe_ps).max(2 * p.largest_piece_ps).max(1);
        if cap == OFF {
            let queueing = p.unloaded_ns > 0 && p.in_flight_ps >= 4 * pipe_ps.max(1);
            let alone = !p.other_limit_bound && !p.other_lane_busy;
            // A stalled device completes and dispatches nothing, so nothing refuses either,
            // and its latency is all queue: that is not a device the window cannot fill
            // (on this project's virtio disk such a period engaged the cap with a reference
            // rate of 0, and it then stepped 128 KiB writes down to two in flight).
            let busy = p.dispatched_ps.min(p.completed_ps) >= 8 * p.largest_piece_ps.max(1);
            if queueing && alone && busy && p.in_flight_ps >= 2 * floor_ps {
                self.engage(p, false);
                return Judged::Engaged;
            }
            if !queueing && alone && busy && self.trial_due(p) {
                self.engage(p, true);
                return Judged::Engaged;
            }
            if !queueing {
                return Judged::Light;
            }
            return Judged::Blocked {
                bound: p.other_limit_bound,
                other_lane: p.other_lane_busy,
                idle: !busy,
            };
        }
        if !bound || cap >= p.window_ps || p.other_lane_busy {
            self.cap_ps.store(OFF, Relaxed);
            return Judged::Released;
        }
        let reference = self.reference_q16.load(Relaxed);
        let trial = self.by_trial.load(Relaxed) == 1;
        let first_step = self.steps.fetch_add(1, Relaxed) == 0;
        if p.delivered_q16 < reference - reference / 64 {
            if trial && first_step {
                // The trial's first cut lost rate: the depth was the device's need, not a
                // queue. Off, and wait twice as long before the next trial.
                let wait = (self.trial_backoff.load(Relaxed) * 2).min(TRIAL_WAIT_MAX);
                self.trial_backoff.store(wait, Relaxed);
                self.trial_wait.store(wait, Relaxed);
                self.cap_ps.store(OFF, Relaxed);
                return Judged::Released;
            }
            self.hold.store(HOLD_PERIODS, Relaxed);
            self.cap_ps.store(cap + cap / 4, Relaxed);
            return Judged::Capped;
        }
        if trial && first_step {
            self.trial_backoff.store(TRIAL_WAIT_MIN, Relaxed);
        }
        self.reference_q16.fetch_max(p.delivered_q16, Relaxed);
        if self.hold.load(Relaxed) > 0 {
            self.hold.fetch_sub(1, Relaxed);
            return Judged::Capped;
        }
        // A trial's cap keeps its own floor: its unloaded latency is the one it could not use.
        let floor_ps = if trial { trial_floor_ps(p) } else { floor_ps };
        self.cap_ps.store((cap - cap / 8).max(floor_ps), Relaxed);
        Judged::Capped
    }

    fn engage(&self, p: &DepthPeriod, trial: bool) {
        self.reference_q16.store(p.delivered_q16, Relaxed);
        self.hold.store(0, Relaxed);
        self.steps.store(0, Relaxed);
        self.by_trial.store(u64::from(trial), Relaxed);
        self.cap_ps
            .store(p.in_flight_ps - p.in_flight_ps / 4, Relaxed);
    }

    /// Whether a period with no queue by Little's law should try a cut anyway.
    ///
    /// Little's law needs the device's unloaded latency, and a device that completes inside
    /// the submission (zram under io_uring) never shows one: a request that found the lane
    /// empty is the first of a dispatch round and completes with the whole round, so its
    /// latency holds the round's CPU time (132-1,170 us against a smallest seen of 9-178 us
    /// on zram, docs/scheduler-rate.md sections 13-14) and the law never sees four pipes of
    /// queue. Its rate, though, is flat above a few requests in flight: a cut to 3/4 that
    /// loses no rate is the evidence latency could not give. So a lane deep enough to cut
    /// (`TRIAL_DEPTH` requests) tries one every `trial_wait` periods; a first cut that loses
    /// more than 1/64 of the rate turns the cap off and doubles the wait (to
    /// `TRIAL_WAIT_MAX`), one that holds keeps descending as the law's cap does.
    fn trial_due(&self, p: &DepthPeriod) -> bool {
        if p.in_flight_ps < TRIAL_DEPTH * p.largest_piece_ps.max(1)
            || p.in_flight_ps < 2 * trial_floor_ps(p)
        {
            return false;
        }
        let wait = self.trial_wait.load(Relaxed);
        if wait > 0 {
            self.trial_wait.store(wait - 1, Relaxed);
            return false;
        }
        self.trial_wait
            .store(self.trial_backoff.load(Relaxed), Relaxed);
        true
    }
}

/// A trial cap's floor: four of the largest piece (a device flat above a few requests).
fn trial_floor_ps(p: &DepthPeriod) -> u64 {
    4 * p.largest_piece_ps.max(1)
}

/// What a pipe of the period's rate and the lane's unloaded latency holds, in ps.
pub(crate) fn pipe_ps(p: &DepthPeriod) -> u64 {
    ((u128::from(p.delivered_q16) * u128::from(p.unloaded_ns) * 1000) >> Q)
        .min(u128::from(u64::MAX / 8)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const US_PS: u64 = 1_000_000;

    /// A period at `delivered` (x model), `in_flight_us` of model time in flight, 10 us
    /// unloaded, a 750 us window, 2 us pieces.
    fn period(delivered: f64, in_flight_us: u64) -> DepthPeriod {
        DepthPeriod {
            delivered_q16: (delivered * f64::from(1u32 << Q)) as u64,
            dispatched_ps: (delivered * 4000.0) as u64 * US_PS,
            completed_ps: (delivered * 4000.0) as u64 * US_PS,
            in_flight_ps: in_flight_us * US_PS,
            unloaded_ns: 10_000,
            window_ps: 750 * US_PS,
            largest_piece_ps: 2 * US_PS,
            other_limit_bound: false,
            other_lane_busy: false,
        }
    }

    #[test]
    fn a_deep_device_queue_engages_the_cap_and_it_steps_down_while_the_rate_holds() {
        let d = DepthCap::new();
        // 256 us in flight at 1.0: latency 256 us against 10 unloaded.
        d.close(&period(1.0, 256));
        assert_eq!(d.cap_ps(), 192 * US_PS);
        d.note_refused();
        d.close(&period(1.0, 192));
        assert_eq!(d.cap_ps(), 168 * US_PS);
        // The rate fell by 1/32: give back a quarter and hold.
        d.note_refused();
        d.close(&period(0.96, 168));
        assert_eq!(d.cap_ps(), 210 * US_PS);
        for _ in 0..HOLD_PERIODS {
            d.note_refused();
            d.close(&period(1.0, 210));
            assert_eq!(d.cap_ps(), 210 * US_PS);
        }
        d.note_refused();
        d.close(&period(1.0, 210));
        assert!(d.cap_ps() < 210 * US_PS);
    }

    #[test]
    fn a_light_load_a_bound_window_or_a_cap_that_stops_binding_leaves_no_cap() {
        let d = DepthCap::new();
        // 30 us in flight at 1.0 (latency 30 us, 3x unloaded): not queueing.
        d.close(&period(1.0, 30));
        assert_eq!(d.cap_ps(), OFF);
        // Deep, but the window already turned work away: the queue is here already.
        let mut p = period(1.0, 400);
        p.other_limit_bound = true;
        d.close(&p);
        assert_eq!(d.cap_ps(), OFF);
        // Deep, but a stalled period (nothing completed or dispatched): not evidence.
        let mut p = period(1.0, 400);
        p.completed_ps = 0;
        p.dispatched_ps = 0;
        d.close(&p);
        assert_eq!(d.cap_ps(), OFF);
        // Deep, but the other direction's work is in the disk too: not this lane's queue.
        let mut p = period(1.0, 400);
        p.other_lane_busy = true;
        d.close(&p);
        assert_eq!(d.cap_ps(), OFF);
        // Engaged, then a period it never refused anything: off.
        d.close(&period(1.0, 400));
        assert_eq!(d.cap_ps(), 300 * US_PS);
        d.close(&period(1.0, 100));
        assert_eq!(d.cap_ps(), OFF);
    }

    #[test]
    fn the_cap_never_goes_under_twice_the_pipe() {
        let d = DepthCap::new();
        d.close(&period(1.0, 256));
        for _ in 0..100 {
            d.note_refused();
            d.close(&period(1.0, 100));
        }
        // Pipe: 1.0 x 10 us = 10 us of model time; floor 20 us.
        assert_eq!(d.cap_ps(), 20 * US_PS);
    }

    #[test]
    fn a_trial_cuts_a_deep_lane_whose_latency_hides_its_queue_and_backs_off_when_it_loses() {
        let d = DepthCap::new();
        // 256 us in flight, but the unloaded latency reads 200 us (a dispatch round's CPU
        // time): Little's law sees no queue. The trial waits its first periods, then cuts.
        let deep = || {
            let mut p = period(1.0, 256);
            p.unloaded_ns = 200_000;
            p
        };
        for _ in 0..TRIAL_WAIT_MIN {
            assert_eq!(d.close(&deep()), Judged::Light);
        }
        assert_eq!(d.close(&deep()), Judged::Engaged);
        assert_eq!(d.cap_ps(), 192 * US_PS);
        // The rate held: it descends, under the law's floor (2 x 1.0 x 200 us) to its own.
        for _ in 0..100 {
            d.note_refused();
            let mut p = deep();
            p.in_flight_ps = d.cap_ps();
            d.close(&p);
        }
        assert_eq!(d.cap_ps(), 8 * US_PS);
        // A lane that needs its depth: the first cut loses rate, the cap goes off, and the
        // next trial waits twice as long.
        let d = DepthCap::new();
        for _ in 0..TRIAL_WAIT_MIN {
            d.close(&deep());
        }
        assert_eq!(d.close(&deep()), Judged::Engaged);
        d.note_refused();
        let mut lost = deep();
        lost.delivered_q16 = lost.delivered_q16 * 3 / 4;
        assert_eq!(d.close(&lost), Judged::Released);
        assert_eq!(d.cap_ps(), OFF);
        for _ in 0..2 * TRIAL_WAIT_MIN {
            assert_eq!(d.close(&deep()), Judged::Light);
        }
        assert_eq!(d.close(&deep()), Judged::Engaged);
        // A shallow lane (under 16 requests) is never tried.
        let d = DepthCap::new();
        for _ in 0..10 * TRIAL_WAIT_MIN {
            let mut p = period(1.0, 30);
            p.unloaded_ns = 200_000;
            assert_eq!(d.close(&p), Judged::Light);
        }
    }
}
