//! The scheduler's settings, shared by every shard of one disk.

use crate::SchedError;
use std::time::Duration;

/// The latency goal when none is given (Seastar's: 1.5 x its 0.5 ms task quota). The share
/// hold also judges by at most this goal (`hold_goal_ps`, `budget/lift.rs`).
pub const DEFAULT_LATENCY_GOAL: Duration = Duration::from_micros(750);

/// Scheduler settings shared by all shards of one disk. Build them with
/// [`SchedConfig::builder`], which checks them, or from [`Default`]:
///
/// ```
/// use weir_sched::SchedConfig;
///
/// let config = SchedConfig { shards: 8, ..SchedConfig::default() };
/// assert!(config.validate().is_ok());
/// ```
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

impl SchedConfig {
    /// A builder that starts from the defaults and checks every setting in
    /// [`build`](SchedConfigBuilder::build).
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_sched::{SchedConfig, SchedError};
    ///
    /// let config = SchedConfig::builder()
    ///     .latency_goal(Duration::from_millis(1))
    ///     .shards(4)
    ///     .build()?;
    /// assert_eq!(config.shards, 4);
    ///
    /// let refused = SchedConfig::builder().tail_quantile(1.5).build();
    /// assert!(matches!(refused, Err(SchedError::Setting { name: "tail_quantile", .. })));
    /// # Ok::<(), SchedError>(())
    /// ```
    pub fn builder() -> SchedConfigBuilder {
        SchedConfigBuilder {
            config: SchedConfig::default(),
        }
    }

    /// Checks every setting against what [`SharedBudget::new`](crate::SharedBudget::new)
    /// accepts; the error names the setting, its value and what to give instead.
    pub fn validate(&self) -> Result<(), SchedError> {
        if self.latency_goal.is_zero() {
            return Err(SchedError::ZeroGoal);
        }
        if self.shards == 0 || self.shards > MAX_SHARDS {
            return Err(SchedError::Shards {
                shards: self.shards,
            });
        }
        setting_within(
            "max_speed_factor",
            self.max_speed_factor,
            1.0..=16.0,
            "between 1.0 and 16.0",
        )?;
        let above_the_model = [
            ("max_read_speed_factor", self.max_read_speed_factor),
            ("max_write_speed_factor", self.max_write_speed_factor),
            ("max_rate_factor", self.max_rate_factor),
        ];
        for (name, value) in above_the_model {
            setting_within(
                name,
                value,
                1.0..=16.0,
                "between 1.0 (never above the model) and 16.0",
            )?;
        }
        setting_within(
            "tail_quantile",
            self.tail_quantile,
            0.5..=0.9999,
            "a fraction between 0.5 and 0.9999 (0.99 = p99)",
        )
    }
}

/// The most shards one budget serves.
pub const MAX_SHARDS: usize = 4096;

/// Builds a [`SchedConfig`] setting by setting; [`build`](Self::build) checks them all.
/// Every setting not given keeps its default (see [`SchedConfig`]'s fields).
#[derive(Debug, Clone)]
#[must_use]
pub struct SchedConfigBuilder {
    config: SchedConfig,
}

impl SchedConfigBuilder {
    /// The in-disk latency the scheduler aims at (default [`DEFAULT_LATENCY_GOAL`]).
    pub fn latency_goal(mut self, goal: Duration) -> Self {
        self.config.latency_goal = goal;
        self
    }

    /// How far (in disk time) a class waking from idle may run ahead of the busy classes
    /// (default: one latency goal).
    pub fn head_start(mut self, head_start: Duration) -> Self {
        self.config.head_start = Some(head_start);
        self
    }

    /// Whether completions steer the window and the bucket's rate (default on).
    pub fn feedback(mut self, on: bool) -> Self {
        self.config.feedback = on;
        self
    }

    /// The ceiling on the measured drain speed, relative to the model (1.0 to 16.0;
    /// default 1.0).
    pub fn max_speed_factor(mut self, factor: f64) -> Self {
        self.config.max_speed_factor = factor;
        self
    }

    /// The drain speed's ceiling for a lane that only ever carries reads (1.0 to 16.0;
    /// default 1.25).
    pub fn max_read_speed_factor(mut self, factor: f64) -> Self {
        self.config.max_read_speed_factor = factor;
        self
    }

    /// The drain speed's ceiling for a lane that only ever carries writes (1.0 to 16.0;
    /// default 1.25).
    pub fn max_write_speed_factor(mut self, factor: f64) -> Self {
        self.config.max_write_speed_factor = factor;
        self
    }

    /// How far above the model run-time K may rise (1.0 to 16.0; default 4.0).
    pub fn max_rate_factor(mut self, factor: f64) -> Self {
        self.config.max_rate_factor = factor;
        self
    }

    /// Whether run-time K may come down at a knee seen in the disk's own queue (default
    /// off).
    pub fn knee_in_disk(mut self, on: bool) -> Self {
        self.config.knee_in_disk = on;
        self
    }

    /// Whether the reads' tail latency steers the write window (default on).
    pub fn tail_guard(mut self, on: bool) -> Self {
        self.config.tail_guard = on;
        self
    }

    /// The read latency quantile the tail guard holds within the goal (0.5 to 0.9999;
    /// default 0.99).
    pub fn tail_quantile(mut self, quantile: f64) -> Self {
        self.config.tail_quantile = quantile;
        self
    }

    /// How many shards share the budget, one [`ShardQueue`](crate::ShardQueue) each
    /// (1 to [`MAX_SHARDS`]; default 1).
    pub fn shards(mut self, shards: usize) -> Self {
        self.config.shards = shards;
        self
    }

    /// No capacity limit: classes are still ordered and measured, but every queued request
    /// is dispatched at once (default off).
    pub fn unlimited(mut self, on: bool) -> Self {
        self.config.unlimited = on;
        self
    }

    /// The configuration, once every setting is within what the budget accepts.
    pub fn build(self) -> Result<SchedConfig, SchedError> {
        self.config.validate()?;
        Ok(self.config)
    }
}

/// A setting checked against the range it may take: `SchedError::Setting` names it, its
/// value and what is accepted, so the operator's message says the fix (NaN is refused too).
pub(crate) fn setting_within(
    name: &'static str,
    value: f64,
    range: std::ops::RangeInclusive<f64>,
    accepted: &'static str,
) -> Result<(), SchedError> {
    if range.contains(&value) {
        Ok(())
    } else {
        Err(SchedError::Setting {
            name,
            value,
            accepted,
        })
    }
}
