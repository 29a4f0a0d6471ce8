//! The shard loop: the one place weir keeps requests in flight.
//!
//! A [`ShardLoop`] owns a shard's device (an io_uring ring, an AIO context, the simulated disk,
//! or a borrow of one) and its buffer pools, and with them everything in flight: it pushes
//! ops, submits, waits, reaps, checks each completion against its op, and drains whatever is
//! still at the device before its buffers can be freed — on drop, on error, on Ctrl-C. Nothing
//! above the engine reaps completions.
//!
//! Two ways to drive it:
//! - [`ShardLoop::run`] with an [`OpSource`]: the loop asks the source for the next op while
//!   it has room and hands it each completion; `weir tune`'s meter, `weir align`'s writes,
//!   the prefill and the verify pass are sources.
//! - the steps [`ShardLoop::push`], [`ShardLoop::wait`] and [`ShardLoop::next_done`], which
//!   `run` is made of, for a caller that interleaves its own timers and queues (the workload
//!   driver and its scheduler).
//!
//! Checks at both ends of every op are kept in release builds (TigerBeetle's rule: a
//! bookkeeping bug must stop the program, not corrupt a measurement): before an op leaves,
//! its offset and length are aligned, every span lies inside a buffer the source holds; when
//! it completes, its token names an op in flight and its result is no longer than the op.
//! The result is then named once ([`Outcome`]): full, end of file, short, or an errno.
//!
//! Ownership of a buffer, in one line: free in the pool -> held by the source (acquire) ->
//! at the kernel (push; the source cannot touch it) -> held again (its completion) -> free
//! (release). See [`LoopBuffers`].

mod buffers;
mod fixed;
mod op;
mod run;
#[cfg(test)]
mod tests;

use std::fmt;

use weir_model::device::{Device, DeviceError, IoCompletion, IoOp, IoVec, IoVecs};

pub use buffers::{BufId, LoopBuffers};
pub use fixed::{Registered, Registration};
pub use op::{Done, Op, Outcome, Segments, Span, MAX_SEGMENTS};
pub use run::{Flow, Next, OpSource, RunError};

use crate::buffers::DmaBufferPool;

/// Waits in a row that return no completion before a drain gives up and leaks the buffers.
const DRAIN_IDLE_WAITS_MAX: u32 = 1000;

/// When pushed ops reach the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SubmitPolicy {
    /// While anything is in flight, each op is submitted as it is pushed (fio's default,
    /// `iodepth_batch_submit=1`): a virtio disk starts none of a batch until the whole batch
    /// is in, which cost ~20% of 4 KiB QD32 IOPS against per-op submission on the
    /// development VM. An idle device still gets one call that submits and waits.
    #[default]
    Eager,
    /// Ops wait in the submission queue until [`ShardLoop::wait`]: one system call per loop
    /// turn submits them all and waits. Best where the device is not the limit (RAM-backed
    /// devices, where each system call is a visible share of the CPU per I/O).
    Batched,
}

/// How the loop behaves; the defaults suit a benchmark on a real disk.
#[derive(Debug, Clone)]
pub struct LoopOptions {
    pub submit: SubmitPolicy,
    /// File offsets and op lengths must be multiples of this (the file's direct-I/O offset
    /// alignment; 1 for buffered I/O).
    pub offset_align_bytes: u32,
    /// Record [`SubmitFacts`] for every call that submits (costs two `getrusage` calls each):
    /// for `weir qualify`, which asks whether submitting blocks the submitting thread.
    pub probe_submits: bool,
    /// [`ShardLoop::run`] stops issuing (and drains) once this token is cancelled; None runs
    /// until the source finishes.
    pub cancel: Option<crate::Cancel>,
}

impl Default for LoopOptions {
    fn default() -> Self {
        LoopOptions {
            submit: SubmitPolicy::Eager,
            offset_align_bytes: 512,
            probe_submits: false,
            cancel: None,
        }
    }
}

/// What one submitting call cost, measured around the call alone (no waiting in it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SubmitFacts {
    /// Ops the call handed to the kernel.
    pub ops: u32,
    pub elapsed_ns: u64,
    /// Voluntary context switches of this thread inside the call: the submitter slept
    /// (AIO on a filesystem that blocks in `io_submit`, or RWF_NOWAIT not honoured).
    pub voluntary_switches: u64,
}

/// Counts over the loop's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoopStats {
    pub ops_pushed: u64,
    pub ops_completed: u64,
    /// Calls into the device's submit-and-wait (each at most one system call).
    pub device_calls: u64,
}

/// Why a step failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum LoopError {
    /// No room for another op (every slot or the device queue is taken). The op was not
    /// taken: its buffers are still held by the caller. Wait for completions and retry.
    Full,
    /// The device refused a submission or a wait. Ops may still be in the kernel: the loop
    /// keeps its buffers (leaks them if they can never be drained).
    Device(DeviceError),
}

impl fmt::Display for LoopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoopError::Full => write!(f, "no room for another request in flight"),
            LoopError::Device(e) => write!(f, "the I/O backend failed: {e}"),
        }
    }
}

impl std::error::Error for LoopError {}

/// An op at the device: what its completion is checked against.
struct InFlight {
    tag: u64,
    direction: weir_model::device::Direction,
    fd: std::os::fd::RawFd,
    offset_bytes: u64,
    len_bytes: u64,
    segments: Segments,
    pushed_at_ns: u64,
}

/// One token's place: the op using it, and the iovec array a vectored op points the kernel
/// at (it must stay put until the completion; kept between ops so it is allocated once).
#[derive(Default)]
struct Slot {
    op: Option<InFlight>,
    iov: Vec<IoVec>,
}

/// One shard's device, buffers and requests in flight. See the module documentation.
pub struct ShardLoop<D: Device> {
    // Declared before `buffers`: dropped first, so no device outlives the memory it uses.
    device: D,
    buffers: LoopBuffers,
    options: LoopOptions,
    slots: Vec<Slot>,
    free_tokens: Vec<u32>,
    in_flight: u32,
    /// Pushed but not yet handed to the kernel by a submitting call.
    unsubmitted: u32,
    reaped: Vec<IoCompletion>,
    /// The next completion of `reaped` that `next_done` returns.
    reaped_next: usize,
    stats: LoopStats,
    submit_facts: Vec<SubmitFacts>,
    /// The device failed with ops in flight that could not be drained.
    broken: bool,
    /// Undoes [`ShardLoop::register`] on drop (set only where the device can register).
    unregister: Option<fn(&mut D)>,
}

impl<D: Device> ShardLoop<D> {
    /// A loop over `device` with `pools` (every buffer free), for up to the device's capacity
    /// of ops in flight.
    pub fn new(device: D, pools: Vec<DmaBufferPool>, options: LoopOptions) -> ShardLoop<D> {
        let capacity = device.capacity().max(1);
        assert!(
            options.offset_align_bytes > 0,
            "offset alignment of 0 bytes"
        );
        ShardLoop {
            device,
            buffers: LoopBuffers::new(pools),
            options,
            slots: (0..capacity).map(|_| Slot::default()).collect(),
            free_tokens: (0..capacity).rev().collect(),
            in_flight: 0,
            unsubmitted: 0,
            reaped: Vec::with_capacity(capacity as usize),
            reaped_next: 0,
            stats: LoopStats::default(),
            submit_facts: Vec::new(),
            broken: false,
            unregister: None,
        }
    }

    /// The device clock, in nanoseconds.
    pub fn now_ns(&self) -> u64 {
        self.device.now_ns()
    }

    pub fn device(&self) -> &D {
        &self.device
    }

    /// The device, for its own counters and settings. Pushing on it directly is `unsafe`
    /// ([`Device::push`]) and bypasses the loop's checks: don't.
    pub fn device_mut(&mut self) -> &mut D {
        &mut self.device
    }

    pub fn buffers(&self) -> &LoopBuffers {
        &self.buffers
    }

    pub fn buffers_mut(&mut self) -> &mut LoopBuffers {
        &mut self.buffers
    }

    pub fn options(&self) -> &LoopOptions {
        &self.options
    }

    /// Ops pushed and not yet returned by [`Self::next_done`].
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// How many more ops may be pushed now.
    pub fn room(&self) -> u32 {
        self.free_tokens.len() as u32
    }

    pub fn stats(&self) -> LoopStats {
        self.stats
    }

    /// Every submitting call's facts, when [`LoopOptions::probe_submits`] is on.
    pub fn submit_facts(&self) -> &[SubmitFacts] {
        &self.submit_facts
    }

    /// Checks `op` and hands it to the device (queued; see [`SubmitPolicy`] for when it is
    /// submitted). Its buffers stay pinned until its completion comes out of
    /// [`Self::next_done`].
    pub fn push(&mut self, op: Op) -> Result<(), LoopError> {
        let len_bytes = self.check_op(&op);
        let Some(&token) = self.free_tokens.last() else {
            return Err(LoopError::Full);
        };
        let slot = &mut self.slots[token as usize];
        let first = op.segments.spans()[0];
        let buf = self
            .buffers
            .span_ptr(first.buf, first.offset_bytes, first.len_bytes);
        let vectored = match &op.segments {
            Segments::One(_) => None,
            Segments::Many(spans) => {
                slot.iov.clear();
                for s in spans {
                    let base = self.buffers.span_ptr(s.buf, s.offset_bytes, s.len_bytes);
                    slot.iov.push(IoVec {
                        base,
                        len: s.len_bytes as usize,
                    });
                }
                Some(IoVecs {
                    ptr: slot.iov.as_ptr(),
                    count: slot.iov.len() as u32,
                })
            }
        };
        let io = IoOp {
            user_data: u64::from(token),
            direction: op.direction,
            fd: op.fd,
            offset_bytes: op.offset_bytes,
            len_bytes: len_bytes as u32,
            buf,
            flags: op.flags,
            vectored,
        };
        // Busy: something already submitted is at the kernel (not merely queued here).
        let busy = self.in_flight > self.unsubmitted;
        // SAFETY: every span lies inside a pool buffer this loop owns (checked above); the
        // buffers are pinned below, so the source cannot touch or release them, and the loop
        // drains (or, if the device broke, leaks the pools) before the memory is freed. The
        // iovec array lives in this token's slot, untouched until the token completes.
        match unsafe { self.device.push(io) } {
            Ok(()) => {}
            Err(DeviceError::QueueFull) => return Err(LoopError::Full),
            Err(e) => return Err(LoopError::Device(e)),
        }
        self.free_tokens.pop();
        for s in op.segments.spans() {
            self.buffers.pin(s.buf);
        }
        let pushed_at_ns = self.device.now_ns();
        self.slots[token as usize].op = Some(InFlight {
            tag: op.tag,
            direction: op.direction,
            fd: op.fd,
            offset_bytes: op.offset_bytes,
            len_bytes,
            segments: op.segments,
            pushed_at_ns,
        });
        self.in_flight += 1;
        self.unsubmitted += 1;
        self.stats.ops_pushed += 1;
        if busy && self.options.submit == SubmitPolicy::Eager {
            // A failure leaves the op queued; the next wait submits it again and reports
            // the error if it persists.
            let _ = self.submit();
        }
        Ok(())
    }

    /// The op's length; stops the program if the op breaks the loop's rules (a caller bug
    /// that would otherwise reach the kernel as EINVAL or as memory corruption).
    fn check_op(&self, op: &Op) -> u64 {
        let spans = op.segments.spans();
        assert!(
            !spans.is_empty() && spans.len() <= MAX_SEGMENTS,
            "an op needs 1 to {MAX_SEGMENTS} segments, not {}",
            spans.len()
        );
        let align = u64::from(self.options.offset_align_bytes);
        let len_bytes = op.segments.len_bytes();
        assert!(
            len_bytes <= u64::from(i32::MAX as u32),
            "op of {len_bytes} bytes"
        );
        assert!(
            op.offset_bytes % align == 0 && len_bytes % align == 0,
            "op of {len_bytes} bytes at offset {} is not aligned to {align} bytes",
            op.offset_bytes
        );
        assert!(
            op.offset_bytes.checked_add(len_bytes).is_some(),
            "op at offset {} overflows",
            op.offset_bytes
        );
        for s in spans {
            // Held, or in flight already under another piece of the same request (the
            // scheduler sends one request's buffer out in several pieces).
            assert!(
                !self.buffers.is_free(s.buf),
                "op on {:?}, which was never acquired or was released",
                s.buf
            );
            let ptr = self.buffers.span_ptr(s.buf, s.offset_bytes, s.len_bytes) as usize;
            // Memory alignment for direct I/O is at most a 512-byte sector on every
            // filesystem weir runs on (statx's dio_mem_align is 4 or 512).
            let mem_align = self.buffers.align_bytes(s.buf).min(align as usize).min(512);
            assert!(
                ptr % mem_align == 0,
                "span {s:?} is not aligned to {mem_align}"
            );
        }
        len_bytes
    }

    /// Hands every queued op to the kernel without waiting.
    pub fn submit(&mut self) -> Result<(), LoopError> {
        self.submit_measured()
    }

    fn submit_measured(&mut self) -> Result<(), LoopError> {
        let before = self.options.probe_submits.then(probe_now);
        let submitted = self.call_device(0, None)?;
        if let Some((t0, sw0)) = before {
            let (t1, sw1) = probe_now();
            self.submit_facts.push(SubmitFacts {
                ops: submitted,
                elapsed_ns: t1.saturating_sub(t0),
                voluntary_switches: sw1.saturating_sub(sw0),
            });
        }
        Ok(())
    }

    /// Submits what is queued and waits until `min_complete` ops completed (capped at those
    /// in flight) or the device clock reaches `deadline_ns`; then moves the completions in,
    /// for [`Self::next_done`]. A signal may end the wait early.
    pub fn wait(&mut self, min_complete: u32, deadline_ns: Option<u64>) -> Result<(), LoopError> {
        if self.options.probe_submits && self.unsubmitted > 0 {
            // Submit alone first, so the facts measure the submission and not the wait.
            self.submit_measured()?;
        }
        self.call_device(min_complete, deadline_ns)?;
        self.reap();
        Ok(())
    }

    /// One submit-and-wait; signals and "reap first" answers are not failures.
    fn call_device(
        &mut self,
        min_complete: u32,
        deadline_ns: Option<u64>,
    ) -> Result<u32, LoopError> {
        self.stats.device_calls += 1;
        match self.device.submit_and_wait(min_complete, deadline_ns) {
            Ok(n) => {
                self.unsubmitted = self.unsubmitted.saturating_sub(n);
                Ok(n)
            }
            Err(DeviceError::Os { errno, .. })
                if errno == libc::EINTR || errno == libc::EAGAIN || errno == libc::EBUSY =>
            {
                Ok(0)
            }
            Err(DeviceError::QueueFull) => Ok(0),
            Err(e) => Err(LoopError::Device(e)),
        }
    }

    fn reap(&mut self) {
        if self.reaped_next >= self.reaped.len() {
            self.reaped.clear();
            self.reaped_next = 0;
        }
        self.device.reap(&mut self.reaped);
    }

    /// The next completion, checked against its op, its buffers held by the caller again.
    /// None when every reaped completion has been returned (call [`Self::wait`]).
    pub fn next_done(&mut self) -> Option<Done> {
        let c = *self.reaped.get(self.reaped_next)?;
        self.reaped_next += 1;
        let token = c.user_data;
        let op = usize::try_from(token)
            .ok()
            .and_then(|t| self.slots.get_mut(t))
            .and_then(|s| s.op.take())
            .unwrap_or_else(|| panic!("completion for token {token}, which is not in flight"));
        for s in op.segments.spans() {
            self.buffers.unpin(s.buf);
        }
        self.free_tokens.push(token as u32);
        self.in_flight -= 1;
        self.stats.ops_completed += 1;
        Some(Done {
            tag: op.tag,
            direction: op.direction,
            fd: op.fd,
            offset_bytes: op.offset_bytes,
            len_bytes: op.len_bytes,
            buf: op.segments.spans()[0].buf,
            outcome: op::outcome(op.direction, op.len_bytes, c.result),
            pushed_at_ns: op.pushed_at_ns,
            completed_at_ns: c.completed_at_ns,
        })
    }

    /// Waits for every op in flight and discards their completions (their buffers go back
    /// to held). On a device failure the pools are leaked: the kernel may still write them.
    pub fn drain(&mut self) -> Result<(), LoopError> {
        while self.next_done().is_some() {}
        // A wait for everything returns early only on a signal; a device that keeps
        // returning with nothing (it lost requests) must not hang the drop forever.
        let mut idle_waits = 0;
        while self.in_flight > 0 {
            let before = self.in_flight;
            let waited = self.wait(self.in_flight, None);
            while self.next_done().is_some() {}
            idle_waits = if self.in_flight < before {
                0
            } else {
                idle_waits + 1
            };
            let error = match waited {
                Err(e) => e,
                Ok(()) if idle_waits < DRAIN_IDLE_WAITS_MAX => continue,
                Ok(()) => LoopError::Device(DeviceError::Os {
                    call: "drain",
                    errno: libc::ETIME,
                }),
            };
            self.broken = true;
            self.buffers.leak();
            return Err(error);
        }
        Ok(())
    }

    /// Drains, then gives the pools back (every buffer free). To keep the device too, give
    /// the loop a borrow of it (`&mut D` is a [`Device`]).
    pub fn into_pools(mut self) -> Result<Vec<DmaBufferPool>, LoopError> {
        self.drain()?;
        if let Some(unregister) = self.unregister.take() {
            unregister(&mut self.device);
        }
        let buffers = std::mem::replace(&mut self.buffers, LoopBuffers::new(Vec::new()));
        Ok(buffers.into_pools())
    }
}

impl<D: Device> Drop for ShardLoop<D> {
    fn drop(&mut self) {
        if !self.broken && self.in_flight > 0 {
            // A drop with ops in flight (an early return, an error, a panic unwinding the
            // shard): wait for them, or leak the pools if the device cannot be waited on.
            let _ = self.drain();
        }
        // Before the pools are freed: a borrowed device outlives this loop and must not keep
        // them registered.
        if let Some(unregister) = self.unregister.take() {
            unregister(&mut self.device);
        }
    }
}

/// (CLOCK_MONOTONIC ns, voluntary context switches of this thread).
fn probe_now() -> (u64, u64) {
    // SAFETY: rusage is plain data that getrusage fills.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out-pointer; RUSAGE_THREAD exists on every Linux weir runs on.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let switches = if rc == 0 { ru.ru_nvcsw as u64 } else { 0 };
    (crate::clock::monotonic_ns(), switches)
}
