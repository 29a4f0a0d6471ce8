//! The one read that says whether a file takes non-blocking requests: `preadv2` with
//! `RWF_NOWAIT` of its first block. `--backend auto` ([`crate::auto`]) picks io_uring or Linux
//! AIO from it, and io_uring's punt policy ([`crate::iowq`]) asks it which files punt every
//! request to io-wq. A leaf: it imports nothing of the engine.

use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};

/// What one `RWF_NOWAIT` read said about a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NowaitSupport {
    /// The read completed or came back EAGAIN: the file takes non-blocking requests.
    Supported,
    /// EOPNOTSUPP: every io_uring request would go to a worker thread.
    Unsupported,
    /// Another errno: the probe says nothing (e.g. EINVAL from an odd alignment).
    Inconclusive(i32),
}

/// Reads the first `PROBE_BYTES` of `file` with RWF_NOWAIT.
pub fn probe_fd(file: &File) -> NowaitSupport {
    probe_raw_fd(file.as_raw_fd())
}

/// [`probe_fd`] on a descriptor the caller keeps open (an EBADF, e.g. from a write-only
/// descriptor, is inconclusive).
pub fn probe_raw_fd(fd: RawFd) -> NowaitSupport {
    let mut buf = AlignedBlock::new();
    let iov = libc::iovec {
        iov_base: buf.ptr().cast(),
        iov_len: PROBE_BYTES,
    };
    // SAFETY: one iovec over a live, owned, writable buffer of PROBE_BYTES.
    let n = unsafe { libc::preadv2(fd, &iov, 1, 0, libc::RWF_NOWAIT) };
    if n >= 0 {
        return NowaitSupport::Supported;
    }
    classify(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
}

/// The probe's verdict from a failed read's errno.
pub fn classify(errno: i32) -> NowaitSupport {
    match errno {
        // The file takes the flag; this read would have blocked right now.
        libc::EAGAIN => NowaitSupport::Supported,
        libc::EOPNOTSUPP => NowaitSupport::Unsupported,
        other => NowaitSupport::Inconclusive(other),
    }
}

/// One block, the largest logical block size in use (4 KiB), so O_DIRECT accepts it anywhere.
pub(crate) const PROBE_BYTES: usize = 4096;

pub(crate) struct AlignedBlock(*mut u8);

impl AlignedBlock {
    fn layout() -> std::alloc::Layout {
        // PROBE_BYTES is a non-zero power of two: the layout is valid.
        std::alloc::Layout::from_size_align(PROBE_BYTES, PROBE_BYTES).expect("4 KiB layout")
    }
    pub(crate) fn new() -> Self {
        // SAFETY: a non-zero-sized layout.
        let ptr = unsafe { std::alloc::alloc_zeroed(Self::layout()) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(Self::layout());
        }
        AlignedBlock(ptr)
    }
    pub(crate) fn ptr(&mut self) -> *mut u8 {
        self.0
    }
}

impl Drop for AlignedBlock {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with the same layout.
        unsafe { std::alloc::dealloc(self.0, Self::layout()) }
    }
}
