//! How to run a plan: [`RunOptions`] and the scheduler's [`SchedulerOptions`]. Plain data,
//! read by the runner, the setup checks and the reports; a leaf of the crate.

use std::path::PathBuf;
use std::time::Duration;

use weir_engine::{Backend, Cancel, DirectIo};
use weir_model::cost::CostModel;
use weir_sched::SchedConfig;

use crate::sched_groups::SchedGroups;

/// The most shards a run accepts (each is a thread with its own ring and buffers).
pub const MAX_SHARDS: usize = 4096;

/// The longest run accepted: longer is a typo, and deadlines past it overflow clocks.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// How to run a plan.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Where the files go (`weir-<job>-<shard>.data`). None runs without files, which only a
    /// simulated device supports.
    pub dir: Option<PathBuf>,
    /// A raw block device instead of `dir` (io_tester's `--storage /dev/X`): claimed
    /// exclusively (refused while mounted), each job and shard in its own region, no
    /// preparation.
    pub device: Option<PathBuf>,
    pub duration: Duration,
    /// Number of shards (threads, one per core); 0 means one per available core.
    pub shards: usize,
    pub backend: Backend,
    /// Run through the page cache instead of O_DIRECT.
    pub buffered: bool,
    pub keep_files: bool,
    /// With `keep_files`: keep them for later runs of this process only (they stay marked as
    /// its own, so after it exits or is killed the next weir removes them).
    pub keep_files_until_exit: bool,
    /// Stamp every written block and check every read and, at the end, every file.
    pub verify: bool,
    /// Send requests with RWF_NOWAIT (EAGAIN is retried without it and counted).
    pub nowait: bool,
    /// How often the sampling callback runs (device time). None: never.
    pub sample_interval: Option<Duration>,
    /// Seeds offsets and Poisson arrivals (each job and shard derives its own stream).
    pub seed: u64,
    /// Send requests through weir's scheduler (class = the job's `class`, or its name;
    /// shares = the job's `shares`). None: straight to the device.
    pub scheduler: Option<SchedulerOptions>,
    /// Write to a `device` that holds a filesystem, partition table or other data weir
    /// recognises (`--destroy-data`). Off: such a device is refused for every plan that writes.
    pub destroy_data: bool,
    /// Stops the run early when cancelled (the `weir` binary cancels it on SIGINT/SIGTERM):
    /// the shards drain, the files are removed and the report covers the time until then.
    pub cancel: Cancel,
}

/// The scheduler's disk model and settings for a run.
#[derive(Debug, Clone)]
pub struct SchedulerOptions {
    /// The disk's cost model (from io-properties.yaml).
    pub model: CostModel,
    /// Latency goal, feedback, `unlimited` (measure classes without limiting: `--no-scheduler`).
    /// `shards` is set by the run.
    pub config: SchedConfig,
    /// The mount point label for Prometheus metrics.
    pub mountpoint: String,
    /// Send pieces that continue each other in a file as one vectored request (up to the
    /// scheduler's longest request); false submits every piece on its own (`--no-merge`).
    pub merge_adjacent: bool,
    /// io_tester's `--sched-groups`: supergroups, and the groups jobs join by `class`.
    /// None: every job class at the top level with its job's shares.
    pub groups: Option<SchedGroups>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            dir: None,
            device: None,
            duration: Duration::from_secs(10),
            shards: 0,
            backend: Backend::Uring,
            buffered: false,
            keep_files: false,
            keep_files_until_exit: false,
            verify: false,
            nowait: true,
            sample_interval: None,
            seed: 0x5745_4952,
            scheduler: None,
            destroy_data: false,
            cancel: Cancel::new(),
        }
    }
}

/// O_DIRECT unless the run asked for the page cache.
pub(crate) fn direct_policy(options: &RunOptions) -> DirectIo {
    if options.buffered {
        DirectIo::Disabled
    } else {
        DirectIo::Required
    }
}
