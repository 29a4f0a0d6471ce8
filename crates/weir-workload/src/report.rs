//! What a run measured, and its three renderings: a table for people, JSON for scripts
//! (schema documented in `docs/reference/job-files.md`; stable: fields are only ever added), and io_tester's
//! YAML layout for tools that already parse io_tester output.

use std::fmt::Write as _;

use serde::Serialize;

pub use crate::class_report::{ClassReport, SchedulerReport};
pub use crate::job_report::{JobReport, ShardJobReport, ShardJobStats};
pub use crate::measures::{JobHistograms, Latencies, Throughput};
use crate::text_table::{fmt_us, write_table};

/// The JSON schema version; bumped only on an incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    /// The measured window: from the common start to the end (or the early stop).
    pub duration_s: f64,
    pub requested_duration_s: f64,
    pub shards: usize,
    /// "uring", "aio", or the name a custom device factory gave.
    pub backend: String,
    pub direct_io: bool,
    /// Why the run ended before its duration, if it did ("interrupted", "stopped by the
    /// caller", or the failure).
    pub stopped_early: Option<String>,
    /// Process CPU time (getrusage RUSAGE_SELF) over the whole run, preparation included.
    pub cpu: CpuUsage,
    /// Each shard's busy time: the CPU time its thread used during the measured loop
    /// (CLOCK_THREAD_CPUTIME_ID), in seconds, indexed by shard. A `cpu` job shows here.
    pub shard_busy_s: Vec<f64>,
    /// RWF_NOWAIT requests the kernel refused with EAGAIN and weir re-sent (all shards).
    pub eagain_retries: u64,
    pub verify: Option<VerifyReport>,
    pub jobs: Vec<JobReport>,
    /// Present when the run went through the scheduler (`--io-properties`).
    pub scheduler: Option<SchedulerReport>,
    /// The scheduler's per-shard counters, for Prometheus exposition (not serialized).
    #[serde(skip)]
    pub scheduler_metrics: Vec<weir_sched::ShardMetrics>,
    /// Job options the filesystem could not apply (each once, whatever the shard count); the
    /// run went on without them.
    pub warnings: Vec<String>,
}

/// Process CPU time.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct CpuUsage {
    pub user_s: f64,
    pub sys_s: f64,
}

/// Data verification results (`--verify`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct VerifyReport {
    /// 512-byte blocks checked by reads during the run and by the final pass.
    pub blocks_checked: u64,
    pub corruptions: u64,
    /// The first corruptions found (at most 16 per job and shard).
    pub first: Vec<CorruptionReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CorruptionReport {
    pub job: String,
    pub shard: usize,
    pub file: String,
    pub offset_bytes: u64,
    pub expected: String,
    pub found: String,
}

impl Report {
    /// The JSON document (pretty-printed).
    pub fn to_json(&self) -> String {
        // Serializing plain structs of numbers and strings cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// A table for a terminal: one row per job, latencies in microseconds.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "weir run: {} shard(s), {} backend, {}, {:.2} s measured",
            self.shards,
            self.backend,
            if self.direct_io {
                "O_DIRECT"
            } else {
                "buffered (page cache)"
            },
            self.duration_s
        );
        if let Some(why) = &self.stopped_early {
            let _ = writeln!(out, "stopped early: {why}");
        }
        let header = [
            "job", "type", "reqsize", "IOPS", "MiB/s", "avg", "p50", "p95", "p99", "p99.9", "max",
        ];
        let mut rows: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
        for job in &self.jobs {
            let l = &job.latencies.latency_us;
            rows.push(vec![
                job.name.clone(),
                job.job_type.clone(),
                weir_model::units::format_bytes(u64::from(job.request_bytes)),
                format!("{:.0}", job.throughput.iops),
                format!(
                    "{:.1}",
                    job.throughput.bandwidth_bytes_per_s / (1024.0 * 1024.0)
                ),
                fmt_us(l.avg),
                fmt_us(l.p50),
                fmt_us(l.p95),
                fmt_us(l.p99),
                fmt_us(l.p999),
                fmt_us(l.max),
            ]);
        }
        write_table(&mut out, &rows);
        let _ = writeln!(
            out,
            "latencies in microseconds, from the intended send time"
        );
        let queued: Vec<&JobReport> = self
            .jobs
            .iter()
            .filter(|j| j.latencies.queue_latency_us.max > 0.0)
            .collect();
        // With the scheduler the class table below shows queue and disk time instead.
        if !queued.is_empty() && self.scheduler.is_none() {
            let mut rows: Vec<Vec<String>> = vec![[
                "job",
                "class",
                "queue p50",
                "queue p99",
                "disk p50",
                "disk p99",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect()];
            for job in queued {
                rows.push(vec![
                    job.name.clone(),
                    job.class.clone(),
                    fmt_us(job.latencies.queue_latency_us.p50),
                    fmt_us(job.latencies.queue_latency_us.p99),
                    fmt_us(job.latencies.disk_latency_us.p50),
                    fmt_us(job.latencies.disk_latency_us.p99),
                ]);
            }
            let _ = writeln!(out);
            write_table(&mut out, &rows);
        }
        if let Some(s) = &self.scheduler {
            let _ = writeln!(out);
            out.push_str(&s.to_text());
        }
        for job in &self.jobs {
            if job.wraps > 0 && job.job_type != "seqread" {
                let _ = writeln!(
                    out,
                    "note: job {} wrapped to offset 0 {} time(s): after its first pass it \
                     overwrote data it had written (raise data_size to measure {} writes only)",
                    job.name, job.wraps, job.prepare
                );
            }
            if job.unsent_at_end > 0 {
                let _ = writeln!(
                    out,
                    "note: job {}: {} arrivals were still waiting to be sent at the end: the \
                     disk did not keep up with the rate (rps or bandwidth)",
                    job.name, job.unsent_at_end
                );
            }
        }
        let _ = writeln!(
            out,
            "EAGAIN retries (RWF_NOWAIT refused): {}; CPU user {:.2} s, sys {:.2} s",
            self.eagain_retries, self.cpu.user_s, self.cpu.sys_s
        );
        if let Some(v) = &self.verify {
            if v.corruptions == 0 {
                let _ = writeln!(
                    out,
                    "verify: {} blocks checked, no corruption",
                    v.blocks_checked
                );
            } else {
                let _ = writeln!(
                    out,
                    "verify: CORRUPTION: {} of {} blocks checked are wrong",
                    v.corruptions, v.blocks_checked
                );
                for c in &v.first {
                    let _ = writeln!(
                        out,
                        "  {} offset {} (0x{:x}): expected {}, found {}",
                        c.file, c.offset_bytes, c.offset_bytes, c.expected, c.found
                    );
                }
            }
        }
        out
    }
}

/// Process CPU time so far.
pub fn cpu_usage() -> CpuUsage {
    // SAFETY: rusage is plain data; getrusage fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return CpuUsage::default();
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    CpuUsage {
        user_s: secs(usage.ru_utime),
        sys_s: secs(usage.ru_stime),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{Job, JobType};

    fn sample_report() -> Report {
        let job = Job::new("reads", JobType::RandRead);
        let mut shards = Vec::new();
        for shard in 0..2 {
            let mut s = ShardJobStats {
                shard,
                ops: 1000,
                bytes: 1000 * 4096,
                ..Default::default()
            };
            for i in 0..1000u64 {
                s.histograms
                    .latency
                    .record_ns(100_000 + i * (shard as u64 + 1));
                s.histograms.disk.record_ns(90_000);
            }
            shards.push(s);
        }
        Report {
            schema_version: SCHEMA_VERSION,
            duration_s: 2.0,
            requested_duration_s: 2.0,
            shards: 2,
            backend: "uring".into(),
            direct_io: true,
            stopped_early: None,
            cpu: CpuUsage::default(),
            eagain_retries: 0,
            verify: None,
            jobs: vec![JobReport::merge(&job, &shards, 2.0)],
            scheduler: None,
            scheduler_metrics: Vec::new(),
            shard_busy_s: vec![0.0; 2],
            warnings: Vec::new(),
        }
    }

    #[test]
    fn merge_sums_shards_and_rates_use_the_window() {
        let r = sample_report();
        let job = &r.jobs[0];
        assert_eq!(job.throughput.ops, 2000);
        assert_eq!(job.throughput.iops, 1000.0);
        assert_eq!(job.per_shard.len(), 2);
        assert_eq!(job.per_shard[1].throughput.iops, 500.0);
        assert!(job.latencies.latency_us.p50 >= 100.0 && job.latencies.latency_us.max <= 102.1);
    }

    #[test]
    fn json_has_the_documented_keys() {
        let v: serde_json::Value = serde_json::from_str(&sample_report().to_json()).expect("json");
        let job = &v["jobs"][0];
        for key in [
            "name",
            "type",
            "class",
            "ops",
            "bytes",
            "iops",
            "bandwidth_bytes_per_s",
            "eagain_retries",
        ] {
            assert!(!job[key].is_null(), "missing {key}");
        }
        for slot in ["latency_us", "queue_latency_us", "disk_latency_us"] {
            for p in ["avg", "p50", "p95", "p99", "p999", "max"] {
                assert!(job[slot][p].is_number(), "missing {slot}.{p}");
            }
        }
        assert!(v["cpu"]["user_s"].is_number() && v["cpu"]["sys_s"].is_number());
    }

    /// Reads a document the way a script written for io_tester does: every shard map's
    /// `shard` is an integer, every other key but `statistics` is a job whose figures are
    /// read by their io_tester names. Returns (shard, job, total_requests, overflows, p0.99).
    fn read_as_io_tester_script(text: &str) -> Vec<(u64, String, u64, u64, f64)> {
        let doc: serde_yaml::Value = serde_yaml::from_str(text).expect("valid YAML");
        let mut rows = Vec::new();
        for shard in doc.as_sequence().expect("a list of shard maps") {
            let id = shard["shard"].as_u64().expect("shard is an integer");
            shard["statistics"]["aio_retries"]
                .as_u64()
                .expect("statistics.aio_retries");
            for (key, job) in shard.as_mapping().expect("shard map") {
                let key = key.as_str().expect("string key");
                if key == "shard" || key == "statistics" {
                    continue;
                }
                job["throughput"].as_f64().expect("throughput");
                job["IOPS"].as_f64().expect("IOPS");
                for q in ["average", "p0.5", "p0.95", "p0.99", "p0.999", "max"] {
                    job["latencies"][q]
                        .as_f64()
                        .unwrap_or_else(|| panic!("latencies.{q}"));
                }
                let stats = &job["stats"];
                for k in [
                    "io_queue_total_exec_sec",
                    "io_queue_total_delay_sec",
                    "io_queue_total_operations",
                ] {
                    stats[k].as_f64().unwrap_or_else(|| panic!("stats.{k}"));
                }
                rows.push((
                    id,
                    key.to_string(),
                    stats["total_requests"].as_u64().expect("total_requests"),
                    stats["file_size_overflows"].as_u64().expect("overflows"),
                    job["latencies"]["p0.99"].as_f64().expect("p0.99"),
                ));
            }
        }
        rows
    }

    #[test]
    fn yaml_reads_as_io_tester_output() {
        let mut report = sample_report();
        report.jobs[0].per_shard[1].wraps = 3;
        let text = report.to_io_tester_yaml();
        let rows = read_as_io_tester_script(&text);
        assert_eq!(
            rows.len(),
            2,
            "one entry per shard, no merged entry:\n{text}"
        );
        assert_eq!(rows[0].0, 0);
        assert_eq!(rows[1].0, 1);
        assert!(
            rows.iter().all(|r| r.1 == "reads" && r.2 == 1000),
            "{rows:?}"
        );
        assert_eq!((rows[0].3, rows[1].3), (0, 3), "file_size_overflows");
        // Shard 1's latencies are spread twice as wide (100-102 us against 100-101 us).
        assert!(rows[1].4 > rows[0].4, "{rows:?}");
        // (4096000 >> 10) kB over 2 s; 1000 requests of 90 us in the disk.
        assert!(text.contains("throughput: 2000  # kB/s"), "{text}");
        assert!(text.contains("io_queue_total_exec_sec: 0.09"), "{text}");
    }

    #[test]
    fn text_table_lists_all_percentiles() {
        let text = sample_report().to_text();
        for col in ["p50", "p95", "p99", "p99.9", "max", "reads"] {
            assert!(text.contains(col), "{text}");
        }
    }
}
