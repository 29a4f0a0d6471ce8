//! The disk's pipeline the in-disk window holds on top of the goal, and the classes that
//! hold it shut (docs/scheduler-rate.md sections 9-10).

use super::{Lane, SharedBudget, SPEED_ONE};
use std::sync::atomic::Ordering::Relaxed;
use weir_model::device::Direction;

impl SharedBudget {
    /// The disk's pipeline: the unloaded latency every request of the lane pays however
    /// short the queue (the smaller direction's on a half-duplex lane), at most one goal.
    ///
    /// The goal bounds the *queue* a request finds in the disk; the window counts every
    /// request in it, including those still in the device's own round trip. A window of a goal
    /// of model time alone starves a disk whose requests spend longer than that in flight
    /// unqueued: this project's virtio disk gives its 4 KiB rate only with more reads in flight
    /// than a goal holds (46 at 61K IOPS), so the scheduler ran 4 KiB loads at 0.70-0.86 of
    /// unscheduled with K at its floor and the window full; in simulation a 1 ms pipeline held
    /// 4 KiB reads to 0.72 (`a_disk_that_needs_more_than_a_goal_in_flight_gets_it_and_shares_hold`).
    /// The drain-speed samples already subtract this latency; the window now adds it back, so
    /// the disk keeps its pipeline full and a goal's worth of queue on top. Capped at a goal so
    /// a latency spike measured while unloaded cannot open the window wide.
    pub(super) fn pipeline_ps(&self, lane: &Lane) -> u64 {
        // Only while the drain speed sits at its cap: the disk drains a full window at least
        // as fast as the model says, so the latency it adds beyond the queue is not queueing.
        // Below the cap the delay signal is what sizes the window. The latency is the
        // smallest mean (EMA 1/8) of requests that found the lane empty on their own, never a
        // re-measurement's, and never rises: a neighbour's queue is in every later unloaded
        // latency (the re-measurement's, and the first requests' after it: 89 -> 298 us in
        // a second), and adding it opened the window until the 1000-share class had all
        // its requests in the disk (ratio 1.5-3.2:1 in
        // `a_busy_neighbour_cannot_talk_the_drain_speed_down`).
        // Nor while the tail guard holds the window: the reads' tail is the promise itself
        // (scheduler-rate.md section 3), and a pipeline added under it would only be taken
        // back by more bad reads.
        // Nor while a class has all its work in the disk and nothing queued: the room the
        // pipeline adds would go to the other classes alone (`queue/drained.rs`).
        let speed = lane.speed_q16.load(Relaxed);
        if speed < self.speed_max_q16 - self.speed_max_q16 / 32
            || lane.guard_q16.load(Relaxed) < SPEED_ONE
            || lane.drained_classes.load(Relaxed) > 0
        {
            return 0;
        }
        let ns = self.unloaded_ns(lane);
        // A goal's window already holds a pipeline up to a quarter of the goal (every simulated
        // disk of `tests/runtime_k.rs`, 65-180 us unloaded, reaches its rate in it); only the
        // rest is added. All of it made the window wider than the 1000-share class's 64
        // requests beside a neighbour (89 us of pipeline: ratio 8.5:1), so the scheduler
        // stopped holding the backlog that makes shares hold.
        ns.saturating_mul(1000)
            .saturating_sub(self.goal_ps / 4)
            .min(self.goal_ps)
    }

    /// The lane's unloaded latency: the smallest mean latency of requests that found it
    /// empty by themselves (the smaller direction's on a half-duplex lane); 0 before one has.
    pub(super) fn unloaded_ns(&self, lane: &Lane) -> u64 {
        let solo_ns = |dir: Direction| match self.pipeline_min_ns[dir.index()].load(Relaxed) {
            u64::MAX => 0,
            ns => ns,
        };
        if self.model.duplex() {
            let dir = if std::ptr::eq(lane, &self.lanes[0]) {
                Direction::Read
            } else {
                Direction::Write
            };
            solo_ns(dir)
        } else {
            match (solo_ns(Direction::Read), solo_ns(Direction::Write)) {
                (0, w) => w,
                (r, 0) => r,
                (r, w) => r.min(w),
            }
        }
    }

    /// A class of some shard started (`true`) or stopped being drained on `direction`'s
    /// lane: nothing queued, a quarter goal or more of its disk time in the lane.
    pub(crate) fn note_drained(&self, direction: Direction, drained: bool) {
        let counter = &self.lane(direction).drained_classes;
        if drained {
            counter.fetch_add(1, Relaxed);
        } else {
            // Never below 0, whatever order the shards report in.
            let _ = counter.fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1));
        }
    }
}

impl SharedBudget {
    /// Whether any class of any shard is drained on `direction`'s lane (the share hold's
    /// cheap first test, `queue/hold.rs`).
    pub(crate) fn any_drained(&self, direction: Direction) -> bool {
        self.lane(direction).drained_classes.load(Relaxed) > 0
    }
}
