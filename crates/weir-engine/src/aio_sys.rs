//! Linux AIO (the kernel's `io_setup`/`io_submit`/`io_getevents` interface) by raw syscalls,
//! without libaio.
//!
//! The ABI structs are declared here exactly as `include/uapi/linux/aio_abi.h` lays them out.
//! [`AioContext`] owns a kernel context and destroys it on drop. Submitting is the one unsafe
//! step: the kernel keeps reading or writing the buffer an [`Iocb`] points at until its event is
//! reaped, which Rust cannot check.
//!
//! The probe crate reuses this module for fsqual, which must count the submitter's context
//! switches around `io_submit`: that is why [`AioContext::submit`] is one syscall and nothing else.

use std::time::Duration;

use crate::errno::last_errno;

/// `IOCB_CMD_PREAD`: read `aio_nbytes` at `aio_offset` into `aio_buf`.
pub const IOCB_CMD_PREAD: u16 = 0;
/// `IOCB_CMD_PWRITE`: write `aio_nbytes` from `aio_buf` at `aio_offset`.
pub const IOCB_CMD_PWRITE: u16 = 1;
/// `IOCB_CMD_FSYNC`: flush data and metadata of `aio_fildes`.
pub const IOCB_CMD_FSYNC: u16 = 2;
/// `IOCB_CMD_FDSYNC`: flush data (and the metadata needed to read it back).
pub const IOCB_CMD_FDSYNC: u16 = 3;
/// `IOCB_CMD_PREADV`: read into the `aio_nbytes` iovecs at `aio_buf`, at `aio_offset`.
pub const IOCB_CMD_PREADV: u16 = 7;
/// `IOCB_CMD_PWRITEV`: write the `aio_nbytes` iovecs at `aio_buf`, at `aio_offset`.
pub const IOCB_CMD_PWRITEV: u16 = 8;
/// `IOCB_CMD_NOOP`: completes at once; useful to test a context.
pub const IOCB_CMD_NOOP: u16 = 6;

/// `RWF_DSYNC` for [`Iocb::aio_rw_flags`]: the write completes once durable (per request O_DSYNC).
pub const RWF_DSYNC: u32 = libc::RWF_DSYNC as u32;
/// `RWF_NOWAIT` for [`Iocb::aio_rw_flags`]: fail with EAGAIN instead of blocking (Linux 4.14+).
pub const RWF_NOWAIT: u32 = libc::RWF_NOWAIT as u32;

/// The kernel's handle for an AIO context (`aio_context_t`, an address in our address space).
pub type AioContextId = libc::c_ulong;

/// One AIO request (`struct iocb`). 64 bytes; the field order of `aio_key` and `aio_rw_flags`
/// follows the byte order, as in the kernel header.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Iocb {
    /// Returned unchanged in [`IoEvent::data`].
    pub aio_data: u64,
    #[cfg(target_endian = "little")]
    pub aio_key: u32,
    /// Per-request `RWF_*` flags ([`RWF_NOWAIT`], [`RWF_DSYNC`]).
    pub aio_rw_flags: u32,
    #[cfg(target_endian = "big")]
    pub aio_key: u32,
    /// One of the `IOCB_CMD_*` constants.
    pub aio_lio_opcode: u16,
    pub aio_reqprio: i16,
    pub aio_fildes: u32,
    /// The buffer's address.
    pub aio_buf: u64,
    pub aio_nbytes: u64,
    pub aio_offset: i64,
    pub aio_reserved2: u64,
    /// `IOCB_FLAG_*` (eventfd notification, ioprio); weir uses none.
    pub aio_flags: u32,
    pub aio_resfd: u32,
}

impl Iocb {
    /// A read of `len_bytes` at `offset_bytes` into `buf`.
    pub fn pread(fd: i32, buf: *mut u8, len_bytes: u32, offset_bytes: u64, data: u64) -> Self {
        Self::rw(IOCB_CMD_PREAD, fd, buf, len_bytes, offset_bytes, data)
    }

    /// A write of `len_bytes` from `buf` at `offset_bytes`.
    pub fn pwrite(fd: i32, buf: *const u8, len_bytes: u32, offset_bytes: u64, data: u64) -> Self {
        Self::rw(
            IOCB_CMD_PWRITE,
            fd,
            buf.cast_mut(),
            len_bytes,
            offset_bytes,
            data,
        )
    }

    /// A vectored read (`write` false) or write of the `count` segments at `iov`, at
    /// `offset_bytes`.
    pub fn vectored(
        write: bool,
        fd: i32,
        iov: *const weir_model::device::IoVec,
        count: u32,
        offset_bytes: u64,
        data: u64,
    ) -> Self {
        let opcode = if write {
            IOCB_CMD_PWRITEV
        } else {
            IOCB_CMD_PREADV
        };
        // For the vectored commands the kernel reads aio_buf as the iovec array and
        // aio_nbytes as its length.
        Self::rw(
            opcode,
            fd,
            iov.cast::<u8>().cast_mut(),
            count,
            offset_bytes,
            data,
        )
    }

    fn rw(
        opcode: u16,
        fd: i32,
        buf: *mut u8,
        len_bytes: u32,
        offset_bytes: u64,
        data: u64,
    ) -> Self {
        Iocb {
            aio_data: data,
            aio_lio_opcode: opcode,
            // A negative descriptor is passed through unchanged; the kernel answers EBADF.
            aio_fildes: fd as u32,
            aio_buf: buf as u64,
            aio_nbytes: u64::from(len_bytes),
            aio_offset: offset_bytes as i64,
            ..Iocb::default()
        }
    }

    /// Sets the per-request `RWF_*` flags.
    pub fn with_rw_flags(mut self, flags: u32) -> Self {
        self.aio_rw_flags = flags;
        self
    }
}

/// One completion (`struct io_event`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoEvent {
    /// The request's [`Iocb::aio_data`].
    pub data: u64,
    /// The address of the request's iocb.
    pub obj: u64,
    /// Bytes transferred, or a negative errno.
    pub res: i64,
    pub res2: i64,
}

impl IoEvent {
    /// The result as the `i32` the device contract uses: byte count or negative errno.
    /// A single request moves at most `u32::MAX` bytes, and weir's requests are far smaller.
    pub fn result(&self) -> i32 {
        i32::try_from(self.res).unwrap_or(i32::MAX)
    }
}

const _: () = assert!(std::mem::size_of::<Iocb>() == 64);
const _: () = assert!(std::mem::size_of::<IoEvent>() == 32);

/// An AIO context: created by `io_setup`, destroyed (waiting for in-flight requests) on drop.
#[derive(Debug)]
pub struct AioContext {
    id: AioContextId,
    max_events: u32,
}

impl AioContext {
    /// `io_setup(max_events)`. Errors are errnos: EAGAIN when `max_events` exceeds what
    /// `/proc/sys/fs/aio-max-nr` still allows, ENOSYS when the kernel lacks AIO.
    pub fn new(max_events: u32) -> Result<Self, i32> {
        let mut id: AioContextId = 0;
        // SAFETY: io_setup writes one aio_context_t to the pointer, which is valid.
        let rc = unsafe { libc::syscall(libc::SYS_io_setup, max_events as libc::c_long, &mut id) };
        if rc < 0 {
            return Err(last_errno());
        }
        Ok(AioContext { id, max_events })
    }

    /// The kernel's context id.
    pub fn id(&self) -> AioContextId {
        self.id
    }

    /// The `max_events` the context was created with.
    pub fn max_events(&self) -> u32 {
        self.max_events
    }

    /// `io_submit`: hands `iocbs` to the kernel and returns how many it accepted (the first n;
    /// the caller resubmits the rest). Errors are errnos: EAGAIN (no room), EBADF, EINVAL.
    ///
    /// # Safety
    /// Every pointer must point at a valid [`Iocb`] whose buffer (`aio_buf`, `aio_nbytes`) stays
    /// valid, and for reads unaliased, until its [`IoEvent`] has been reaped from this context.
    /// The iocb itself may be reused once `io_submit` returns.
    pub unsafe fn submit(&self, iocbs: &mut [*mut Iocb]) -> Result<usize, i32> {
        if iocbs.is_empty() {
            return Ok(0);
        }
        // SAFETY: the pointer array is valid for iocbs.len() entries; the caller vouches for
        // each iocb and its buffer.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_io_submit,
                self.id,
                iocbs.len() as libc::c_long,
                iocbs.as_mut_ptr(),
            )
        };
        if rc < 0 {
            return Err(last_errno());
        }
        Ok(rc as usize)
    }

    /// `io_getevents`: waits until at least `min_events` completions are ready (or `timeout`
    /// passes, when given) and copies up to `out.len()` of them. Returns how many it copied.
    /// A timeout is not an error (it returns fewer than `min_events`); EINTR (a signal) is
    /// returned as `Err(libc::EINTR)` so interrupt-aware loops can notice it.
    pub fn get_events(
        &self,
        min_events: u32,
        out: &mut [IoEvent],
        timeout: Option<Duration>,
    ) -> Result<usize, i32> {
        let min_events = (min_events as usize).min(out.len());
        let ts = timeout.map(|t| libc::timespec {
            tv_sec: t.as_secs().min(i64::MAX as u64) as libc::time_t,
            tv_nsec: t.subsec_nanos() as libc::c_long,
        });
        let ts_ptr = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `out` is valid for out.len() events; the timespec outlives the call.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_io_getevents,
                self.id,
                min_events as libc::c_long,
                out.len() as libc::c_long,
                out.as_mut_ptr(),
                ts_ptr,
            )
        };
        if rc < 0 {
            return Err(last_errno());
        }
        Ok(rc as usize)
    }
}

/// The header the kernel maps at the context's address (`struct aio_ring` in fs/aio.c),
/// followed by `nr` events. User space may consume events from it directly, as libaio does,
/// when the magic matches and no incompatible features are set.
#[repr(C)]
struct AioRingHeader {
    id: u32,
    nr: u32,
    head: u32,
    tail: u32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

const AIO_RING_MAGIC: u32 = 0xa10a_10a1;

impl AioContext {
    /// Copies ready completions straight from the kernel's completion ring into `out`,
    /// without a syscall, and returns how many. Returns 0 when none are ready or when the
    /// ring layout is not the one this code knows (then use [`Self::get_events`]).
    pub fn peek_events(&self, out: &mut [IoEvent]) -> usize {
        use std::sync::atomic::{fence, AtomicU32, Ordering};
        let ring = self.id as *mut AioRingHeader;
        // SAFETY: the context id is the address of the kernel-maintained ring mapping, which
        // lives until io_destroy; the header fields are read through atomics because the
        // kernel writes `tail` concurrently.
        unsafe {
            let magic = std::ptr::addr_of!((*ring).magic).read_volatile();
            let incompat = std::ptr::addr_of!((*ring).incompat_features).read_volatile();
            if magic != AIO_RING_MAGIC || incompat != 0 {
                return 0;
            }
            let nr = std::ptr::addr_of!((*ring).nr).read_volatile();
            let head_ref = &*(std::ptr::addr_of_mut!((*ring).head) as *const AtomicU32);
            let tail_ref = &*(std::ptr::addr_of_mut!((*ring).tail) as *const AtomicU32);
            let mut head = head_ref.load(Ordering::Acquire);
            let tail = tail_ref.load(Ordering::Acquire);
            if nr == 0 || head >= nr || tail >= nr {
                return 0;
            }
            // Events written before `tail` was published are visible after this fence.
            fence(Ordering::Acquire);
            let events =
                (ring as *const u8).add(std::mem::size_of::<AioRingHeader>()) as *const IoEvent;
            let mut n = 0;
            while head != tail && n < out.len() {
                out[n] = events.add(head as usize).read_volatile();
                head = (head + 1) % nr;
                n += 1;
            }
            if n > 0 {
                head_ref.store(head, Ordering::Release);
            }
            n
        }
    }
}

impl Drop for AioContext {
    fn drop(&mut self) {
        // io_destroy waits for in-flight requests, so no buffer is written after this returns.
        // SAFETY: the id came from io_setup and is destroyed exactly once.
        unsafe {
            libc::syscall(libc::SYS_io_destroy, self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    #[test]
    fn noop_roundtrip() {
        let ctx = AioContext::new(4).expect("io_setup");
        let mut iocb = Iocb {
            aio_lio_opcode: IOCB_CMD_NOOP,
            aio_data: 42,
            ..Iocb::default()
        };
        let mut ptrs = [&mut iocb as *mut Iocb];
        // SAFETY: the noop touches no buffer; the iocb outlives the call.
        let res = unsafe { ctx.submit(&mut ptrs) };
        // Some kernels reject NOOP with EINVAL; that still proves the syscall path works.
        match res {
            Ok(n) => {
                assert_eq!(n, 1);
                let mut ev = [IoEvent::default(); 4];
                let got = ctx
                    .get_events(1, &mut ev, Some(Duration::from_secs(5)))
                    .expect("io_getevents");
                assert_eq!(got, 1);
                assert_eq!(ev[0].data, 42);
            }
            Err(errno) => assert_eq!(errno, libc::EINVAL),
        }
    }

    #[test]
    fn buffered_pwrite_then_pread() {
        let mut f = tempfile::tempfile().expect("tempfile");
        f.write_all(&[0u8; 4096]).expect("write");
        let ctx = AioContext::new(8).expect("io_setup");
        let data = [7u8; 512];
        let mut w = Iocb::pwrite(f.as_raw_fd(), data.as_ptr(), 512, 1024, 1);
        let mut ptrs = [&mut w as *mut Iocb];
        // SAFETY: `data` lives until the event is reaped below.
        assert_eq!(unsafe { ctx.submit(&mut ptrs) }, Ok(1));
        let mut ev = [IoEvent::default(); 8];
        assert_eq!(ctx.get_events(1, &mut ev, None), Ok(1));
        assert_eq!((ev[0].data, ev[0].result()), (1, 512));

        let mut back = [0u8; 512];
        let mut r = Iocb::pread(f.as_raw_fd(), back.as_mut_ptr(), 512, 1024, 2);
        let mut ptrs = [&mut r as *mut Iocb];
        // SAFETY: `back` lives until the event is reaped below.
        assert_eq!(unsafe { ctx.submit(&mut ptrs) }, Ok(1));
        assert_eq!(ctx.get_events(1, &mut ev, None), Ok(1));
        assert_eq!((ev[0].data, ev[0].result()), (2, 512));
        assert_eq!(back, data);
    }

    #[test]
    fn peek_reads_the_user_space_ring() {
        let mut f = tempfile::tempfile().expect("tempfile");
        f.write_all(&[0u8; 4096]).expect("write");
        let ctx = AioContext::new(8).expect("io_setup");
        let mut back = [0u8; 512];
        let mut r = Iocb::pread(f.as_raw_fd(), back.as_mut_ptr(), 512, 0, 77);
        let mut ptrs = [&mut r as *mut Iocb];
        // SAFETY: `back` lives until the event is consumed below.
        assert_eq!(unsafe { ctx.submit(&mut ptrs) }, Ok(1));
        let mut ev = [IoEvent::default(); 8];
        let mut got = 0;
        for _ in 0..1000 {
            got = ctx.peek_events(&mut ev);
            if got > 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(got, 1, "a buffered read completes within a second");
        assert_eq!((ev[0].data, ev[0].result()), (77, 512));
        // Consumed: neither the ring nor the syscall returns it again.
        assert_eq!(ctx.peek_events(&mut ev), 0);
        assert_eq!(ctx.get_events(0, &mut ev, Some(Duration::ZERO)), Ok(0));
    }

    #[test]
    fn get_events_times_out_empty() {
        let ctx = AioContext::new(2).expect("io_setup");
        let mut ev = [IoEvent::default(); 2];
        let got = ctx.get_events(1, &mut ev, Some(Duration::from_millis(5)));
        assert_eq!(got, Ok(0));
    }

    #[test]
    fn bad_fd_reports_ebadf() {
        let ctx = AioContext::new(2).expect("io_setup");
        let mut buf = [0u8; 512];
        let mut r = Iocb::pread(-1, buf.as_mut_ptr(), 512, 0, 9);
        let mut ptrs = [&mut r as *mut Iocb];
        // SAFETY: the request fails at submission; nothing touches the buffer afterwards.
        assert_eq!(unsafe { ctx.submit(&mut ptrs) }, Err(libc::EBADF));
    }
}
