//! The lift: the drain speed above the model for a lane that only ever carries one direction
//! (docs/scheduler-rate.md sections 20-21). One rule for both directions: samples
//! of a direction may reach its lift ceiling (`max_read_speed_factor`,
//! `max_write_speed_factor`) while none of the other direction is in the disk and the lane
//! has never carried one; everywhere else they stop at `max_speed_factor`.

use super::{Lane, SharedBudget, DEFAULT_LATENCY_GOAL, SPEED_ONE, SPEED_SHIFT};
use crate::SchedError;
use std::sync::atomic::Ordering::Relaxed;
use weir_model::device::Direction;

/// The widest goal the share hold judges by (`hold_goal_ps`): the default goal, in
/// picoseconds.
const HOLD_GOAL_CAP_PS: u64 = DEFAULT_LATENCY_GOAL.as_nanos() as u64 * 1000;

impl SharedBudget {
    /// The lift's ceilings, per direction (`Direction::index`), checked; never under the
    /// ceiling of every sample.
    pub(super) fn lift_max_q16(
        config: &super::SchedConfig,
        speed_max_q16: u64,
    ) -> Result<[u64; 2], SchedError> {
        let read = ("max_read_speed_factor", config.max_read_speed_factor);
        let write = ("max_write_speed_factor", config.max_write_speed_factor);
        let mut caps = [speed_max_q16; 2];
        for (direction, (name, factor)) in [(Direction::Read, read), (Direction::Write, write)] {
            super::setting_within(
                name,
                factor,
                1.0..=16.0,
                "between 1.0 (never above the model) and 16.0",
            )?;
            caps[direction.index()] = ((factor * SPEED_ONE as f64) as u64).max(speed_max_q16);
        }
        Ok(caps)
    }

    /// A sample above the model (up to `cap`), judged on the queue proper: the work ahead
    /// less what the disk holds in service and in its pipeline (the speed x the unloaded
    /// latency), against the wait. The plain sample (`release`) counts that work as queue,
    /// which a disk with a pipeline drains without delaying anyone: with it, a read cap of
    /// 1.25 read a disk at its model's rate behind a 500 us pipeline as 1.25x and its in-disk
    /// p99 went over the goal's bound (1,416 us against 1,376,
    /// `a_disk_that_needs_more_than_a_goal_in_flight_gets_it_and_shares_hold`).
    /// 0 where the cap is the model's (the plain sample stands alone).
    pub(super) fn fast_sample_q16(
        &self,
        speed_q16: u64,
        ahead_ns: u64,
        unloaded_ns: u64,
        wait_ns: u64,
        cap: u64,
    ) -> u64 {
        if cap <= self.speed_max_q16 {
            return 0;
        }
        let held_ns = ((u128::from(unloaded_ns) * u128::from(speed_q16)) >> SPEED_SHIFT) as u64;
        let queue_ns = ahead_ns.saturating_sub(held_ns);
        ((u128::from(queue_ns) << SPEED_SHIFT) / u128::from(wait_ns.max(1))).min(u128::from(cap))
            as u64
    }

    /// The ceiling a drain-speed sample of `direction` may reach: its lift ceiling while no
    /// request of the other direction is in the disk and the lane has never carried one,
    /// else `max_speed_factor`.
    ///
    /// Why only then. Beside the other direction a sample says nothing about the lane's
    /// drain: a read finishes behind writes whose drain is not a read's, and a write's
    /// latency can be short because the host cached it (`max_speed_factor` 2.0 once made
    /// vda's mixed read p99 5x worse). And on a half-duplex disk (one lane) the window one
    /// direction lifts also admits the other: in the qos mix (vda) reads that completed
    /// between writes lifted the writes' window, the tail guard fell to 0.12-0.38 and the
    /// writes to 0.23-0.48 of alone (0.78-0.79 without; one loaded run). So a mixed
    /// load on a half-duplex model keeps the model's ceiling in both directions, while a
    /// disk that only reads, or only writes (vda overwriting at ~1.2x the 1.99 GB/s the
    /// model prices; a bucket at the model held 128 KiB writes at 0.90-0.94 of
    /// unscheduled), may be found faster than its model. On a duplex disk each
    /// direction's lane may still lift between the other's requests (the simulated mix's
    /// reads: 0.945 -> 0.955 of the real rate, section 20; bench/qos.sh's duplex vda mix:
    /// the write lane at 1.03-1.13, read p99 923 us inside its bound, section 21.1).
    pub(super) fn speed_cap_q16(&self, direction: Direction) -> u64 {
        let other = direction.other();
        if self.in_flight_requests[other.index()].load(Relaxed) == 0
            && !self.lane(direction).carried[other.index()].load(Relaxed)
        {
            self.lift_max_q16[direction.index()]
        } else {
            self.speed_max_q16
        }
    }

    /// The goal the share hold judges by: the latency goal, at most `HOLD_GOAL_CAP_PS`. It
    /// sizes the window the hold divides (`hold_window_ps`) and the quarter goal of work in
    /// the disk that makes a class drained or busy (`in_disk_floor_ps`, `queue/drained.rs`):
    /// both ask what the disk needs, and a wider goal only adds room for queue.
    pub(crate) fn hold_goal_ps(&self) -> u64 {
        self.goal_ps().min(HOLD_GOAL_CAP_PS)
    }

    /// The window the share hold (`queue/hold.rs`) divides into fair shares: the lane's
    /// window as if its drain speed were at most `max_speed_factor`, in picoseconds of
    /// model disk time. The lift widens the window because the disk drains faster than the
    /// model, and that depth is the disk's, not a class's: judged against the lifted
    /// window, a heavy class with all its requests in the disk reads as short of its fair
    /// share, the hold lets go, and the light class's requests join the queue inside the
    /// disk, where shares mean nothing. On vda's 4 KiB writes the margin was 1.4% (the
    /// bench's 1000-share class, 32 writes a shard at 7.24 us of model time, 231.6 us,
    /// against two thirds of its share of half a 750 us window, 227.3 us); the lift at
    /// 1.21 made that 275 us and the split fell to 0.37-0.89 and 1.33-2.21 of asked
    /// (docs/scheduler-rate.md 21.3; `tests/small_writes.rs` 0.45-0.80 and 1.24-2.24). Not
    /// the knee by Little's law (docs/scheduler-rate-lift.md section 22): that kept a disk
    /// whose latency grows past four requests, but not one with a 200 us pipeline (Little
    /// ratio 1.4-3.1, split 0.805 of asked), and it took the lift from the 128 KiB writes
    /// that need it.
    ///
    /// And as if the goal were at most `HOLD_GOAL_CAP_PS`: the hold asks whether
    /// a class is shallow *for the disk*, and the room a wider goal leaves is room for queue,
    /// not depth the disk needs. Judged against a 1.5 ms goal's window, the bench's 1000-share
    /// class (32 4 KiB reads a shard, all in the disk) read as shallow on vda, the hold let
    /// go, and the split came out 0.19-0.23 of asked at 1000:100 (1.000 at 0.75 ms); with no
    /// waiver at all it was 1.000 at 0.98-1.04 of unscheduled (docs/scheduler-matrix.md
    /// section 29). Simulated, behind a 300-500 us pipeline: 0.100 of asked at 1.5 ms
    /// (`tests/wide_goal.rs`).
    pub(crate) fn hold_window_ps(&self, direction: Direction) -> u64 {
        let lane = self.lane(direction);
        let mut window = u128::from(self.window_ps(lane));
        // A division only where the goal is over the cap (at the default goal, never).
        if self.goal_ps() > HOLD_GOAL_CAP_PS {
            window = window * u128::from(HOLD_GOAL_CAP_PS) / u128::from(self.goal_ps());
        }
        let speed = u128::from(lane.speed_q16.load(Relaxed).max(1));
        let speed_max = u128::from(self.speed_max_q16);
        if speed <= speed_max {
            return window as u64;
        }
        (window * speed_max / speed) as u64
    }

    /// Notes that `lane` was granted a request of `direction`. The first one ends the other
    /// direction's lift there at once: the lane's speed comes back to `max_speed_factor`, so
    /// the first request of a mix never enters a window the other direction widened.
    pub(super) fn note_carried(&self, lane: &Lane, direction: Direction) {
        let carried = &lane.carried[direction.index()];
        if carried.load(Relaxed) || carried.swap(true, Relaxed) {
            return;
        }
        lane.speed_q16.fetch_min(self.speed_max_q16, Relaxed);
    }
}
