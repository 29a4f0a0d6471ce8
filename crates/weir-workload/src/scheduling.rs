//! The scheduler in the driver loop: requests are enqueued in the shard's `weir-sched` queue
//! instead of going to the device, and the pieces it dispatches are submitted at their offset
//! within the request. A request completes when its last piece does.

use weir_model::device::{Device, Direction, IoCompletion, IoOp};
use weir_sched::{ClassId, Dispatched, Request, ShardQueue};

use crate::driver::{Failure, JobRun, LoopOptions, Slot};

/// The scheduler on one shard: its queue and the class of each job (by job index).
pub struct Scheduling {
    pub queue: ShardQueue,
    pub class_by_job: Vec<Option<ClassId>>,
    dispatched: Vec<Dispatched>,
}

impl Scheduling {
    pub fn new(queue: ShardQueue, class_by_job: Vec<Option<ClassId>>) -> Scheduling {
        Scheduling {
            queue,
            class_by_job,
            dispatched: Vec::new(),
        }
    }

    /// When the loop must wake for the scheduler even without a completion.
    pub(crate) fn wakeup_ns(&self) -> Option<u64> {
        if self.queue.queued() > 0 {
            self.queue.next_wakeup_ns()
        } else {
            None
        }
    }
}

/// Hands a request to the scheduler. Err(None): retry later; Err(Some): the run must stop.
pub(crate) fn enqueue(
    s: &mut Scheduling,
    job: &JobRun,
    slot_id: u32,
    direction: Direction,
    len: u32,
    now: u64,
) -> Result<(), Option<Failure>> {
    let class = s
        .class_by_job
        .get(job.index)
        .copied()
        .flatten()
        .ok_or(None)?;
    let request = Request {
        direction,
        len_bytes: u64::from(len),
        user_data: u64::from(slot_id),
    };
    s.queue.enqueue(class, request, now).map_err(|e| {
        Some(Failure::Device {
            detail: format!(
                "the scheduler refused a request of job `{}`: {e}",
                job.job.name
            ),
        })
    })
}

/// Submits every piece the scheduler lets go now.
pub(crate) fn dispatch_scheduled<D: Device>(
    device: &mut D,
    s: &mut Scheduling,
    slots: &mut [Option<Slot>],
    jobs: &[JobRun],
    now: u64,
    options: &LoopOptions,
) -> Result<(), Failure> {
    s.dispatched.clear();
    s.queue.dispatch(now, &mut s.dispatched);
    for d in &s.dispatched {
        let Some(slot) = slots.get_mut(d.user_data as usize).and_then(Option::as_mut) else {
            continue;
        };
        let job = &jobs[slot.job as usize];
        if slot.dispatch_ns == 0 {
            slot.dispatch_ns = now;
        }
        // Pieces are cut on 4 KiB boundaries, so each stays aligned for direct I/O.
        let op = IoOp {
            user_data: d.token,
            direction: d.direction,
            fd: job.fd,
            offset_bytes: slot.offset_bytes + d.offset_in_request_bytes,
            len_bytes: d.len_bytes as u32,
            // SAFETY (in bounds): the piece lies within the request's buffer.
            buf: job
                .pool
                .ptr(slot.buf as usize)
                .wrapping_add(d.offset_in_request_bytes as usize),
            flags: options.io_flags(job.index),
        };
        device.push(op).map_err(|e| Failure::Device {
            detail: format!(
                "the I/O backend refused a piece the scheduler dispatched ({e}); the device \
                 queue is smaller than the scheduler's window"
            ),
        })?;
    }
    Ok(())
}

/// Accounts one piece's completion with the scheduler. Returns the request's slot and its
/// completion once its last piece is done.
pub(crate) fn settle_piece(
    s: &mut Scheduling,
    slots: &mut [Option<Slot>],
    c: &IoCompletion,
) -> Option<(usize, IoCompletion)> {
    let done = s.queue.complete(c.user_data, c.completed_at_ns)?;
    let slot_id = done.user_data as usize;
    let slot = slots.get_mut(slot_id).and_then(Option::as_mut)?;
    if c.result < 0 || c.result as u64 != done.len_bytes {
        slot.piece_error
            .get_or_insert((c.result, done.len_bytes as u32));
    }
    if !done.request_done {
        return None;
    }
    let result = match slot.piece_error {
        Some((r, _)) if r < 0 => r,
        Some((r, piece_len)) => (slot.len_bytes - piece_len) as i32 + r,
        None => slot.len_bytes as i32,
    };
    Some((
        slot_id,
        IoCompletion {
            user_data: slot_id as u64,
            result,
            completed_at_ns: c.completed_at_ns,
        },
    ))
}
