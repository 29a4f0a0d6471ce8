//! The Linux AIO backend: one kernel AIO context per shard, by raw syscalls ([`crate::aio_sys`]).
//!
//! AIO has no shared submission ring, so `push` fills a pre-allocated iocb slot and queues its
//! pointer, and `submit_and_wait` makes one `io_submit` for the whole batch followed by one
//! `io_getevents` that harvests every ready completion (waiting, with a timeout, for as many
//! as the caller asked). Slots are found again from the event's `obj` pointer, so the caller's
//! `user_data` travels untouched in `aio_data`. Nothing is allocated after construction.

use std::time::Duration;

use weir_model::device::{Device, DeviceError, Direction, IoCompletion, IoOp};

use crate::aio_sys::{AioContext, IoEvent, Iocb, RWF_DSYNC, RWF_NOWAIT};
use crate::clock::{monotonic_ns, sleep_until, until};

/// A Linux AIO context implementing [`Device`].
pub struct AioDevice {
    ctx: AioContext,
    capacity: u32,
    /// One iocb per possible in-flight request; addresses are stable (never reallocated).
    slots: Box<[Iocb]>,
    free_slots: Vec<u32>,
    /// Queued, not yet submitted (pointers into `slots`), in push order.
    queued: Vec<*mut Iocb>,
    /// Submitted and not yet reaped by the kernel.
    submitted: u32,
    events: Box<[IoEvent]>,
    /// Completions harvested from the kernel (or synthesised for rejected submissions), not
    /// yet handed to the caller.
    ready: Vec<IoCompletion>,
}

impl AioDevice {
    /// A context for up to `depth` requests in flight. Errors are errnos of `io_setup`
    /// (EAGAIN when `fs.aio-max-nr` is exhausted, ENOSYS without AIO).
    pub fn new(depth: u32) -> Result<Self, i32> {
        let depth = depth.clamp(1, 65536);
        let ctx = AioContext::new(depth)?;
        Ok(AioDevice {
            ctx,
            capacity: depth,
            slots: vec![Iocb::default(); depth as usize].into_boxed_slice(),
            free_slots: (0..depth).rev().collect(),
            queued: Vec::with_capacity(depth as usize),
            submitted: 0,
            events: vec![IoEvent::default(); depth as usize].into_boxed_slice(),
            ready: Vec::with_capacity(depth as usize),
        })
    }

    fn slot_of(&self, iocb: *const Iocb) -> u32 {
        let offset = iocb as usize - self.slots.as_ptr() as usize;
        (offset / std::mem::size_of::<Iocb>()) as u32
    }

    fn in_flight(&self) -> u32 {
        self.capacity - self.free_slots.len() as u32
    }

    /// Submits the queue; a request the kernel rejects outright (EBADF, EINVAL on a bad
    /// offset) completes at once with that errno, as it would on io_uring.
    fn submit_queued(&mut self) -> Result<u32, DeviceError> {
        let mut done = 0usize;
        let mut rejected = 0u32;
        while done < self.queued.len() {
            // SAFETY: every queued pointer is a slot of `self.slots` filled by `push`, whose
            // buffer the device contract keeps alive until its completion is reaped.
            match unsafe { self.ctx.submit(&mut self.queued[done..]) } {
                Ok(0) => break,
                Ok(n) => done += n,
                // The kernel is out of request slots; keep the rest queued for the next call.
                Err(libc::EAGAIN) | Err(libc::EINTR) => break,
                Err(errno @ (libc::EBADF | libc::EINVAL | libc::EFAULT | libc::EOPNOTSUPP)) => {
                    let iocb = self.queued[done];
                    self.reject(iocb, errno);
                    rejected += 1;
                    done += 1;
                }
                Err(errno) => {
                    self.queued.drain(..done);
                    self.submitted += done as u32 - rejected;
                    return Err(DeviceError::Os {
                        call: "io_submit",
                        errno,
                    });
                }
            }
        }
        self.queued.drain(..done);
        self.submitted += done as u32 - rejected;
        Ok(done as u32)
    }

    fn reject(&mut self, iocb: *mut Iocb, errno: i32) {
        let slot = self.slot_of(iocb);
        let user_data = self.slots[slot as usize].aio_data;
        self.free_slots.push(slot);
        self.ready.push(IoCompletion {
            user_data,
            result: -errno,
            completed_at_ns: monotonic_ns(),
        });
    }

    fn harvest(&mut self, min_events: u32, timeout: Option<Duration>) -> Result<(), DeviceError> {
        // Completions already in the shared ring need no syscall; only wait in the kernel
        // when fewer than asked for are there.
        let peeked = self.ctx.peek_events(&mut self.events);
        let got = if peeked >= min_events as usize {
            peeked
        } else {
            let rest = &mut self.events[peeked..];
            let more = min_events - peeked as u32;
            match self.ctx.get_events(more, rest, timeout) {
                Ok(n) => peeked + n,
                Err(libc::EINTR) => peeked,
                Err(errno) => {
                    // Events already taken from the ring must still reach the caller.
                    self.deliver(peeked);
                    return Err(DeviceError::Os {
                        call: "io_getevents",
                        errno,
                    });
                }
            }
        };
        self.deliver(got);
        Ok(())
    }

    fn deliver(&mut self, got: usize) {
        let now = monotonic_ns();
        for i in 0..got {
            let ev = self.events[i];
            let slot = self.slot_of(ev.obj as *const Iocb);
            self.free_slots.push(slot);
            self.ready.push(IoCompletion {
                user_data: ev.data,
                result: ev.result(),
                completed_at_ns: now,
            });
        }
        self.submitted -= got as u32;
    }
}

impl Device for AioDevice {
    fn now_ns(&self) -> u64 {
        monotonic_ns()
    }

    fn capacity(&self) -> u32 {
        self.capacity
    }

    unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError> {
        let slot = self.free_slots.pop().ok_or(DeviceError::QueueFull)?;
        let mut flags = 0;
        if op.flags.nowait {
            flags |= RWF_NOWAIT;
        }
        if op.flags.dsync {
            flags |= RWF_DSYNC;
        }
        let iocb = match (op.direction, op.vectored) {
            (direction, Some(v)) => Iocb::vectored(
                direction == Direction::Write,
                op.fd,
                v.ptr,
                v.count,
                op.offset_bytes,
                op.user_data,
            ),
            (Direction::Read, None) => {
                Iocb::pread(op.fd, op.buf, op.len_bytes, op.offset_bytes, op.user_data)
            }
            (Direction::Write, None) => {
                Iocb::pwrite(op.fd, op.buf, op.len_bytes, op.offset_bytes, op.user_data)
            }
        };
        let cell = &mut self.slots[slot as usize];
        *cell = iocb.with_rw_flags(flags);
        self.queued.push(cell as *mut Iocb);
        Ok(())
    }

    fn submit_and_wait(
        &mut self,
        min_complete: u32,
        deadline_ns: Option<u64>,
    ) -> Result<u32, DeviceError> {
        let submitted = self.submit_queued()?;
        let ready = self.ready.len() as u32;
        let want = min_complete.saturating_sub(ready).min(self.submitted);
        match deadline_ns {
            _ if want == 0 => {
                if min_complete > ready && self.in_flight() == 0 {
                    // Nothing in flight to wait for: an idle shard sleeps until its deadline.
                    if let Some(deadline) = deadline_ns {
                        sleep_until(deadline);
                    }
                }
                if self.submitted > 0 {
                    self.harvest(0, Some(Duration::ZERO))?;
                }
            }
            None => self.harvest(want, None)?,
            Some(deadline) => self.harvest(want, Some(until(deadline)))?,
        }
        Ok(submitted)
    }

    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        let n = self.ready.len();
        out.append(&mut self.ready);
        n
    }
}
