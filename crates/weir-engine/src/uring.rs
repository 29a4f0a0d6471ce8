//! The io_uring backend: one ring per shard.
//!
//! Submission and completion queues are shared memory, so `push` and `reap` never enter the
//! kernel; `submit_and_wait` is one `io_uring_enter` that both submits and waits, with the
//! deadline passed as an EXT_ARG timeout (Linux 5.11+) instead of an extra timeout request.
//! The completion queue is twice the submission queue and the in-flight count is capped at
//! the requested depth, so completions can never overflow.
//!
//! Registered ("fixed") buffers are used when the caller registers a [`DmaBufferPool`]: an
//! op whose buffer lies inside a registered buffer becomes READ_FIXED/WRITE_FIXED, which saves
//! the kernel pinning pages on every request.

use std::os::fd::RawFd;

use io_uring::{opcode, squeue, types, IoUring};
use weir_model::device::{Device, DeviceError, Direction, IoCompletion, IoOp};

use crate::buffers::DmaBufferPool;
use crate::clock::{monotonic_ns, sleep_until, until};

/// An io_uring ring implementing [`Device`].
pub struct UringDevice {
    ring: IoUring<squeue::Entry>,
    capacity: u32,
    /// Pushed and not yet reaped.
    in_flight: u32,
    /// The registered buffer regions, one per registered pool (empty: none).
    fixed: Vec<FixedRegion>,
    /// Registered files: (descriptor, index in the ring's file table).
    files: Vec<(RawFd, u32)>,
}

#[derive(Clone, Copy)]
struct FixedRegion {
    base: usize,
    buffer_bytes: usize,
    count: usize,
    /// The ring's buffer index of this pool's first buffer.
    first_index: usize,
}

impl UringDevice {
    /// A ring for up to `depth` requests in flight. Errors are errnos of `io_uring_setup`
    /// (EPERM when `kernel.io_uring_disabled` forbids it, ENOMEM for the locked-memory limit)
    /// or ENOSYS when the kernel lacks the EXT_ARG wait (Linux < 5.11).
    pub fn new(depth: u32) -> Result<Self, i32> {
        let depth = depth.clamp(1, 32768);
        let sq_entries = depth.next_power_of_two();
        let ring = IoUring::builder()
            .setup_cqsize(sq_entries * 2)
            .setup_single_issuer()
            .setup_coop_taskrun()
            .build(sq_entries)
            .or_else(|_| {
                // Older kernels reject the optional flags; retry with the plain ring.
                IoUring::builder()
                    .setup_cqsize(sq_entries * 2)
                    .build(sq_entries)
            })
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
        if !ring.params().is_feature_ext_arg() {
            return Err(libc::ENOSYS);
        }
        Ok(UringDevice {
            ring,
            capacity: depth,
            in_flight: 0,
            fixed: Vec::new(),
            files: Vec::new(),
        })
    }

    /// Registers every buffer of `pool` with the ring so requests using them skip per-request
    /// page pinning. Returns false (and leaves the ring unchanged) when the kernel refuses,
    /// e.g. under a low RLIMIT_MEMLOCK on old kernels.
    ///
    /// # Safety
    /// The pool must outlive this device (or [`Self::unregister_buffers`] must be called
    /// before the pool is dropped).
    pub unsafe fn register_buffers(&mut self, pool: &DmaBufferPool) -> bool {
        // SAFETY: forwarded contract.
        unsafe { self.register_pools(std::slice::from_ref(pool)) }
    }

    /// Registers every buffer of every pool, in order, as one table.
    ///
    /// # Safety
    /// As [`Self::register_buffers`], for every pool.
    pub unsafe fn register_pools(&mut self, pools: &[DmaBufferPool]) -> bool {
        self.unregister_buffers();
        let iovecs: Vec<libc::iovec> = pools
            .iter()
            .flat_map(|pool| {
                (0..pool.count()).map(|i| libc::iovec {
                    iov_base: pool.ptr(i).cast(),
                    iov_len: pool.buffer_bytes(),
                })
            })
            .collect();
        if iovecs.is_empty() || iovecs.len() > usize::from(u16::MAX) {
            return false;
        }
        // SAFETY: the iovecs describe live memory owned by the pools; the caller keeps it alive.
        let ok = unsafe { self.ring.submitter().register_buffers(&iovecs) }.is_ok();
        if ok {
            let mut first_index = 0;
            for pool in pools {
                self.fixed.push(FixedRegion {
                    base: pool.ptr(0) as usize,
                    buffer_bytes: pool.buffer_bytes(),
                    count: pool.count(),
                    first_index,
                });
                first_index += pool.count();
            }
        }
        ok
    }

    /// Drops the buffer registration.
    pub fn unregister_buffers(&mut self) {
        if !self.fixed.is_empty() {
            self.fixed.clear();
            let _ = self.ring.submitter().unregister_buffers();
        }
    }

    /// Whether a buffer pool is registered.
    pub fn has_fixed_buffers(&self) -> bool {
        !self.fixed.is_empty()
    }

    /// Registers open files so requests on them skip the per-request file lookup and
    /// reference count (IOSQE_FIXED_FILE). False when the kernel refuses.
    pub fn register_files(&mut self, fds: &[RawFd]) -> bool {
        self.unregister_files();
        if fds.is_empty() {
            return false;
        }
        let ok = self.ring.submitter().register_files(fds).is_ok();
        if ok {
            self.files = fds
                .iter()
                .enumerate()
                .map(|(i, &fd)| (fd, i as u32))
                .collect();
        }
        ok
    }

    /// Drops the file registration.
    pub fn unregister_files(&mut self) {
        if !self.files.is_empty() {
            self.files.clear();
            let _ = self.ring.submitter().unregister_files();
        }
    }

    /// The registered buffer index holding `[buf, buf + len)`, if any.
    fn fixed_index(&self, buf: *mut u8, len: u32) -> Option<u16> {
        self.fixed.iter().find_map(|region| {
            let addr = (buf as usize).checked_sub(region.base)?;
            let index = addr / region.buffer_bytes;
            let within = addr % region.buffer_bytes + len as usize <= region.buffer_bytes;
            (index < region.count && within).then_some((region.first_index + index) as u16)
        })
    }

    fn entry(&self, op: &IoOp) -> squeue::Entry {
        // A registered file goes out as its table index with IOSQE_FIXED_FILE: the same
        // submission entry `types::Fixed` builds.
        let registered = self.files.iter().find(|(fd, _)| *fd == op.fd);
        let fd = types::Fd(registered.map_or(op.fd, |&(_, index)| index as RawFd));
        let entry = self.entry_on(fd, op);
        match registered {
            Some(_) => entry.flags(squeue::Flags::FIXED_FILE),
            None => entry,
        }
    }

    fn entry_on(&self, fd: types::Fd, op: &IoOp) -> squeue::Entry {
        let flags = rw_flags(op);
        if let Some(v) = op.vectored {
            // Vectored requests cannot use a registered buffer (one index per request).
            let iov = v.ptr.cast::<libc::iovec>();
            let entry = match op.direction {
                Direction::Read => opcode::Readv::new(fd, iov, v.count)
                    .offset(op.offset_bytes)
                    .rw_flags(flags)
                    .build(),
                Direction::Write => opcode::Writev::new(fd, iov, v.count)
                    .offset(op.offset_bytes)
                    .rw_flags(flags)
                    .build(),
            };
            return entry.user_data(op.user_data);
        }
        let entry = match (op.direction, self.fixed_index(op.buf, op.len_bytes)) {
            (Direction::Read, Some(i)) => opcode::ReadFixed::new(fd, op.buf, op.len_bytes, i)
                .offset(op.offset_bytes)
                .rw_flags(flags)
                .build(),
            (Direction::Write, Some(i)) => opcode::WriteFixed::new(fd, op.buf, op.len_bytes, i)
                .offset(op.offset_bytes)
                .rw_flags(flags)
                .build(),
            (Direction::Read, None) => opcode::Read::new(fd, op.buf, op.len_bytes)
                .offset(op.offset_bytes)
                .rw_flags(flags)
                .build(),
            (Direction::Write, None) => opcode::Write::new(fd, op.buf, op.len_bytes)
                .offset(op.offset_bytes)
                .rw_flags(flags)
                .build(),
        };
        entry.user_data(op.user_data)
    }
}

/// The `RWF_*` flags of an op.
pub(crate) fn rw_flags(op: &IoOp) -> i32 {
    let mut flags = 0;
    if op.flags.nowait {
        flags |= libc::RWF_NOWAIT;
    }
    if op.flags.dsync {
        flags |= libc::RWF_DSYNC;
    }
    flags
}

impl Device for UringDevice {
    fn now_ns(&self) -> u64 {
        monotonic_ns()
    }

    fn capacity(&self) -> u32 {
        self.capacity
    }

    unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError> {
        if self.in_flight >= self.capacity {
            return Err(DeviceError::QueueFull);
        }
        let entry = self.entry(&op);
        // SAFETY: the device contract makes the caller keep `op.buf` alive and untouched until
        // the completion is reaped.
        unsafe { self.ring.submission().push(&entry) }.map_err(|_| DeviceError::QueueFull)?;
        self.in_flight += 1;
        Ok(())
    }

    fn submit_and_wait(
        &mut self,
        min_complete: u32,
        deadline_ns: Option<u64>,
    ) -> Result<u32, DeviceError> {
        let queued = self.ring.submission().len() as u32;
        let want = min_complete.min(self.in_flight) as usize;
        // Nothing to submit and the completions asked for are already in the ring (the
        // kernel posts them without being entered): entering would only cost a system call.
        // At 128 KiB QD8 weir entered the kernel 1.13 times per write against fio's 1.05.
        if queued == 0 && want > 0 && self.ring.completion().len() >= want {
            return Ok(0);
        }
        let result = match deadline_ns {
            None => self.ring.submitter().submit_and_wait(want),
            Some(deadline) => {
                if want == 0 && min_complete > 0 {
                    // Nothing in flight to wait for: an idle shard sleeps until its deadline.
                    let submitted = self.ring.submit();
                    sleep_until(deadline);
                    submitted
                } else {
                    let ts = types::Timespec::from(until(deadline));
                    let args = types::SubmitArgs::new().timespec(&ts);
                    self.ring.submitter().submit_with_args(want, &args)
                }
            }
        };
        match result {
            Ok(n) => Ok(n as u32),
            Err(e) => match e.raw_os_error().unwrap_or(libc::EIO) {
                // ETIME: the deadline passed; EINTR: a signal (the caller polls for SIGINT);
                // EBUSY/EAGAIN: completions must be reaped first. None is a failure: the
                // requests were submitted (or stay queued for the next call).
                libc::ETIME | libc::EINTR | libc::EBUSY | libc::EAGAIN => {
                    Ok(queued - self.ring.submission().len() as u32)
                }
                errno => Err(DeviceError::Os {
                    call: "io_uring_enter",
                    errno,
                }),
            },
        }
    }

    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        let now = monotonic_ns();
        let mut n = 0;
        for cqe in self.ring.completion() {
            out.push(IoCompletion {
                user_data: cqe.user_data(),
                result: cqe.result(),
                completed_at_ns: now,
            });
            n += 1;
        }
        self.in_flight -= n as u32;
        n
    }
}
