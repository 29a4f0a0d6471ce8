//! io_tester's output document (`--output yaml`), key for key, so scripts written for
//! io_tester read weir's output.
//!
//! io_tester prints one YAML document: a list with one map per shard, `shard: <n>` then one
//! map per job on that shard (`throughput` in kB/s, `IOPS`, `latencies` in microseconds with
//! `average`, `p0.5`, `p0.95`, `p0.99`, `p0.999`, `max`, and `stats`), then the shard's
//! `statistics` (`aio_retries`). In `stats` it prints only the `io_queue_*` metrics that
//! exist; weir prints those it measures: the job's own operations with their summed time in
//! the disk and in the queue, and, through the scheduler, the class's starvation time and
//! consumption. `disk_queue_length`, `io_queue_adjusted_consumption`, `io_queue_activations`
//! and `reactor_aio_outsizes` have no weir counterpart and are left out, as io_tester leaves
//! out a metric it does not find.

use std::fmt::Write as _;

use crate::job::JobType;
use crate::report::{Report, ShardJobReport};

impl Report {
    /// io_tester's output document (see the module documentation).
    pub fn to_io_tester_yaml(&self) -> String {
        let mut out = String::from("---\n");
        let mut shard_ids: Vec<usize> = self
            .jobs
            .iter()
            .flat_map(|j| j.per_shard.iter().map(|s| s.shard))
            .collect();
        shard_ids.sort_unstable();
        shard_ids.dedup();
        for shard in shard_ids {
            let _ = writeln!(out, "- shard: {shard}");
            let mut aio_retries = 0;
            for job in &self.jobs {
                if let Some(s) = job.per_shard.iter().find(|s| s.shard == shard) {
                    aio_retries += s.eagain_retries;
                    if job.job_type == JobType::Cpu.as_str() {
                        write_cpu_job(&mut out, self, &job.name, s);
                    } else if job.job_type == JobType::Unlink.as_str() {
                        write_unlink_job(&mut out, &job.name, s);
                    } else {
                        write_job(&mut out, self, &job.name, &job.class, s);
                    }
                }
            }
            let _ = writeln!(out, "  statistics:");
            let _ = writeln!(out, "    aio_retries: {aio_retries}");
        }
        out.push_str("...\n");
        out
    }
}

/// io_tester reports only `throughput` for a cpu job: busy loops per second.
fn write_cpu_job(out: &mut String, report: &Report, name: &str, s: &ShardJobReport) {
    let per_s = if report.duration_s > 0.0 {
        s.throughput.ops as f64 / report.duration_s
    } else {
        0.0
    };
    let _ = writeln!(out, "  {name}:");
    let _ = writeln!(out, "    throughput: {per_s:.0}");
}

/// io_tester reports an unlink job's IOPS, average and maximum latency, and requests.
fn write_unlink_job(out: &mut String, name: &str, s: &ShardJobReport) {
    let _ = writeln!(out, "  {name}:");
    let _ = writeln!(out, "    IOPS: {:.0}", s.throughput.iops);
    let _ = writeln!(out, "    latencies:  # usec");
    let _ = writeln!(out, "      average: {:.0}", s.latencies.latency_us.avg);
    let _ = writeln!(out, "      max: {:.0}", s.latencies.latency_us.max);
    let _ = writeln!(out, "    stats:");
    let _ = writeln!(out, "      total_requests: {}", s.throughput.ops);
}

fn write_job(out: &mut String, report: &Report, name: &str, class: &str, s: &ShardJobReport) {
    // io_tester: (bytes >> 10) / seconds.
    let kbs = if report.duration_s > 0.0 {
        (s.throughput.bytes >> 10) as f64 / report.duration_s
    } else {
        0.0
    };
    let l = &s.latencies.latency_us;
    let _ = writeln!(out, "  {name}:");
    let _ = writeln!(out, "    throughput: {kbs:.0}  # kB/s");
    let _ = writeln!(out, "    IOPS: {:.0}", s.throughput.iops);
    let _ = writeln!(out, "    latencies:  # usec");
    let _ = writeln!(out, "      average: {:.0}", l.avg);
    let _ = writeln!(out, "      p0.5: {:.0}", l.p50);
    let _ = writeln!(out, "      p0.95: {:.0}", l.p95);
    let _ = writeln!(out, "      p0.99: {:.0}", l.p99);
    let _ = writeln!(out, "      p0.999: {:.0}", l.p999);
    let _ = writeln!(out, "      max: {:.0}", l.max);
    let _ = writeln!(out, "    stats:");
    let _ = writeln!(out, "      total_requests: {}", s.throughput.ops);
    // Summed seconds from the means: avg (us) x count.
    let total_sec = |avg_us: f64| avg_us * s.throughput.ops as f64 / 1e6;
    let _ = writeln!(
        out,
        "      io_queue_total_exec_sec: {:.6}",
        total_sec(s.latencies.disk_latency_us.avg)
    );
    let _ = writeln!(
        out,
        "      io_queue_total_delay_sec: {:.6}",
        total_sec(s.latencies.queue_latency_us.avg)
    );
    let _ = writeln!(out, "      io_queue_total_operations: {}", s.throughput.ops);
    let class_metrics = report
        .scheduler_metrics
        .iter()
        .filter(|m| m.shard == s.shard)
        .flat_map(|m| m.classes.iter())
        .find(|c| c.name == class);
    if let Some(c) = class_metrics {
        let _ = writeln!(
            out,
            "      io_queue_starvation_time_sec: {:.6}",
            c.starvation_sec
        );
        let _ = writeln!(out, "      io_queue_consumption: {:.6}", c.consumption_sec);
    }
    let _ = writeln!(out, "      file_size_overflows: {}", s.wraps);
}
