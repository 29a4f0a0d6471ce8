//! io_uring on a file that refuses non-blocking requests: how the ring hands them to io-wq.
//!
//! io_uring first issues every request inline with `IOCB_NOWAIT`. A file without
//! `FMODE_NOWAIT` (zram and other bio-based drivers without `REQ_NOWAIT` support) refuses at
//! once, and the request is then queued to the submitting thread's io-wq, whose worker
//! threads run it blocking. Queued that way, reads of a block device are *bounded,
//! non-concurrent* work: io-wq adds a worker only when none is running, so one worker runs
//! them one after another while the shard waits. The ring learns nothing from the refusal (no
//! completion flag says "punted"), so the engine asks each file once, when it is registered,
//! with the `--backend auto` probe (one 4 KiB `preadv2(..., RWF_NOWAIT)`), and sends the
//! requests on a file that refuses with `IOSQE_ASYNC`: straight to io-wq, without the doomed
//! inline attempt, and queued as *concurrent* work, so io-wq starts another worker while one
//! is busy and the reads run on every CPU the process has.
//!
//! fio has the same switch (`force_async=1`); bench/engine-vs-fio.sh runs fio with it too.
//! Whether a ring uses it is chosen from the ring's depth (`crate::uring_wait`: shallow rings
//! send async and spin, deep ones stay inline); `WEIR_URING_PUNT=async|inline` fixes it for
//! A/B runs.
//!
//! Not kept: bounding the io-wq's workers (`IORING_REGISTER_IOWQ_MAX_WORKERS`) to the CPUs.
//! Set from the submitting thread, the kernel reads the bound back (2 bounded, 2 unbounded),
//! yet 5-6 workers still ran a QD32 zram read job on Linux 6.18
//! (docs/engine.md). The deep choice on zram (`PuntedWait::AsyncBounded`) sets it at file
//! registration, before the thread's first submit, and the shard then runs with exactly two
//! `iou-wrk` threads. Elsewhere it is an A/B switch (`WEIR_URING_IOWQ_MAX=<n>`, set at the ring's first
//! enter): a spinning ring bounded to 2 workers was 1.3-1.9x the unbatched inline wait at QD32
//! under load, about what the inline ring's batched wait did with 0.95x its CPU per I/O.

use std::os::fd::RawFd;

use crate::nowait_probe::{probe_raw_fd, NowaitSupport};

/// What the ring does for files that refuse non-blocking requests (read once per ring).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PuntPolicy {
    /// Send their requests with IOSQE_ASYNC.
    pub force_async: bool,
}

impl PuntPolicy {
    /// The default (async), or the kernel's own path when
    /// [`crate::EngineOptions::punt_inline`] asks for it.
    pub fn configured() -> Self {
        PuntPolicy {
            force_async: !crate::options::engine_options().punt_inline,
        }
    }
}

/// Whether requests on `fd` would all be punted to io-wq (the probe says EOPNOTSUPP).
pub fn file_punts(fd: RawFd) -> bool {
    probe_raw_fd(fd) == NowaitSupport::Unsupported
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// Only EOPNOTSUPP means "punts": a descriptor the probe cannot read (a pipe: ESPIPE; a
    /// write-only file: EBADF) keeps the kernel's own path.
    #[test]
    fn an_inconclusive_probe_does_not_punt() {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
        assert!(matches!(
            probe_raw_fd(fds[0]),
            NowaitSupport::Inconclusive(libc::ESPIPE)
        ));
        assert!(!file_punts(fds[0]));
        for fd in fds {
            // SAFETY: closing descriptors this test opened.
            unsafe { libc::close(fd) };
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(dir.path().join("write-only"))
            .expect("create");
        assert_eq!(
            probe_raw_fd(file.as_raw_fd()),
            NowaitSupport::Inconclusive(libc::EBADF)
        );
        assert!(!file_punts(file.as_raw_fd()));
    }
}
