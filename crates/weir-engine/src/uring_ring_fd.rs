//! A ring entered by its index in the thread's registered ring table rather than by file
//! descriptor (`IORING_REGISTER_RING_FDS`, Linux 5.18): the kernel skips the file lookup and
//! reference count of every `io_uring_enter`. The io-uring crate registers one, but keeps the
//! index in a `Submitter` that `IoUring::submitter()` rebuilds on every call, so the engine
//! makes the two calls itself. An A/B switch (`WEIR_URING_RINGFD=on`), see docs/engine.md.

use std::os::fd::RawFd;

/// `struct io_uring_rsrc_update` (include/uapi/linux/io_uring.h).
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// Registers `ring_fd` in the calling thread's ring table (Linux 5.18+); its index, or None.
pub(crate) fn register_ring_fd(ring_fd: RawFd) -> Option<u32> {
    const IORING_REGISTER_RING_FDS: libc::c_long = 20;
    let mut update = RsrcUpdate {
        offset: u32::MAX, // any free slot
        resv: 0,
        data: ring_fd as u64,
    };
    // SAFETY: one update struct, alive for the call.
    let n = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            ring_fd,
            IORING_REGISTER_RING_FDS,
            &mut update as *mut RsrcUpdate,
            1,
        )
    };
    (n == 1).then_some(update.offset)
}

/// `io_uring_enter` on a registered ring index (no argument).
pub(crate) fn enter_registered(
    index: u32,
    to_submit: u32,
    want: u32,
    flags: u32,
) -> std::io::Result<usize> {
    const IORING_ENTER_REGISTERED_RING: u32 = 1 << 4;
    // SAFETY: no argument pointer (size 0); the index names this thread's registered ring.
    let n = unsafe {
        libc::syscall(
            libc::SYS_io_uring_enter,
            index,
            to_submit,
            want,
            flags | IORING_ENTER_REGISTERED_RING,
            std::ptr::null::<libc::c_void>(),
            0usize,
        )
    };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
