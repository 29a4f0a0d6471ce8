//! The contract between whatever issues I/O (the workload driver, the scheduler's tests,
//! `weir tune`) and whatever performs it: an io_uring ring, a Linux AIO context, or the
//! simulated disk of `weir-sim`.
//!
//! One `Device` belongs to one shard and one thread; it is deliberately not `Send`-bound or
//! shared, so the hot path takes no locks. The device also owns the clock: a real ring reads
//! `CLOCK_MONOTONIC`, the simulated disk advances virtual time only inside `submit_and_wait`.
//! Code generic over `Device` therefore runs unchanged, and deterministically, in simulation.

use std::fmt;
use std::os::fd::RawFd;

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the device into memory.
    Read,
    /// From memory onto the device.
    Write,
}

impl Direction {
    /// 0 for reads, 1 for writes: the index of per-direction arrays (`[T; 2]`).
    pub fn index(self) -> usize {
        match self {
            Direction::Read => 0,
            Direction::Write => 1,
        }
    }

    /// The other direction (a duplex disk's other lane).
    pub fn other(self) -> Direction {
        match self {
            Direction::Read => Direction::Write,
            Direction::Write => Direction::Read,
        }
    }
}

/// Per-operation flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoFlags {
    /// Submit with RWF_NOWAIT: the kernel returns EAGAIN instead of blocking.
    pub nowait: bool,
    /// Submit with RWF_DSYNC: the write completes only when it is durable.
    pub dsync: bool,
}

/// One segment of a vectored request: the layout of the kernel's `struct iovec`, so an array
/// of them goes to `preadv`-style calls unchanged.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoVec {
    /// The segment's first byte.
    pub base: *mut u8,
    /// The segment's length in bytes.
    pub len: usize,
}

/// The segments of a vectored request: `count` [`IoVec`]s at `ptr`, whose lengths add up to
/// the op's `len_bytes`. The caller keeps the array (and every segment's memory) alive and
/// untouched until the completion is reaped, like a plain buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoVecs {
    /// The first segment.
    pub ptr: *const IoVec,
    /// How many segments.
    pub count: u32,
}

/// One request. `buf` points at `len_bytes` of memory aligned for direct I/O that the caller
/// keeps alive and untouched until the matching completion is reaped (the simulated disk never
/// dereferences it). A vectored request (`vectored: Some`) moves one contiguous range of the
/// file from or to several buffers in one request; `buf` is then its first segment's base.
#[derive(Debug, Clone, Copy)]
pub struct IoOp {
    /// Returned unchanged in the completion; the caller's key for the request.
    pub user_data: u64,
    /// Read or write.
    pub direction: Direction,
    /// The file or device.
    pub fd: RawFd,
    /// Where in the file the request starts.
    pub offset_bytes: u64,
    /// The request's length.
    pub len_bytes: u32,
    /// The memory read into or written from.
    pub buf: *mut u8,
    /// Per-request flags.
    pub flags: IoFlags,
    /// `Some` for a vectored request (see [`IoVecs`]); `None` when `buf` holds it all.
    pub vectored: Option<IoVecs>,
}

/// A finished request: `result` is the byte count, or a negative errno (e.g. `-libc::EAGAIN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoCompletion {
    /// The request's `user_data`.
    pub user_data: u64,
    /// The bytes moved, or a negative errno.
    pub result: i32,
    /// The device clock when the completion was observed, in nanoseconds.
    pub completed_at_ns: u64,
}

/// A device-level failure (not a failed request: those arrive as negative `result`s).
#[derive(Debug)]
pub enum DeviceError {
    /// The submission queue is full; reap completions and retry.
    QueueFull,
    /// The kernel refused the submission or wait call itself.
    Os {
        /// The system call that failed.
        call: &'static str,
        /// Its errno.
        errno: i32,
    },
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceError::QueueFull => write!(f, "submission queue full"),
            DeviceError::Os { call, errno } => write!(
                f,
                "{call} failed: {}",
                std::io::Error::from_raw_os_error(*errno)
            ),
        }
    }
}

impl std::error::Error for DeviceError {}

/// An I/O device with its own clock. See the module documentation.
pub trait Device {
    /// Now, on this device's clock, in nanoseconds from an arbitrary origin.
    fn now_ns(&self) -> u64;

    /// The most requests that may be in flight at once (queued, submitted, not yet reaped).
    fn capacity(&self) -> u32;

    /// Queues one request without entering the kernel.
    ///
    /// # Safety
    /// `op.buf` (and, for a vectored op, the iovec array and every segment) must point at
    /// memory valid for `len_bytes` that stays alive and untouched by anyone else until the
    /// request's completion has been reaped: the kernel reads or writes it after this returns.
    /// Callers above the engine never push directly: `weir_engine::ShardLoop` owns the
    /// buffers and keeps this promise for them.
    unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError>;

    /// Submits everything queued, then waits until at least `min_complete` completions are
    /// ready or the clock reaches `deadline_ns` (when given), whichever comes first.
    /// Returns the number of requests submitted.
    ///
    /// `min_complete` is capped at the number of requests in flight, so the call never waits
    /// for completions that cannot come. When nothing is in flight, `min_complete > 0` and a
    /// deadline is given, the call sleeps until the deadline (an idle shard waiting for its
    /// next arrival); without a deadline it returns at once. A signal may end the wait early
    /// (the caller re-checks its clock and interrupt flag).
    fn submit_and_wait(
        &mut self,
        min_complete: u32,
        deadline_ns: Option<u64>,
    ) -> Result<u32, DeviceError>;

    /// Moves every ready completion into `out` and returns how many it moved.
    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize;
}

/// A borrowed device is a device: a loop can run on it and hand it back to its owner (who
/// keeps it across runs, as `weir tune`'s meter does).
impl<D: Device + ?Sized> Device for &mut D {
    fn now_ns(&self) -> u64 {
        (**self).now_ns()
    }

    fn capacity(&self) -> u32 {
        (**self).capacity()
    }

    unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError> {
        // SAFETY: the caller's promise, passed on.
        unsafe { (**self).push(op) }
    }

    fn submit_and_wait(
        &mut self,
        min_complete: u32,
        deadline_ns: Option<u64>,
    ) -> Result<u32, DeviceError> {
        (**self).submit_and_wait(min_complete, deadline_ns)
    }

    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        (**self).reap(out)
    }
}
