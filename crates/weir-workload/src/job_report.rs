//! One job's measurements: per shard as the driver hands them over ([`ShardJobStats`]), and
//! merged over the shards into the report's [`JobReport`]. Imports no other report module,
//! so the run report and the scheduler's class report both point here.

use serde::Serialize;

use crate::job::Job;
pub use crate::measures::{JobHistograms, Latencies, Throughput};

/// One job, all its shards merged.
#[derive(Debug, Clone, Serialize)]
pub struct JobReport {
    pub name: String,
    #[serde(rename = "type")]
    pub job_type: String,
    pub class: String,
    pub prepare: String,
    pub shards: Vec<usize>,
    pub request_bytes: u32,
    pub parallelism: u32,
    /// Open-loop arrivals per second per fiber; null for closed-loop jobs.
    pub rps: Option<u32>,
    /// Open-loop byte rate per shard (`shard_info.bandwidth`); null when not set.
    pub bandwidth_limit_bytes_per_s: Option<u64>,
    #[serde(flatten)]
    pub throughput: Throughput,
    #[serde(flatten)]
    pub latencies: Latencies,
    /// RWF_NOWAIT requests of this job the kernel refused with EAGAIN (each was re-sent
    /// without the flag).
    pub eagain_retries: u64,
    /// Requests that failed (the first failure stops the run).
    pub errors: u64,
    /// Open-loop arrivals that were due but not yet sent when the run ended (a backlog: the
    /// disk could not keep up with the rate).
    pub unsent_at_end: u64,
    /// Times a sequential job wrapped around to offset 0 (io_tester's file_size_overflows).
    pub wraps: u64,
    pub per_shard: Vec<ShardJobReport>,
    #[serde(skip)]
    pub histograms: Option<Box<JobHistograms>>,
}

/// One job on one shard.
#[derive(Debug, Clone, Serialize)]
pub struct ShardJobReport {
    pub shard: usize,
    #[serde(flatten)]
    pub throughput: Throughput,
    #[serde(flatten)]
    pub latencies: Latencies,
    /// The file's size after the run (0 when the run used no files).
    pub file_bytes: u64,
    /// Times a sequential job wrapped around to offset 0 on this shard.
    pub wraps: u64,
    /// RWF_NOWAIT refusals of this job on this shard (each re-sent without the flag).
    pub eagain_retries: u64,
}

/// Per-shard measurements of one job, as the driver hands them over.
#[derive(Debug, Clone, Default)]
pub struct ShardJobStats {
    pub shard: usize,
    pub ops: u64,
    pub bytes: u64,
    pub histograms: JobHistograms,
    pub errors: u64,
    pub unsent_at_end: u64,
    pub wraps: u64,
    pub eagain_retries: u64,
    pub file_bytes: u64,
}

impl JobReport {
    /// Merges a job's per-shard statistics measured over `window_s` seconds.
    pub fn merge(job: &Job, shards: &[ShardJobStats], window_s: f64) -> JobReport {
        let per_shard = shards
            .iter()
            .map(|s| ShardJobReport {
                shard: s.shard,
                throughput: Throughput::over(s.ops, s.bytes, window_s),
                latencies: Latencies::of(&s.histograms),
                file_bytes: s.file_bytes,
                wraps: s.wraps,
                eagain_retries: s.eagain_retries,
            })
            .collect();
        let merged = JobHistograms::merged(shards.iter().map(|s| &s.histograms));
        let ops = shards.iter().map(|s| s.ops).sum();
        let bytes = shards.iter().map(|s| s.bytes).sum();
        JobReport {
            name: job.name.clone(),
            job_type: job.job_type.as_str().to_string(),
            class: job.class_name().to_string(),
            prepare: job.prepare().as_str().to_string(),
            shards: shards.iter().map(|s| s.shard).collect(),
            request_bytes: job.request_bytes,
            parallelism: job.parallelism,
            rps: job.rps,
            bandwidth_limit_bytes_per_s: job.bandwidth_bytes_per_s,
            throughput: Throughput::over(ops, bytes, window_s),
            latencies: Latencies::of(&merged),
            eagain_retries: shards.iter().map(|s| s.eagain_retries).sum(),
            errors: shards.iter().map(|s| s.errors).sum(),
            unsent_at_end: shards.iter().map(|s| s.unsent_at_end).sum(),
            wraps: shards.iter().map(|s| s.wraps).sum(),
            per_shard,
            histograms: Some(Box::new(merged)),
        }
    }
}
