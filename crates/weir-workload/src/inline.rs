//! Jobs whose requests run on the shard's own thread instead of going to the device:
//! io_tester's `cpu` ([`crate::cpu`]) and `unlink` ([`crate::unlink`]) loads.
//!
//! Their requests come from the same fibers (closed loop, `think_time` / `think_after`) or
//! arrivals (`rps`) as an I/O job's, and run inline where an I/O job would submit: nothing
//! else on the shard proceeds meanwhile, as a long task stalls a Seastar reactor. Each is
//! timed on the host's monotonic clock and its end placed on the device's clock at `now` plus
//! its length (the same clock on the real rings; on a simulated disk it costs host time only).

use std::time::Instant;

use crate::job::JobType;
use crate::job_run::JobRun;
use crate::request::Failure;

/// Runs every request of `job` that is due at `now_ns` (device clock), one after another.
pub(crate) fn run_due(job: &mut JobRun, now_ns: u64) -> Result<(), Failure> {
    let think_ns = job.job.think_time.as_nanos() as u64;
    let open_loop = job.job.is_open_loop();
    let mut cursor_ns = now_ns;
    while !job.limit_reached() {
        let intended_ns = if open_loop {
            match job.backlog_ns.pop_front() {
                Some(t) => t,
                None => break,
            }
        } else {
            // A fiber whose request ended after `now_ns` waits for the next call.
            match job.fibers_ready_ns.front() {
                Some(&t) if t <= now_ns => {
                    job.fibers_ready_ns.pop_front();
                    t
                }
                _ => break,
            }
        };
        let started = Instant::now();
        match job.job.job_type {
            JobType::Cpu => crate::cpu::busy_loop(job.job.execution_time),
            _ => {
                if let Some(files) = &mut job.unlink_files {
                    files.unlink_next(&job.job.name)?;
                }
            }
        }
        let took_ns = started.elapsed().as_nanos() as u64;
        let start_ns = cursor_ns.max(intended_ns);
        cursor_ns = start_ns + took_ns;
        let latency_ns = cursor_ns - intended_ns;
        job.stats
            .histograms
            .record_ns(latency_ns, start_ns - intended_ns, took_ns);
        if let Some(recent) = &mut job.recent {
            recent.latency.record_ns(latency_ns);
        }
        job.stats.ops += 1;
        job.issued += 1;
        if !open_loop {
            let elapsed_ns = cursor_ns.saturating_sub(job.started_at_ns);
            let think = if job.job.thinking_at(elapsed_ns) {
                think_ns
            } else {
                0
            };
            job.fibers_ready_ns.push_back(cursor_ns + think);
        }
    }
    Ok(())
}
