//! Choosing a backend: io_uring (default) or Linux AIO, behind one [`Device`] type.

use std::fmt;
use std::str::FromStr;

use weir_model::device::{Device, DeviceError, IoCompletion, IoOp};

use crate::aio::AioDevice;
use crate::errno::describe_errno;
use crate::uring::UringDevice;

/// Which kernel interface performs the I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Backend {
    /// io_uring (Linux 5.11+ for the deadline wait).
    #[default]
    Uring,
    /// Linux AIO (`io_submit`), as Seastar uses by default.
    Aio,
}

impl Backend {
    /// Both backends, for tests and benchmarks that cover each.
    pub const ALL: [Backend; 2] = [Backend::Uring, Backend::Aio];

    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Uring => "uring",
            Backend::Aio => "aio",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Backend {
    type Err = UnknownBackend;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "uring" | "io_uring" => Ok(Backend::Uring),
            "aio" | "linux-aio" | "libaio" => Ok(Backend::Aio),
            other => Err(UnknownBackend {
                given: other.to_string(),
                auto: false,
            }),
        }
    }
}

/// A `--backend` value that names no backend. `auto` says whether `auto` was a choice (it is
/// for [`crate::BackendChoice`]), so the message lists what the flag accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownBackend {
    pub given: String,
    pub auto: bool,
}

impl fmt::Display for UnknownBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let given = &self.given;
        if self.auto {
            write!(
                f,
                "unknown I/O backend '{given}': expected 'auto' (probe the target, the default), \
                 'uring' (io_uring) or 'aio' (Linux AIO)"
            )
        } else {
            write!(
                f,
                "unknown I/O backend '{given}': expected 'uring' (io_uring, the default) or 'aio' \
                 (Linux AIO)"
            )
        }
    }
}

impl std::error::Error for UnknownBackend {}

/// The backend could not be started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendError {
    pub backend: Backend,
    pub errno: i32,
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fix = match (self.backend, self.errno) {
            (Backend::Uring, libc::EPERM) => {
                "io_uring is disabled for this process: set sysctl kernel.io_uring_disabled=0, \
                 or pass --backend aio"
            }
            (Backend::Uring, libc::ENOSYS) => {
                "this kernel lacks io_uring or its timed wait (Linux 5.11+): pass --backend aio"
            }
            (Backend::Uring, libc::ENOMEM) => {
                "the locked-memory limit is too low for the ring: raise ulimit -l, lower the \
                 parallelism, or pass --backend aio"
            }
            (Backend::Aio, libc::EAGAIN) => {
                "the system-wide AIO request limit is exhausted: raise sysctl fs.aio-max-nr \
                 (e.g. to 1048576), lower the parallelism, or pass --backend uring"
            }
            (Backend::Aio, libc::ENOSYS) => "this kernel lacks Linux AIO: pass --backend uring",
            _ => "lower the parallelism or try the other --backend",
        };
        write!(
            f,
            "cannot start the {} backend: {}; {fix}",
            self.backend,
            describe_errno(self.errno)
        )
    }
}

impl std::error::Error for BackendError {}

/// A started backend. An enum rather than a trait object so the hot path is a direct call.
// The ring's variant is a few hundred bytes larger; there is one device per shard, built once
// and never moved on the hot path, so boxing it would only add a pointer chase per call.
#[allow(clippy::large_enum_variant)]
pub enum EngineDevice {
    Uring(UringDevice),
    Aio(AioDevice),
}

impl EngineDevice {
    /// Starts `backend` for up to `depth` requests in flight.
    pub fn open(backend: Backend, depth: u32) -> Result<Self, BackendError> {
        let err = |errno| BackendError { backend, errno };
        match backend {
            Backend::Uring => UringDevice::new(depth)
                .map(EngineDevice::Uring)
                .map_err(err),
            Backend::Aio => AioDevice::new(depth).map(EngineDevice::Aio).map_err(err),
        }
    }

    pub fn backend(&self) -> Backend {
        match self {
            EngineDevice::Uring(_) => Backend::Uring,
            EngineDevice::Aio(_) => Backend::Aio,
        }
    }

    /// Registers a buffer pool with the ring where the backend supports it (io_uring); a
    /// no-op returning false for AIO.
    ///
    /// # Safety
    /// The pool must outlive the device.
    pub unsafe fn register_buffers(&mut self, pool: &crate::buffers::DmaBufferPool) -> bool {
        match self {
            // SAFETY: forwarded contract.
            EngineDevice::Uring(d) => unsafe { d.register_buffers(pool) },
            EngineDevice::Aio(_) => false,
        }
    }
}

impl EngineDevice {
    /// Has the kernel signal the eventfd `fd` when completions are ready (io_uring; see
    /// [`UringDevice::register_eventfd`]). AIO answers `EOPNOTSUPP`: its completions are
    /// watched by its own wait.
    pub fn register_eventfd(&mut self, fd: std::os::fd::RawFd) -> Result<(), DeviceError> {
        match self {
            EngineDevice::Uring(d) => d.register_eventfd(fd).map_err(|errno| DeviceError::Os {
                call: "io_uring_register",
                errno,
            }),
            // No system call is made: the text names the backend, not a call it never made.
            EngineDevice::Aio(_) => Err(DeviceError::Os {
                call: "registering a completion eventfd on an AIO device (io_uring only)",
                errno: libc::EOPNOTSUPP,
            }),
        }
    }

    /// Stops signalling the eventfd of [`Self::register_eventfd`].
    pub fn unregister_eventfd(&mut self) -> Result<(), DeviceError> {
        match self {
            EngineDevice::Uring(d) => d.unregister_eventfd(),
            EngineDevice::Aio(_) => Ok(()),
        }
        .map_err(|errno| DeviceError::Os {
            call: "io_uring_register",
            errno,
        })
    }
}

impl Device for EngineDevice {
    fn now_ns(&self) -> u64 {
        match self {
            EngineDevice::Uring(d) => d.now_ns(),
            EngineDevice::Aio(d) => d.now_ns(),
        }
    }

    fn capacity(&self) -> u32 {
        match self {
            EngineDevice::Uring(d) => d.capacity(),
            EngineDevice::Aio(d) => d.capacity(),
        }
    }

    #[inline]
    unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError> {
        // SAFETY: the caller's promise, passed on.
        unsafe {
            match self {
                EngineDevice::Uring(d) => d.push(op),
                EngineDevice::Aio(d) => d.push(op),
            }
        }
    }

    fn submit_and_wait(
        &mut self,
        min_complete: u32,
        deadline_ns: Option<u64>,
    ) -> Result<u32, DeviceError> {
        match self {
            EngineDevice::Uring(d) => d.submit_and_wait(min_complete, deadline_ns),
            EngineDevice::Aio(d) => d.submit_and_wait(min_complete, deadline_ns),
        }
    }

    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        match self {
            EngineDevice::Uring(d) => d.reap(out),
            EngineDevice::Aio(d) => d.reap(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names() {
        assert_eq!("uring".parse::<Backend>(), Ok(Backend::Uring));
        assert_eq!("aio".parse::<Backend>(), Ok(Backend::Aio));
        assert_eq!(Backend::default(), Backend::Uring);
        let err = "spdk".parse::<Backend>().expect_err("unknown");
        assert!(!err.auto && err.given == "spdk", "{err:?}");
        let err = err.to_string();
        assert!(err.contains("'uring'") && err.contains("'aio'"), "{err}");
    }

    #[test]
    fn backend_error_says_fix() {
        let e = BackendError {
            backend: Backend::Aio,
            errno: libc::EAGAIN,
        };
        assert!(e.to_string().contains("fs.aio-max-nr"), "{e}");
    }
}
