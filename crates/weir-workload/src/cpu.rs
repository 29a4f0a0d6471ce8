//! io_tester's `cpu` job: each request is a busy loop of `execution_time` run on the shard's
//! own thread, so it stalls the shard's I/O the way a long task stalls a Seastar reactor.
//!
//! Requests come from the same fibers (closed loop, `think_time` / `think_after`) or arrivals
//! (`rps`) as an I/O job's, but run inline where an I/O job would submit: nothing else on the
//! shard proceeds during the loop. The loop is timed on the host's monotonic clock and its
//! end is placed on the device's clock at `now` plus the loop's length (the same clock on the
//! real rings; on a simulated disk the loop costs host time only). Like io_tester, a request
//! counts one unit of "throughput" (loops per second).

use std::time::Instant;

use crate::driver::JobRun;

/// Runs every loop of `job` that is due at `now_ns` (device clock), one after another.
pub(crate) fn run_due(job: &mut JobRun, now_ns: u64) {
    let execution_ns = job.job.execution_time.as_nanos() as u64;
    let think_ns = job.job.think_time.as_nanos() as u64;
    let mut cursor_ns = now_ns;
    loop {
        if job.limit_reached() {
            break;
        }
        let open_loop = job.job.is_open_loop();
        let intended_ns = if open_loop {
            match job.backlog_ns.pop_front() {
                Some(t) => t,
                None => break,
            }
        } else {
            // A fiber whose loop ended after `now_ns` waits for the next call.
            match job.fibers_ready_ns.front() {
                Some(&t) if t <= now_ns => {
                    job.fibers_ready_ns.pop_front();
                    t
                }
                _ => break,
            }
        };
        let spun_ns = busy_loop_ns(execution_ns);
        let start_ns = cursor_ns.max(intended_ns);
        cursor_ns = start_ns + spun_ns;
        let latency_ns = cursor_ns - intended_ns;
        let h = &mut job.stats.histograms;
        h.latency.record_ns(latency_ns);
        h.queue.record_ns(start_ns - intended_ns);
        h.disk.record_ns(spun_ns);
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
}

/// Spins until `execution_ns` have passed on the host's monotonic clock; returns how long it
/// spun (at least `execution_ns`).
fn busy_loop_ns(execution_ns: u64) -> u64 {
    let start = Instant::now();
    loop {
        let spun = start.elapsed().as_nanos() as u64;
        if spun >= execution_ns {
            return spun;
        }
        std::hint::spin_loop();
    }
}
