//! K down at a knee the bucket never reached: the queue is in the disk.
//!
//! Run-time K learns the disk's rate only while the bucket binds (`rate.rs`): a knee is a
//! saturated bucket under which the work in the disk grows. When the model overprices the
//! disk, neither limit may ever bind: on this project's virtio disk tune priced 4 KiB writes
//! at 183.5 K IOPS where the disk gave 164 K, the window (a goal plus the pipeline) held more
//! writes than the bench has, K started at 1.0 and its floor (the drain speed less 1/32)
//! kept it there, so every request went straight into the disk, the queue was the disk's
//! and the 1000:100 split came out 0.22 / 5.4 of asked (docs/scheduler-rate.md sections 16-17).
//!
//! The evidence is a period in which the scheduler offered more than the disk took (the
//! delivered rate under K by more than 1/16) while the disk held a queue (by Little's law,
//! its mean work in flight at least 3/2 of what a pipe of that rate and the unloaded latency
//! holds: a third of every request's time in it was queue), with neither the window nor the
//! bucket turning anything away, and the other lane of a duplex disk idle (whose work would
//! lengthen this lane's latency without being its queue). That is the knee: more depth gave
//! no more rate. K goes to just under the delivered rate, less half the disk's queue over
//! the next period, and from there the ordinary loop (probe while the disk keeps up, knee
//! when the pile grows) holds the bucket at the disk's real rate and the backlog in the
//! scheduler. A light load never shows it: its requests find no queue in the disk (a mean
//! latency near the unloaded one), so K never creeps down.
//!
//! Below the drain speed's floor: K's floor is normally the drain speed less 1/32 (a
//! read/write mix must not pace the writes below what the delay signal says the disk drains,
//! `rate_bounds`), but the drain speed reads at its cap on exactly these disks (its samples
//! count requests in the pipeline as queue ahead), so the floor is lifted once the disk's own
//! queue proved the knee, until the window binds or the other lane has work again: then the
//! latency signals, not K, say how much the disk takes.

use super::{rate_of, RateControl, Verdict, MARGIN_DIV, RATE_MIN, STEP_AFTER_KNEE};

/// Periods the signal is ignored after a cut that drained nothing, at first and at most.
pub(super) const BACKOFF_MIN: u64 = 16;
const BACKOFF_MAX: u64 = 1024;
use std::sync::atomic::Ordering::Relaxed;

/// One period as the disk-queue knee judges it (picoseconds of model time, rates fixed point).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DiskQueue {
    pub elapsed_ps: u64,
    pub dispatched_ps: u64,
    pub completed_ps: u64,
    /// Mean (or end, if larger) work in flight.
    pub in_flight_ps: u64,
    /// What a pipe of the delivered rate and the unloaded latency holds (0: unknown).
    pub pipe_ps: u64,
    pub largest_piece_ps: u64,
    pub window_refused: bool,
    pub bucket_refused: bool,
    pub other_lane_busy: bool,
    /// A class has all its work in the disk and nothing queued (`queue/drained.rs`).
    pub class_drained: bool,
    /// The work in flight grew by more than one piece over the period.
    pub grew: bool,
    /// The depth cap (`depth.rs`) is on: it already holds the queue in the scheduler, and
    /// cheaper (on a CPU-bound device a bucket under the delivered rate cost 3% of it).
    pub depth_capped: bool,
}

/// The disk held a queue: by Little's law its mean work in flight was at least 5/4 of
/// what a pipe of the delivered rate and the unloaded latency holds (a fifth of every
/// request's time in it was queue). 5/4, not more: at the bench's depth the 1000-share class
/// has 64 requests, and a disk whose pipe holds 51 (0.9x of a 183.5 K model behind a 300 us
/// pipeline) must not hold more than that class has (3/2 of the pipe: 0.75 of asked).
fn standing(q: &DiskQueue) -> bool {
    q.pipe_ps > 0 && q.in_flight_ps >= q.pipe_ps + q.pipe_ps / 8
}

/// Mean latency over unloaded latency, less one, x 16 (Little's law: in flight over pipe).
fn excess_x16(q: &DiskQueue) -> u64 {
    let ratio = (u128::from(q.in_flight_ps) * 16 / u128::from(q.pipe_ps.max(1))) as u64;
    ratio.saturating_sub(16)
}

/// The next K when the period shows the knee in the disk, else `None`. Under a slack bucket
/// (`Hold`) the scheduler must also have offered more than the disk took; where the bucket
/// already binds (`Probe`, `Knee`, `Window`) a queue past 9/8 of the pipe that grew by a
/// piece is enough: the loop of `rate.rs` calls a knee only at a growth of an eighth of the
/// window, and on a window wider than the 1000-share class has requests that let the queue
/// grow past them before K came down.
pub(crate) fn judge_disk_queue(verdict: Verdict, rate_q16: u64, q: &DiskQueue) -> Option<u64> {
    let delivered = rate_of(q.completed_ps, q.elapsed_ps);
    let busy = q.completed_ps >= 8 * q.largest_piece_ps.max(1);
    // A window that turned work away holds the disk's queue at the latency goal on purpose
    // (the goal steers what is in flight: `the_latency_goal_steers_what_is_in_flight`), and
    // the tail guard's window is the promise to the reads (scheduler-rate.md section 3):
    // the latency signals own that period, unless a class has every request in the disk
    // and none queued: then the goal's queue is what breaks the shares.
    let window_owns = q.window_refused && !q.class_drained;
    if window_owns || q.other_lane_busy || q.depth_capped || !busy || !standing(q) {
        return None;
    }
    if verdict == Verdict::Hold {
        let offered_more = delivered < rate_q16 - rate_q16 / 16;
        if q.bucket_refused || !offered_more {
            return None;
        }
    } else if verdict != Verdict::Probe || !q.grew {
        // A knee or window verdict already brought K down its own way (a start-up pile cut
        // twice put a goal-steered disk's queue in the scheduler whatever the goal:
        // `the_latency_goal_steers_what_is_in_flight`).
        // Where a limit binds, only a queue that grows is the knee: a standing one may be
        // latency that is not ours (a neighbour's requests: K fell to 0.17 and the classes
        // to 0.32 of unscheduled in `a_busy_neighbour_cannot_talk_the_drain_speed_down`).
        return None;
    }
    // Drain half the disk's queue over the next period, then cruise just under delivered.
    let pile = rate_of((q.in_flight_ps - q.pipe_ps) / 2, q.elapsed_ps);
    let cruise = delivered - delivered / MARGIN_DIV;
    Some(cruise.saturating_sub(pile).max(cruise / 2))
}

impl RateControl {
    /// After a period `verdict` closed: lowers K if the period shows the knee in the disk.
    /// Returns whether it did (the caller drops the bucket's banked credit, as for a knee).
    ///
    /// A cut must drain a queue: two periods after it (one to drain, one to cruise) the
    /// disk's queue is gone, or both its work and the latency it adds over the unloaded one
    /// (as a ratio) are at most half what they were: a neighbour's queue adds the same
    /// latency at any K of ours, while our own work in flight and the pipe both shrink with
    /// K, so the work alone halves under a deep enough cut. If not, the latency over the unloaded one was not
    /// this lane's queue (a neighbour's requests, or an unloaded latency measured low): K
    /// goes back to where it was before the cut, the floor with it, and the signal is
    /// ignored for a back-off that doubles on each such miss (16 to 1,024 periods), as the
    /// depth cap's trial does. Without this a neighbour's queue ratcheted K down 1/32 a
    /// period, to 0.14 (`a_busy_neighbour_cannot_talk_the_drain_speed_down`).
    pub(crate) fn close_disk_queue(&self, verdict: Verdict, q: &DiskQueue) -> bool {
        if q.other_lane_busy {
            self.floor_lifted.store(false, Relaxed);
        }
        match self.drain_due.load(Relaxed) {
            0 => {}
            1 => {
                self.drain_due.store(0, Relaxed);
                let (queue_ps, excess_x16) =
                    (q.in_flight_ps.saturating_sub(q.pipe_ps), excess_x16(q));
                let halved = queue_ps <= self.queue_at_cut_ps.load(Relaxed) / 2
                    && excess_x16 <= self.excess_at_cut_x16.load(Relaxed) / 2;
                if standing(q) && !halved && !q.other_lane_busy {
                    self.disk_knee_misses.fetch_add(1, Relaxed);
                    self.rate_q16
                        .fetch_max(self.before_cut_q16.load(Relaxed), Relaxed);
                    self.floor_lifted.store(false, Relaxed);
                    self.cruise_q16.store(0, Relaxed);
                    let backoff = self.standing_backoff.load(Relaxed);
                    self.standing_wait.store(backoff, Relaxed);
                    self.standing_backoff
                        .store((backoff * 2).min(BACKOFF_MAX), Relaxed);
                    return false;
                }
                self.standing_backoff.store(BACKOFF_MIN, Relaxed);
            }
            due => {
                self.drain_due.store(due - 1, Relaxed);
                return false;
            }
        }
        let wait = self.standing_wait.load(Relaxed);
        if wait > 0 {
            self.standing_wait.store(wait - 1, Relaxed);
            return false;
        }
        let rate = self.rate_q16.load(Relaxed);
        let Some(next) = judge_disk_queue(verdict, rate, q) else {
            return false;
        };
        let delivered = rate_of(q.completed_ps, q.elapsed_ps);
        self.step_q16.store(STEP_AFTER_KNEE, Relaxed);
        self.cruise_q16
            .store((delivered - delivered / MARGIN_DIV).max(RATE_MIN), Relaxed);
        self.rate_q16.store(next.clamp(RATE_MIN, rate), Relaxed);
        self.before_cut_q16.store(rate, Relaxed);
        self.excess_at_cut_x16.store(excess_x16(q), Relaxed);
        self.queue_at_cut_ps
            .store(q.in_flight_ps.saturating_sub(q.pipe_ps), Relaxed);
        self.floor_lifted.store(true, Relaxed);
        self.drain_due.store(2, Relaxed);
        self.disk_knees.fetch_add(1, Relaxed);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::RATE_ONE;

    const US_PS: u64 = 1_000_000;

    /// A 3 ms period that delivered 0.6 of the model with 700 us in flight and a 200 us pipe.
    fn deep() -> DiskQueue {
        DiskQueue {
            elapsed_ps: 3_000 * US_PS,
            dispatched_ps: 1_800 * US_PS,
            completed_ps: 1_800 * US_PS,
            in_flight_ps: 700 * US_PS,
            pipe_ps: 200 * US_PS,
            largest_piece_ps: 5 * US_PS,
            window_refused: false,
            bucket_refused: false,
            other_lane_busy: false,
            class_drained: false,
            grew: true,
            depth_capped: false,
        }
    }

    #[test]
    fn a_queue_in_the_disk_under_a_slack_bucket_brings_k_under_the_delivered_rate() {
        let next = judge_disk_queue(Verdict::Hold, RATE_ONE, &deep()).expect("knee") as f64
            / RATE_ONE as f64;
        // 0.6 less 1/32, less half the 500 us queue over the 3 ms period.
        let want = 0.6 * 31.0 / 32.0 - 250.0 / 3000.0;
        assert!((next - want).abs() < 1e-3, "{next} against {want}");
    }

    #[test]
    fn a_light_load_or_a_bound_limit_never_lowers_k() {
        // No queue in the disk: mean latency near the unloaded one.
        let light = DiskQueue {
            in_flight_ps: 220 * US_PS,
            ..deep()
        };
        assert_eq!(judge_disk_queue(Verdict::Hold, RATE_ONE, &light), None);
        // The disk took what K offered: nothing to learn.
        assert_eq!(
            judge_disk_queue(Verdict::Hold, RATE_ONE * 6 / 10, &deep()),
            None
        );
        // A limit bound, or the other lane was busy: the latency signals own the period.
        for q in [
            DiskQueue {
                window_refused: true,
                ..deep()
            },
            DiskQueue {
                bucket_refused: true,
                ..deep()
            },
            DiskQueue {
                other_lane_busy: true,
                ..deep()
            },
            DiskQueue {
                pipe_ps: 0,
                ..deep()
            },
        ] {
            assert_eq!(judge_disk_queue(Verdict::Hold, RATE_ONE, &q), None, "{q:?}");
        }
        // Idle.
        let idle = DiskQueue {
            completed_ps: 0,
            ..deep()
        };
        assert_eq!(judge_disk_queue(Verdict::Hold, RATE_ONE, &idle), None);
    }

    #[test]
    fn where_the_bucket_binds_a_standing_queue_alone_is_the_knee() {
        // The bucket bound (a probe): the disk took what K offered, but its queue stood.
        let bound = DiskQueue {
            bucket_refused: true,
            ..deep()
        };
        assert!(judge_disk_queue(Verdict::Probe, RATE_ONE * 6 / 10, &bound).is_some());
        let light = DiskQueue {
            in_flight_ps: 220 * US_PS,
            ..bound
        };
        assert_eq!(judge_disk_queue(Verdict::Probe, RATE_ONE, &light), None);
    }

    #[test]
    fn the_knee_lifts_k_s_floor_and_a_cut_that_drains_nothing_is_undone_and_backs_off() {
        let control = RateControl::new(false);
        assert!(control.close_disk_queue(Verdict::Hold, &deep()));
        assert!(control.floor_lifted.load(Relaxed));
        assert!(control.rate_q16() < RATE_ONE * 6 / 10);
        // One period to drain; the next still shows the queue: it was not this lane's.
        assert!(!control.close_disk_queue(Verdict::Hold, &deep()));
        assert!(!control.close_disk_queue(Verdict::Hold, &deep()));
        assert_eq!(control.disk_knee_misses(), 1);
        assert_eq!(control.rate_q16(), RATE_ONE);
        assert!(!control.floor_lifted.load(Relaxed));
        // No cut for the back-off's 16 periods, then one may come again.
        for _ in 0..BACKOFF_MIN {
            assert!(!control.close_disk_queue(Verdict::Hold, &deep()));
        }
        assert!(control.close_disk_queue(Verdict::Hold, &deep()));
        // A cut whose queue drained keeps K down; the other lane busy restores the floor.
        let drained = DiskQueue {
            in_flight_ps: 200 * US_PS,
            ..deep()
        };
        control.close_disk_queue(Verdict::Probe, &drained);
        control.close_disk_queue(Verdict::Probe, &drained);
        assert_eq!(control.disk_knee_misses(), 1);
        assert!(control.rate_q16() < RATE_ONE * 6 / 10);
        let beside = DiskQueue {
            other_lane_busy: true,
            ..deep()
        };
        control.close_disk_queue(Verdict::Hold, &beside);
        assert!(!control.floor_lifted.load(Relaxed));
    }
}
