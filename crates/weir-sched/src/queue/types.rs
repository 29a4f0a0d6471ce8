//! What goes into a shard's queue and what comes out: class settings, requests, dispatched
//! pieces and completions, and the checks on a class's settings.

use crate::SchedError;
use weir_model::device::Direction;

/// A class on one shard, as returned by [`ShardQueue::add_class`](crate::ShardQueue::add_class)
/// (the index of the class on its shard, in the order the classes were added).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClassId(pub u32);

/// How a class is configured: its name, its shares and optional caps.
///
/// ```
/// use weir_sched::ClassConfig;
///
/// let compaction = ClassConfig::new("compaction", 100).with_bandwidth_cap(200 << 20);
/// assert_eq!(compaction.bandwidth_cap_bytes_per_sec, Some(200 << 20));
/// assert_eq!(compaction.iops_cap, None);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ClassConfig {
    /// The class's name: unique on its shard, and its label in metrics.
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

    /// The same class, capped at `bytes_per_sec` on each shard (0 is refused when the
    /// class is added).
    pub fn with_bandwidth_cap(mut self, bytes_per_sec: u64) -> Self {
        self.bandwidth_cap_bytes_per_sec = Some(bytes_per_sec);
        self
    }

    /// The same class, capped at `requests_per_sec` on each shard (0 is refused when the
    /// class is added).
    pub fn with_iops_cap(mut self, requests_per_sec: u64) -> Self {
        self.iops_cap = Some(requests_per_sec);
        self
    }
}

/// A request as the caller hands it in. `user_data` comes back in [`Dispatched`] and
/// [`Completed`].
///
/// ```
/// use weir_model::device::Direction;
/// use weir_sched::Request;
///
/// let read = Request { direction: Direction::Read, len_bytes: 4096, user_data: 7 };
/// assert_eq!(read.len_bytes, 4096);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Read or write.
    pub direction: Direction,
    /// The request's length; more than [`ShardQueue::max_request_bytes`](crate::ShardQueue::max_request_bytes)
    /// goes to the disk in pieces.
    pub len_bytes: u64,
    /// The caller's key for the request.
    pub user_data: u64,
}

/// One piece the caller must now submit: `len_bytes` at `offset_in_request_bytes` into the
/// request identified by `user_data`. Pass `token` to `complete` when it finishes; a token
/// never has bit 63 set.
///
/// The crate's top-level docs show the loop that submits them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dispatched {
    /// The piece's token: put it on the I/O and pass it to `complete`.
    pub token: u64,
    /// The request's `user_data`.
    pub user_data: u64,
    /// The request's class.
    pub class: ClassId,
    /// Read or write.
    pub direction: Direction,
    /// Where the piece starts within its request.
    pub offset_in_request_bytes: u64,
    /// The piece's length.
    pub len_bytes: u64,
}

/// What [`ShardQueue::complete`](crate::ShardQueue::complete) reports about a finished
/// piece. The crate's top-level docs show the loop that reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completed {
    /// The request's `user_data`.
    pub user_data: u64,
    /// The request's class.
    pub class: ClassId,
    /// Read or write.
    pub direction: Direction,
    /// Where the piece starts within its request.
    pub offset_in_request_bytes: u64,
    /// The piece's length.
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
