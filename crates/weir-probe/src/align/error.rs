//! Why `weir align` could not map its writes. A leaf: `run` returns it.
//!
//! Each cause is its own variant carrying the sizes, path or errno, so a caller can match it
//! (the CLI sends the operator's to exit code 2); the text is the message operators saw when
//! the causes were plain strings.

use std::fmt;
use std::path::PathBuf;

use weir_engine::shard_loop::{LoopError, RunError};
use weir_engine::{describe_errno, BackendError, BufferError, FileError};

/// Why `weir align` stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum AlignError {
    /// The request size is 0 or not a multiple of 4 KiB.
    RequestSize { request_bytes: u32 },
    /// The file size is not a whole number of requests.
    FileSize { file_bytes: u64, request_bytes: u32 },
    /// `--files` or `--depth` is 0, or their product is over 1024.
    FilesDepth { files: u32, depth_per_file: u32 },
    /// Too little free space for one mode's files plus a tenth.
    NoSpace {
        dir: PathBuf,
        avail_bytes: u64,
        need_bytes: u64,
        files: u32,
        file_bytes: u64,
    },
    /// A test file could not be created, grown or finished.
    File(FileError),
    /// The I/O ring could not be opened.
    Backend(BackendError),
    /// The write buffers could not be allocated.
    Buffers(BufferError),
    /// The ring refused a submission or a wait.
    Submit(LoopError),
    /// Ctrl-C or SIGTERM stopped the writes.
    Interrupted,
    /// A write failed with ENOSPC.
    DiskFull { path: PathBuf },
    /// A write failed with another errno.
    Write { path: PathBuf, errno: i32 },
    /// A write moved fewer bytes than asked.
    ShortWrite {
        path: PathBuf,
        moved_bytes: u64,
        request_bytes: u32,
    },
    /// FIEMAP failed on a written file.
    Fiemap { path: PathBuf, errno: i32 },
}

impl AlignError {
    /// True when the operator's flags or directory are at fault (exit code 2).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            AlignError::RequestSize { .. }
                | AlignError::FileSize { .. }
                | AlignError::FilesDepth { .. }
                | AlignError::NoSpace { .. }
        )
    }

    /// The loop's error as align's: the source's own, the ring's, or the signal.
    pub(crate) fn from_loop(e: RunError<AlignError>) -> AlignError {
        match e {
            RunError::Source(e) => e,
            RunError::Loop(e) => AlignError::Submit(e),
            _ => AlignError::Interrupted,
        }
    }
}

impl fmt::Display for AlignError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AlignError::RequestSize { request_bytes } => write!(
                f,
                "request size {request_bytes} B: must be a positive multiple of 4 KiB"
            ),
            AlignError::FileSize {
                file_bytes,
                request_bytes,
            } => write!(
                f,
                "file size {file_bytes} B: must be a multiple of the {request_bytes} B request \
                 size"
            ),
            AlignError::FilesDepth { .. } => f.write_str(
                "--files and --depth must be at least 1, and files x depth at most 1024",
            ),
            AlignError::NoSpace {
                dir,
                avail_bytes,
                need_bytes,
                files,
                file_bytes,
            } => write!(
                f,
                "{}: {} MiB free, but align writes {} MiB per mode (--files {files} x \
                 --file-size {} MiB); lower them or free space",
                dir.display(),
                avail_bytes >> 20,
                need_bytes >> 20,
                file_bytes >> 20
            ),
            AlignError::File(e) => e.fmt(f),
            AlignError::Backend(e) => e.fmt(f),
            AlignError::Buffers(e) => e.fmt(f),
            AlignError::Submit(e) => write!(f, "submit: {e}"),
            AlignError::Interrupted => f.write_str("interrupted"),
            AlignError::DiskFull { path } => write!(
                f,
                "{}: no space left (ENOSPC): lower --file-size or --files",
                path.display()
            ),
            AlignError::Write { path, errno } => write!(
                f,
                "{}: write failed: {}",
                path.display(),
                describe_errno(*errno)
            ),
            AlignError::ShortWrite {
                path,
                moved_bytes,
                request_bytes,
            } => write!(
                f,
                "{}: short write: {moved_bytes} of {request_bytes} bytes (disk full?)",
                path.display()
            ),
            AlignError::Fiemap { path, errno } => write!(
                f,
                "FIEMAP on {}: {}; this filesystem cannot say where file data lives",
                path.display(),
                describe_errno(*errno)
            ),
        }
    }
}

impl std::error::Error for AlignError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AlignError::File(e) => Some(e),
            AlignError::Backend(e) => Some(e),
            AlignError::Buffers(e) => Some(e),
            AlignError::Submit(e) => Some(e),
            _ => None,
        }
    }
}
