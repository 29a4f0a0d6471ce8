//! RWF_NOWAIT with a safety net.
//!
//! With RWF_NOWAIT the kernel fails a request with EAGAIN instead of blocking the submitter
//! (for example, when a write must allocate blocks, or a buffered read misses the page
//! cache). That is exactly the signal a thread-per-core engine wants: it learns which requests
//! would block without stalling on them. [`NowaitRetry`] wraps any [`Device`] so callers still
//! see one completion per request: an EAGAIN completion is re-pushed once without the flag and
//! counted in [`NowaitRetry::eagain_retries`].
//!
//! When the file or kernel does not support RWF_NOWAIT (EOPNOTSUPP, or EINVAL that goes away
//! without the flag), the wrapper turns the flag off for the rest of the run and records why.
//!
//! Bookkeeping is one slot per in-flight request, sized by the inner device's capacity at
//! construction: the inner `user_data` is the slot index and the caller's op is kept there.

use weir_model::device::{Device, DeviceError, IoCompletion, IoOp};

use crate::errno::errno_name;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Attempt {
    /// Sent as the caller asked (with RWF_NOWAIT when enabled).
    First,
    /// Re-sent without RWF_NOWAIT after this errno.
    Retried(i32),
}

#[derive(Clone, Copy)]
struct Slot {
    op: IoOp,
    attempt: Attempt,
}

/// A [`Device`] wrapper that retries RWF_NOWAIT requests the kernel refused with EAGAIN.
pub struct NowaitRetry<D: Device> {
    inner: D,
    slots: Vec<Option<Slot>>,
    free: Vec<u32>,
    scratch: Vec<IoCompletion>,
    nowait_enabled: bool,
    disabled_reason: Option<String>,
    eagain_retries: u64,
    nowait_ops: u64,
}

impl<D: Device> NowaitRetry<D> {
    /// Wraps `inner`; `nowait_enabled` false strips RWF_NOWAIT from every request (the caller
    /// decided from the kernel version or filesystem that it is not trustworthy).
    pub fn new(inner: D, nowait_enabled: bool) -> Self {
        let capacity = inner.capacity() as usize;
        NowaitRetry {
            inner,
            slots: vec![None; capacity],
            free: (0..capacity as u32).rev().collect(),
            scratch: Vec::with_capacity(capacity),
            nowait_enabled,
            disabled_reason: (!nowait_enabled).then(|| "disabled by the caller".to_string()),
            eagain_retries: 0,
            nowait_ops: 0,
        }
    }

    /// How many requests came back EAGAIN under RWF_NOWAIT and were re-sent without it.
    pub fn eagain_retries(&self) -> u64 {
        self.eagain_retries
    }

    /// How many requests were sent with RWF_NOWAIT.
    pub fn nowait_ops(&self) -> u64 {
        self.nowait_ops
    }

    /// Whether RWF_NOWAIT is still being sent.
    pub fn nowait_enabled(&self) -> bool {
        self.nowait_enabled
    }

    /// Why RWF_NOWAIT was turned off, if it was.
    pub fn nowait_disabled_reason(&self) -> Option<&str> {
        self.disabled_reason.as_deref()
    }

    pub fn inner(&self) -> &D {
        &self.inner
    }

    pub fn inner_mut(&mut self) -> &mut D {
        &mut self.inner
    }

    pub fn into_inner(self) -> D {
        self.inner
    }

    /// Probes RWF_NOWAIT support at start with one read of `len_bytes` at offset 0 of `fd`
    /// into `buf` (aligned for the file; reading past the end is fine). Afterwards
    /// [`Self::nowait_enabled`] and [`Self::nowait_disabled_reason`] tell the outcome. Call it
    /// before any other request is in flight.
    ///
    /// # Safety
    /// `buf` must be valid for `len_bytes` of writes until this returns.
    pub unsafe fn probe(
        &mut self,
        fd: i32,
        buf: *mut u8,
        len_bytes: u32,
    ) -> Result<(), DeviceError> {
        if !self.nowait_enabled {
            return Ok(());
        }
        let op = IoOp {
            user_data: u64::MAX,
            direction: weir_model::device::Direction::Read,
            fd,
            offset_bytes: 0,
            len_bytes,
            buf,
            flags: weir_model::device::IoFlags {
                nowait: true,
                dsync: false,
            },
            vectored: None,
        };
        // SAFETY: the caller keeps `buf` valid until this returns, and this waits for the
        // probe's completion before returning.
        unsafe { self.push(op) }?;
        let mut out = Vec::with_capacity(1);
        while out.is_empty() {
            self.submit_and_wait(1, None)?;
            self.reap(&mut out);
        }
        // An EAGAIN here only means the data was not ready: the flag itself works.
        self.eagain_retries = 0;
        self.nowait_ops = 0;
        Ok(())
    }

    fn disable(&mut self, errno: i32) {
        if self.nowait_enabled {
            self.nowait_enabled = false;
            self.disabled_reason = Some(format!(
                "RWF_NOWAIT unsupported here: requests with it failed with {} and succeed \
                 without it",
                errno_name(errno)
            ));
        }
    }

    /// Handles one inner completion: Some(completion for the caller), or None when the request
    /// was re-sent.
    fn settle(&mut self, c: IoCompletion) -> Option<IoCompletion> {
        let index = c.user_data as usize;
        let Some(slot) = self.slots.get(index).copied().flatten() else {
            // Not ours (cannot happen: every inner request carries a slot index).
            return Some(c);
        };
        let sent_nowait = slot.op.flags.nowait && slot.attempt == Attempt::First;
        let errno = -c.result;
        let retry = sent_nowait
            && matches!(errno, libc::EAGAIN | libc::EOPNOTSUPP | libc::EINVAL)
            && c.result < 0;
        if retry {
            let mut op = slot.op;
            op.flags.nowait = false;
            op.user_data = index as u64;
            // SAFETY: the re-sent op uses the caller's memory, which the caller keeps alive
            // until this request's completion (delivered only after the retry completes).
            if unsafe { self.inner.push(op) }.is_ok() {
                if errno == libc::EAGAIN {
                    self.eagain_retries += 1;
                } else if errno == libc::EOPNOTSUPP {
                    self.disable(errno);
                }
                self.slots[index] = Some(Slot {
                    op: slot.op,
                    attempt: Attempt::Retried(errno),
                });
                return None;
            }
        }
        if slot.attempt == Attempt::Retried(libc::EINVAL) && c.result >= 0 {
            // EINVAL went away without the flag: the flag was the problem.
            self.disable(libc::EINVAL);
        }
        self.slots[index] = None;
        self.free.push(index as u32);
        Some(IoCompletion {
            user_data: slot.op.user_data,
            ..c
        })
    }
}

impl<D: Device> Device for NowaitRetry<D> {
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }

    fn capacity(&self) -> u32 {
        self.slots.len() as u32
    }

    unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError> {
        let index = self.free.pop().ok_or(DeviceError::QueueFull)?;
        let mut inner_op = op;
        inner_op.user_data = u64::from(index);
        inner_op.flags.nowait = op.flags.nowait && self.nowait_enabled;
        // SAFETY: the caller's promise, passed on (the memory is the caller's op's).
        if let Err(e) = unsafe { self.inner.push(inner_op) } {
            self.free.push(index);
            return Err(e);
        }
        if inner_op.flags.nowait {
            self.nowait_ops += 1;
        }
        self.slots[index as usize] = Some(Slot {
            op: IoOp {
                flags: inner_op.flags,
                ..op
            },
            attempt: Attempt::First,
        });
        Ok(())
    }

    fn submit_and_wait(
        &mut self,
        min_complete: u32,
        deadline_ns: Option<u64>,
    ) -> Result<u32, DeviceError> {
        self.inner.submit_and_wait(min_complete, deadline_ns)
    }

    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        let mut scratch = std::mem::take(&mut self.scratch);
        self.inner.reap(&mut scratch);
        let mut n = 0;
        for c in scratch.drain(..) {
            if let Some(done) = self.settle(c) {
                out.push(done);
                n += 1;
            }
        }
        self.scratch = scratch;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use weir_model::device::{Direction, IoFlags};

    /// A device that fails the first nowait attempt at each even offset with `errno`, and
    /// nowait attempts with EINVAL forever when `reject_nowait` is set.
    struct Flaky {
        errno: i32,
        queued: VecDeque<IoOp>,
        ready: Vec<IoCompletion>,
        seen_nowait: Vec<u64>,
    }

    impl Device for Flaky {
        fn now_ns(&self) -> u64 {
            0
        }
        fn capacity(&self) -> u32 {
            4
        }
        unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError> {
            if self.queued.len() >= 4 {
                return Err(DeviceError::QueueFull);
            }
            self.queued.push_back(op);
            Ok(())
        }
        fn submit_and_wait(&mut self, _: u32, _: Option<u64>) -> Result<u32, DeviceError> {
            let n = self.queued.len() as u32;
            while let Some(op) = self.queued.pop_front() {
                let fail = op.flags.nowait && (op.offset_bytes / 4096) % 2 == 0;
                if op.flags.nowait {
                    self.seen_nowait.push(op.offset_bytes);
                }
                let result = if fail {
                    -self.errno
                } else {
                    op.len_bytes as i32
                };
                self.ready.push(IoCompletion {
                    user_data: op.user_data,
                    result,
                    completed_at_ns: 0,
                });
            }
            Ok(n)
        }
        fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize {
            let n = self.ready.len();
            out.append(&mut self.ready);
            n
        }
    }

    fn flaky(errno: i32) -> NowaitRetry<Flaky> {
        let inner = Flaky {
            errno,
            queued: VecDeque::new(),
            ready: Vec::new(),
            seen_nowait: Vec::new(),
        };
        NowaitRetry::new(inner, true)
    }

    fn op(user_data: u64, offset: u64) -> IoOp {
        IoOp {
            user_data,
            direction: Direction::Write,
            fd: 3,
            offset_bytes: offset,
            len_bytes: 4096,
            buf: std::ptr::null_mut(),
            flags: IoFlags {
                nowait: true,
                dsync: false,
            },
            vectored: None,
        }
    }

    fn run(dev: &mut NowaitRetry<Flaky>, ops: &[IoOp]) -> Vec<IoCompletion> {
        for o in ops {
            // SAFETY: the fake device never touches the (null) buffer.
            unsafe { dev.push(*o) }.expect("push");
        }
        let mut out = Vec::new();
        while out.len() < ops.len() {
            dev.submit_and_wait(1, None).expect("wait");
            dev.reap(&mut out);
        }
        out
    }

    #[test]
    fn eagain_is_retried_once_and_counted() {
        let mut dev = flaky(libc::EAGAIN);
        let ops: Vec<IoOp> = (0..4).map(|i| op(100 + i, i * 4096)).collect();
        let mut out = run(&mut dev, &ops);
        out.sort_by_key(|c| c.user_data);
        assert_eq!(
            out.iter().map(|c| c.user_data).collect::<Vec<_>>(),
            [100, 101, 102, 103]
        );
        assert!(out.iter().all(|c| c.result == 4096), "{out:?}");
        assert_eq!(dev.eagain_retries(), 2);
        assert_eq!(dev.nowait_ops(), 4);
        assert!(dev.nowait_enabled());
    }

    #[test]
    fn eopnotsupp_disables_nowait_with_reason() {
        let mut dev = flaky(libc::EOPNOTSUPP);
        let out = run(&mut dev, &[op(1, 0)]);
        assert_eq!(out[0].result, 4096);
        assert!(!dev.nowait_enabled());
        assert!(dev
            .nowait_disabled_reason()
            .is_some_and(|r| r.contains("EOPNOTSUPP")));
        // Later requests go without the flag.
        let seen = dev.inner().seen_nowait.len();
        run(&mut dev, &[op(2, 0)]);
        assert_eq!(dev.inner().seen_nowait.len(), seen);
        assert_eq!(dev.eagain_retries(), 0);
    }

    #[test]
    fn einval_that_vanishes_without_flag_disables_nowait() {
        let mut dev = flaky(libc::EINVAL);
        let out = run(&mut dev, &[op(1, 0)]);
        assert_eq!(out[0].result, 4096);
        assert!(!dev.nowait_enabled());
    }

    #[test]
    fn capacity_bounds_slots() {
        let mut dev = flaky(libc::EAGAIN);
        for i in 0..4 {
            // SAFETY: the fake device never touches the (null) buffer.
            unsafe { dev.push(op(i, 4096)) }.expect("push");
        }
        // SAFETY: as above.
        let refused = unsafe { dev.push(op(9, 0)) };
        assert!(matches!(refused, Err(DeviceError::QueueFull)));
    }
}
