//! The vocabulary of a shard's requests, shared by the driver, the scheduler path, the merger
//! and the verify pass: what ends a run, a request in flight, and the loop's options. A leaf:
//! it imports nothing of the crate, so every module that needs these words points one way.

use weir_engine::shard_loop::BufId;
use weir_model::device::{Direction, IoFlags};

/// A failure that ends the run on every shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// ENOSPC, EDQUOT, EFBIG, or a short write (the filesystem ran out of space).
    DiskFull { job: String, detail: String },
    /// Any other failed request.
    Io { job: String, detail: String },
    /// The device refused a submission or a wait.
    Device { detail: String },
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::DiskFull { job, detail } => write!(
                f,
                "the disk filled up during job `{job}`: {detail}; free space, lower data_size or \
                 the duration, or choose another --dir"
            ),
            Failure::Io { job, detail } => write!(f, "job `{job}`: {detail}"),
            Failure::Device { detail } => write!(f, "{detail}"),
        }
    }
}

/// A request in flight.
#[derive(Clone, Copy)]
pub(crate) struct Slot {
    /// The job's position in this shard's `jobs` slice. Not the plan's job index: a shard
    /// runs only the jobs placed on it (`shards: [1]`), so the two differ whenever a job is
    /// missing from some shard.
    pub(crate) job_pos: u32,
    pub(crate) buf: BufId,
    pub(crate) offset_bytes: u64,
    pub(crate) len_bytes: u32,
    pub(crate) direction: Direction,
    pub(crate) intended_ns: u64,
    /// When the first piece went to the device (0: still in the scheduler's queue).
    pub(crate) dispatch_ns: u64,
    pub(crate) sequence: u64,
    /// Scheduler runs: the first piece that failed or came back short (result, piece length).
    pub(crate) piece_error: Option<(i32, u32)>,
}

/// Options for one shard's loop.
pub struct LoopOptions {
    pub duration_ns: u64,
    pub nowait: bool,
    pub dsync_by_job: Vec<bool>,
    /// Poll instead of sleeping (a job on this shard asked for `sleep_type: busyloop`).
    pub busy_poll: bool,
}

impl LoopOptions {
    /// The submission flags of every request of job `job_index`.
    pub(crate) fn io_flags(&self, job_index: usize) -> IoFlags {
        IoFlags {
            nowait: self.nowait,
            dsync: self.dsync_by_job.get(job_index).copied().unwrap_or(false),
        }
    }
}
