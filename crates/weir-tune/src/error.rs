//! How tuning fails. The binary maps `Usage` to exit code 2 and the rest to exit code 1.
//!
//! Each way the measurement can fail is its own variant carrying the typed cause, so a caller
//! (the report, a test) can match on it; the messages are the ones the operator always saw.

use crate::load::{direction_name, pattern_name, Load, Pattern};
use std::fmt;
use std::path::PathBuf;
use weir_engine::shard_loop::{LoopError, RunError};
use weir_engine::{BackendError, BufferError, FileError};
use weir_model::device::Direction;
use weir_model::units::format_bytes;
use weir_probe::ProbeError;

#[derive(Debug)]
#[non_exhaustive]
pub enum TuneError {
    /// The directory cannot be inspected (missing, not a directory, no permission).
    Directory(ProbeError),
    /// The directory is on a memory filesystem (`fs_type` tmpfs or ramfs): nothing to tune.
    MemoryFilesystem { dir: PathBuf, fs_type: String },
    /// The directory's filesystem is mounted read-only.
    ReadOnly { dir: PathBuf },
    /// Too little free space for one test file per shard plus 64 MiB.
    NoSpace {
        dir: PathBuf,
        avail_bytes: u64,
        need_bytes: u64,
        per_shard_bytes: u64,
        shards: u32,
    },
    /// A test file cannot be made for a reason the operator can fix (no O_DIRECT, read-only,
    /// no permission, full).
    FileRefused(FileError),
    /// Ctrl-C: the load stopped and the test files were removed.
    Interrupted,
    /// A test file could not be created or prepared, for a reason the operator cannot fix.
    File(FileError),
    /// A shard's I/O ring (io_uring or AIO context) could not be opened.
    RingOpen(BackendError),
    /// The DMA buffers for the requests in flight could not be allocated.
    Buffers(BufferError),
    /// The ring refused a submission or a wait while a load ran.
    Ring(LoopError),
    /// The shard loop stopped for a cause this crate does not know yet (the engine's error
    /// enum is non-exhaustive).
    LoopStopped(Box<RunError<TuneError>>),
    /// A request completed with an error.
    Io {
        direction: Direction,
        request_bytes: u32,
        errno: i32,
    },
    /// A request moved fewer bytes than asked (the file shrank, or the device ended).
    Short {
        direction: Direction,
        request_bytes: u32,
        moved_bytes: u64,
    },
    /// A load ran but no sample arrived: the disk completed nothing.
    NoSamples { load: Load },
    /// The time budget ran out before a phase measured its first depth.
    NoTime {
        direction: Direction,
        pattern: Pattern,
    },
    /// A shard thread panicked (a bug: the panic message was printed on stderr).
    ShardPanicked,
    /// `--cross-check` needs fio and `fio` could not be run (not installed, not on PATH).
    FioMissing { fio: PathBuf, errno: Option<i32> },
    /// fio ran but failed, or printed something that is not its JSON report.
    Fio { command: String, what: String },
    /// A cross-check data file could not be written (errno of the failed `pwrite`).
    CrossCheckWrite { path: PathBuf, errno: i32 },
}

impl TuneError {
    /// True when the operator pointed weir at something it cannot measure (exit code 2).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            TuneError::Directory(_)
                | TuneError::MemoryFilesystem { .. }
                | TuneError::ReadOnly { .. }
                | TuneError::NoSpace { .. }
                | TuneError::FileRefused(_)
                | TuneError::FioMissing { .. }
        )
    }

    /// The fix for an errno a request can fail with, by name.
    fn errno_hint(errno: i32) -> &'static str {
        match errno {
            libc::ENOSPC => "the filesystem is full: free space or use a smaller --size",
            libc::EINVAL => "the filesystem refused this direct I/O size or alignment",
            libc::EIO => "the device reported an I/O error: check dmesg",
            libc::EAGAIN => "the kernel could not take the request without blocking",
            libc::EROFS => "the filesystem is read-only",
            _ => "unexpected error from the kernel",
        }
    }
}

impl fmt::Display for TuneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let os = |errno: i32| std::io::Error::from_raw_os_error(errno);
        match self {
            TuneError::Directory(e) => e.fmt(f),
            TuneError::MemoryFilesystem { dir, fs_type } => write!(
                f,
                "{}: on {fs_type}, which is memory, not a disk: there is nothing to tune and \
                 direct I/O is refused; pass a --dir on the disk you want to measure",
                dir.display()
            ),
            TuneError::ReadOnly { dir } => write!(
                f,
                "{}: the filesystem is mounted read-only and tuning writes test files; remount \
                 it read-write or pass another --dir",
                dir.display()
            ),
            TuneError::NoSpace {
                dir,
                avail_bytes,
                need_bytes,
                per_shard_bytes,
                shards,
            } => write!(
                f,
                "{}: only {} free, and weir tune needs at least {} ({} per shard x {shards} \
                 shards, plus 64 MiB: 1 GiB its reads read, written once, and room for its \
                 writes) for its test files; free {} MiB more there, or pass a --dir on a larger \
                 filesystem or fewer --shards",
                dir.display(),
                format_bytes(*avail_bytes),
                format_bytes(*need_bytes),
                format_bytes(*per_shard_bytes),
                need_bytes.saturating_sub(*avail_bytes).div_ceil(1 << 20)
            ),
            TuneError::FileRefused(e) => e.fmt(f),
            TuneError::Interrupted => {
                f.write_str("interrupted: the load stopped and the test files were removed")
            }
            TuneError::File(e) => e.fmt(f),
            TuneError::RingOpen(e) => e.fmt(f),
            TuneError::Buffers(e) => write!(f, "I/O buffers: {e}; lower the queue depth"),
            // The device's own words, without the loop's prefix: the message operators knew.
            TuneError::Ring(LoopError::Device(e)) => write!(f, "the I/O ring failed: {e}"),
            TuneError::Ring(e) => write!(f, "the I/O ring failed: {e}"),
            TuneError::LoopStopped(e) => write!(f, "the I/O ring failed: {e}"),
            TuneError::Io {
                direction,
                request_bytes,
                errno,
            } => write!(
                f,
                "{} of {request_bytes} bytes failed: {} ({})",
                direction_name(*direction),
                os(*errno),
                TuneError::errno_hint(*errno)
            ),
            TuneError::Short {
                direction,
                request_bytes,
                moved_bytes,
            } => write!(
                f,
                "short {}: {moved_bytes} of {request_bytes} bytes (the test file shrank or the \
                 device is at its end)",
                direction_name(*direction)
            ),
            TuneError::NoSamples { load } => write!(
                f,
                "the {} {} load at {} B x{} produced no samples: the disk did not complete a \
                 request",
                direction_name(load.direction),
                pattern_name(load.pattern),
                load.request_bytes,
                load.depth
            ),
            TuneError::NoTime { direction, pattern } => write!(
                f,
                "no time left to measure {} {}: raise --duration",
                direction_name(*direction),
                pattern_name(*pattern)
            ),
            TuneError::ShardPanicked => f.write_str("a shard thread panicked"),
            TuneError::FioMissing { fio, errno } => write!(
                f,
                "--cross-check runs fio beside weir, and `{}` could not be started{}; fix: install fio (Debian/Ubuntu: apt-get install fio; Fedora/RHEL: dnf install fio), or run without --cross-check",
                fio.display(),
                errno.map_or_else(String::new, |e| format!(
                    " ({})",
                    std::io::Error::from_raw_os_error(e)
                ))
            ),
            TuneError::Fio { command, what } => {
                write!(f, "fio failed during the cross-check: {what}; command: {command}")
            }
            TuneError::CrossCheckWrite { path, errno } => write!(
                f,
                "writing the cross-check's data file {} failed: {} ({})",
                path.display(),
                std::io::Error::from_raw_os_error(*errno),
                Self::errno_hint(*errno)
            ),
        }
    }
}

impl std::error::Error for TuneError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TuneError::File(e) => Some(e),
            TuneError::FileRefused(e) => Some(e),
            TuneError::RingOpen(e) => Some(e),
            TuneError::Buffers(e) => Some(e),
            TuneError::Ring(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Too little space says how much to free, in MiB.
    #[test]
    fn no_space_says_how_many_mib_to_free() {
        let e = TuneError::NoSpace {
            dir: PathBuf::from("/mnt/x"),
            avail_bytes: 2 << 30,
            need_bytes: (3 << 30) + (64 << 20),
            per_shard_bytes: 1536 << 20,
            shards: 2,
        };
        let text = e.to_string();
        assert!(text.contains("free 1088 MiB more"), "{text}");
    }

    #[test]
    fn messages_are_the_ones_operators_saw() {
        let io = TuneError::Io {
            direction: Direction::Write,
            request_bytes: 4096,
            errno: libc::ENOSPC,
        };
        let text = io.to_string();
        assert!(text.starts_with("write of 4096 bytes failed: "), "{text}");
        assert!(text.ends_with("(the filesystem is full: free space or use a smaller --size)"));
        let short = TuneError::Short {
            direction: Direction::Read,
            request_bytes: 4096,
            moved_bytes: 512,
        };
        assert_eq!(
            short.to_string(),
            "short read: 512 of 4096 bytes (the test file shrank or the device is at its end)"
        );
        let no_time = TuneError::NoTime {
            direction: Direction::Read,
            pattern: Pattern::Random,
        };
        assert_eq!(
            no_time.to_string(),
            "no time left to measure read random: raise --duration"
        );
        assert_eq!(
            TuneError::ShardPanicked.to_string(),
            "a shard thread panicked"
        );
    }
}
