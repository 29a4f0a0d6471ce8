//! The scheduler in the driver loop: requests are enqueued in the shard's `weir-sched` queue
//! instead of going to the device, and the pieces it dispatches are submitted at their offset
//! within the request. A request completes when its last piece does.

use weir_engine::shard_loop::{Op, Segments, ShardLoop, Span};
use weir_model::device::{Device, Direction, IoCompletion};
use weir_sched::{ClassId, Dispatched, Request, ShardQueue};

use crate::job_run::JobRun;
use crate::merge::{to_op, Staged};
use crate::request::{Failure, LoopOptions, Slot};
pub use weir_sched::merge::MergeCounts;
use weir_sched::merge::Merger;

/// The scheduler on one shard: its queue and the class of each job (by job index).
pub struct Scheduling {
    pub queue: ShardQueue,
    pub class_by_job: Vec<Option<ClassId>>,
    dispatched: Vec<Dispatched>,
    merger: Merger<Staged>,
    /// Piece completions fanned out of merged requests, reused between wake-ups.
    pieces: Vec<IoCompletion>,
}

impl Scheduling {
    /// `merge_adjacent`: submit pieces that continue each other in one file as one vectored
    /// request (see [`weir_sched::merge`]).
    pub fn new(
        queue: ShardQueue,
        class_by_job: Vec<Option<ClassId>>,
        merge_adjacent: bool,
    ) -> Scheduling {
        let merger = if merge_adjacent {
            Merger::for_queue(&queue)
        } else {
            Merger::new(0, 0)
        };
        Scheduling {
            queue,
            class_by_job,
            dispatched: Vec::new(),
            merger,
            pieces: Vec::new(),
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

    /// How many pieces went out merged, and in how many requests.
    pub fn merge_counts(&self) -> MergeCounts {
        self.merger.counts()
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

/// Submits every piece the scheduler lets go now, merging those that continue each other.
pub(crate) fn dispatch_scheduled<D: Device>(
    lp: &mut ShardLoop<D>,
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
        let job = &jobs[slot.job_pos as usize];
        if slot.dispatch_ns == 0 {
            slot.dispatch_ns = now;
        }
        // Pieces are cut on 4 KiB boundaries, so each stays aligned for direct I/O; they
        // share the request's buffer, which the loop keeps pinned until the last is back.
        let op = Op {
            tag: d.token,
            direction: d.direction,
            fd: job.target.fd,
            offset_bytes: slot.offset_bytes + d.offset_in_request_bytes,
            segments: Segments::One(Span {
                buf: slot.buf,
                offset_bytes: d.offset_in_request_bytes as u32,
                len_bytes: d.len_bytes as u32,
            }),
            flags: options.io_flags(job.index),
        };
        s.merger.add(Staged(op));
    }
    // While the device is busy the loop submits each request as it is pushed, as the
    // unscheduled path does (its `SubmitPolicy::Eager`): a virtio disk starts none of a
    // batch until the whole batch is in, which cost pure 4 KiB reads through the scheduler
    // ~15-20% of their IOPS.
    s.merger.flush(|out| {
        lp.push(to_op(out)).map_err(|e| Failure::Device {
            detail: format!(
                "the I/O backend refused a piece the scheduler dispatched ({e}); the device \
                 queue is smaller than the scheduler's window"
            ),
        })
    })
}

/// Turns the device's completions into request completions (`user_data` = the slot), in
/// place: merged requests fan out to their pieces, and each piece is accounted with the
/// scheduler; a request appears once its last piece is done.
pub(crate) fn settle_completions(
    s: &mut Scheduling,
    slots: &mut [Option<Slot>],
    completions: &mut Vec<IoCompletion>,
) {
    s.pieces.clear();
    for c in completions.iter() {
        s.merger.fan_out(c, &mut s.pieces);
    }
    completions.clear();
    for c in &s.pieces {
        if let Some(done) = settle_piece(&mut s.queue, slots, c) {
            completions.push(done);
        }
    }
}

/// Accounts one piece's completion with the scheduler. Returns the request's completion
/// (`user_data` = its slot) once its last piece is done.
fn settle_piece(
    queue: &mut ShardQueue,
    slots: &mut [Option<Slot>],
    c: &IoCompletion,
) -> Option<IoCompletion> {
    let done = queue.complete(c.user_data, c.completed_at_ns)?;
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
    Some(IoCompletion {
        user_data: slot_id as u64,
        result,
        completed_at_ns: c.completed_at_ns,
    })
}
