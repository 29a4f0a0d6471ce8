//! Everything weir-io refuses or sees fail, as one typed enum.

use std::fmt;
use std::path::PathBuf;

/// Why a weir-io call failed. Each message names what failed, where, and the fix.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The disk model could not be loaded or built (an io-properties file, or rates given in
    /// code that are not positive).
    Model {
        /// Where the model came from (a file path, or `code` for [`crate::DiskModel::builder`]).
        source: String,
        /// What was wrong, with the line when known.
        message: String,
    },
    /// The io-properties file has no disk entry whose mount point holds `path`.
    NoDiskForPath {
        /// The io-properties file.
        file: PathBuf,
        /// The data directory looked up.
        path: PathBuf,
    },
    /// The scheduler refused a setting (shares out of range, a zero cap, a duplicate name).
    Scheduler(weir_sched::SchedError),
    /// A class name that the policy does not have.
    UnknownClass {
        /// The name asked for.
        name: String,
    },
    /// A class handle from another policy.
    ForeignClass {
        /// The handle's index.
        index: u32,
        /// How many classes this policy has.
        classes: usize,
    },
    /// A request of zero bytes (nothing to schedule).
    EmptyRequest,
    /// The io_uring or AIO backend could not be started.
    Backend(weir_engine::BackendError),
    /// A file could not be opened or created.
    Open {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// An offset, a length or a buffer address breaks the file's direct-I/O alignment.
    Misaligned {
        /// What is misaligned: "offset", "length" or "buffer address".
        what: &'static str,
        /// Its value, in bytes.
        value_bytes: u64,
        /// The alignment the file needs, in bytes.
        align_bytes: u32,
    },
    /// The kernel failed a read or write with `errno`.
    Io {
        /// "read" or "write".
        op: &'static str,
        /// The file offset of the request, in bytes.
        offset_bytes: u64,
        /// The OS error number.
        errno: i32,
    },
    /// The I/O loop that owned this request has stopped (the [`crate::Disk`] was dropped, or
    /// its thread failed); the request was not performed.
    LoopStopped,
    /// The backend failed while waiting for completions; the loop stops.
    Device {
        /// The backend's error text.
        message: String,
    },
    /// A local shard was asked to be driven by an event loop ([`crate::LocalShard::drive`]),
    /// which needs io_uring's completion eventfd, but its disk uses the AIO backend.
    DriveNeedsUring,
    /// [`crate::LocalShard::drive`] was awaited outside a tokio runtime, whose reactor watches
    /// the ring's completion eventfd.
    DriveOutsideRuntime,
    /// A buffer of this many bytes could not be allocated.
    Alloc {
        /// The size asked for, in bytes.
        bytes: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Model { source, message } => write!(f, "disk model from {source}: {message}"),
            Error::NoDiskForPath { file, path } => write!(
                f,
                "{}: no disk entry has a mount point holding {}; add a `mountpoint:` for that \
                 filesystem (weir tune writes one), or build the model in code",
                file.display(),
                path.display()
            ),
            Error::Scheduler(e) => write!(f, "scheduler: {e}"),
            Error::UnknownClass { name } => write!(
                f,
                "no I/O class named '{name}'; add it to the policy with Policy::builder().class"
            ),
            Error::ForeignClass { index, classes } => write!(
                f,
                "class handle {index} is not one of this policy's {classes} classes; use the \
                 handle its own policy builder returned"
            ),
            Error::EmptyRequest => f.write_str("a request of 0 bytes; ask for at least 1 byte"),
            Error::Backend(e) => e.fmt(f),
            Error::Open { path, source } => write!(f, "cannot open {}: {source}", path.display()),
            Error::Misaligned {
                what,
                value_bytes,
                align_bytes,
            } => write!(
                f,
                "{what} {value_bytes} is not a multiple of {align_bytes} bytes, which direct I/O \
                 on this file needs; round it (IoBuf allocates aligned memory) or open the file \
                 buffered"
            ),
            Error::Io {
                op,
                offset_bytes,
                errno,
            } => write!(
                f,
                "{op} at offset {offset_bytes} failed: {}",
                weir_engine::describe_errno(*errno)
            ),
            Error::LoopStopped => f.write_str(
                "the I/O loop has stopped (its Disk was dropped or its thread failed); the \
                 request was not performed",
            ),
            Error::Device { message } => write!(f, "the I/O backend failed: {message}"),
            Error::DriveNeedsUring => f.write_str(
                "a local shard driven from an async runtime needs the io_uring backend; build \
                 the Disk with Backend::Uring, or drive the shard with LocalShard::block_on",
            ),
            Error::DriveOutsideRuntime => f.write_str(
                "LocalShard::drive runs inside a tokio runtime (with its I/O driver enabled); \
                 await it in one, e.g. from Runtime::block_on or a LocalSet",
            ),
            Error::Alloc { bytes } => {
                write!(f, "cannot allocate an aligned buffer of {bytes} bytes")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Scheduler(e) => Some(e),
            Error::Backend(e) => Some(e),
            Error::Open { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<weir_sched::SchedError> for Error {
    fn from(e: weir_sched::SchedError) -> Self {
        Error::Scheduler(e)
    }
}
