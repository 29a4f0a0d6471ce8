//! Why a run did not produce a full report. A leaf: setup, the unlink load and the runner
//! all return it, and it imports only what it carries (the report, the run's failure).
//!
//! Each cause is its own variant so a caller can match it (weir explore stops on a usage
//! error, the CLI maps usage to exit code 2); the text each one prints is the operator's
//! message, unchanged from when the causes were plain strings.

use std::fmt;
use std::path::PathBuf;

use weir_engine::{BlockDeviceError, BufferError, ShardPanic};
use weir_model::units::format_bytes;
use weir_sched::SchedError;

use crate::job::JobError;
use crate::report::Report;
use crate::request::Failure;
use crate::sched_groups::PlacementError;

/// Why a run did not produce a full report.
#[derive(Debug)]
#[non_exhaustive]
pub enum RunError {
    /// The operator's input cannot work (bad plan, directory missing, not writable, read-only,
    /// no O_DIRECT, misaligned request size). Nothing was measured. Exit code 2 in the CLI.
    Usage(UsageError),
    /// Setting up failed for a reason outside the operator's input (backend, memory, disk
    /// full while preparing files). Nothing was measured.
    Setup(SetupError),
    /// The run started and then failed or was interrupted; `partial` holds what was measured
    /// until then. Files were removed (unless kept).
    Failed {
        message: String,
        interrupted: bool,
        /// The failure that stopped every shard (disk full, an I/O error, the device); None
        /// when a signal stopped the run.
        failure: Option<Failure>,
        partial: Box<Report>,
    },
}

/// The operator's input cannot work; each message names the fix.
#[derive(Debug)]
#[non_exhaustive]
pub enum UsageError {
    /// A job's fields do not fit together.
    Plan(JobError),
    /// The scheduler refused the disk model, the settings or a class.
    Scheduler(SchedError),
    /// The `--sched-groups` file does not fit the plan.
    SchedGroups(PlacementError),
    /// Options that cannot go together (`--dir` with `--device`, `--verify` or `--buffered`
    /// where they cannot apply).
    Options(OptionsError),
    /// A job asks for what this run cannot give: a shard past `--shards`, a directory the run
    /// lacks, a request size `--verify` cannot check, a file a device cannot grow, more data
    /// than the address space or the device holds.
    Job { job: String, message: String },
    /// The `--dir` directory is missing, not a directory, read-only or not writable.
    Directory { dir: PathBuf, message: String },
    /// The jobs' files need more than the free space of `dir`'s filesystem (reusable test
    /// files counted as free).
    NoSpace {
        dir: PathBuf,
        need_bytes: u64,
        free_bytes: u64,
    },
    /// A request size that is not a multiple of the direct-I/O alignment of `target`.
    Misaligned {
        job: String,
        request_bytes: u32,
        align_bytes: u32,
        /// The directory or device the alignment is of.
        target: String,
        /// Where the alignment came from (statx, the device's queue limits, a default).
        source: &'static str,
    },
    /// The raw device cannot be claimed (missing, mounted, not a block device, no access).
    Device(BlockDeviceError),
    /// The jobs' regions, laid end to end, need more bytes than the device holds.
    DeviceTooSmall {
        device: PathBuf,
        need_bytes: u64,
        regions: usize,
        capacity_bytes: u64,
    },
    /// A test file cannot be made: `errno` when the system refused it (ENOSPC, EACCES,
    /// EROFS, ...), None when the filesystem lacks what the job needs (O_DIRECT).
    File { errno: Option<i32>, message: String },
    /// The device holds data (a filesystem, partition table, RAID or LVM member, swap...) and
    /// `writers` would overwrite it; `--destroy-data` overrides.
    DeviceHoldsData {
        device: PathBuf,
        found: Vec<weir_guard::Signature>,
        /// The jobs that write, as `name (type)`.
        writers: Vec<String>,
    },
    /// The device could not be read to look for data on it.
    DeviceProbe(weir_guard::ProbeError),
}

/// Setting up failed for a reason outside the operator's input.
#[derive(Debug)]
#[non_exhaustive]
pub enum SetupError {
    /// The I/O backend (io_uring, AIO, a caller's factory) could not open `shard`'s device.
    Backend {
        shard: usize,
        error: crate::factory::DeviceOpenError,
    },
    /// The buffer pool could not be allocated.
    Buffers(BufferError),
    /// A test file could not be made or written back (EIO, ...).
    File { errno: Option<i32>, message: String },
    /// The raw device could not be opened for a reason not the operator's.
    Device(BlockDeviceError),
    /// A shard thread panicked; `panic` is what it said.
    ShardPanicked(ShardPanic),
    /// The thread supervising the shards died.
    SupervisorFailed,
    /// Job `job_index` has no region on `shard` (a layout the checks should have refused).
    NoRegion { job_index: usize, shard: usize },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Usage(e) => e.fmt(f),
            RunError::Setup(e) => e.fmt(f),
            RunError::Failed { message, .. } => f.write_str(message),
        }
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::Plan(e) => e.fmt(f),
            UsageError::Scheduler(e) => write!(f, "scheduler: {e}"),
            UsageError::SchedGroups(e) => e.fmt(f),
            UsageError::Options(e) => e.fmt(f),
            UsageError::Device(e) => e.fmt(f),
            UsageError::DeviceHoldsData {
                device,
                found,
                writers,
            } => {
                let shown = device.display();
                let what = found
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ");
                write!(
                    f,
                    "--device {shown} holds {what}. The jobs {} write to it and would destroy \
                     that data, so weir refuses. Pick a device that holds nothing you need, \
                     check with `wipefs --no-act {shown}` (or lsblk -f), or pass \
                     --destroy-data to overwrite it anyway (read-only jobs run without it)",
                    writers.join(", ")
                )
            }
            UsageError::DeviceProbe(e) => e.fmt(f),
            UsageError::DeviceTooSmall {
                device,
                need_bytes,
                regions,
                capacity_bytes,
            } => write!(
                f,
                "the jobs need {need_bytes} bytes of {} ({regions} regions of data_size / shards \
                 each, laid end to end), but it holds {capacity_bytes} bytes: lower data_size or \
                 the shard count",
                device.display()
            ),
            UsageError::NoSpace {
                dir,
                need_bytes,
                free_bytes,
            } => write!(
                f,
                "the jobs' test files need {} in {}, but its filesystem has {} free: lower \
                 data_size, run fewer shards (--shards), free space or pass another --dir",
                format_bytes(*need_bytes),
                dir.display(),
                format_bytes(*free_bytes)
            ),
            UsageError::Job { message: m, .. }
            | UsageError::Directory { message: m, .. }
            | UsageError::File { message: m, .. } => f.write_str(m),
            UsageError::Misaligned {
                job,
                request_bytes,
                align_bytes,
                target,
                source,
            } => {
                let below = request_bytes / align_bytes * align_bytes;
                let above = below + align_bytes;
                let nearest = if below == 0 {
                    format!("{above}")
                } else {
                    format!("{below} or {above}")
                };
                write!(
                    f,
                    "job `{job}`: shard_info.reqsize {request_bytes} bytes is not a multiple of \
                     the direct-I/O alignment of {target} ({align_bytes} bytes, from {source}); \
                     use {nearest} bytes, or pass --buffered to run through the page cache"
                )
            }
        }
    }
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetupError::Backend { error, .. } => error.fmt(f),
            SetupError::Buffers(e) => e.fmt(f),
            SetupError::Device(e) => e.fmt(f),
            SetupError::ShardPanicked(panic) => panic.fmt(f),
            SetupError::SupervisorFailed => f.write_str("the shard supervisor thread failed"),
            SetupError::NoRegion { job_index, shard } => {
                write!(f, "no device region for job {job_index} on shard {shard}")
            }
            SetupError::File { message: m, .. } => f.write_str(m),
        }
    }
}

/// Run options that cannot go together; each message says which to drop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OptionsError {
    /// `--dir` and `--device` both given.
    DirAndDevice,
    /// `--buffered` with `--device`.
    BufferedDevice,
    /// `--verify` with `--device`.
    VerifyDevice,
    /// `--verify` with no directory (the null device).
    VerifyWithoutFiles,
    /// More shards than 4096 (`MAX_SHARDS`): each is a thread with its own ring
    /// and buffers, so a typo (a million) would exhaust the machine before any I/O.
    TooManyShards { shards: usize },
    /// A run of zero length measures nothing.
    ZeroDuration,
    /// Longer than one year (`MAX_DURATION`).
    DurationTooLong { seconds: u64 },
}

impl fmt::Display for OptionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionsError::TooManyShards { shards } => {
                return write!(
                    f,
                    "--shards {shards}: at most {} shards (one thread, ring and buffer pool \
                     each) are accepted; use one per core (omit --shards)",
                    crate::options::MAX_SHARDS
                )
            }
            OptionsError::DurationTooLong { seconds } => {
                return write!(
                    f,
                    "--duration of {seconds} s is longer than the {} s (one year) weir accepts; \
                     give a duration such as 10s, 30m or 24h",
                    crate::options::MAX_DURATION.as_secs()
                )
            }
            _ => {}
        }
        f.write_str(match self {
            OptionsError::TooManyShards { .. } | OptionsError::DurationTooLong { .. } => "",
            OptionsError::ZeroDuration => "--duration must be longer than zero, e.g. 10s",
            OptionsError::DirAndDevice => {
                "give either --dir (test files) or --device (a raw device), not both"
            }
            OptionsError::BufferedDevice => {
                "--buffered does not apply to --device: raw devices run with O_DIRECT"
            }
            OptionsError::VerifyDevice => {
                "--verify needs test files (it checks prefilled data): use --dir"
            }
            OptionsError::VerifyWithoutFiles => "--verify needs real files: give a directory",
        })
    }
}

impl std::error::Error for OptionsError {}
impl std::error::Error for RunError {}
impl std::error::Error for UsageError {}
impl std::error::Error for SetupError {}

impl From<UsageError> for RunError {
    fn from(e: UsageError) -> RunError {
        RunError::Usage(e)
    }
}

impl From<SetupError> for RunError {
    fn from(e: SetupError) -> RunError {
        RunError::Setup(e)
    }
}
