//! Per-job EAGAIN counts under the engine's RWF_NOWAIT retry.
//!
//! The engine's `NowaitRetry` re-sends refused requests transparently and counts them per
//! device, but a shard runs several jobs on one device. [`EagainSpy`] sits *under* the retry
//! wrapper: it sees every attempt, including the refused ones, and charges each EAGAIN to the
//! file descriptor the request was for. Each job has its own file, so the descriptor names the
//! job. It only observes; the retry logic stays in the engine.

use std::os::fd::RawFd;

use weir_engine::{DmaBufferPool, Registration};
use weir_model::device::{Device, DeviceError, IoCompletion, IoOp};

/// A pass-through device that counts RWF_NOWAIT refusals per file descriptor.
pub struct EagainSpy<D: Device> {
    inner: D,
    /// The descriptor and nowait flag of each request in flight, by its `user_data` (the retry
    /// wrapper's slot index, dense from 0).
    sent: Vec<(RawFd, bool)>,
    counts: Vec<(RawFd, u64)>,
}

impl<D: Device> EagainSpy<D> {
    pub fn new(inner: D) -> Self {
        let capacity = inner.capacity() as usize;
        EagainSpy {
            inner,
            sent: vec![(-1, false); capacity],
            counts: Vec::new(),
        }
    }

    /// EAGAIN refusals of nowait requests, per descriptor.
    pub fn counts(&self) -> &[(RawFd, u64)] {
        &self.counts
    }
}

/// Counts one refusal for `fd` (a handful of jobs per shard: a linear search is the fastest).
fn charge(counts: &mut Vec<(RawFd, u64)>, fd: RawFd) {
    match counts.iter_mut().find(|(f, _)| *f == fd) {
        Some((_, n)) => *n += 1,
        None => counts.push((fd, 1)),
    }
}

impl<D: Device> Device for EagainSpy<D> {
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }

    fn capacity(&self) -> u32 {
        self.inner.capacity()
    }

    unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError> {
        let index = op.user_data as usize;
        if index >= self.sent.len() {
            self.sent.resize(index + 1, (-1, false));
        }
        self.sent[index] = (op.fd, op.flags.nowait);
        // SAFETY: the caller's promise, passed on.
        unsafe { self.inner.push(op) }
    }

    fn submit_and_wait(
        &mut self,
        min_complete: u32,
        deadline_ns: Option<u64>,
    ) -> Result<u32, DeviceError> {
        self.inner.submit_and_wait(min_complete, deadline_ns)
    }

    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        let start = out.len();
        let n = self.inner.reap(out);
        // No collecting: this runs on every wake-up, and on a sparse file every write may be
        // refused once, so the loop charges in place.
        for c in &out[start..] {
            if c.result != -libc::EAGAIN {
                continue;
            }
            if let Some(&(fd, true)) = self.sent.get(c.user_data as usize) {
                charge(&mut self.counts, fd);
            }
        }
        n
    }
}

impl<D: Device + Registration> Registration for EagainSpy<D> {
    unsafe fn register_pools(&mut self, pools: &[DmaBufferPool]) -> bool {
        // SAFETY: forwarded contract.
        unsafe { self.inner.register_pools(pools) }
    }

    fn register_files(&mut self, fds: &[RawFd]) -> bool {
        self.inner.register_files(fds)
    }

    fn unregister(&mut self) {
        self.inner.unregister();
    }
}
