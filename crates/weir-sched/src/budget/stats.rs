//! A snapshot of one lane of the budget, for metrics, tests and the docs.

use super::{SharedBudget, SPEED_ONE};
use crate::lane_counters::LaneCounters;
use crate::rate::RATE_ONE;
use std::sync::atomic::Ordering::Relaxed;
use weir_model::device::Direction;

/// A snapshot of one lane, for metrics, tests and the docs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LaneStats {
    /// Disk time in flight now, in seconds.
    pub in_flight_sec: f64,
    /// The current window (latency goal times measured speed), in seconds of disk time.
    pub window_sec: f64,
    /// Measured disk speed relative to the model: 1.0 = as modelled, 0.5 = twice as slow.
    pub speed_factor: f64,
    /// The tail guard's factor on the window (1.0 = none; below 1 the reads' tail latency
    /// held the writes back).
    pub tail_guard: f64,
    /// Run-time K: the rate the bucket refills at, relative to the model (1.0 = the model's
    /// rate; above 1 the disk was found to take more than the model says).
    pub rate_factor: f64,
    /// Disk time granted since start, in seconds.
    pub granted_sec: f64,
    /// The disk's pipeline the window holds on top of the goal (see `SharedBudget`'s
    /// `pipeline_ps`), in seconds of disk time; 0 while the delay signal sizes the window.
    pub pipeline_sec: f64,
    /// The depth cap (`depth.rs`) on disk time in flight, in seconds (0: none).
    pub depth_cap_sec: f64,
    /// Dispatch attempts the in-disk window turned away since start.
    pub window_refusals: u64,
    /// Dispatch attempts the token bucket turned away since start.
    pub bucket_refusals: u64,
    /// What the controllers did, per period of run-time K, since start.
    pub counters: LaneCounters,
    /// The unloaded latency the pipeline and the depth cap use (`unloaded_ns`), and the
    /// smallest in-disk latency ever seen in the lane's direction, in seconds.
    pub unloaded_sec: f64,
    /// The smallest in-disk latency ever seen in the lane's direction, in seconds.
    pub min_latency_sec: f64,
}

impl SharedBudget {
    /// A snapshot of the budget of `direction` (both directions share one on half-duplex disks).
    pub fn lane_stats(&self, direction: Direction) -> LaneStats {
        let lane = self.lane(direction);
        LaneStats {
            in_flight_sec: lane.in_flight_ps.load(Relaxed) as f64 / 1e12,
            window_sec: self.window_ps(lane) as f64 / 1e12,
            speed_factor: lane.speed_q16.load(Relaxed) as f64 / SPEED_ONE as f64,
            tail_guard: lane.guard_q16.load(Relaxed) as f64 / SPEED_ONE as f64,
            rate_factor: self.rate_q16(lane) as f64 / RATE_ONE as f64,
            granted_sec: lane.tail_ps.load(Relaxed) as f64 / 1e12,
            pipeline_sec: self.pipeline_ps(lane) as f64 / 1e12,
            depth_cap_sec: match lane.depth.cap_ps() {
                u64::MAX => 0.0,
                ps => ps as f64 / 1e12,
            },
            window_refusals: lane.window_refusals.load(Relaxed),
            bucket_refusals: lane.bucket_refusals.load(Relaxed),
            counters: LaneCounters {
                disk_knee_cuts: lane.rate.disk_knees(),
                disk_knee_misses: lane.rate.disk_knee_misses(),
                ..lane.counters.snapshot(self.period_ns as f64 / 1e9)
            },
            unloaded_sec: self.unloaded_ns(lane) as f64 / 1e9,
            min_latency_sec: match self.base_latency_ns[direction.index()].load(Relaxed) {
                u64::MAX => 0.0,
                ns => ns as f64 / 1e9,
            },
        }
    }
}
