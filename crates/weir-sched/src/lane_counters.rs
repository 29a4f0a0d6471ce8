//! What each lane's controllers did over a run, counted once per period of run-time K (4
//! goals), so a bench row can say which of them held the disk and for how long (a zram row
//! at 1:1 whatever the shares must say whether the depth cap ever engaged).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::depth::Judged;

/// Per-lane totals since the budget was built. Multiply a period count by `period_sec` for
/// the time it covers.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LaneCounters {
    /// Length of one period, in seconds.
    pub period_sec: f64,
    /// Periods closed.
    pub periods: u64,
    /// Periods in which the in-disk window turned a request away.
    pub window_bound_periods: u64,
    /// Periods in which the token bucket turned a request away.
    pub bucket_bound_periods: u64,
    /// Periods that ended with the disk's pipeline in the window (`budget/pipeline.rs`).
    pub pipeline_open_periods: u64,
    /// Periods that ended with the share gate shut: a class drained on the lane, so the
    /// window held no pipeline (`queue/drained.rs`).
    pub share_gate_periods: u64,
    /// Periods that ended with the unloaded latency being re-measured (the window shut to one
    /// request at a time: `maybe_probe_solo`).
    pub solo_probe_periods: u64,
    /// Times the depth cap engaged, and the periods it was on (`depth.rs`).
    pub depth_cap_engagements: u64,
    /// Periods the depth cap was on.
    pub depth_cap_periods: u64,
    /// Periods with no cap whose device held four pipes or more (the cap's threshold), and
    /// why the cap stayed off: the window or bucket bound, the other lane was busy, or the
    /// period was stalled. A period may count under more than one reason.
    pub depth_queueing_periods: u64,
    /// Of those, periods the window or the bucket bound.
    pub depth_blocked_bound: u64,
    /// Of those, periods the other lane was busy.
    pub depth_blocked_other_lane: u64,
    /// Of those, periods that stalled.
    pub depth_blocked_idle: u64,
    /// The largest and the last Little's-law ratio (mean latency over unloaded latency) a
    /// period showed; the cap engages at 4.
    pub queue_ratio_max: f64,
    /// The last period's Little's-law ratio.
    pub queue_ratio_last: f64,
    /// Times run-time K came down because the disk held a standing queue (`rate/disk.rs`),
    /// and times such a cut drained nothing (the signal then backs off).
    pub disk_knee_cuts: u64,
    /// Cuts of K for the disk's queue that drained nothing.
    pub disk_knee_misses: u64,
}

/// The atomics behind `LaneCounters`. Only the shard that closes a period writes them.
#[derive(Debug, Default)]
pub(crate) struct PeriodCounters {
    periods: AtomicU64,
    window_bound: AtomicU64,
    bucket_bound: AtomicU64,
    pipeline_open: AtomicU64,
    share_gate: AtomicU64,
    solo_probe: AtomicU64,
    cap_engagements: AtomicU64,
    cap_periods: AtomicU64,
    queueing: AtomicU64,
    blocked_bound: AtomicU64,
    blocked_other_lane: AtomicU64,
    blocked_idle: AtomicU64,
    ratio_max_x16: AtomicU64,
    ratio_last_x16: AtomicU64,
}

/// One closed period, as the counters see it.
pub(crate) struct PeriodSeen {
    pub window_bound: bool,
    pub bucket_bound: bool,
    pub pipeline_open: bool,
    pub share_gate_shut: bool,
    pub solo_probe: bool,
    pub judged: Judged,
    pub queue_ratio_x16: u64,
}

fn bump(counter: &AtomicU64, yes: bool) {
    if yes {
        counter.fetch_add(1, Relaxed);
    }
}

impl PeriodCounters {
    pub(crate) fn count(&self, seen: &PeriodSeen) {
        bump(&self.periods, true);
        bump(&self.window_bound, seen.window_bound);
        bump(&self.bucket_bound, seen.bucket_bound);
        bump(&self.pipeline_open, seen.pipeline_open);
        bump(&self.share_gate, seen.share_gate_shut);
        bump(&self.solo_probe, seen.solo_probe);
        match seen.judged {
            Judged::Light | Judged::Released => {}
            Judged::Engaged => {
                bump(&self.cap_engagements, true);
                bump(&self.cap_periods, true);
            }
            Judged::Capped => bump(&self.cap_periods, true),
            Judged::Blocked {
                bound,
                other_lane,
                idle,
            } => {
                bump(&self.queueing, true);
                bump(&self.blocked_bound, bound);
                bump(&self.blocked_other_lane, other_lane);
                bump(&self.blocked_idle, idle);
            }
        }
        self.ratio_max_x16.fetch_max(seen.queue_ratio_x16, Relaxed);
        self.ratio_last_x16.store(seen.queue_ratio_x16, Relaxed);
    }

    pub(crate) fn snapshot(&self, period_sec: f64) -> LaneCounters {
        let get = |c: &AtomicU64| c.load(Relaxed);
        LaneCounters {
            period_sec,
            periods: get(&self.periods),
            window_bound_periods: get(&self.window_bound),
            bucket_bound_periods: get(&self.bucket_bound),
            pipeline_open_periods: get(&self.pipeline_open),
            share_gate_periods: get(&self.share_gate),
            solo_probe_periods: get(&self.solo_probe),
            depth_cap_engagements: get(&self.cap_engagements),
            depth_cap_periods: get(&self.cap_periods),
            depth_queueing_periods: get(&self.queueing),
            depth_blocked_bound: get(&self.blocked_bound),
            depth_blocked_other_lane: get(&self.blocked_other_lane),
            depth_blocked_idle: get(&self.blocked_idle),
            queue_ratio_max: get(&self.ratio_max_x16) as f64 / 16.0,
            queue_ratio_last: get(&self.ratio_last_x16) as f64 / 16.0,
            // Filled from run-time K's own counters (`SharedBudget::lane_stats`).
            disk_knee_cuts: 0,
            disk_knee_misses: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_judgement_lands_in_its_own_counter() {
        let c = PeriodCounters::default();
        let seen = |judged, ratio| PeriodSeen {
            window_bound: false,
            bucket_bound: true,
            pipeline_open: false,
            share_gate_shut: true,
            solo_probe: false,
            judged,
            queue_ratio_x16: ratio,
        };
        c.count(&seen(Judged::Light, 16));
        c.count(&seen(
            Judged::Blocked {
                bound: true,
                other_lane: false,
                idle: true,
            },
            80,
        ));
        c.count(&seen(Judged::Engaged, 96));
        c.count(&seen(Judged::Capped, 32));
        let s = c.snapshot(0.003);
        assert_eq!(s.periods, 4);
        assert_eq!((s.bucket_bound_periods, s.window_bound_periods), (4, 0));
        assert_eq!((s.share_gate_periods, s.solo_probe_periods), (4, 0));
        assert_eq!((s.depth_cap_engagements, s.depth_cap_periods), (1, 2));
        assert_eq!(s.depth_queueing_periods, 1);
        assert_eq!(
            (
                s.depth_blocked_bound,
                s.depth_blocked_other_lane,
                s.depth_blocked_idle
            ),
            (1, 0, 1)
        );
        assert_eq!((s.queue_ratio_max, s.queue_ratio_last), (6.0, 2.0));
    }
}
