//! The per-shard loop: turns jobs into requests, keeps them in flight, and times them.
//!
//! One thread, one [`Device`] inside the engine's [`ShardLoop`] (which owns the buffers and
//! everything in flight), no locks on the hot path. The loop is generic over the device,
//! so it runs unchanged on io_uring, Linux AIO and the simulated disk, and it takes every
//! time from the device's clock (a simulated run is as fast as the CPU and deterministic).
//!
//! Each iteration: make requests that are due (closed-loop fibers that are ready, open-loop
//! arrivals whose intended time has come), hand them to the device, then wait for a
//! completion or the next timer (an arrival, a fiber's think time, the end, a progress
//! sample), whichever is first. Three times are kept per request: *intended* (open loop: the
//! arrival time; closed loop: when the fiber became ready), *dispatch* (handed to the device)
//! and *completion*. Latency is completion - intended; the queue slot holds dispatch -
//! intended and the disk slot completion - dispatch.

use weir_engine::buffers::DmaBufferPool;
use weir_engine::shard_loop::{BufId, LoopBuffers, Op, Outcome, ShardLoop};
use weir_model::device::{Device, Direction, IoCompletion};

use crate::arrival::Arrivals;
pub use crate::job_run::{JobRun, JobSetup, JobTarget, StopSignal};
use crate::report::JobHistograms;
pub(crate) use crate::request::Slot;
pub use crate::request::{Failure, LoopOptions};
pub use crate::scheduling::Scheduling;
use crate::scheduling::{dispatch_scheduled, enqueue, settle_completions};
use crate::verify::VERIFY_BLOCK_BYTES;

/// The outcome of one shard's loop.
pub struct LoopOutcome {
    pub window_ns: u64,
    /// The device failed and requests may still be in the kernel: buffers must not be freed.
    pub device_broken: bool,
}

/// Requests in flight, by slot: a slot is one request of one job, whatever number of pieces
/// the scheduler sends it out in.
pub(crate) struct Requests {
    pub(crate) slots: Vec<Option<Slot>>,
    free: Vec<u32>,
    in_flight: u32,
}

impl Requests {
    fn new(depth: usize) -> Requests {
        Requests {
            slots: vec![None; depth],
            free: (0..depth as u32).rev().collect(),
            in_flight: 0,
        }
    }
}

/// The run's clock: where the window ends, and whether it has.
struct Window {
    end_ns: u64,
    /// Set when the run stops issuing (the duration passed, a stop, a failure).
    closed_at_ns: Option<u64>,
}

impl Window {
    fn close(&mut self, at_ns: u64) {
        self.closed_at_ns.get_or_insert(at_ns.min(self.end_ns));
    }
}

/// Runs the jobs on the shard loop `lp` until the duration ends or `stop` says so, then waits
/// for every request in flight. Returns the measured window.
pub fn run_loop<D: Device>(
    lp: &mut ShardLoop<D>,
    jobs: &mut [JobRun],
    options: &LoopOptions,
    stop: &dyn StopSignal,
    mut sched: Option<&mut Scheduling>,
) -> LoopOutcome {
    let depth: usize = lp.buffers().pools().iter().map(DmaBufferPool::count).sum();
    let mut requests = Requests::new(depth);
    let mut settled: Vec<IoCompletion> = Vec::with_capacity(depth);
    let start_ns = lp.now_ns();
    let mut window = Window {
        end_ns: start_ns + options.duration_ns,
        closed_at_ns: None,
    };
    for job in jobs.iter_mut() {
        job.start(start_ns);
    }
    let sample_every = stop.sample_interval_ns();
    let mut next_sample_ns = sample_every.map(|i| start_ns + i);
    loop {
        let now = lp.now_ns();
        if window.closed_at_ns.is_none() && (now >= window.end_ns || stop.should_stop()) {
            window.close(now);
        }
        if window.closed_at_ns.is_none()
            && !sample_if_due(now, start_ns, &mut next_sample_ns, sample_every, jobs, stop)
        {
            window.close(now);
        }
        if window.closed_at_ns.is_some() && requests.in_flight == 0 {
            break;
        }
        if window.closed_at_ns.is_none() {
            let issued = issue(lp, jobs, &mut requests, now, options, sched.as_deref_mut());
            if let Err(failure) = issued {
                stop.fail(failure);
                window.close(now);
            }
        }
        if let Some(s) = sched.as_deref_mut() {
            if let Err(failure) = dispatch_scheduled(lp, s, &mut requests.slots, jobs, now, options)
            {
                stop.fail(failure);
                window.close(now);
            }
        }
        let deadline = next_deadline(&window, jobs, next_sample_ns, sched.as_deref(), now);
        // Busy polling (sleep_type: busyloop) submits and reaps without waiting while the
        // next timer is ahead; draining at the end always waits.
        let poll = options.busy_poll && window.closed_at_ns.is_none();
        let waited = if poll {
            lp.wait(0, None)
        } else {
            lp.wait(1, deadline)
        };
        if let Err(e) = waited {
            stop.fail(Failure::Device {
                detail: e.to_string(),
            });
            return LoopOutcome {
                window_ns: window.closed_at_ns.unwrap_or(now).saturating_sub(start_ns),
                device_broken: requests.in_flight > 0,
            };
        }
        let settled = match sched.as_deref_mut() {
            Some(s) => {
                settle_scheduled(lp, s, &mut requests.slots, &mut settled);
                Some(&settled[..])
            }
            None => None,
        };
        account_completions(lp, jobs, &mut requests, &mut window, settled, options, stop);
    }
    let window_end = window.closed_at_ns.unwrap_or(window.end_ns);
    count_unsent(jobs, window_end);
    LoopOutcome {
        window_ns: window_end.saturating_sub(start_ns),
        device_broken: false,
    }
}

/// At a sample point, hands the progress to the sampler and starts the jobs' recent
/// histograms afresh. False when the sampler asks the run to stop.
fn sample_if_due(
    now: u64,
    start_ns: u64,
    next_sample_ns: &mut Option<u64>,
    sample_every: Option<u64>,
    jobs: &mut [JobRun],
    stop: &dyn StopSignal,
) -> bool {
    let Some(at) = *next_sample_ns else {
        return true;
    };
    if now < at {
        return true;
    }
    let keep_going = stop.sample(now - start_ns, jobs);
    for job in jobs.iter_mut() {
        if let Some(recent) = &mut job.recent {
            **recent = JobHistograms::default();
        }
    }
    *next_sample_ns = Some(at + sample_every.unwrap_or(u64::MAX / 4));
    keep_going
}

/// Scheduler runs: moves the loop's completions (pieces) into the scheduler and leaves in
/// `settled` the requests whose last piece is done.
fn settle_scheduled<D: Device>(
    lp: &mut ShardLoop<D>,
    s: &mut Scheduling,
    slots: &mut [Option<Slot>],
    settled: &mut Vec<IoCompletion>,
) {
    settled.clear();
    while let Some(d) = lp.next_done() {
        settled.push(IoCompletion {
            user_data: d.tag,
            result: d.result(),
            completed_at_ns: d.completed_at_ns,
        });
    }
    settle_completions(s, slots, settled);
}

/// Accounts one wake-up's finished requests: `settled` (scheduler runs) or, without a
/// scheduler, the loop's completions one at a time, refilling each freed slot at once.
fn account_completions<D: Device>(
    lp: &mut ShardLoop<D>,
    jobs: &mut [JobRun],
    requests: &mut Requests,
    window: &mut Window,
    settled: Option<&[IoCompletion]>,
    options: &LoopOptions,
    stop: &dyn StopSignal,
) {
    let mut next_settled = 0;
    loop {
        // Scheduler runs: requests whose last piece is done; plain runs: the loop's
        // completions, one at a time, so each freed slot is refilled at once.
        let (slot_id, result, at_ns) = if let Some(settled) = settled {
            let Some(c) = settled.get(next_settled) else {
                break;
            };
            next_settled += 1;
            (
                c.user_data as usize,
                Settled::Raw(c.result),
                c.completed_at_ns,
            )
        } else {
            let Some(d) = lp.next_done() else {
                break;
            };
            (d.tag as usize, Settled::Named(d.outcome), d.completed_at_ns)
        };
        let done = finish_request(
            lp.buffers_mut(),
            jobs,
            requests,
            window,
            slot_id,
            result,
            at_ns,
        );
        if let Err(failure) = done {
            stop.fail(failure);
            window.close(at_ns);
        }
        // Reuse the freed slot at once rather than after accounting every completion of
        // this wake-up: a wake-up often brings the whole queue depth at once, and the
        // disk would otherwise sit idle while the rest are accounted (~15% of 4 KiB QD32
        // IOPS on the development VM). The scheduler path keeps its own dispatch order.
        if settled.is_none() && window.closed_at_ns.is_none() && at_ns < window.end_ns {
            if let Err(failure) = issue(lp, jobs, requests, at_ns, options, None) {
                stop.fail(failure);
                window.close(at_ns);
            }
        }
    }
}

/// Requests still waiting to be sent when the window ended: the backlog and the arrivals due.
fn count_unsent(jobs: &mut [JobRun], window_end_ns: u64) {
    for job in jobs.iter_mut() {
        job.stats.unsent_at_end = job.backlog_ns.len() as u64
            + job
                .arrivals
                .as_ref()
                .map_or(0, |a| count_due(a, window_end_ns));
    }
}

/// When the loop must wake without a completion: the next arrival, think time, sample, the
/// end of the window, or the scheduler's next release.
fn next_deadline(
    window: &Window,
    jobs: &[JobRun],
    next_sample_ns: Option<u64>,
    sched: Option<&Scheduling>,
    now: u64,
) -> Option<u64> {
    let sched_wakeup = sched.and_then(Scheduling::wakeup_ns);
    if window.closed_at_ns.is_some() {
        return sched_wakeup;
    }
    let mut deadline = window.end_ns;
    for job in jobs {
        if let Some(t) = job.next_timer_ns(now) {
            deadline = deadline.min(t);
        }
    }
    if let Some(t) = next_sample_ns {
        deadline = deadline.min(t);
    }
    if let Some(t) = sched_wakeup {
        deadline = deadline.min(t.max(now));
    }
    Some(deadline)
}

/// A request's result: named by the loop (plain runs), or a raw byte count / -errno the
/// scheduler's pieces add up to.
#[derive(Clone, Copy)]
enum Settled {
    Named(Outcome),
    Raw(i32),
}

/// Frees a finished request's slot and accounts it with its job.
fn finish_request(
    buffers: &mut LoopBuffers,
    jobs: &mut [JobRun],
    requests: &mut Requests,
    window: &Window,
    slot_id: usize,
    result: Settled,
    completed_at_ns: u64,
) -> Result<(), Failure> {
    let Some(slot) = requests.slots.get_mut(slot_id).and_then(Option::take) else {
        return Ok(());
    };
    requests.free.push(slot_id as u32);
    requests.in_flight -= 1;
    let outcome = match result {
        Settled::Named(o) => o,
        Settled::Raw(r) => Outcome::of(slot.direction, u64::from(slot.len_bytes), r),
    };
    let job = &mut jobs[slot.job_pos as usize];
    let counted_until = window.closed_at_ns.unwrap_or(window.end_ns);
    let stopping = window.closed_at_ns.is_some();
    complete(
        job,
        buffers,
        &slot,
        outcome,
        completed_at_ns,
        counted_until,
        stopping,
    )
}

/// Arrivals due before `until` that were never taken from the stream.
fn count_due(arrivals: &Arrivals, until_ns: u64) -> u64 {
    let mut a = arrivals.clone();
    let mut n = 0;
    while a.peek_ns() < until_ns && n < 1 << 24 {
        a.next_ns();
        n += 1;
    }
    n
}

/// Makes and pushes every request that is due. While the device is busy the shard loop
/// submits each request as it is pushed (its `SubmitPolicy::Eager`, as fio does with its
/// default iodepth_batch_submit=1); an idle device gets one call that submits and waits.
fn issue<D: Device>(
    lp: &mut ShardLoop<D>,
    jobs: &mut [JobRun],
    requests: &mut Requests,
    now: u64,
    options: &LoopOptions,
    mut sched: Option<&mut Scheduling>,
) -> Result<(), Failure> {
    for (job_pos, job) in jobs.iter_mut().enumerate() {
        if let Some(arrivals) = &mut job.arrivals {
            while arrivals.peek_ns() <= now && !job.exhausted {
                let t = arrivals.next_ns();
                for _ in 0..job.job.batch {
                    job.backlog_ns.push_back(t);
                }
            }
        }
        if !job.job.job_type.does_io() {
            crate::inline::run_due(job, now)?;
            continue;
        }
        loop {
            if job.limit_reached()
                || lp.buffers().free_count(job.pool_index) == 0
                || requests.free.is_empty()
            {
                break;
            }
            let intended = if job.arrivals.is_some() {
                match job.backlog_ns.front() {
                    Some(&t) => t,
                    None => break,
                }
            } else {
                match job.fibers_ready_ns.front() {
                    Some(&t) if t <= now => t,
                    _ => break,
                }
            };
            let Some(offset) = job.next_offset() else {
                break;
            };
            if job.arrivals.is_some() {
                job.backlog_ns.pop_front();
            } else {
                job.fibers_ready_ns.pop_front();
            }
            let Some(buf) = lp.buffers_mut().acquire(job.pool_index) else {
                break;
            };
            let Some(slot_id) = requests.free.pop() else {
                lp.buffers_mut().release(buf);
                break;
            };
            let direction = job.direction();
            let len = job.job.request_bytes;
            let sequence = match direction {
                Direction::Write => prepare_write(job, lp.buffers_mut(), buf, offset, len)?,
                Direction::Read => 0,
            };
            // Slots and ops carry the offset in the descriptor; the ledger keeps the
            // region-relative one (--verify runs on files, whose base is 0).
            let fd_offset = offset + job.target.base_offset_bytes;
            let queued = match sched.as_deref_mut() {
                None => {
                    let mut op = Op::new(
                        u64::from(slot_id),
                        direction,
                        job.target.fd,
                        fd_offset,
                        buf,
                        len,
                    )
                    .with_flags(options.io_flags(job.index));
                    if let Some(count) = job.iov_count {
                        op.segments = crate::vectored::segments(buf, len, count);
                    }
                    lp.push(op).map_err(|_| None)
                }
                Some(s) => enqueue(s, job, slot_id, direction, len, now),
            };
            if let Err(failure) = queued {
                if let Some(failure) = failure {
                    return Err(failure);
                }
                // The ring is full (cannot happen: depth covers every buffer); retry later.
                lp.buffers_mut().release(buf);
                requests.free.push(slot_id);
                job.in_flight_writes.retain(|&(o, _)| o != offset);
                if job.arrivals.is_some() {
                    job.backlog_ns.push_front(intended);
                } else {
                    job.fibers_ready_ns.push_front(intended);
                }
                break;
            }
            requests.slots[slot_id as usize] = Some(Slot {
                job_pos: job_pos as u32,
                buf,
                offset_bytes: fd_offset,
                len_bytes: len,
                direction,
                intended_ns: intended,
                dispatch_ns: if sched.is_some() { 0 } else { now },
                sequence,
                piece_error: None,
            });
            job.in_flight += 1;
            job.issued += 1;
            requests.in_flight += 1;
        }
    }
    Ok(())
}

/// Readies a write's buffer: the file grows first if it must, the data is stamped (or
/// encoded for --verify). Returns the write's sequence number.
fn prepare_write(
    job: &mut JobRun,
    buffers: &mut LoopBuffers,
    buf: BufId,
    offset: u64,
    len: u32,
) -> Result<u64, Failure> {
    if let Some(file) = &mut job.target.file {
        if let Err(e) = file.before_write(offset, len) {
            buffers.release(buf);
            return Err(Failure::Io {
                job: job.job.name.clone(),
                detail: e.to_string(),
            });
        }
    }
    job.write_sequence += 1;
    let sequence = job.write_sequence;
    let bytes = &mut buffers.bytes_mut(buf)[..len as usize];
    if job.ledger.is_some() {
        crate::verify::encode(bytes, offset, sequence);
        job.in_flight_writes.push((offset, u64::from(len)));
    } else {
        weir_engine::payload::stamp_blocks(bytes, offset, sequence);
    }
    Ok(sequence)
}

/// Accounts one completed request. `counted_until`: completions after it are outside the
/// window.
fn complete(
    job: &mut JobRun,
    buffers: &mut LoopBuffers,
    slot: &Slot,
    outcome: Outcome,
    completed_at_ns: u64,
    counted_until: u64,
    stopping: bool,
) -> Result<(), Failure> {
    job.in_flight -= 1;
    if slot.direction == Direction::Write && job.ledger.is_some() {
        job.in_flight_writes
            .retain(|&(o, _)| o != slot.offset_bytes);
    }
    let checked = check_result(job, slot, outcome);
    if checked.is_ok() {
        if slot.direction == Direction::Read && job.ledger.is_some() {
            let len = slot.len_bytes as usize;
            let data = &buffers.bytes(slot.buf)[..len];
            let found = crate::check::check_blocks(
                job.ledger.as_ref(),
                job.target.prefilled,
                data,
                slot.offset_bytes,
            );
            job.blocks_checked += (len / VERIFY_BLOCK_BYTES) as u64;
            if let Some(corruption) = found {
                job.record_corruption(corruption);
            }
        }
        if let Some(ledger) = &mut job.ledger {
            if slot.direction == Direction::Write {
                ledger.record(slot.offset_bytes, u64::from(slot.len_bytes), slot.sequence);
            }
        }
        if completed_at_ns <= counted_until {
            record_latency(job, slot, completed_at_ns);
        }
    } else {
        job.stats.errors += 1;
    }
    buffers.release(slot.buf);
    if job.arrivals.is_none() && !stopping {
        let think = job.job.think_time.as_nanos() as u64;
        let elapsed = completed_at_ns.saturating_sub(job.started_at_ns);
        let ready = if job.job.thinking_at(elapsed) {
            completed_at_ns + think
        } else {
            completed_at_ns
        };
        job.fibers_ready_ns.push_back(ready);
    }
    checked
}

/// Records a request's three latencies (total, queue, disk) and its bytes.
fn record_latency(job: &mut JobRun, slot: &Slot, completed_at_ns: u64) {
    let total = completed_at_ns.saturating_sub(slot.intended_ns);
    let queue = slot.dispatch_ns.saturating_sub(slot.intended_ns);
    let disk = completed_at_ns.saturating_sub(slot.dispatch_ns);
    job.stats.histograms.record_ns(total, queue, disk);
    if let Some(recent) = &mut job.recent {
        recent.record_ns(total, queue, disk);
    }
    job.stats.ops += 1;
    job.stats.bytes += u64::from(slot.len_bytes);
}

fn check_result(job: &JobRun, slot: &Slot, outcome: Outcome) -> Result<(), Failure> {
    let what = match slot.direction {
        Direction::Read => "read",
        Direction::Write => "write",
    };
    let moved_bytes = match outcome {
        Outcome::Full => return Ok(()),
        Outcome::Failed { errno } => {
            let detail = format!(
                "{what} of {} bytes at offset {} in {} failed: {}",
                slot.len_bytes,
                slot.offset_bytes,
                job.target.file_name,
                weir_engine::describe_errno(errno)
            );
            return Err(match errno {
                libc::ENOSPC | libc::EDQUOT | libc::EFBIG => Failure::DiskFull {
                    job: job.job.name.clone(),
                    detail,
                },
                _ => Failure::Io {
                    job: job.job.name.clone(),
                    detail,
                },
            });
        }
        Outcome::EndOfFile => 0,
        Outcome::Short { moved_bytes } => moved_bytes,
    };
    let detail = format!(
        "short {what}: {moved_bytes} of {} bytes at offset {} in {}",
        slot.len_bytes, slot.offset_bytes, job.target.file_name
    );
    Err(if slot.direction == Direction::Write {
        Failure::DiskFull {
            job: job.job.name.clone(),
            detail,
        }
    } else {
        Failure::Io {
            job: job.job.name.clone(),
            detail: format!("{detail} (the file is shorter than the job's data size)"),
        }
    })
}

#[cfg(test)]
#[path = "driver_tests.rs"]
mod tests;
