//! The scheduler's settings, shared by every shard of one disk.

use std::time::Duration;

/// The latency goal when none is given (Seastar's: 1.5 x its 0.5 ms task quota). The share
/// hold also judges by at most this goal (`hold_goal_ps`, `budget/lift.rs`).
pub const DEFAULT_LATENCY_GOAL: Duration = Duration::from_micros(750);

/// Scheduler settings shared by all shards of one disk.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedConfig {
    /// The in-disk latency the scheduler aims at: about this much disk time is in flight.
    pub latency_goal: Duration,
    /// How far (in disk time) a class waking from idle may run ahead of the busy classes.
    /// Seastar hard-codes 5 ms (seastar#1214); weir defaults to the latency goal.
    pub head_start: Option<Duration>,
    /// Follow the disk down when completions show it is slower than the model.
    pub feedback: bool,
    /// How far above the model the feedback may raise the disk's *drain speed*, which sizes
    /// the in-disk window. The default, 1.0, never lets the window hold more than one goal of
    /// model time: on this project's virtio disk 2.0 raised the mixed read p99 from ~1.1 ms
    /// to ~5.5 ms without more write throughput (the host cache absorbs writes in bursts, so
    /// short latencies overstate the speed and the window grew). The rate at which work may
    /// *enter* the disk is `max_rate_factor`'s business.
    pub max_speed_factor: f64,
    /// The same ceiling for samples taken from reads while no write is in the disk, on a lane
    /// that has never carried a write (default
    /// 1.25; never under `max_speed_factor`). A read's latency has no host cache or filesystem
    /// work in it, so a read that drained a queue faster than modelled is evidence that the
    /// disk is faster: this project's virtio disk gives ~1.07-1.15x tune's 4 KiB read rate
    /// only with ~90-128 reads in flight, and a window capped at one goal of model time held
    /// pure 4 KiB reads to 0.88 of unscheduled (docs/scheduler-rate.md section 20). The
    /// window stays about one goal of the disk's *real* drain time. The first write sample,
    /// or read beside a write, brings the speed back under `max_speed_factor`. Not higher:
    /// the samples read a pipeline that is not queueing as a fast drain, and at 2.0 the
    /// speed overshot to 1.6-2.0 on a 1.15x disk, the window passed the bench's 1000-share
    /// class and its ratio fell to 0.10-0.18 of asked (`tests/fast_drain.rs`).
    pub max_read_speed_factor: f64,
    /// The same ceiling for write samples with no read in the disk, on a lane that has never
    /// carried a read (`budget/lift.rs`, one rule for both directions). Default 1.25. At 1.25
    /// this project's virtio disk overwrote 128 KiB at 1.01 / 0.94 / 1.01 of unscheduled
    /// (1000:100 / 1:1 / 100:1000; 0.95 / 0.90 / 0.93 without), but 4 KiB writes lost the
    /// split (0.37-0.89 and 1.33-2.21 of asked, docs/scheduler-rate.md 21.3): the share hold
    /// judged the heavy class's fair share against the lifted window and let go. It now
    /// judges against the window at `max_speed_factor` (`hold_window_ps`), so the lift is on
    /// (docs/scheduler-rate-lift.md section 22).
    pub max_write_speed_factor: f64,
    /// How far above the model run-time K (the token bucket's refill rate, found from
    /// completions: `rate.rs`) may rise while the disk keeps up. 1.0 keeps the model's rate
    /// as a ceiling (K still falls to a slower disk's rate). Default 4.0.
    pub max_rate_factor: f64,
    /// Let run-time K come down at a knee the bucket never reached: a slack bucket (or a
    /// probing one) under which the disk holds a standing queue (`rate/disk.rs`;
    /// docs/scheduler-rate.md section 17). Off by default: it holds the shares on a disk the
    /// model overprices (0.7-0.9x in simulation), but it also takes a single class's queue
    /// out of the disk whatever the latency goal (goal 2 ms: 264 us mean in-disk latency
    /// against 1,591 us, `the_latency_goal_steers_what_is_in_flight`), which that test forbids.
    pub knee_in_disk: bool,
    /// Steer the write window by the reads' tail latency (see `SharedBudget::release`): the
    /// window that holds writes shrinks when more than `1 - tail_quantile` of the reads that
    /// ran beside writes waited longer than the goal in the disk, and grows otherwise.
    pub tail_guard: bool,
    /// The read latency quantile the tail guard holds within the goal (0.99: the p99).
    pub tail_quantile: f64,
    /// Number of shards that will share the budget (one `ShardQueue` each).
    pub shards: usize,
    /// No capacity limit at all: classes are still ordered fairly and measured, but every
    /// queued request is dispatched at once (`weir run --no-scheduler`).
    pub unlimited: bool,
}

impl Default for SchedConfig {
    fn default() -> Self {
        SchedConfig {
            latency_goal: DEFAULT_LATENCY_GOAL,
            head_start: None,
            feedback: true,
            max_speed_factor: 1.0,
            max_read_speed_factor: 1.25,
            max_write_speed_factor: 1.25,
            max_rate_factor: 4.0,
            knee_in_disk: false,
            tail_guard: true,
            tail_quantile: 0.99,
            shards: 1,
            unlimited: false,
        }
    }
}
