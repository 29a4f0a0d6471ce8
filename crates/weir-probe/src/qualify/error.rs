//! Why a qualification test could not run: one typed cause per failure, each carrying the
//! errno (named in the message) and what the message is about, so callers can match a cause.

use std::fmt;
use std::path::PathBuf;

use weir_engine::shard_loop::LoopError;
use weir_engine::{describe_errno, errno_name, Backend, BackendError, BufferError};
use weir_model::device::DeviceError;

/// Why a test could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QualifyError {
    /// The directory refused the scratch file (EACCES, EPERM, EROFS, or another errno).
    Open { dir: PathBuf, errno: i32 },
    /// The filesystem refuses O_DIRECT (EINVAL when the scratch file is opened with it).
    NoDirectIo { dir: PathBuf, errno: i32 },
    /// The backend could not start (`io_setup` or `io_uring_setup` failed).
    Backend { backend: Backend, errno: i32 },
    /// Preparing the scratch file failed.
    Prepare { step: PrepareStep, errno: i32 },
    /// The I/O buffers could not be allocated.
    Buffers(BufferError),
    /// The kernel failed a request with an errno that is not part of the test (EINVAL: the
    /// request size or alignment is refused; ENOSPC: the scratch file does not fit).
    Request { errno: i32, request_bytes: u32 },
    /// A request moved fewer bytes than it asked for.
    Short {
        moved_bytes: u64,
        request_bytes: u64,
    },
    /// This kernel or filesystem refuses RWF_NOWAIT (EOPNOTSUPP, or EINVAL on the first
    /// request).
    NowaitRefused { errno: i32 },
    /// Submitting or waiting failed (`io_submit`, `io_getevents`, `io_uring_enter`).
    Device { call: &'static str, errno: i32 },
    /// SIGINT or SIGTERM stopped the test (what was in flight was drained first).
    Interrupted,
}

/// The step of preparing a scratch file that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PrepareStep {
    Truncate { size_bytes: u64 },
    Fallocate { size_bytes: u64 },
    Prefill { offset_bytes: u64 },
    SyncAfterPrefill,
}

impl QualifyError {
    /// The scratch file in `dir` could not be opened.
    pub fn from_open(dir: &std::path::Path, e: &std::io::Error) -> Self {
        let errno = e.raw_os_error().unwrap_or(libc::EIO);
        let dir = dir.to_path_buf();
        match errno {
            libc::EINVAL => QualifyError::NoDirectIo { dir, errno },
            _ => QualifyError::Open { dir, errno },
        }
    }

    /// The test cannot run here because the filesystem or kernel lacks a feature (O_DIRECT,
    /// fallocate, Linux AIO or io_uring, RWF_NOWAIT), rather than because something failed.
    pub fn is_unsupported(&self) -> bool {
        match self {
            QualifyError::NoDirectIo { .. } | QualifyError::NowaitRefused { .. } => true,
            QualifyError::Backend { backend, errno } => matches!(
                (backend, *errno),
                (Backend::Aio, libc::ENOSYS | libc::EAGAIN)
                    | (Backend::Uring, libc::EPERM | libc::ENOSYS)
            ),
            QualifyError::Prepare {
                step: PrepareStep::Fallocate { .. },
                ..
            } => true,
            QualifyError::Request { errno, .. } => *errno == libc::EINVAL,
            _ => false,
        }
    }
}

/// The kernel's text for an errno, as `std::io::Error` prints it.
fn os_text(errno: i32) -> std::io::Error {
    std::io::Error::from_raw_os_error(errno)
}

impl fmt::Display for QualifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QualifyError::Open { dir, errno } => {
                let (dir, name) = (dir.display(), errno_name(*errno));
                match *errno {
                    libc::EACCES | libc::EPERM => write!(
                        f,
                        "{dir}: no permission to create a scratch file ({name}); run as a user that can write there"
                    ),
                    libc::EROFS => write!(
                        f,
                        "{dir}: read-only filesystem ({name}); qualify writes scratch files, remount read-write"
                    ),
                    e => write!(
                        f,
                        "{dir}: cannot create a scratch file: {name} ({})",
                        os_text(e)
                    ),
                }
            }
            QualifyError::NoDirectIo { dir, errno } => write!(
                f,
                "{}: the filesystem refuses O_DIRECT ({}); weir needs direct I/O: use XFS or ext4",
                dir.display(),
                errno_name(*errno)
            ),
            QualifyError::Backend { backend, errno } => backend_message(f, *backend, *errno),
            QualifyError::Prepare { step, errno } => match step {
                PrepareStep::Truncate { size_bytes } => {
                    write!(f, "ftruncate {size_bytes} B: {}", os_text(*errno))
                }
                PrepareStep::Fallocate { size_bytes } => write!(
                    f,
                    "fallocate {size_bytes} B: {} ({})",
                    errno_name(*errno),
                    os_text(*errno)
                ),
                PrepareStep::Prefill { offset_bytes } => {
                    write!(f, "prefill at {offset_bytes}: {}", os_text(*errno))
                }
                PrepareStep::SyncAfterPrefill => {
                    write!(f, "fdatasync after prefill: {}", os_text(*errno))
                }
            },
            QualifyError::Buffers(e) => e.fmt(f),
            QualifyError::Request {
                errno,
                request_bytes,
            } => match *errno {
                libc::EINVAL => write!(
                    f,
                    "a {request_bytes} B direct request was refused ({}): the filesystem needs larger alignment or has no O_DIRECT",
                    errno_name(*errno)
                ),
                libc::ENOSPC => write!(
                    f,
                    "no space left for the scratch file (ENOSPC): free space or lower --ios"
                ),
                e => write!(f, "request failed: {}", describe_errno(e)),
            },
            QualifyError::Short {
                moved_bytes,
                request_bytes,
            } => write!(f, "short I/O: {moved_bytes} of {request_bytes} bytes"),
            QualifyError::NowaitRefused { errno } => write!(
                f,
                "RWF_NOWAIT refused ({}): this kernel or filesystem does not support it",
                errno_name(*errno)
            ),
            QualifyError::Device { call, errno } => {
                write!(f, "{call}: {}", describe_errno(*errno))
            }
            QualifyError::Interrupted => write!(
                f,
                "interrupted (SIGINT or SIGTERM); the requests in flight were drained"
            ),
        }
    }
}

fn backend_message(f: &mut fmt::Formatter<'_>, backend: Backend, errno: i32) -> fmt::Result {
    let name = errno_name(errno);
    match (backend, errno) {
        (Backend::Aio, libc::ENOSYS) => write!(
            f,
            "io_setup: {name}: this kernel has no Linux AIO (CONFIG_AIO=n)"
        ),
        (Backend::Aio, libc::EAGAIN) => write!(
            f,
            "io_setup: {name}: the system-wide AIO limit is used up; raise it: sysctl fs.aio-max-nr=1048576"
        ),
        (Backend::Uring, libc::EPERM) => write!(
            f,
            "io_uring_setup: {name}: io_uring is disabled for this process; allow it: sysctl kernel.io_uring_disabled=0"
        ),
        (Backend::Uring, libc::ENOSYS) => write!(
            f,
            "io_uring_setup: {name}: this kernel has no io_uring or lacks its timed wait (5.11+)"
        ),
        (Backend::Aio, _) => write!(f, "io_setup: {}", describe_errno(errno)),
        (Backend::Uring, _) => write!(f, "io_uring_setup: {}", describe_errno(errno)),
    }
}

impl std::error::Error for QualifyError {}

impl From<BackendError> for QualifyError {
    fn from(e: BackendError) -> Self {
        QualifyError::Backend {
            backend: e.backend,
            errno: e.errno,
        }
    }
}

impl From<LoopError> for QualifyError {
    fn from(e: LoopError) -> Self {
        match e {
            LoopError::Device(DeviceError::Os { call, errno }) => {
                QualifyError::Device { call, errno }
            }
            // Not expected from a plan that never pushes past its depth; named as the loop
            // names it.
            _ => QualifyError::Device {
                call: "submit",
                errno: libc::EAGAIN,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_errno_and_the_fix() {
        let dir = PathBuf::from("/mnt/x");
        let ro = QualifyError::Open {
            dir: dir.clone(),
            errno: libc::EROFS,
        };
        assert_eq!(
            ro.to_string(),
            "/mnt/x: read-only filesystem (EROFS); qualify writes scratch files, remount read-write"
        );
        let no_dio =
            QualifyError::from_open(&dir, &std::io::Error::from_raw_os_error(libc::EINVAL));
        assert!(no_dio.is_unsupported());
        assert!(
            no_dio.to_string().contains("refuses O_DIRECT (EINVAL)"),
            "{no_dio}"
        );
        let uring = QualifyError::Backend {
            backend: Backend::Uring,
            errno: libc::EPERM,
        };
        assert!(uring.is_unsupported());
        assert!(
            uring.to_string().contains("kernel.io_uring_disabled=0"),
            "{uring}"
        );
        let aio = QualifyError::Backend {
            backend: Backend::Aio,
            errno: libc::EAGAIN,
        };
        assert!(aio.to_string().contains("fs.aio-max-nr"), "{aio}");
        let enospc = QualifyError::Request {
            errno: libc::ENOSPC,
            request_bytes: 4096,
        };
        assert!(!enospc.is_unsupported());
        assert!(enospc.to_string().contains("lower --ios"), "{enospc}");
        let submit = QualifyError::from(LoopError::Device(DeviceError::Os {
            call: "io_submit",
            errno: libc::EIO,
        }));
        assert_eq!(
            submit,
            QualifyError::Device {
                call: "io_submit",
                errno: libc::EIO
            }
        );
        assert!(submit.to_string().starts_with("io_submit: EIO"), "{submit}");
    }
}
