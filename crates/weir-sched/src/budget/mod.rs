//! The capacity budget every shard of one disk shares: a token bucket refilled at the disk's
//! rate, an in-disk window sized by the latency goal, completion feedback that scales both, and
//! the virtual-time board that makes shares hold across shards. Everything is atomics: shards
//! never take a lock and never wait for each other.

use crate::boards::ShardBoards;
use crate::depth::{DepthCap, DepthPeriod};
use crate::lane_counters::{PeriodCounters, PeriodSeen};
use crate::rate::{rate_of, DiskQueue, RateControl, Verdict, RATE_ONE};
use crate::SchedError;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use weir_model::cost::CostModel;
use weir_model::device::Direction;

/// `speed` is a fixed-point fraction with this many bits: 1.0 = the disk runs as modelled.
const SPEED_SHIFT: u32 = 16;
const SPEED_ONE: u64 = 1 << SPEED_SHIFT;
/// The slowest the feedback will believe the disk to be (1/32 of the model).
const SPEED_MIN: u64 = SPEED_ONE / 32;
/// The tail guard's range: the write window may shrink to 1/16 of `goal x speed` and grow to 2x.
const GUARD_MIN: u64 = SPEED_ONE / 16;
const GUARD_MAX: u64 = SPEED_ONE * 2;
/// A read over the goal shrinks the guard by 1/GUARD_DOWN_DIV of itself.
const GUARD_DOWN_DIV: u64 = 16;
/// While the delay signal holds the window (speed below its cap), every this many periods
/// of run-time K the lane re-measures its unloaded latency (see `SharedBudget::refill`).
const SOLO_PROBE_EVERY_PERIODS: u64 = 128;
/// Requests a re-measurement takes one at a time into an empty lane.
const SOLO_PROBE_SAMPLES: u64 = 4;
/// Seastar's largest request; weir splits anything longer.
pub const MAX_REQUEST_BYTES_CAP: u64 = 16 << 20;
/// Requests are split on this granularity (a power of two, so pieces stay DIO-aligned).
const SPLIT_GRANULARITY_BYTES: u64 = 4096;

/// One budget: both directions on a half-duplex disk, one direction on a duplex disk.
#[derive(Debug)]
#[repr(align(128))]
struct Lane {
    /// Total disk time ever added to the bucket (ps).
    head_ps: AtomicU64,
    /// Total disk time ever taken from it; may run ahead of `head_ps` by one request (debt),
    /// so a large request is never starved by a stream of small ones.
    tail_ps: AtomicU64,
    last_refill_ns: AtomicU64,
    /// Disk time of the requests now in the disk.
    in_flight_ps: AtomicU64,
    /// Measured speed of the disk relative to the model (fixed point, `SPEED_ONE` = 1.0).
    speed_q16: AtomicU64,
    /// The tail guard: a further factor on the window, steered by the reads' tail latency
    /// (fixed point, `SPEED_ONE` = 1.0; stays 1.0 on a lane that carries no writes).
    guard_q16: AtomicU64,
    /// Run-time K: the bucket's refill rate relative to the model.
    rate: RateControl,
    /// The costliest write piece granted so far (the half-duplex guard's floor).
    largest_write_ps: AtomicU64,
    /// Whether the lane has ever been granted a request of each direction (`Direction::index`):
    /// the lift never acts for one direction on a lane that has carried the other.
    carried: [AtomicBool; 2],
    /// Unloaded-latency samples the lane still takes one at a time (0: not probing).
    solo_probe: AtomicU64,
    /// Periods of run-time K since the last re-measurement.
    periods_since_probe: AtomicU64,
    /// Requests the window turned away, and the bucket, since start (for `LaneStats`).
    window_refusals: AtomicU64,
    bucket_refusals: AtomicU64,
    /// Classes (of any shard) with nothing queued and a quarter goal or more in this lane:
    /// while any is, the window holds no pipeline (`queue/drained.rs`).
    drained_classes: AtomicU64,
    /// The depth cap (`depth.rs`), and the bucket refusals it has seen.
    depth: DepthCap,
    bucket_refusals_seen: AtomicU64,
    /// The other lane's granted total at this lane's last period close (duplex disks): it
    /// moved, so the other direction had work in the disk during the period.
    other_granted_seen: AtomicU64,
    /// What the controllers did, per period (`lane_counters.rs`).
    counters: PeriodCounters,
}

impl Lane {
    fn new(bucket_ps: u64, confirm_knees: bool) -> Self {
        Lane {
            head_ps: AtomicU64::new(bucket_ps),
            tail_ps: AtomicU64::new(0),
            last_refill_ns: AtomicU64::new(0),
            in_flight_ps: AtomicU64::new(0),
            speed_q16: AtomicU64::new(SPEED_ONE),
            guard_q16: AtomicU64::new(SPEED_ONE),
            rate: RateControl::new(confirm_knees),
            largest_write_ps: AtomicU64::new(0),
            carried: [AtomicBool::new(false), AtomicBool::new(false)],
            solo_probe: AtomicU64::new(0),
            periods_since_probe: AtomicU64::new(0),
            window_refusals: AtomicU64::new(0),
            bucket_refusals: AtomicU64::new(0),
            drained_classes: AtomicU64::new(0),
            depth: DepthCap::new(),
            bucket_refusals_seen: AtomicU64::new(0),
            other_granted_seen: AtomicU64::new(0),
            counters: PeriodCounters::default(),
        }
    }
}

/// Why a request could not go to the disk now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Blocked {
    /// The in-disk window is full: wait for a completion.
    Window,
    /// The bucket is in debt: it refills in this many nanoseconds.
    Bucket { wait_ns: u64 },
}

/// The budget shared by all shards of one disk. Build it once, wrap it in an `Arc`, and give
/// each shard a `ShardQueue` over it.
///
/// ```
/// use std::sync::Arc;
/// use weir_model::cost::CostModel;
/// use weir_model::device::Direction;
/// use weir_sched::{SchedConfig, ShardQueue, SharedBudget};
///
/// let model = CostModel::new(100_000.0, 1e9, 50_000.0, 5e8, 1.0, false)?;
/// let config = SchedConfig::builder().shards(2).build()?;
/// let budget = Arc::new(SharedBudget::new(model, config)?);
/// let shards: Vec<ShardQueue> = (0..2)
///     .map(|shard| ShardQueue::new(budget.clone(), shard))
///     .collect::<Result<_, _>>()?;
/// // At the default 750 us goal, the longest piece is a power of two within half a goal.
/// assert_eq!(budget.max_request_bytes(Direction::Read), 256 << 10);
/// assert_eq!(budget.lane_stats(Direction::Read).speed_factor, 1.0);
/// # drop(shards);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SharedBudget {
    model: CostModel,
    config: SchedConfig,
    lanes: [Lane; 2],
    boards: ShardBoards,
    /// The largest virtual time ever dispatched: where a class waking into an idle disk starts.
    vt_floor: AtomicU64,
    /// Requests in the disk now (any lane), per direction (`Direction::index`): the tail
    /// guard only listens to reads beside writes, and the lift (`budget/lift.rs`) only acts
    /// with none of the other direction in the disk.
    in_flight_requests: [AtomicU64; 2],
    /// Smallest in-disk latency ever seen per direction: the disk's unloaded latency.
    base_latency_ns: [AtomicU64; 2],
    /// Mean in-disk latency (EMA 1/8) of requests that found at most their own cost of work
    /// ahead, per direction (0 until one has): the unloaded latency the drain-speed samples
    /// subtract (see `release`).
    solo_latency_ns: [AtomicU64; 2],
    /// The same mean, from requests that found the lane (almost) empty by themselves, never
    /// from a re-measurement, and the smallest that mean has been: the disk's pipeline (see
    /// `pipeline_ps`).
    pipeline_latency_ns: [AtomicU64; 2],
    pipeline_min_ns: [AtomicU64; 2],
    goal_ps: u64,
    /// The costliest piece either direction may dispatch: the most one grant may take the
    /// bucket into debt.
    largest_cost_ps: u64,
    bucket_ps: u64,
    head_start_ps: u64,
    max_request_bytes: [u64; 2],
    speed_max_q16: u64,
    /// The ceiling for samples of one direction with the other never seen, per direction
    /// (`max_read_speed_factor`, `max_write_speed_factor`; `budget/lift.rs`).
    lift_max_q16: [u64; 2],
    rate_max_q16: u64,
    period_ns: u64,
    /// Good reads per bad read at the target quantile, minus one (99 for the p99).
    guard_up_div: u64,
}

impl SharedBudget {
    /// Builds the budget for a disk. Errors name the setting and the fix.
    pub fn new(model: CostModel, config: SchedConfig) -> Result<Self, SchedError> {
        config.validate()?;
        let goal_ps = u64::try_from(config.latency_goal.as_nanos())
            .unwrap_or(u64::MAX / 1000)
            .saturating_mul(1000);
        if goal_ps == 0 {
            return Err(SchedError::ZeroGoal);
        }
        if config.shards == 0 || config.shards > 4096 {
            return Err(SchedError::Shards {
                shards: config.shards,
            });
        }
        // The longest request is the largest power of two whose cost fits in half a goal of
        // disk time, so at least two are in flight and the disk never idles between them
        // (never below 128 KiB, so a tiny goal on a slow disk cannot shred every write).
        let max_request_bytes = [Direction::Read, Direction::Write].map(|dir| {
            let fits = model.max_len_within(dir, goal_ps / 2, SPLIT_GRANULARITY_BYTES);
            let pow2 = 1u64 << (63 - fits.leading_zeros());
            if config.unlimited {
                MAX_REQUEST_BYTES_CAP
            } else {
                pow2.clamp(128 << 10, MAX_REQUEST_BYTES_CAP)
            }
        });
        let largest_cost_ps = [Direction::Read, Direction::Write]
            .map(|dir| model.cost_ps(dir, max_request_bytes[dir.index()]))
            .into_iter()
            .max()
            .unwrap_or(0);
        let bucket_ps = goal_ps.max(largest_cost_ps);
        let head_start_ps = config.head_start.map_or(goal_ps, |d| {
            u64::try_from(d.as_nanos())
                .unwrap_or(u64::MAX / 1000)
                .saturating_mul(1000)
        });
        setting_within(
            "max_speed_factor",
            config.max_speed_factor,
            1.0..=16.0,
            "between 1.0 and 16.0",
        )?;
        let speed_max_q16 = (config.max_speed_factor * SPEED_ONE as f64) as u64;
        let lift_max_q16 = Self::lift_max_q16(&config, speed_max_q16)?;
        setting_within(
            "max_rate_factor",
            config.max_rate_factor,
            1.0..=16.0,
            "between 1.0 (never above the model) and 16.0",
        )?;
        let rate_max_q16 = (config.max_rate_factor * RATE_ONE as f64) as u64;
        setting_within(
            "tail_quantile",
            config.tail_quantile,
            0.5..=0.9999,
            "a fraction between 0.5 and 0.9999 (0.99 = p99)",
        )?;
        // Each bad read takes 1/16 off the guard and each good read adds 1/16 of that share
        // of it, so the guard settles where bad reads are `1 - q` of all.
        let guard_up_div =
            GUARD_DOWN_DIV * ((config.tail_quantile / (1.0 - config.tail_quantile)).round() as u64);
        let boards = ShardBoards::new(config.shards);
        Ok(SharedBudget {
            lanes: [
                Lane::new(bucket_ps, !config.knee_in_disk),
                Lane::new(bucket_ps, !config.knee_in_disk),
            ],
            boards,
            vt_floor: AtomicU64::new(0),
            in_flight_requests: [AtomicU64::new(0), AtomicU64::new(0)],
            base_latency_ns: [AtomicU64::new(u64::MAX), AtomicU64::new(u64::MAX)],
            solo_latency_ns: [AtomicU64::new(0), AtomicU64::new(0)],
            pipeline_latency_ns: [AtomicU64::new(0), AtomicU64::new(0)],
            pipeline_min_ns: [AtomicU64::new(u64::MAX), AtomicU64::new(u64::MAX)],
            goal_ps,
            bucket_ps,
            largest_cost_ps,
            head_start_ps,
            max_request_bytes,
            speed_max_q16,
            lift_max_q16,
            rate_max_q16,
            period_ns: RateControl::period_ns(goal_ps),
            guard_up_div,
            model,
            config,
        })
    }

    /// The disk model the budget charges with.
    pub fn model(&self) -> &CostModel {
        &self.model
    }

    /// The settings it was built with.
    pub fn config(&self) -> &SchedConfig {
        &self.config
    }

    /// Longer requests are split into pieces of at most this many bytes (a power of two).
    pub fn max_request_bytes(&self, direction: Direction) -> u64 {
        self.max_request_bytes[direction.index()]
    }

    /// The latency goal in picoseconds of disk time.
    pub(crate) fn goal_ps(&self) -> u64 {
        self.goal_ps
    }

    pub(crate) fn head_start_ps(&self) -> u64 {
        self.head_start_ps
    }

    fn lane(&self, direction: Direction) -> &Lane {
        if self.model.duplex() {
            &self.lanes[direction.index()]
        } else {
            &self.lanes[0]
        }
    }

    fn window_ps(&self, lane: &Lane) -> u64 {
        if lane.solo_probe.load(Relaxed) > 0 {
            // Re-measuring the unloaded latency: one request at a time (an empty lane always
            // takes one).
            return 0;
        }
        let speed = lane.speed_q16.load(Relaxed);
        let guard = lane.guard_q16.load(Relaxed);
        let window = ((u128::from(self.goal_ps + self.pipeline_ps(lane))
            * u128::from(speed)
            * u128::from(guard))
            >> (2 * SPEED_SHIFT)) as u64;
        if self.model.duplex() || guard >= SPEED_ONE {
            return window;
        }
        // On a half-duplex disk the guard never closes the window below one write plus an
        // eighth of it: below that a read can never be in the disk beside a write, the guard
        // hears no more reads and stays shut for good (seen in simulation: a start-up pile
        // threw it to its floor and a 4 KiB read / 128 KiB write mix ran at half the disk).
        let write_ps = lane.largest_write_ps.load(Relaxed);
        window.max(write_ps + write_ps / 8)
    }

    /// Adds the disk time that passed since the last refill, at K times the model's rate,
    /// capped at one bucket (one latency goal, or one largest request) of idle credit, and
    /// lets run-time K judge the period that ended, if one did.
    pub(crate) fn refill(&self, now_ns: u64) {
        for lane in self.lanes_in_use() {
            if self.config.feedback && !self.config.unlimited {
                let verdict =
                    lane.rate
                        .maybe_close(now_ns, self.period_ns, self.rate_bounds(lane), || {
                            (
                                lane.tail_ps.load(Relaxed),
                                lane.in_flight_ps.load(Relaxed),
                                self.window_ps(lane),
                                // A re-measurement holds the window shut on purpose: that
                                // says nothing about the disk's rate, so K holds.
                                lane.guard_q16.load(Relaxed) < SPEED_ONE
                                    || lane.solo_probe.load(Relaxed) > 0,
                            )
                        });
                let mut knee_in_disk = false;
                if let Some((judged, period)) = &verdict {
                    self.maybe_probe_solo(lane);
                    let queue = self.close_depth(lane, period);
                    knee_in_disk =
                        self.config.knee_in_disk && lane.rate.close_disk_queue(*judged, &queue);
                }
                if knee_in_disk || matches!(verdict, Some((Verdict::Knee | Verdict::Window, _))) {
                    // Credit banked at a rate the disk did not take would refill the pile K
                    // just decided to drain (a goal's worth: exactly the pile, in simulation).
                    lane.head_ps.fetch_min(lane.tail_ps.load(Relaxed), Relaxed);
                }
            }
            let last = lane.last_refill_ns.load(Relaxed);
            if now_ns <= last
                || lane
                    .last_refill_ns
                    .compare_exchange(last, now_ns, Relaxed, Relaxed)
                    .is_err()
            {
                continue;
            }
            // The bucket refills at run-time K, not at the drain speed the window uses: a
            // speed read from write latency also counts filesystem work that does not hold
            // the disk (~0.7 of the model for 128 KiB writes to a sparse XFS file on this
            // project's disk), and a bucket refilled at it capped the writes below what the
            // disk took. K is judged on rates over whole periods instead (`rate.rs`).
            let speed = self.rate_q16(lane);
            let elapsed_ps = u128::from(now_ns - last) * 1000;
            let add =
                ((elapsed_ps * u128::from(speed)) >> SPEED_SHIFT).min(u128::from(u64::MAX / 4));
            let head = lane.head_ps.fetch_add(add as u64, Relaxed) + add as u64;
            let ceiling = lane.tail_ps.load(Relaxed).saturating_add(self.bucket_ps);
            if head > ceiling {
                lane.head_ps.fetch_min(ceiling, Relaxed);
            }
            self.debug_check_debt(lane, lane.tail_ps.load(Relaxed));
        }
    }

    /// Starts a re-measurement of the lane's unloaded latency every
    /// `SOLO_PROBE_EVERY_PERIODS` periods while the delay signal holds the window below a
    /// goal of model time (every eighth of that below a quarter of it).
    ///
    /// The drain-speed samples subtract the unloaded latency, the mean latency of requests
    /// that found (almost) nothing of this lane ahead. A saturated lane never has such a
    /// request, so the figure is as old as the load: when a neighbour the scheduler does not
    /// see (another process, or CPU time taken from the reaping thread) later adds latency
    /// that no request of ours causes, every sample reads it as our queue draining slowly,
    /// the window shrinks, the signal (the work ahead) shrinks with it and the estimate falls
    /// to its floor: 1/32 of the model, the scheduled classes at 0.03-0.05 of what they got
    /// unscheduled beside the same neighbour (`a_busy_neighbour_cannot_talk_the_drain_speed_down`,
    /// and 0.045 on this project's disk beside other processes' load). Like BBR's ProbeRTT,
    /// the lane then takes a few requests one at a time into an empty disk: their latency
    /// holds the neighbour's share, and the samples after it measure only our own queue. It
    /// costs a few unloaded latencies every 128 periods (under 2% with a 2 ms neighbour
    /// queue) and never runs while the window is at its cap (a disk that keeps up).
    fn maybe_probe_solo(&self, lane: &Lane) {
        // At the cap within 1/32, as `pipeline_ps` reads it: a speed a hair under the cap
        // (0.9999) re-measured every 128 periods on a disk that keeps up, and each time the
        // drained disk then took a goal's burst in which both classes went in unordered (the
        // 1000:100 split fell to 2-4:1 for 100 ms every 0.4 s, `k_comes_down_at_the_knee...`).
        if lane.speed_q16.load(Relaxed) >= self.speed_max_q16 - self.speed_max_q16 / 32
            || lane.solo_probe.load(Relaxed) > 0
        {
            lane.periods_since_probe.store(0, Relaxed);
            return;
        }
        // Far under the model (a quarter), the window is what starves the lane: look sooner.
        let every = if lane.speed_q16.load(Relaxed) < SPEED_ONE / 4 {
            SOLO_PROBE_EVERY_PERIODS / 8
        } else {
            SOLO_PROBE_EVERY_PERIODS
        };
        if lane.periods_since_probe.fetch_add(1, Relaxed) + 1 >= every {
            lane.periods_since_probe.store(0, Relaxed);
            lane.solo_probe.store(SOLO_PROBE_SAMPLES, Relaxed);
        }
    }

    /// Lets the depth cap judge the period K just closed, and returns the period as K's
    /// disk-queue knee judges it (`rate/disk.rs`).
    fn close_depth(&self, lane: &Lane, period: &crate::rate::Period) -> DiskQueue {
        let bucket_total = lane.bucket_refusals.load(Relaxed);
        let bucket_bound = lane.bucket_refusals_seen.swap(bucket_total, Relaxed) < bucket_total;
        // The mean by Little's law where the snapshot sees less: on a device that completes
        // inside the submission, the end of a period (after a reap) finds nothing in flight.
        let mean_in_flight_ps = lane.depth.take_mean_in_flight_ps(period.elapsed_ps);
        let depth_period = DepthPeriod {
            delivered_q16: rate_of(period.completed_ps, period.elapsed_ps),
            dispatched_ps: period.dispatched_ps,
            completed_ps: period.completed_ps,
            in_flight_ps: period.in_flight_end_ps.max(mean_in_flight_ps),
            unloaded_ns: self.unloaded_ns(lane),
            window_ps: period.window_ps,
            largest_piece_ps: period.largest_piece_ps,
            other_limit_bound: period.window_refused || bucket_bound,
            // On a duplex disk the other direction's work lengthens this lane's latency
            // without being its queue (4 KiB reads behind 128 KiB writes: capped, their
            // p99 rose 0.89 -> 1.16 ms in `sparse_write_mix_keeps_reads_within_the_goal`).
            other_lane_busy: self.model.duplex()
                && self.lanes.iter().any(|other| {
                    !std::ptr::eq(other, lane) && other.in_flight_ps.load(Relaxed) > 0
                }),
        };
        let judged = lane.depth.close(&depth_period);
        lane.counters.count(&PeriodSeen {
            window_bound: period.window_refused,
            bucket_bound,
            pipeline_open: self.pipeline_ps(lane) > 0,
            share_gate_shut: lane.drained_classes.load(Relaxed) > 0,
            solo_probe: lane.solo_probe.load(Relaxed) > 0,
            judged,
            queue_ratio_x16: DepthCap::queue_ratio_x16(&depth_period),
        });
        DiskQueue {
            elapsed_ps: period.elapsed_ps,
            dispatched_ps: period.dispatched_ps,
            completed_ps: period.completed_ps,
            in_flight_ps: depth_period.in_flight_ps,
            pipe_ps: crate::depth::pipe_ps(&depth_period),
            largest_piece_ps: period.largest_piece_ps,
            window_refused: period.window_refused,
            bucket_refused: bucket_bound,
            other_lane_busy: depth_period.other_lane_busy || self.other_lane_granted(lane),
            class_drained: lane.drained_classes.load(Relaxed) > 0,
            grew: period.in_flight_end_ps > period.in_flight_start_ps + period.largest_piece_ps,
            depth_capped: lane.depth.cap_ps() != u64::MAX,
        }
    }

    /// Whether the other lane of a duplex disk was granted anything since this lane's last
    /// period close: a snapshot of its work in flight misses a direction that came and went
    /// within the period, whose latency this lane's requests still paid (the read/write mix
    /// of `run_time_k_finds_the_real_rate_of_a_read_write_mix` fell to 0.917 of the real
    /// rate when K's disk-queue knee read that latency as this lane's queue).
    fn other_lane_granted(&self, lane: &Lane) -> bool {
        if !self.model.duplex() {
            return false;
        }
        self.lanes.iter().any(|other| {
            !std::ptr::eq(other, lane) && {
                let granted = other.tail_ps.load(Relaxed);
                lane.other_granted_seen.swap(granted, Relaxed) != granted
            }
        })
    }

    /// Where K may go: never more than one margin (1/32) under the drain speed the window
    /// uses, so the rate never undercuts what the delay signal says the disk drains (a
    /// read/write mix slows the disk in the model's units as the pacing interleaves reads
    /// with writes, and K alone followed that down to 0.77 of the writes' share in
    /// simulation), and never above `max_rate_factor`.
    fn rate_bounds(&self, lane: &Lane) -> (u64, u64) {
        let speed = lane.speed_q16.load(Relaxed);
        (speed - speed / 32, self.rate_max_q16)
    }

    /// Run-time K of a lane (1.0 without feedback: the model's rate).
    fn rate_q16(&self, lane: &Lane) -> u64 {
        if self.config.feedback {
            lane.rate.rate_q16()
        } else {
            SPEED_ONE
        }
    }

    fn lanes_in_use(&self) -> &[Lane] {
        if self.model.duplex() {
            &self.lanes
        } else {
            &self.lanes[..1]
        }
    }

    /// Takes `cost_ps` of disk time for one request, or says why not. On success returns the
    /// disk time that was already in flight ahead of it (for the feedback).
    pub(crate) fn try_acquire(&self, direction: Direction, cost_ps: u64) -> Result<u64, Blocked> {
        if self.config.unlimited {
            return Ok(0);
        }
        let lane = self.lane(direction);
        let head = lane.head_ps.load(Relaxed);
        let tail = lane.tail_ps.load(Relaxed);
        if tail >= head {
            return Err(self.bucket_wait(lane, tail - head));
        }
        // The window: a request goes in if at least half of it fits (rounding to the nearest
        // request), or if the disk is empty; the overshoot is at most half a request.
        let window = self.window_ps(lane);
        let mut in_flight = lane.in_flight_ps.load(Relaxed);
        loop {
            if in_flight > 0 && in_flight + cost_ps / 2 > window {
                lane.rate.note_window_refused();
                lane.window_refusals.fetch_add(1, Relaxed);
                return Err(Blocked::Window);
            }
            if in_flight > 0 && in_flight + cost_ps / 2 > lane.depth.cap_ps() {
                // Not a window refusal: K must not read the cap as the disk's limit.
                lane.depth.note_refused();
                return Err(Blocked::Window);
            }
            match lane.in_flight_ps.compare_exchange_weak(
                in_flight,
                in_flight + cost_ps,
                Relaxed,
                Relaxed,
            ) {
                Ok(_) => {
                    // In-disk work stays within the window: past it by at most half a
                    // request, or one request alone in an empty disk.
                    debug_assert!(
                        in_flight == 0 || in_flight + cost_ps <= window + cost_ps.div_ceil(2),
                        "in-disk work {} ps past the window {window} ps",
                        in_flight + cost_ps
                    );
                    break;
                }
                Err(actual) => in_flight = actual,
            }
        }
        // The bucket: may go into debt by this one request.
        let mut tail = lane.tail_ps.load(Relaxed);
        loop {
            let head = lane.head_ps.load(Relaxed);
            if tail >= head {
                lane.in_flight_ps.fetch_sub(cost_ps, Relaxed);
                return Err(self.bucket_wait(lane, tail - head));
            }
            match lane
                .tail_ps
                .compare_exchange_weak(tail, tail + cost_ps, Relaxed, Relaxed)
            {
                Ok(_) => {
                    self.debug_check_debt(lane, tail + cost_ps);
                    lane.rate.note_granted(cost_ps);
                    if direction == Direction::Write
                        && lane.largest_write_ps.load(Relaxed) < cost_ps
                    {
                        lane.largest_write_ps.fetch_max(cost_ps, Relaxed);
                    }
                    self.in_flight_requests[direction.index()].fetch_add(1, Relaxed);
                    self.note_carried(lane, direction);
                    return Ok(in_flight);
                }
                Err(actual) => tail = actual,
            }
        }
    }

    fn bucket_wait(&self, lane: &Lane, debt_ps: u64) -> Blocked {
        lane.bucket_refusals.fetch_add(1, Relaxed);
        let speed = self.rate_q16(lane).max(SPEED_MIN);
        let wait_ps = (u128::from(debt_ps + 1) << SPEED_SHIFT) / u128::from(speed);
        Blocked::Bucket {
            wait_ns: (wait_ps / 1000) as u64 + 1,
        }
    }

    /// Returns a completed request's disk time to the window and feeds its latency to the
    /// speed estimate.
    ///
    /// The estimate is delay-based, not rate-based, which is what keeps it from creeping down:
    /// a request that found `ahead_ps` of disk time in flight should take the disk's unloaded
    /// latency plus `ahead_ps` to finish if the disk runs as modelled; the ratio of the two
    /// waits is a sample of the disk's speed. Only requests that found
    /// the window at least half full are evidence (below that the disk is not queueing and its
    /// latency says nothing about its speed), so an idle or lightly loaded disk can never talk
    /// the budget down, while a disk that slowed shows it within a few dozen completions and
    /// climbs back as soon as it recovers. A disk that drains its queue faster than modelled
    /// earns up to `max_speed_factor` (the lift's ceiling for one direction while the disk
    /// has never seen the other, `speed_cap_q16` in `budget/lift.rs`): the window then holds
    /// more work, but its drain time stays about one goal.
    pub(crate) fn release(&self, direction: Direction, cost_ps: u64, ahead_ps: u64, disk_ns: u64) {
        if self.config.unlimited {
            return;
        }
        let lane = self.lane(direction);
        let in_flight = lane.in_flight_ps.fetch_sub(cost_ps, Relaxed);
        debug_assert!(
            in_flight >= cost_ps,
            "released {cost_ps} ps from a lane with {in_flight} ps in the disk"
        );
        lane.rate.note_completed(cost_ps);
        lane.depth.note_completed(cost_ps, disk_ns);
        self.in_flight_requests[direction.index()].fetch_sub(1, Relaxed);
        let base = &self.base_latency_ns[direction.index()];
        let base_ns = base.fetch_min(disk_ns, Relaxed).min(disk_ns);
        if !self.config.feedback {
            return;
        }
        if direction == Direction::Read && self.config.tail_guard {
            self.steer_guard(disk_ns.saturating_sub(base_ns));
        }
        let solo = &self.solo_latency_ns[direction.index()];
        let solo_ns = solo.load(Relaxed);
        let probing = lane.solo_probe.load(Relaxed) > 0;
        if ahead_ps < cost_ps {
            self.note_unloaded(direction, lane, disk_ns, solo_ns, probing);
        }
        if probing {
            // Requests that were in the disk when the probe began: their latency holds a
            // queue the window no longer describes.
            return;
        }
        // A sample needs a queue of ours ahead: half the window, or one request like this
        // one when the window holds fewer than four (else a window the signal shrank to two
        // requests never hears another sample and stays there: seen in simulation beside a
        // neighbour, the speed frozen at 0.039). Only there: in a wide window a request with
        // one ahead finds a disk that is not queueing, and counting it pushed the merged
        // sparse-write mix's read p99 to 1.0-1.26 ms at some seeds.
        let window = self.window_ps(lane);
        let narrow = window < cost_ps.saturating_mul(4);
        if ahead_ps.saturating_mul(2) < window && !(narrow && ahead_ps >= cost_ps) {
            return;
        }
        // The unloaded latency already holds the request's own service time, so what is left
        // is the wait for the work ahead: `ahead_ps` of model time at the model's speed. It is
        // the *mean* latency of requests that found (almost) nothing ahead, not the smallest
        // ever seen: on this project's virtio disk the smallest is ~60 us and a lone 4 KiB
        // read's typical ~290 us, so with a window of two requests every sample read that
        // spread as queueing (a speed of ~0.08), the window stayed two requests wide and the
        // drain speed never recovered from a stall (scheduled 4 KiB reads at 0.03 of
        // unscheduled, `bench/shares.sh`, once run-time K let the disk's queue fill).
        let unloaded_ns = base_ns.max(solo_ns);
        let queued_ns = disk_ns.saturating_sub(unloaded_ns).max(1);
        let expected_ns = ahead_ps / 1000;
        let old = lane.speed_q16.load(Relaxed);
        let sample = ((u128::from(expected_ns) << SPEED_SHIFT) / u128::from(queued_ns))
            .min(u128::from(self.speed_max_q16)) as u64;
        let cap = self.speed_cap_q16(direction);
        let fast = self.fast_sample_q16(old, expected_ns, unloaded_ns, queued_ns, cap);
        // An EMA with weight 1/8: a few dozen completions (well under one goal) to follow.
        let new = (old * 7 + sample.max(fast)) / 8;
        lane.speed_q16.store(new.clamp(SPEED_MIN, cap), Relaxed);
    }

    /// A completion that found nothing of ours ahead: it updates the lane's unloaded latency
    /// (and, outside a probe, the pipeline's latency), and counts down a probe's samples.
    fn note_unloaded(
        &self,
        direction: Direction,
        lane: &Lane,
        disk_ns: u64,
        solo_ns: u64,
        probing: bool,
    ) {
        let solo = &self.solo_latency_ns[direction.index()];
        // A re-measurement's few samples replace the old figure (weight 1/2 each).
        let next = match (solo_ns, probing) {
            (0, _) => disk_ns,
            (_, true) => (solo_ns + disk_ns) / 2,
            (_, false) => (solo_ns * 7 + disk_ns) / 8,
        };
        solo.store(next.max(1), Relaxed);
        if !probing {
            let pipeline = &self.pipeline_latency_ns[direction.index()];
            let old = pipeline.load(Relaxed);
            let next = if old == 0 {
                disk_ns
            } else {
                (old * 7 + disk_ns) / 8
            };
            pipeline.store(next.max(1), Relaxed);
            self.pipeline_min_ns[direction.index()].fetch_min(next.max(1), Relaxed);
        }
        if probing {
            let _ = lane
                .solo_probe
                .fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1));
        }
    }

    /// The tail guard: a quantile controller on the reads' queueing delay in the disk.
    ///
    /// The speed feedback above sizes the window by the *mean* drain time of the work in it,
    /// and it reads that from the writes' own latency, which on a filesystem also holds work
    /// that delays no one else (allocating a sparse file's blocks, converting unwritten
    /// extents: ~200-300 us per 128 KiB write on this project's XFS). What the latency goal
    /// promises is about the other side: a read's wait behind the work in the disk. So every
    /// read that completes while writes are in the disk is a probe: if it waited (in-disk
    /// latency minus the unloaded read latency) more than the goal, the window that holds the
    /// writes shrinks by 1/16; otherwise it grows by 1/16 of `(1 - q) / q` of that. The guard
    /// settles where `1 - q` of such reads exceed the goal, i.e. the reads' p99 (q = 0.99)
    /// queueing equals the goal, whatever the writes' filesystem overhead or the disk's
    /// mood that minute. It only moves while writes are in flight, so it cannot drift while
    /// they are idle, and it never shrinks a window below one request (an empty disk always
    /// takes one).
    fn steer_guard(&self, read_queued_ns: u64) {
        if self.in_flight_requests[Direction::Write.index()].load(Relaxed) == 0 {
            return;
        }
        let lane = self.lane(Direction::Write);
        if lane.solo_probe.load(Relaxed) > 0 {
            // The window is shut on purpose; a read now says nothing about its width.
            return;
        }
        let old = lane.guard_q16.load(Relaxed);
        // The threshold keeps 1/16 of the goal for what the guard cannot steer: the read's
        // own service beside writes (slower than alone on most disks) and its time in the
        // scheduler's queue, both part of the latency the goal is judged by.
        let threshold_ps = self.goal_ps - self.goal_ps / 16;
        let new = if read_queued_ns.saturating_mul(1000) > threshold_ps {
            old - old / GUARD_DOWN_DIV
        } else if !self.window_holds_writes(lane) {
            return;
        } else {
            old + (old / self.guard_up_div).max(1)
        };
        lane.guard_q16
            .store(new.clamp(GUARD_MIN, GUARD_MAX), Relaxed);
    }

    /// Whether the write window is what holds the writes back now, so that a good read is
    /// evidence a wider one would be safe (anti-windup).
    ///
    /// With three quarters of the window in the disk it is. Below that the bucket (run-time
    /// K) holds them, or the writes are few: growing the guard anyway let it reach 2.0 under
    /// the bucket, and the first pile the bucket let in then cost 40 bad reads in a row and
    /// threw the guard to its floor. It is also what holds them when the next write would
    /// not fit (half of it must, `try_acquire`): without that, a window between 4/3 and 3/2
    /// of a write held one write, which is under 3/4 of it, so the guard could never grow
    /// out of it (without it, low `bench/qos.sh` rounds end with a 128 KiB write window of
    /// 39-88 us, 88 being 4/3 of a 66 us write, and the writes go one at a time for the rest
    /// of the run).
    fn window_holds_writes(&self, lane: &Lane) -> bool {
        let window = self.window_ps(lane);
        let in_flight = lane.in_flight_ps.load(Relaxed);
        let next_write_ps = lane.largest_write_ps.load(Relaxed);
        in_flight.saturating_mul(4) >= window * 3
            || (in_flight > 0 && in_flight + next_write_ps / 2 > window)
    }

    /// The budget never overdraws: a grant may take the bucket into debt by its own piece
    /// only, so the debt stays under one costliest piece per shard (shards grant
    /// concurrently, each against the head it read).
    #[inline]
    fn debug_check_debt(&self, lane: &Lane, tail_ps: u64) {
        if cfg!(debug_assertions) {
            let head_ps = lane.head_ps.load(Relaxed);
            let most_ps = self
                .largest_cost_ps
                .saturating_mul(self.config.shards as u64);
            debug_assert!(
                tail_ps.saturating_sub(head_ps) <= most_ps,
                "the bucket is {} ps in debt, past {most_ps} ps (a costliest piece per shard)",
                tail_ps.saturating_sub(head_ps)
            );
        }
    }

    /// Publishes a shard's smallest backlogged virtual time (`u64::MAX` when it has none).
    pub(crate) fn publish(&self, shard: usize, head_vt: u64) {
        self.boards.publish(shard, head_vt);
    }

    /// The board of every shard's virtual time (`boards.rs`).
    pub(crate) fn boards(&self) -> &ShardBoards {
        &self.boards
    }

    /// The smallest virtual time any shard has backlogged (`u64::MAX` when none has).
    pub(crate) fn global_head_vt(&self) -> u64 {
        self.boards.global_head_vt()
    }

    pub(crate) fn note_dispatched_vt(&self, vt: u64) {
        if self.vt_floor.load(Relaxed) < vt {
            self.vt_floor.fetch_max(vt, Relaxed);
        }
    }

    pub(crate) fn vt_floor(&self) -> u64 {
        self.vt_floor.load(Relaxed)
    }
}

mod config;
mod lift;
mod pipeline;
mod stats;

use config::setting_within;
pub use config::{SchedConfig, SchedConfigBuilder, DEFAULT_LATENCY_GOAL, MAX_SHARDS};
pub use stats::LaneStats;

#[cfg(test)]
mod tests;
