//! What goes into a shard's queue and what comes out: class settings, requests, dispatched
//! pieces and completions, and the checks on a class's settings.

use crate::SchedError;
use weir_model::device::Direction;

/// A class on one shard, as returned by `ShardQueue::add_class`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClassId(pub u32);

/// How a class is configured.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassConfig {
    pub name: String,
    /// Relative weight, 1..=1_000_000 (Seastar's default is 1000).
    pub shares: u32,
    /// Optional cap on this class's bytes per second (on this shard).
    pub bandwidth_cap_bytes_per_sec: Option<u64>,
    /// Optional cap on this class's requests per second (on this shard).
    pub iops_cap: Option<u64>,
}

impl ClassConfig {
    /// A class with shares and no caps.
    pub fn new(name: impl Into<String>, shares: u32) -> Self {
        ClassConfig {
            name: name.into(),
            shares,
            bandwidth_cap_bytes_per_sec: None,
            iops_cap: None,
        }
    }
}

/// A request as the caller hands it in. `user_data` comes back in `Dispatched` and `Completed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub direction: Direction,
    pub len_bytes: u64,
    pub user_data: u64,
}

/// One piece the caller must now submit: `len_bytes` at `offset_in_request_bytes` into the
/// request identified by `user_data`. Pass `token` to `complete` when it finishes; a token
/// never has bit 63 set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dispatched {
    pub token: u64,
    pub user_data: u64,
    pub class: ClassId,
    pub direction: Direction,
    pub offset_in_request_bytes: u64,
    pub len_bytes: u64,
}

/// What `complete` reports about a finished piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completed {
    pub user_data: u64,
    pub class: ClassId,
    pub direction: Direction,
    pub offset_in_request_bytes: u64,
    pub len_bytes: u64,
    /// True when this was the request's last outstanding piece.
    pub request_done: bool,
    /// Enqueue to dispatch of this piece.
    pub queue_ns: u64,
    /// Dispatch to completion of this piece.
    pub disk_ns: u64,
}

pub(super) fn check_shares(name: &str, shares: u32) -> Result<(), SchedError> {
    if (1..=1_000_000).contains(&shares) {
        Ok(())
    } else {
        Err(SchedError::Shares {
            class: name.to_owned(),
            shares,
        })
    }
}

/// Nanoseconds of cap budget one piece uses, when the class has caps.
pub(super) fn cap_increment_ns(config: &ClassConfig, piece_bytes: u64) -> Option<u64> {
    let by_ops = config.iops_cap.map(|iops| 1_000_000_000 / iops);
    let by_bytes = config
        .bandwidth_cap_bytes_per_sec
        .map(|bw| (u128::from(piece_bytes) * 1_000_000_000 / u128::from(bw)) as u64);
    match (by_ops, by_bytes) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0).max(b.unwrap_or(0))),
    }
}
