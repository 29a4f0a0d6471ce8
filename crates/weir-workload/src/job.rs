//! What to run: a [`Plan`] of [`Job`]s, built from an io_tester job file ([`crate::parse`]) or
//! programmatically (e.g. by `weir tune` and `weir align`).
//!
//! The vocabulary is io_tester's, so a job file means the same thing in both tools. Where
//! io_tester is ambiguous or measures the wrong thing, weir adds an explicit field rather than
//! changing a meaning: `seqwrite` (sequential writes into a fresh file) and `prepare` (how the
//! file looks before the first request) exist because io_tester's `overwrite` silently measures
//! overwriting a prefilled file, which ScyllaDB's disk articles show is not what a database's writes do.

use std::fmt;
use std::time::Duration;

/// The access pattern of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobType {
    /// Sequential reads from offset 0, wrapping at the end of the data.
    SeqRead,
    /// Sequential writes into a file prepared by `prepare` (default: pre-truncated, fresh).
    SeqWrite,
    /// io_tester's sequential write over a prefilled file, wrapping at the end.
    Overwrite,
    /// Reads at uniformly random request-aligned offsets within the data.
    RandRead,
    /// Writes at uniformly random request-aligned offsets within the (prefilled) data.
    RandWrite,
    /// Sequential writes that extend the file (size-changing writes).
    Append,
    /// io_tester's CPU load: each request is a busy loop of `execution_time` on the shard's
    /// thread (a reactor stall beside the I/O jobs of the shard); no file.
    Cpu,
    /// io_tester's file-removal load: `files_count` files per shard are created before the
    /// run, and each request unlinks the next one.
    Unlink,
}

impl JobType {
    /// Every type, in the order the job-file documentation lists them.
    pub const ALL: [JobType; 8] = [
        JobType::SeqRead,
        JobType::SeqWrite,
        JobType::Overwrite,
        JobType::RandRead,
        JobType::RandWrite,
        JobType::Append,
        JobType::Cpu,
        JobType::Unlink,
    ];

    /// The name used in job files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            JobType::SeqRead => "seqread",
            JobType::SeqWrite => "seqwrite",
            JobType::Overwrite => "overwrite",
            JobType::RandRead => "randread",
            JobType::RandWrite => "randwrite",
            JobType::Append => "append",
            JobType::Cpu => "cpu",
            JobType::Unlink => "unlink",
        }
    }

    /// Parses a job-file type name.
    pub fn from_name(name: &str) -> Option<JobType> {
        JobType::ALL.into_iter().find(|t| t.as_str() == name)
    }

    pub fn is_read(self) -> bool {
        matches!(self, JobType::SeqRead | JobType::RandRead)
    }

    /// Whether the job's requests go to the device through one data file per shard (every
    /// type but `cpu` and `unlink`, which run on the shard's thread).
    pub fn does_io(self) -> bool {
        !matches!(self, JobType::Cpu | JobType::Unlink)
    }

    pub fn is_random(self) -> bool {
        matches!(self, JobType::RandRead | JobType::RandWrite)
    }

    /// The preparation used when the job does not name one.
    pub fn default_prepare(self) -> Prepare {
        match self {
            // Reads need data to read; io_tester's overwrite and randwrite write over data.
            JobType::SeqRead | JobType::RandRead | JobType::Overwrite | JobType::RandWrite => {
                Prepare::Overwrite
            }
            // A fresh, pre-truncated file: what a database's new data file looks like.
            // (A cpu job has no file; nothing reads its preparation.)
            JobType::SeqWrite | JobType::Cpu | JobType::Unlink => Prepare::Pretruncate,
            JobType::Append => Prepare::Append,
        }
    }

    /// The preparations that make sense for this type.
    pub fn allowed_prepares(self) -> &'static [Prepare] {
        match self {
            JobType::SeqRead | JobType::RandRead | JobType::RandWrite => {
                &[Prepare::Overwrite, Prepare::Pretruncate, Prepare::Fallocate]
            }
            JobType::Overwrite => &[Prepare::Overwrite],
            JobType::SeqWrite => &Prepare::ALL,
            JobType::Append => &[Prepare::Append, Prepare::Sloppy],
            JobType::Cpu | JobType::Unlink => &[],
        }
    }
}

impl fmt::Display for JobType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a job's file looks before its first request: the engine's preparation modes.
pub use weir_engine::Prepare;

/// How open-loop arrivals are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PauseDistribution {
    /// Evenly spaced: one arrival every 1/rate.
    #[default]
    Uniform,
    /// Exponentially distributed gaps with mean 1/rate (a Poisson process).
    Poisson,
}

impl PauseDistribution {
    pub fn as_str(self) -> &'static str {
        match self {
            PauseDistribution::Uniform => "uniform",
            PauseDistribution::Poisson => "poisson",
        }
    }
}

/// Which shards run a job.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ShardSet {
    #[default]
    All,
    List(Vec<usize>),
}

impl ShardSet {
    pub fn contains(&self, shard: usize) -> bool {
        match self {
            ShardSet::All => true,
            ShardSet::List(list) => list.contains(&shard),
        }
    }

    /// The shards of `0..shard_count` in the set.
    pub fn resolve(&self, shard_count: usize) -> Vec<usize> {
        (0..shard_count).filter(|s| self.contains(*s)).collect()
    }
}

/// One io_tester job ("class" in io_tester's documentation): the same request stream replicated
/// on each of its shards, each shard with its own file `weir-<name>-<shard>.data`.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub name: String,
    pub job_type: JobType,
    pub shards: ShardSet,
    /// Total data across all shards of the run (io_tester divides it by the shard count and
    /// rounds each part up to 1 MiB). None: 1 GiB per shard, or unbounded for appends.
    pub data_size_bytes: Option<u64>,
    /// Closed-loop: requests kept in flight. Open-loop (with `rps`): the number of fibers,
    /// each sending `batch` requests `rps` times per second.
    pub parallelism: u32,
    /// Open-loop arrival rate per fiber, in arrivals per second; None means closed-loop.
    pub rps: Option<u32>,
    /// io_tester's `bandwidth`: an open-loop byte rate per shard, paced as
    /// bandwidth / (reqsize x batch) arrivals per second (exclusive with `rps`).
    pub bandwidth_bytes_per_s: Option<u64>,
    /// Requests sent together at each open-loop arrival.
    pub batch: u32,
    /// Stop the job after this many requests on each shard.
    pub limit: Option<u64>,
    pub request_bytes: u32,
    /// Closed-loop pause between a completion and the fiber's next request.
    pub think_time: Duration,
    /// io_tester's active/thinking phases: when non-zero, the job runs this long without
    /// thinking, then `think_time` long with a `think_time` pause after each completion, and
    /// so on; 0 thinks after every completion.
    pub think_after: Duration,
    /// Scheduler class name; None means the job's own name.
    pub class: Option<String>,
    /// Scheduler shares (io_tester's default is 10).
    pub shares: u32,
    /// Open writes with O_DSYNC semantics (each write durable on completion).
    pub dsync: bool,
    pub pause_distribution: PauseDistribution,
    /// None: the type's default ([`JobType::default_prepare`]).
    pub prepare: Option<Prepare>,
    /// For `sloppy` preparation: extend the file at least this far ahead (default 1 MiB).
    pub sloppy_size_hint_bytes: Option<u64>,
    /// io_tester's `extent_allocation_size_hint`: an XFS extent size hint set on each new file
    /// (filesystems without hints get a warning and run without it).
    pub extent_size_hint_bytes: Option<u64>,
    /// io_tester's `sleep_type: busyloop`: the shard polls instead of sleeping until the next
    /// arrival, so sends leave on time even where waking a sleeping core takes tens of
    /// microseconds (virtual machines), at the cost of a busy core.
    pub busy_poll: bool,
    /// io_tester's `vectorized: true` (with `iov_count`, default 1): each request is sent as
    /// one vectored request of this many equal segments. None: one buffer per request.
    pub iov_count: Option<u32>,
    /// `cpu` jobs: the busy loop each request runs on the shard's thread.
    pub execution_time: Duration,
    /// `unlink` jobs: files created per shard before the run (io_tester's `files_count`).
    pub files_count: Option<u64>,
}

/// io_tester's default data size per shard.
pub const DEFAULT_DATA_PER_SHARD_BYTES: u64 = 1 << 30;
/// io_tester rounds each shard's part of `data_size` up to this.
pub const DATA_SIZE_ALIGN_BYTES: u64 = 1 << 20;
/// The largest request: a completion's byte count must fit in an i32.
pub const MAX_REQUEST_BYTES: u32 = 1 << 30;
/// The most requests per second one open-loop job may ask of one shard: above any disk's
/// rate, and enough that generating the arrivals themselves cannot stall a shard.
pub const MAX_REQUESTS_PER_S_PER_SHARD: f64 = 100_000_000.0;
/// The largest data_size: 1 EiB, beyond any device, so sizes derived from it cannot overflow.
pub const MAX_DATA_SIZE_BYTES: u64 = 1 << 60;
/// The most I/O buffer memory one job may take on one shard (one buffer per request in
/// flight, allocated up front).
pub const MAX_BUFFER_BYTES_PER_SHARD: u64 = 16 << 30;
/// io_tester's default shares.
pub const DEFAULT_SHARES: u32 = 10;

impl Job {
    /// A closed-loop job with io_tester's defaults (4 KiB requests, 10 shares), except that
    /// parallelism defaults to 1 rather than io_tester's 0, which ran nothing.
    pub fn new(name: impl Into<String>, job_type: JobType) -> Job {
        Job {
            name: name.into(),
            job_type,
            shards: ShardSet::All,
            data_size_bytes: None,
            parallelism: 1,
            rps: None,
            bandwidth_bytes_per_s: None,
            batch: 1,
            limit: None,
            request_bytes: 4096,
            think_time: Duration::ZERO,
            think_after: Duration::ZERO,
            class: None,
            shares: DEFAULT_SHARES,
            dsync: false,
            pause_distribution: PauseDistribution::Uniform,
            prepare: None,
            sloppy_size_hint_bytes: None,
            extent_size_hint_bytes: None,
            busy_poll: false,
            iov_count: None,
            execution_time: Duration::ZERO,
            files_count: None,
        }
    }

    /// The preparation this job uses.
    pub fn prepare(&self) -> Prepare {
        self.prepare.unwrap_or(self.job_type.default_prepare())
    }

    /// The scheduler class: `class`, or the job's name.
    pub fn class_name(&self) -> &str {
        self.class.as_deref().unwrap_or(&self.name)
    }

    /// The bytes of data each shard's file covers, rounded as io_tester does (up to 1 MiB and
    /// to a whole number of requests). None for an unbounded append.
    pub fn data_per_shard_bytes(&self, shard_count: usize) -> Option<u64> {
        if self.job_type == JobType::Cpu {
            return None;
        }
        let total = match self.data_size_bytes {
            Some(total) => total,
            None if self.prepare().extends_file() => return None,
            None => return Some(DEFAULT_DATA_PER_SHARD_BYTES),
        };
        let per_shard = (total / shard_count.max(1) as u64).max(1);
        let aligned = per_shard.div_ceil(DATA_SIZE_ALIGN_BYTES) * DATA_SIZE_ALIGN_BYTES;
        let request = u64::from(self.request_bytes.max(1));
        Some(aligned.div_ceil(request) * request)
    }

    /// Whether arrivals are open-loop (a rate) rather than closed-loop (a concurrency).
    pub fn is_open_loop(&self) -> bool {
        self.rps.is_some() || self.bandwidth_bytes_per_s.is_some()
    }

    /// Open-loop arrivals per second on one shard (each arrival sends `batch` requests), or
    /// None for a closed-loop job: `rps` x parallelism, or bandwidth / (reqsize x batch).
    pub fn arrivals_per_s(&self) -> Option<f64> {
        if let Some(rps) = self.rps {
            return Some(f64::from(rps) * f64::from(self.parallelism.max(1)));
        }
        let bytes_per_arrival = f64::from(self.request_bytes.max(1)) * f64::from(self.batch.max(1));
        self.bandwidth_bytes_per_s
            .map(|bandwidth| bandwidth as f64 / bytes_per_arrival)
    }

    /// Whether a fiber whose request completed `elapsed_ns` after the job's start pauses
    /// `think_time` before its next request (io_tester's thinker: with `think_after`, phases
    /// of `think_after` without pauses and of `think_time` with them alternate).
    pub fn thinking_at(&self, elapsed_ns: u64) -> bool {
        let think = self.think_time.as_nanos() as u64;
        let after = self.think_after.as_nanos() as u64;
        if think == 0 {
            return false;
        }
        after == 0 || elapsed_ns % after.saturating_add(think) >= after
    }

    /// The most requests of this job one shard keeps in flight.
    pub fn max_in_flight(&self) -> u32 {
        if self.is_open_loop() {
            // Open-loop arrivals beyond this wait in a backlog, still timed from their
            // intended send time; the cap bounds buffers, not the measured latency.
            self.parallelism
                .max(1)
                .saturating_mul(self.batch.max(1))
                .clamp(OPEN_LOOP_MIN_DEPTH, 256)
        } else {
            self.parallelism
        }
    }

    /// Checks what the parser cannot: combinations of fields. The error names the field.
    pub fn validate(&self) -> Result<(), JobError> {
        let err = |field: &'static str, message: String| {
            Err(JobError {
                job: self.name.clone(),
                field,
                message,
            })
        };
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
        {
            return err(
                "name",
                format!(
                    "`{}` cannot name a file: use letters, digits, '_', '-' or '.'",
                    self.name
                ),
            );
        }
        if self.request_bytes == 0 {
            return err("shard_info.reqsize", "must be at least 512 bytes".into());
        }
        if self.request_bytes > MAX_REQUEST_BYTES {
            return err(
                "shard_info.reqsize",
                format!(
                    "{} bytes is above the largest request weir sends (1 GiB); split it into \
                     smaller requests",
                    self.request_bytes
                ),
            );
        }
        if self.parallelism == 0 {
            return err(
                "shard_info.parallelism",
                "is 0, so the job would send nothing: give 1 or more".into(),
            );
        }
        let buffer_bytes = u64::from(self.max_in_flight()) * u64::from(self.request_bytes);
        if buffer_bytes > MAX_BUFFER_BYTES_PER_SHARD {
            return err(
                "shard_info.parallelism",
                format!(
                    "{} requests in flight of {} bytes need {buffer_bytes} bytes of buffers on \
                     each shard, above weir's limit of 16 GiB: lower parallelism or reqsize",
                    self.max_in_flight(),
                    self.request_bytes
                ),
            );
        }
        if self
            .data_size_bytes
            .is_some_and(|d| d > MAX_DATA_SIZE_BYTES)
        {
            return err(
                "data_size",
                "is above 1 EiB (2^60 bytes), more than any device holds: give the bytes the \
                 job should cover, e.g. 10GB"
                    .into(),
            );
        }
        if self.rps == Some(0) {
            return err(
                "shard_info.rps",
                "is 0: give a positive rate, or remove rps for a closed-loop job".into(),
            );
        }
        if self.bandwidth_bytes_per_s == Some(0) {
            return err(
                "shard_info.bandwidth",
                "is 0: give a positive byte rate per shard such as 10MB, or remove it for a \
                 closed-loop job"
                    .into(),
            );
        }
        if self.rps.is_some() && self.bandwidth_bytes_per_s.is_some() {
            return err(
                "shard_info.bandwidth",
                "cannot be combined with shard_info.rps: both set the open-loop arrival rate; \
                 keep rps (requests per second per fiber) or bandwidth (bytes per second per \
                 shard, paced as bandwidth / reqsize requests per second)"
                    .into(),
            );
        }
        if let Some(hint) = self.extent_size_hint_bytes {
            if hint == 0 || hint > u64::from(u32::MAX) {
                return err(
                    "options.extent_allocation_size_hint",
                    format!(
                        "{hint} bytes is outside what filesystems accept (1 byte to 4 GiB - 1, \
                         a multiple of the block size): use e.g. 1MB"
                    ),
                );
            }
        }
        if self.batch == 0 {
            return err("shard_info.batch", "must be at least 1".into());
        }
        if let Some(iov_count) = self.iov_count {
            if let Err(message) = check_segments(self.request_bytes, iov_count) {
                return err("shard_info.iov_count", message);
            }
        }
        // Each round of arrivals queues parallelism x batch requests; the product of two
        // user values must not wrap, and beyond this many a round only grows a backlog.
        let per_round = u64::from(self.parallelism) * u64::from(self.batch);
        if self.is_open_loop() && per_round > MAX_REQUESTS_PER_ROUND {
            return err(
                "shard_info.batch",
                format!(
                    "parallelism {} x batch {} = {per_round} requests per arrival round, above \
                     the {MAX_REQUESTS_PER_ROUND} weir queues per shard: lower batch or \
                     parallelism and raise rps for the same rate",
                    self.parallelism, self.batch
                ),
            );
        }
        if let Some(per_s) = self.arrivals_per_s() {
            let requests_per_s = per_s * f64::from(self.batch.max(1));
            if requests_per_s > MAX_REQUESTS_PER_S_PER_SHARD {
                let field = if self.rps.is_some() {
                    "shard_info.rps"
                } else {
                    "shard_info.bandwidth"
                };
                return err(
                    field,
                    format!(
                        "asks for {requests_per_s:.0} requests per second on each shard \
                         (rps x parallelism x batch, or bandwidth / reqsize), above weir's \
                         limit of 100,000,000 (beyond any disk): lower rps, batch or parallelism"
                    ),
                );
            }
        }
        if self.shares == 0 {
            return err("shard_info.shares", "must be at least 1".into());
        }
        if !self.job_type.does_io() {
            return self.validate_inline();
        }
        if self.files_count.is_some_and(|n| n != 1) {
            return err(
                "files_count",
                format!(
                    "only `unlink` jobs create several files; a `{}` job uses one file per \
                     shard: remove the key",
                    self.job_type
                ),
            );
        }
        if !self.execution_time.is_zero() {
            return err(
                "shard_info.execution_time",
                format!(
                    "only `cpu` jobs run a busy loop; remove it from this `{}` job",
                    self.job_type
                ),
            );
        }
        let prepare = self.prepare();
        if !self.job_type.allowed_prepares().contains(&prepare) {
            let allowed: Vec<&str> = self
                .job_type
                .allowed_prepares()
                .iter()
                .map(|p| p.as_str())
                .collect();
            return err(
                "prepare",
                format!(
                    "`{prepare}` does not fit type `{}`: use one of {}",
                    self.job_type,
                    allowed.join(", ")
                ),
            );
        }
        if let Some(total) = self.data_size_bytes {
            if total < u64::from(self.request_bytes) {
                return err(
                    "data_size",
                    format!(
                        "{total} bytes is smaller than one request ({} bytes)",
                        self.request_bytes
                    ),
                );
            }
        }
        Ok(())
    }
}

impl Job {
    /// cpu and unlink jobs run on the shard's thread: a cpu job needs a busy loop, an unlink
    /// job a file count, and neither has a data file to prepare or read.
    fn validate_inline(&self) -> Result<(), JobError> {
        let err = |field: &'static str, message: &str| {
            Err(JobError {
                job: self.name.clone(),
                field,
                message: message.to_string(),
            })
        };
        if self.job_type == JobType::Unlink {
            return match self.files_count {
                Some(n) if (1..=MAX_UNLINK_FILES).contains(&n) => Ok(()),
                Some(n) => err(
                    "files_count",
                    &format!("{n} files per shard: give 1 to {MAX_UNLINK_FILES}"),
                ),
                None => err(
                    "files_count",
                    "an unlink job needs the number of files to create per shard, e.g. 5000",
                ),
            };
        }
        if self.execution_time.is_zero() {
            return err(
                "shard_info.execution_time",
                "a cpu job needs the length of its busy loop, e.g. 90us",
            );
        }
        if self.prepare.is_some() || self.iov_count.is_some() || self.dsync {
            return err(
                "type",
                "a cpu job has no file: remove prepare, vectorized and dsync",
            );
        }
        Ok(())
    }
}

/// io_tester's rule for `vectorized` requests: `iov_count` equal segments, each a multiple of
/// (and no smaller than) 4096 bytes for requests of 4096 bytes or more, 512 below.
fn check_segments(request_bytes: u32, iov_count: u32) -> Result<(), String> {
    if iov_count == 0 {
        return Err("is 0: a vectorized request needs at least 1 segment".into());
    }
    if iov_count as usize > weir_engine::shard_loop::MAX_SEGMENTS {
        return Err(format!(
            "{iov_count} segments: the kernel takes at most {} per request (IOV_MAX); lower \
             iov_count",
            weir_engine::shard_loop::MAX_SEGMENTS
        ));
    }
    if request_bytes % iov_count != 0 {
        return Err(format!(
            "{iov_count} does not divide reqsize ({request_bytes} bytes) evenly: pick an \
             iov_count that does, e.g. 4 for 64kB"
        ));
    }
    let segment = request_bytes / iov_count;
    let align = crate::vectored::segment_alignment_bytes(request_bytes);
    if segment < align || segment % align != 0 {
        return Err(format!(
            "{iov_count} segments of {segment} bytes: each segment must be a multiple of \
             {align} bytes (io_tester's rule for a {request_bytes}-byte request); lower \
             iov_count to at most {}",
            (request_bytes / align).max(1)
        ));
    }
    Ok(())
}

/// The most files an unlink job may create per shard.
pub const MAX_UNLINK_FILES: u64 = 10_000_000;

/// io_tester's unlink files: each holds its share of the shard's data, rounded up to 1 MiB.
pub const UNLINK_FILE_ALIGN_BYTES: u64 = 1 << 20;

/// The most requests one round of open-loop arrivals (parallelism x batch) may queue.
pub const MAX_REQUESTS_PER_ROUND: u64 = 1 << 20;

/// Open-loop jobs get at least this many request slots per shard.
const OPEN_LOOP_MIN_DEPTH: u32 = 32;

/// A job whose fields do not fit together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobError {
    pub job: String,
    pub field: &'static str,
    pub message: String,
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A whole-file problem (no jobs at all) belongs to no job: no empty `job ``` prefix.
        if self.job.is_empty() {
            return f.write_str(&self.message);
        }
        write!(f, "job `{}`, {}: {}", self.job, self.field, self.message)
    }
}

impl std::error::Error for JobError {}

/// A set of jobs run together for the same duration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    pub jobs: Vec<Job>,
}

impl Plan {
    pub fn new(jobs: Vec<Job>) -> Plan {
        Plan { jobs }
    }

    /// Validates every job and checks that names are unique (they name the files).
    pub fn validate(&self) -> Result<(), JobError> {
        if self.jobs.is_empty() {
            return Err(JobError {
                job: String::new(),
                field: "jobs",
                message: "the job file lists no jobs: add at least one `- name: ...` entry".into(),
            });
        }
        for (i, job) in self.jobs.iter().enumerate() {
            job.validate()?;
            if self.jobs[..i].iter().any(|other| other.name == job.name) {
                return Err(JobError {
                    job: job.name.clone(),
                    field: "name",
                    message: "appears twice: job names must be unique (they name the files)".into(),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_size_splits_like_io_tester() {
        let mut job = Job::new("a", JobType::RandRead);
        assert_eq!(job.data_per_shard_bytes(2), Some(1 << 30));
        job.data_size_bytes = Some(3 << 20);
        // 1.5 MiB per shard rounds up to 2 MiB.
        assert_eq!(job.data_per_shard_bytes(2), Some(2 << 20));
        job.request_bytes = 3 << 20;
        assert_eq!(job.data_per_shard_bytes(1), Some(3 << 20));
        let append = Job::new("b", JobType::Append);
        assert_eq!(append.data_per_shard_bytes(4), None);
    }

    #[test]
    fn prepare_must_fit_the_type() {
        let mut job = Job::new("r", JobType::RandRead);
        job.prepare = Some(Prepare::Append);
        let e = job.validate().expect_err("append read");
        assert_eq!(e.field, "prepare");
        assert!(
            e.message.contains("overwrite, pretruncate, fallocate"),
            "{e}"
        );
        job.prepare = Some(Prepare::Fallocate);
        job.validate().expect("fallocate read is allowed");
    }

    #[test]
    fn zero_parallelism_and_duplicates_are_errors() {
        let mut job = Job::new("x", JobType::SeqRead);
        job.parallelism = 0;
        assert_eq!(
            job.validate().expect_err("p0").field,
            "shard_info.parallelism"
        );
        let plan = Plan::new(vec![
            Job::new("x", JobType::SeqRead),
            Job::new("x", JobType::SeqRead),
        ]);
        assert!(plan.validate().expect_err("dup").message.contains("twice"));
        let bad_name = Job::new("a/b", JobType::SeqRead);
        assert_eq!(bad_name.validate().expect_err("slash").field, "name");
    }

    #[test]
    fn parallelism_times_batch_is_checked_not_wrapped() {
        let mut job = Job::new("flood", JobType::RandRead);
        job.rps = Some(10);
        job.parallelism = 1 << 16;
        job.batch = 1 << 16;
        // 2^32 wraps a u32 to 0; the product is checked in u64 and refused.
        let e = job.validate().expect_err("2^32 requests per round");
        assert_eq!(e.field, "shard_info.batch");
        assert!(
            e.message.contains("4294967296 requests per arrival round"),
            "{e}"
        );
        assert_eq!(job.max_in_flight(), 256);
        job.batch = 16;
        job.validate().expect("2^20 per round is allowed");
    }

    #[test]
    fn vectorized_segments_follow_io_testers_alignment_rule() {
        let mut job = Job::new("v", JobType::RandWrite);
        job.request_bytes = 64 << 10;
        job.iov_count = Some(4);
        job.validate().expect("4 x 16 KiB");
        for (reqsize, iov, fragment) in [
            (64 << 10, 3, "does not divide"),
            (64 << 10, 32, "multiple of 4096"),
            (2048, 8, "multiple of 512"),
            (4096, 0, "is 0"),
        ] {
            job.request_bytes = reqsize;
            job.iov_count = Some(iov);
            let e = job.validate().expect_err("bad segments");
            assert_eq!(e.field, "shard_info.iov_count");
            assert!(e.message.contains(fragment), "{reqsize}/{iov}: {e}");
        }
        job.request_bytes = 2048;
        job.iov_count = Some(4);
        job.validate().expect("4 x 512 B below 4 KiB");
    }
}
