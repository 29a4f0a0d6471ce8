#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod boards;
mod budget;
mod depth;
mod error;
mod group;
mod lane_counters;
pub mod merge;
pub mod metrics;
mod queue;
mod rate;

pub use budget::{
    LaneStats, SchedConfig, SchedConfigBuilder, SharedBudget, DEFAULT_LATENCY_GOAL,
    MAX_REQUEST_BYTES_CAP, MAX_SHARDS,
};
pub use error::SchedError;
pub use group::{GroupConfig, GroupId};
pub use lane_counters::LaneCounters;
pub use metrics::{render_prometheus, ClassMetrics, LatencyHistogram, ShardMetrics};
pub use queue::{ClassConfig, ClassId, Completed, Dispatched, Request, ShardQueue};
