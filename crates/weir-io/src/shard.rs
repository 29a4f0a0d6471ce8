//! One shard's scheduler queue over one io_uring or AIO device: what a background loop
//! thread and a [`crate::LocalShard`] both run.
//!
//! A request is enqueued in its class; the queue dispatches pieces as the disk's budget
//! allows (it splits requests longer than its piece size); each piece goes to the device
//! pointing into the request's own buffer; when the queue says the request's last piece
//! completed, the result and the buffer go back to the waiting future.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use weir_engine::{Backend, EngineDevice};
use weir_model::device::{
    Device, DeviceError, Direction, IoCompletion, IoFlags, IoOp, IoVec, IoVecs,
};
use weir_sched::merge::{Merger, Outgoing, Piece, MERGED_TAG};
use weir_sched::{ClassId, Dispatched, Request, ShardMetrics, ShardQueue, SharedBudget};

use crate::{Error, File, IoBuf, IoClass, Policy};

/// What a finished I/O gives back: the bytes moved (or the error) and the buffer.
pub type BufResult<T> = (Result<T, Error>, IoBuf);

/// Where a request's result waits for its future.
#[derive(Default)]
pub(crate) struct OpState {
    slot: Mutex<OpSlot>,
}

#[derive(Default)]
struct OpSlot {
    result: Option<BufResult<usize>>,
    waker: Option<Waker>,
}

impl OpState {
    pub(crate) fn finish(&self, result: BufResult<usize>) {
        let waker = {
            let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
            slot.result = Some(result);
            slot.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// The future of a read or write: resolves to the bytes moved and the buffer. `Send`; any
/// runtime. Dropping it does not stop the I/O (the kernel owns the buffer until it
/// completes); the result is then discarded.
#[must_use = "the result says whether the I/O happened"]
pub struct IoFuture {
    state: Arc<OpState>,
}

impl IoFuture {
    pub(crate) fn pending() -> (IoFuture, Arc<OpState>) {
        let state = Arc::new(OpState::default());
        (
            IoFuture {
                state: state.clone(),
            },
            state,
        )
    }

    pub(crate) fn ready(result: BufResult<usize>) -> IoFuture {
        let (f, state) = IoFuture::pending();
        state.finish(result);
        f
    }
}

impl Future for IoFuture {
    type Output = BufResult<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut slot = self.state.slot.lock().unwrap_or_else(|p| p.into_inner());
        match slot.result.take() {
            Some(r) => Poll::Ready(r),
            None => {
                if !slot.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    slot.waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }
}

/// A request on its way to a shard.
pub(crate) struct Submit {
    pub(crate) class: IoClass,
    pub(crate) direction: Direction,
    pub(crate) file: File,
    pub(crate) offset_bytes: u64,
    pub(crate) buf: IoBuf,
    pub(crate) state: Arc<OpState>,
}

impl Submit {
    /// A request checked against the policy (a known class) and the file (alignment, open
    /// for the direction), with the future its completion resolves. Err: the check failed,
    /// and the future has already resolved with that error and the buffer.
    pub(crate) fn checked(
        policy: &Policy,
        file: &File,
        class: IoClass,
        direction: Direction,
        buf: IoBuf,
        offset_bytes: u64,
    ) -> Result<(Submit, IoFuture), IoFuture> {
        if let Err(e) = policy
            .check(class)
            .and_then(|()| file.check(offset_bytes, buf.len()))
        {
            return Err(IoFuture::ready((Err(e), buf)));
        }
        let (future, state) = IoFuture::pending();
        let submit = Submit {
            class,
            direction,
            file: file.clone(),
            offset_bytes,
            buf,
            state,
        };
        Ok((submit, future))
    }
}

struct InFlight {
    submit: Submit,
    len_bytes: u64,
    moved_bytes: u64,
    /// End of the first short piece within the request: bytes past it were not contiguous.
    short_end_bytes: Option<u64>,
    errno: Option<i32>,
}

/// A device tag no scheduler token (bit 63 clear) and no merged request (bit 63 and a
/// 32-bit entry index) uses, below the tags the ring keeps for its own timer.
pub(crate) const WAKE_TAG: u64 = 3 << 62;

/// One dispatched piece as the merger sees it: where it goes and whose memory it uses.
struct DevicePiece {
    token: u64,
    direction: Direction,
    fd: i32,
    offset_bytes: u64,
    len_bytes: u32,
    buf: *mut u8,
}

impl Piece for DevicePiece {
    fn tag(&self) -> u64 {
        self.token
    }

    fn direction(&self) -> Direction {
        self.direction
    }

    fn offset_bytes(&self) -> u64 {
        self.offset_bytes
    }

    fn len_bytes(&self) -> u64 {
        u64::from(self.len_bytes)
    }

    fn same_target(&self, other: &Self) -> bool {
        self.fd == other.fd
    }
}

pub(crate) struct ShardCore {
    device: EngineDevice,
    queue: ShardQueue,
    requests: Vec<Option<InFlight>>,
    free: Vec<u32>,
    dispatched: Vec<Dispatched>,
    /// Pieces the queue dispatched that the device had no room for yet.
    backlog: VecDeque<Dispatched>,
    completions: Vec<IoCompletion>,
    /// Piece completions fanned out of merged requests, reused between reaps.
    pieces_done: Vec<IoCompletion>,
    /// Joins pieces that continue each other in a file into one vectored request.
    merger: Merger<DevicePiece>,
    /// The segments of each merged request in flight, by its entry index; each inner
    /// vector's heap array stays put while the kernel reads it.
    segments: Vec<Vec<IoVec>>,
    /// Device slots the shard keeps for itself (the wake-up read).
    reserved: u32,
    /// Requests at the device (a merged request counts once).
    pieces_in_device: u32,
    /// A request was pushed that no system call has handed to the kernel yet (the first of
    /// a batch to an idle device waits for the turn's enter).
    unsubmitted: bool,
    capacity: u32,
}

impl ShardCore {
    /// Starts the backend on the calling thread (an io_uring ring belongs to the thread that
    /// creates it) with room for `depth` pieces plus `reserved` of the shard's own.
    pub(crate) fn new(
        policy: &Policy,
        budget: Arc<SharedBudget>,
        shard: usize,
        backend: Backend,
        depth: u32,
        reserved: u32,
    ) -> Result<ShardCore, Error> {
        let device = EngineDevice::open(backend, depth + reserved).map_err(Error::Backend)?;
        let queue = policy.queue(budget, shard)?;
        let merger = Merger::for_queue(&queue);
        Ok(ShardCore {
            capacity: device.capacity().saturating_sub(reserved).max(1),
            device,
            queue,
            requests: Vec::new(),
            free: Vec::new(),
            dispatched: Vec::new(),
            backlog: VecDeque::new(),
            completions: Vec::new(),
            pieces_done: Vec::new(),
            merger,
            segments: Vec::new(),
            reserved,
            pieces_in_device: 0,
            unsubmitted: false,
        })
    }

    pub(crate) fn now_ns(&self) -> u64 {
        self.device.now_ns()
    }

    /// Queues a request in its class; it goes to the device on a later [`Self::pump`].
    pub(crate) fn submit(&mut self, submit: Submit, now_ns: u64) {
        let len_bytes = submit.buf.len() as u64;
        if len_bytes == 0 {
            submit.state.finish((Ok(0), submit.buf));
            return;
        }
        let slot = match self.free.pop() {
            Some(s) => s as usize,
            None => {
                self.requests.push(None);
                self.requests.len() - 1
            }
        };
        let request = Request {
            direction: submit.direction,
            len_bytes,
            user_data: slot as u64,
        };
        if let Err(e) = self.queue.enqueue(ClassId(submit.class.0), request, now_ns) {
            self.free.push(slot as u32);
            submit.state.finish((Err(e.into()), submit.buf));
            return;
        }
        self.requests[slot] = Some(InFlight {
            submit,
            len_bytes,
            moved_bytes: 0,
            short_end_bytes: None,
            errno: None,
        });
    }

    /// Dispatches what the budget allows and hands it to the device, pieces that continue
    /// each other in a file merged into one vectored request.
    pub(crate) fn pump(&mut self, now_ns: u64) -> Result<(), Error> {
        let mut out = std::mem::take(&mut self.dispatched);
        self.queue.dispatch(now_ns, &mut out);
        self.backlog.extend(out.drain(..));
        self.dispatched = out;
        loop {
            let room = self.capacity.saturating_sub(self.pieces_in_device) as usize;
            let staged = self.merger.staged_requests();
            let take = room.saturating_sub(staged).min(self.backlog.len());
            if take == 0 && staged == 0 {
                return Ok(());
            }
            for d in self.backlog.drain(..take) {
                let piece = device_piece(&mut self.requests, &d);
                self.merger.add(piece);
            }
            match self.send_staged() {
                Ok(()) if self.backlog.is_empty() => return Ok(()),
                Ok(()) => {}
                Err(DeviceError::QueueFull) => return Ok(()),
                Err(e) => {
                    return Err(Error::Device {
                        message: e.to_string(),
                    })
                }
            }
        }
    }

    /// Pushes every staged request to the device; a refused one stays staged.
    fn send_staged(&mut self) -> Result<(), DeviceError> {
        let ShardCore {
            merger,
            device,
            segments,
            pieces_in_device,
            unsubmitted,
            ..
        } = self;
        merger.flush(|outgoing| {
            let op = match outgoing {
                Outgoing::One(p) => device_op(p.token, p, p.len_bytes, None),
                Outgoing::Merged(run) => {
                    let index = (run.tag() & !MERGED_TAG) as usize;
                    if segments.len() <= index {
                        segments.resize_with(index + 1, Vec::new);
                    }
                    let iov = &mut segments[index];
                    iov.clear();
                    iov.extend(run.pieces().map(|p| IoVec {
                        base: p.buf,
                        len: p.len_bytes as usize,
                    }));
                    let first = run.pieces().next().expect("a merged run has pieces");
                    let vecs = IoVecs {
                        ptr: iov.as_ptr(),
                        count: iov.len() as u32,
                    };
                    let len_bytes = u32::try_from(run.len_bytes())
                        .expect("merged requests are at most the queue's longest request");
                    device_op(run.tag(), first, len_bytes, Some(vecs))
                }
            };
            // SAFETY: each segment lies in its request's buffer, which stays in `requests`
            // (its heap allocation never moves) until the queue reports the request's last
            // piece complete; a merged request's segment array stays in `segments` until its
            // completion is reaped; the file stays open through the request's `File` clone.
            unsafe { device.push(op) }?;
            *pieces_in_device += 1;
            *unsubmitted = true;
            if *pieces_in_device > 1 {
                // Submit at once while the device is busy, as the engine's shard loop does
                // by default: a virtio disk starts none of a batch until the whole batch is
                // in. An idle device gets the batch with the wait.
                if device.submit_and_wait(0, None).is_ok_and(|n| n > 0) {
                    *unsubmitted = false;
                }
            }
            Ok(())
        })
    }

    /// Pushes the shard's own wake-up read (`WAKE_TAG`) on `fd` into `buf`.
    ///
    /// # Safety
    /// `buf` must hold 8 bytes and stay valid until the read completes or the device is
    /// dropped.
    pub(crate) unsafe fn push_wake_read(&mut self, fd: i32, buf: *mut u8) -> Result<(), Error> {
        debug_assert!(
            self.reserved > 0,
            "no device slot kept for the wake-up read"
        );
        let op = IoOp {
            user_data: WAKE_TAG,
            direction: Direction::Read,
            fd,
            offset_bytes: 0,
            len_bytes: 8,
            buf,
            flags: IoFlags::default(),
            vectored: None,
        };
        // SAFETY: the caller's promise.
        unsafe { self.device.push(op) }.map_err(|e| Error::Device {
            message: e.to_string(),
        })
    }

    /// Has the kernel signal the eventfd `fd` when completions are ready (io_uring only).
    pub(crate) fn register_eventfd(&mut self, fd: i32) -> Result<(), Error> {
        if self.device.backend() != weir_engine::Backend::Uring {
            return Err(Error::DriveNeedsUring);
        }
        self.device.register_eventfd(fd).map_err(|e| Error::Device {
            message: e.to_string(),
        })
    }

    /// Stops signalling the eventfd of [`Self::register_eventfd`].
    pub(crate) fn unregister_eventfd(&mut self) {
        // Only fails on a ring without one registered, which then has nothing to undo.
        let _ = self.device.unregister_eventfd();
    }

    /// Submits what is queued and waits for one completion or `deadline_ns`.
    pub(crate) fn wait(&mut self, deadline_ns: Option<u64>) -> Result<(), Error> {
        self.enter(1, deadline_ns)
    }

    /// Submits what is queued and posts what completed, without waiting.
    pub(crate) fn poll_device(&mut self) -> Result<(), Error> {
        self.enter(0, None)
    }

    /// One trip into the kernel. An interrupted or busy wait and a full completion queue are
    /// not failures: the caller's loop comes back.
    fn enter(&mut self, min_complete: u32, deadline_ns: Option<u64>) -> Result<(), Error> {
        match self.device.submit_and_wait(min_complete, deadline_ns) {
            Ok(_) => {
                self.unsubmitted = false;
                Ok(())
            }
            Err(DeviceError::Os { errno, .. })
                if errno == libc::EINTR || errno == libc::EAGAIN || errno == libc::EBUSY =>
            {
                Ok(())
            }
            Err(DeviceError::QueueFull) => Ok(()),
            Err(e) => Err(Error::Device {
                message: e.to_string(),
            }),
        }
    }

    /// Moves completions in and finishes the requests whose last piece came back. Returns
    /// whether the wake-up read completed.
    pub(crate) fn reap(&mut self) -> bool {
        let mut woke = false;
        self.completions.clear();
        self.device.reap(&mut self.completions);
        let completions = std::mem::take(&mut self.completions);
        for c in &completions {
            if c.user_data == WAKE_TAG {
                woke = true;
                continue;
            }
            self.pieces_in_device -= 1;
            let mut pieces = std::mem::take(&mut self.pieces_done);
            pieces.clear();
            self.merger.fan_out(c, &mut pieces);
            for p in &pieces {
                self.complete_piece(p);
            }
            self.pieces_done = pieces;
        }
        self.completions = completions;
        woke
    }

    fn complete_piece(&mut self, c: &IoCompletion) {
        let Some(done) = self.queue.complete(c.user_data, c.completed_at_ns) else {
            unreachable!(
                "completion of token {:#x}, which is not in flight",
                c.user_data
            );
        };
        let slot = done.user_data as usize;
        let Some(req) = self.requests[slot].as_mut() else {
            unreachable!("completion for request {slot}, which is not in flight");
        };
        if c.result < 0 {
            req.errno.get_or_insert(-c.result);
        } else {
            let moved = c.result as u64;
            // The kernel never moves more than asked: anything else is a bookkeeping bug.
            assert!(
                moved <= done.len_bytes,
                "a piece moved more than its length"
            );
            req.moved_bytes += moved;
            if moved < done.len_bytes {
                let end = done.offset_in_request_bytes + moved;
                req.short_end_bytes = Some(req.short_end_bytes.map_or(end, |e| e.min(end)));
            }
        }
        if !done.request_done {
            return;
        }
        let Some(req) = self.requests[slot].take() else {
            return;
        };
        self.free.push(slot as u32);
        let InFlight {
            mut submit,
            len_bytes,
            moved_bytes,
            short_end_bytes,
            errno,
        } = req;
        let result = match errno {
            Some(errno) => Err(Error::Io {
                op: match submit.direction {
                    Direction::Read => "read",
                    Direction::Write => "write",
                },
                offset_bytes: submit.offset_bytes,
                errno,
            }),
            None => {
                let n = short_end_bytes.unwrap_or(moved_bytes.min(len_bytes));
                if submit.direction == Direction::Read {
                    submit.buf.set_len(n as usize);
                }
                Ok(n as usize)
            }
        };
        let state = submit.state.clone();
        state.finish((result, submit.buf));
    }

    /// When the queue wants a call even without a completion.
    pub(crate) fn next_wakeup_ns(&self) -> Option<u64> {
        self.queue.next_wakeup_ns()
    }

    /// Requests queued or at the device.
    pub(crate) fn busy(&self) -> bool {
        self.requests.len() > self.free.len()
    }

    /// Whether a pushed request still waits for a system call to reach the kernel.
    pub(crate) fn has_unsubmitted(&self) -> bool {
        self.unsubmitted
    }

    /// Pieces at the device.
    pub(crate) fn pieces_in_device(&self) -> u32 {
        self.pieces_in_device
    }

    pub(crate) fn set_shares(&mut self, class: IoClass, shares: u32) -> Result<(), Error> {
        self.queue.set_shares(ClassId(class.0), shares)?;
        Ok(())
    }

    pub(crate) fn metrics(&self) -> ShardMetrics {
        let mut m = self.queue.metrics();
        m.merged = self.merger.counts();
        m
    }
}

impl Drop for ShardCore {
    fn drop(&mut self) {
        // The kernel may still write into request buffers: wait for every piece before the
        // buffers (owned by `requests`) are freed. Requests never dispatched just end.
        while self.pieces_in_device > 0 {
            let before = self.pieces_in_device;
            if self.wait(None).is_err() {
                break;
            }
            self.reap();
            if self.pieces_in_device == before && self.wait(None).is_err() {
                break;
            }
        }
        if self.pieces_in_device > 0 {
            // The device failed with pieces in flight: leak their buffers rather than free
            // memory the kernel may still write.
            for req in self.requests.drain(..).flatten() {
                std::mem::forget(req.submit.buf);
            }
        }
        for req in self.requests.drain(..).flatten() {
            req.submit
                .state
                .finish((Err(Error::LoopStopped), req.submit.buf));
        }
    }
}

/// The merger's view of dispatched piece `d`: its place in the file and in its request's
/// buffer.
fn device_piece(requests: &mut [Option<InFlight>], d: &Dispatched) -> DevicePiece {
    let Some(Some(req)) = requests.get_mut(d.user_data as usize) else {
        unreachable!(
            "a dispatched piece of request {} that is not in flight",
            d.user_data
        );
    };
    debug_assert!(d.offset_in_request_bytes + d.len_bytes <= req.len_bytes);
    DevicePiece {
        token: d.token,
        direction: d.direction,
        fd: req.submit.file.fd(),
        offset_bytes: req.submit.offset_bytes + d.offset_in_request_bytes,
        len_bytes: d.len_bytes as u32,
        // SAFETY (of the pointer arithmetic): the piece lies inside the request's length,
        // which is inside the buffer's allocation.
        buf: unsafe {
            req.submit
                .buf
                .as_mut_ptr_raw()
                .add(d.offset_in_request_bytes as usize)
        },
    }
}

/// The device request for a piece, or for a merged run starting with `first` (whose buffer
/// is then the first segment's, as `IoOp` asks).
fn device_op(
    user_data: u64,
    first: &DevicePiece,
    len_bytes: u32,
    vectored: Option<IoVecs>,
) -> IoOp {
    IoOp {
        user_data,
        direction: first.direction,
        fd: first.fd,
        offset_bytes: first.offset_bytes,
        len_bytes,
        buf: first.buf,
        flags: IoFlags::default(),
        vectored,
    }
}
