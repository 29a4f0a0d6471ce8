//! weir-sched: the sans-I/O disk scheduler.
//!
//! It never performs I/O, starts a thread or reads a clock. The caller (the workload driver
//! over a real ring, or a test over `weir-sim`) hands it requests and the time, and it says
//! which pieces may go to the disk now. The same code therefore runs deterministically in
//! simulation and unchanged in production. See `INTEGRATION.md` for the call order and
//! `docs/scheduler.md` for the design.
//!
//! # Pieces
//!
//! - [`SharedBudget`] (one per disk, shared by every shard through an `Arc`): the disk's
//!   [`CostModel`](weir_model::cost::CostModel) (`max(1/iops, len/bandwidth)` per request), a
//!   token bucket refilled at the disk's rate times `rate_factor`, an in-disk *window* of one
//!   latency goal of disk time, the completion feedback that scales the window when the
//!   disk runs slower than its model, and the *tail guard* that scales the write window so
//!   that 99% of the reads beside writes wait at most the goal in the disk. All atomics; no
//!   locks.
//! - [`ShardQueue`] (one per shard): classes with shares, served in order of virtual time
//!   (disk time consumed / shares). Each shard publishes the virtual time of its most-behind
//!   backlogged class on the budget, and no shard runs more than about one goal ahead of the
//!   others, so shares hold across shards too.
//! - Supergroups ([`ShardQueue::add_group`], [`ShardQueue::add_class_in`]): a two-level
//!   hierarchy. Shares divide disk time between the top-level entries (supergroups and classes
//!   outside any), then a supergroup's turns between its classes; see the `group` module.
//! - [`metrics`]: per-class counters and histograms, and Prometheus text exposition.
//!
//! Requests longer than [`ShardQueue::max_request_bytes`] are split by the queue into pieces;
//! the caller submits each [`Dispatched`] piece at `offset_in_request_bytes` into its request
//! and reports it with [`ShardQueue::complete`], which says when the request's last piece is done.

mod boards;
mod budget;
mod depth;
mod error;
mod group;
mod lane_counters;
pub mod metrics;
mod queue;
mod rate;

pub use budget::{
    LaneStats, SchedConfig, SharedBudget, DEFAULT_LATENCY_GOAL, MAX_REQUEST_BYTES_CAP,
};
pub use error::SchedError;
pub use group::{GroupConfig, GroupId};
pub use lane_counters::LaneCounters;
pub use metrics::{render_prometheus, ClassMetrics, LatencyHistogram, ShardMetrics};
pub use queue::{ClassConfig, ClassId, Completed, Dispatched, Request, ShardQueue};
