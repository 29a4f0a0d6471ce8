//! One job's state on one shard ([`JobRun`]) and what the runner decides for it
//! ([`JobSetup`]), plus the [`StopSignal`] the loop polls. Vocabulary shared by the driver, the
//! scheduler path, the inline loads and the verify pass: it imports none of them, so each of
//! them points here and nothing points back.

use std::collections::VecDeque;
use std::os::fd::RawFd;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use weir_engine::buffers::DmaBufferPool;
use weir_engine::PreparedFile;
use weir_model::device::Direction;

use crate::arrival::Arrivals;
use crate::job::Job;
use crate::report::{CorruptionReport, JobHistograms, ShardJobStats};
use crate::request::Failure;
use crate::unlink::UnlinkFiles;
use crate::verify::{BlockLedger, Corruption};

/// Corruptions kept per job and shard for the report (all are counted).
const CORRUPTIONS_KEPT: usize = 16;

/// Why the loop should stop issuing.
pub trait StopSignal {
    /// Polled once per loop iteration.
    fn should_stop(&self) -> bool;
    /// Called when this shard fails, so the others stop too.
    fn fail(&self, failure: Failure);
    /// Called at each progress point with this shard's elapsed device time; returns false
    /// when the run must stop. Only the sampling shard gets calls.
    fn sample(&self, elapsed_ns: u64, jobs: &[JobRun]) -> bool;
    /// How often to sample, in device nanoseconds; None when nobody samples on this shard.
    fn sample_interval_ns(&self) -> Option<u64>;
}

/// One job's state on one shard.
pub struct JobRun {
    pub job: Job,
    pub index: usize,
    pub shard: usize,
    /// Where its requests go (moved over from its [`JobSetup`]).
    pub target: JobTarget,
    /// This job's buffer pool in the shard loop (its position among the shard's jobs).
    pub(crate) pool_index: usize,
    /// `vectorized` jobs: segments per request (see [`crate::vectored`]).
    pub(crate) iov_count: Option<u32>,
    /// `unlink` jobs: this shard's files (see [`crate::unlink`]).
    pub(crate) unlink_files: Option<UnlinkFiles>,
    pub(crate) next_seq_offset: u64,
    pub(crate) rng: SmallRng,
    /// Closed loop: times at which fibers became (or become) ready.
    pub(crate) fibers_ready_ns: VecDeque<u64>,
    pub(crate) arrivals: Option<Arrivals>,
    pub(crate) backlog_ns: VecDeque<u64>,
    pub(crate) in_flight: u32,
    pub(crate) issued: u64,
    pub(crate) exhausted: bool,
    pub(crate) started_at_ns: u64,
    pub(crate) write_sequence: u64,
    pub ledger: Option<BlockLedger>,
    pub(crate) in_flight_writes: Vec<(u64, u64)>,
    pub stats: ShardJobStats,
    pub corruptions: Vec<CorruptionReport>,
    pub corruption_count: u64,
    pub blocks_checked: u64,
    /// Latencies since the last progress sample (kept only when sampling).
    pub recent: Option<Box<JobHistograms>>,
}

/// Where one job's requests go on one shard: the descriptor, the file behind it (if any) and
/// the region of it the job uses. Decided by setup, then owned by the job's [`JobRun`].
pub struct JobTarget {
    /// The file's or the raw device's descriptor; -1 when the run has no files (simulation).
    pub fd: RawFd,
    pub file: Option<PreparedFile>,
    /// The file's path, or the device and region, for messages.
    pub file_name: String,
    /// The region requests fall in; None for an unbounded append.
    pub data_bytes: Option<u64>,
    /// Added to every request's offset: the job's region on a raw device (0 for a file).
    pub base_offset_bytes: u64,
    /// The file was prefilled with the engine's pattern (reads of unwritten blocks check it).
    pub prefilled: bool,
}

/// What the runner decided for one job on one shard.
pub struct JobSetup {
    pub job: Job,
    pub index: usize,
    pub target: JobTarget,
    pub pool: DmaBufferPool,
    pub verify: bool,
    pub seed: u64,
    /// `unlink` jobs: the files created for this shard.
    pub unlink_files: Option<UnlinkFiles>,
}

impl JobRun {
    /// The job's state, and its buffer pool for the shard loop, where it will be pool
    /// `pool_index`.
    pub fn new(
        setup: JobSetup,
        shard: usize,
        sampling: bool,
        pool_index: usize,
    ) -> (JobRun, DmaBufferPool) {
        let JobSetup {
            job,
            index,
            target,
            mut pool,
            verify,
            seed,
            unlink_files,
        } = setup;
        if !job.job_type.is_read() && !verify {
            // Write data nothing below can compress or deduplicate (each write also stamps its
            // blocks with offset and sequence, in `issue`): see weir_engine::payload.
            weir_engine::payload::fill_pool_incompressible(&mut pool, seed);
        }
        let run = JobRun {
            index,
            shard,
            target,
            pool_index,
            iov_count: job.iov_count,
            unlink_files,
            next_seq_offset: 0,
            rng: SmallRng::seed_from_u64(seed),
            fibers_ready_ns: VecDeque::new(),
            arrivals: None,
            backlog_ns: VecDeque::new(),
            in_flight: 0,
            issued: 0,
            exhausted: false,
            started_at_ns: 0,
            write_sequence: 0,
            ledger: verify.then(BlockLedger::new),
            in_flight_writes: Vec::new(),
            stats: ShardJobStats {
                shard,
                ..Default::default()
            },
            corruptions: Vec::new(),
            corruption_count: 0,
            blocks_checked: 0,
            recent: sampling.then(Box::default),
            job,
        };
        (run, pool)
    }

    pub(crate) fn start(&mut self, start_ns: u64) {
        self.started_at_ns = start_ns;
        if let Some(rate) = self.job.arrivals_per_s() {
            let seed = self.rng.gen();
            self.arrivals = Some(Arrivals::new(
                rate,
                self.job.pause_distribution,
                start_ns,
                seed,
            ));
        } else {
            self.fibers_ready_ns = (0..self.job.parallelism).map(|_| start_ns).collect();
        }
    }

    /// The next offset for a request, or None when the job has no more room (a bounded
    /// append that reached its data size) or must wait (verify: an overlapping write is in
    /// flight).
    pub(crate) fn next_offset(&mut self) -> Option<u64> {
        let len = u64::from(self.job.request_bytes);
        if self.job.job_type.is_random() {
            let blocks = self.target.data_bytes.unwrap_or(len) / len;
            for _ in 0..8 {
                let offset = self.rng.gen_range(0..blocks.max(1)) * len;
                if !self.overlaps_in_flight_write(offset, len) {
                    return Some(offset);
                }
            }
            return None;
        }
        let appending = self.job.prepare().extends_file();
        let mut offset = self.next_seq_offset;
        if let Some(limit) = self.target.data_bytes {
            if offset + len > limit {
                if appending {
                    self.exhausted = true;
                    return None;
                }
                self.stats.wraps += 1;
                offset = 0;
            }
        }
        if self.overlaps_in_flight_write(offset, len) {
            return None;
        }
        self.next_seq_offset = offset + len;
        Some(offset)
    }

    pub(crate) fn overlaps_in_flight_write(&self, offset: u64, len: u64) -> bool {
        self.ledger.is_some()
            && self
                .in_flight_writes
                .iter()
                .any(|&(o, l)| offset < o + l && o < offset + len)
    }

    pub(crate) fn direction(&self) -> Direction {
        if self.job.job_type.is_read() {
            Direction::Read
        } else {
            Direction::Write
        }
    }

    pub(crate) fn limit_reached(&self) -> bool {
        self.exhausted || self.job.limit.is_some_and(|limit| self.issued >= limit)
    }

    /// The next time this job wants to act, if it is waiting on a timer.
    pub(crate) fn next_timer_ns(&self, now_ns: u64) -> Option<u64> {
        if self.limit_reached() {
            return None;
        }
        if let Some(arrivals) = &self.arrivals {
            return Some(arrivals.peek_ns().max(now_ns));
        }
        self.fibers_ready_ns
            .front()
            .copied()
            .filter(|t| *t > now_ns)
    }

    /// Counts a corruption, keeping the first few for the report.
    pub(crate) fn record_corruption(&mut self, c: Corruption) {
        self.corruption_count += 1;
        if self.corruptions.len() < CORRUPTIONS_KEPT {
            self.corruptions.push(CorruptionReport {
                job: self.job.name.clone(),
                shard: self.shard,
                file: self.target.file_name.clone(),
                offset_bytes: c.offset_bytes,
                expected: c.expected,
                found: c.found,
            });
        }
    }
}
