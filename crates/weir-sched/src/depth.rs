//! The depth cap: where the device is never the bottleneck (zram, where the CPU is the
//! limit), keep the queue in the scheduler anyway, at the depth past which the device gives
//! no more rate.
//!
//! The window is a latency goal of disk time. A device that finishes the whole client load
//! within the goal never fills it: on zram (~580 K 4 KiB reads a second) a goal is ~450
//! requests and the bench's two classes have 128, so every request goes straight in, the
//! fair queue never queues, and shares come out 1:1 where 10:1 was asked (session 7's quiet
//! run; `a_cpu_bound_device_holds_the_shares` in simulation). The fair queue can only impose
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

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Fixed point for rates (model disk time per second), as K's.
const Q: u32 = 16;
/// Periods the cap holds after a step down lost rate, before it tries another.
const HOLD_PERIODS: u64 = 32;
/// Off: no cap.
const OFF: u64 = u64::MAX;

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
}

impl DepthCap {
    pub(crate) fn new() -> Self {
        DepthCap {
            cap_ps: AtomicU64::new(OFF),
            reference_q16: AtomicU64::new(0),
            hold: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        }
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
                self.reference_q16.store(p.delivered_q16, Relaxed);
                self.hold.store(0, Relaxed);
                self.cap_ps
                    .store(p.in_flight_ps - p.in_flight_ps / 4, Relaxed);
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
        if p.delivered_q16 < reference - reference / 64 {
            self.hold.store(HOLD_PERIODS, Relaxed);
            self.cap_ps.store(cap + cap / 4, Relaxed);
            return Judged::Capped;
        }
        self.reference_q16.fetch_max(p.delivered_q16, Relaxed);
        if self.hold.load(Relaxed) > 0 {
            self.hold.fetch_sub(1, Relaxed);
            return Judged::Capped;
        }
        self.cap_ps.store((cap - cap / 8).max(floor_ps), Relaxed);
        Judged::Capped
    }
}

/// What a pipe of the period's rate and the lane's unloaded latency holds, in ps.
fn pipe_ps(p: &DepthPeriod) -> u64 {
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
}
