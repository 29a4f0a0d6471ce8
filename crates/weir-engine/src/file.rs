//! Opening files for direct I/O, and the errors operators see when that fails.
//!
//! Direct I/O is a policy ([`DirectIo`]): required by default, because a benchmark through
//! the page cache measures memory, not the disk; disabled by `--buffered`. A filesystem that
//! refuses O_DIRECT, or only emulates it (tmpfs since Linux 6.6 accepts the flag but keeps
//! everything in memory), is reported by name with the flag that runs anyway.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use weir_model::device::DeviceError;

use crate::align::DioAlignment;
use crate::backend::BackendError;
use crate::buffers::{BufferError, DmaBufferPool};
use crate::errno::{describe_errno, errno_name};

/// Whether files are opened with O_DIRECT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DirectIo {
    /// O_DIRECT or a typed error naming the filesystem and `--buffered` (the default).
    #[default]
    Required,
    /// O_DIRECT where the filesystem supports it, the page cache elsewhere.
    Optional,
    /// Through the page cache (`--buffered`).
    Disabled,
}

/// A file operation failed. Messages say what, where, why, and the fix.
#[derive(Debug)]
#[non_exhaustive]
pub enum FileError {
    /// The filesystem refuses O_DIRECT or only emulates it in memory.
    DirectIoUnsupported { path: PathBuf, fs_name: String },
    /// A system call failed with `errno`; `op` says which step ("create", "fallocate",
    /// "prefill write").
    Os {
        op: &'static str,
        path: PathBuf,
        errno: i32,
    },
    /// A request moved fewer bytes than asked (for writes: usually a full disk).
    ShortIo {
        op: &'static str,
        path: PathBuf,
        offset_bytes: u64,
        expected_bytes: u32,
        got_bytes: u32,
    },
    /// The size does not fit direct I/O's alignment.
    MisalignedSize {
        path: PathBuf,
        size_bytes: u64,
        align_bytes: u32,
    },
    /// The I/O backend could not start.
    Backend(BackendError),
    /// The backend failed a submission or wait.
    Device { path: PathBuf, error: DeviceError },
    /// Buffers could not be allocated.
    Buffers(BufferError),
    /// The path holds what weir did not create (the operator's file, a symlink) or a file
    /// another running weir holds; weir leaves it alone. The text names the path and the fix.
    NotWeirs(weir_guard::owned::ClaimError),
}

impl FileError {
    /// The errno behind this error, when there is one.
    pub fn errno(&self) -> Option<i32> {
        match self {
            FileError::Os { errno, .. } => Some(*errno),
            FileError::Backend(b) => Some(b.errno),
            FileError::NotWeirs(e) => e.errno(),
            FileError::Device {
                error: DeviceError::Os { errno, .. },
                ..
            } => Some(*errno),
            _ => None,
        }
    }

    pub(crate) fn os(op: &'static str, path: &Path, errno: i32) -> Self {
        FileError::Os {
            op,
            path: path.to_path_buf(),
            errno,
        }
    }
}

/// The fix to suggest for an errno met while working on `path`.
fn fix_for(errno: i32, path: &Path) -> String {
    let dir = path.parent().unwrap_or(path).display();
    match errno {
        libc::ENOENT => format!("create the directory {dir} or pass an existing --dir"),
        libc::EACCES | libc::EPERM => format!(
            "the directory {dir} is not writable by this user: choose a writable --dir or fix \
             its permissions (chmod/chown)"
        ),
        libc::EROFS => format!(
            "{dir} is on a read-only filesystem: choose a --dir on a writable filesystem, or \
             remount it read-write"
        ),
        libc::ENOSPC => format!(
            "the filesystem holding {dir} is full: free space there, lower data_size, or choose \
             another --dir"
        ),
        libc::EDQUOT => format!(
            "your disk quota on the filesystem holding {dir} is exhausted: raise the quota, \
             lower data_size, or choose another --dir"
        ),
        libc::EINVAL => "check that sizes and offsets are multiples of the direct-I/O \
                         alignment, or pass --buffered if the filesystem refuses O_DIRECT"
            .to_string(),
        libc::EIO => "the device or filesystem reported an I/O error: check dmesg; the disk \
                      may be failing"
            .to_string(),
        libc::EOPNOTSUPP => "this filesystem does not support the operation: choose another \
                             preparation mode or --dir"
            .to_string(),
        libc::EMFILE | libc::ENFILE => "raise the open-file limit (ulimit -n)".to_string(),
        // A signal (Ctrl-C, SIGTERM from `timeout` or a supervisor) stopped this step; with
        // nothing else to blame, the operator needs to know it was theirs, not the disk's.
        libc::EINTR => "a signal (Ctrl-C, SIGTERM, a timeout) interrupted this step: rerun \
                        and let it finish (preparing a larger data_size takes longer)"
            .to_string(),
        _ => format!(
            "weir does not expect this errno here: check that {dir} is on a healthy local \
             filesystem, and dmesg for kernel messages"
        ),
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::DirectIoUnsupported { path, fs_name } => write!(
                f,
                "{}: the {fs_name} filesystem does not support direct I/O (O_DIRECT), so weir \
                 would measure memory instead of a disk; choose a --dir on a disk-backed \
                 filesystem (xfs, ext4), or pass --buffered to run through the page cache",
                path.display()
            ),
            FileError::Os { op, path, errno } => write!(
                f,
                "{op} {}: {}; {}",
                path.display(),
                describe_errno(*errno),
                fix_for(*errno, path)
            ),
            FileError::ShortIo {
                op,
                path,
                offset_bytes,
                expected_bytes,
                got_bytes,
            } => write!(
                f,
                "{op} {} at offset {offset_bytes} bytes moved {got_bytes} of {expected_bytes} \
                 bytes (a short transfer: for writes the filesystem is usually full); {}",
                path.display(),
                fix_for(libc::ENOSPC, path)
            ),
            FileError::MisalignedSize {
                path,
                size_bytes,
                align_bytes,
            } => write!(
                f,
                "{}: size {size_bytes} bytes is not a multiple of the direct-I/O alignment \
                 ({align_bytes} bytes); choose a data_size that is, or pass --buffered",
                path.display()
            ),
            FileError::Backend(e) => e.fmt(f),
            FileError::Device { path, error } => {
                write!(f, "I/O on {}: {error}", path.display())?;
                if let DeviceError::Os { errno, .. } = error {
                    write!(f, " ({}); {}", errno_name(*errno), fix_for(*errno, path))?;
                }
                Ok(())
            }
            FileError::Buffers(e) => e.fmt(f),
            FileError::NotWeirs(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for FileError {}

/// The name of the filesystem holding `path` (from statfs), e.g. "xfs", "tmpfs", or
/// "unknown (0x1234)".
pub fn filesystem_name(path: &Path) -> String {
    let Ok(cpath) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
        return "unknown".to_string();
    };
    // SAFETY: statfs is plain data; zero is valid.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid C string and out-pointer.
    if unsafe { libc::statfs(cpath.as_ptr(), &mut st) } != 0 {
        return "unknown".to_string();
    }
    fs_magic_name(st.f_type as u64)
}

/// Names a statfs `f_type` magic number.
pub fn fs_magic_name(magic: u64) -> String {
    let name = match magic {
        0xEF53 => "ext4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x0102_1994 => "tmpfs",
        0x8584_58f6 => "ramfs",
        0x794c_7630 => "overlayfs",
        0x6969 => "nfs",
        0x2fc1_2fc1 => "zfs",
        0xF2F5_2010 => "f2fs",
        0x6573_5546 => "fuse",
        0x0102_1997 => "9p",
        0x7371_7368 => "squashfs",
        0x4d44 => "vfat",
        0x5346_544e => "ntfs",
        0x6264_6576 => "devtmpfs",
        _ => return format!("unknown (0x{magic:x})"),
    };
    name.to_string()
}

/// Filesystems that keep data in memory: O_DIRECT there (emulated or refused) never reaches
/// a disk.
fn is_memory_fs(fs_name: &str) -> bool {
    matches!(fs_name, "tmpfs" | "ramfs" | "devtmpfs")
}

/// How to open a data file.
#[derive(Debug, Clone, Copy)]
pub struct OpenSpec {
    pub direct: DirectIo,
    /// Truncate to zero at open.
    pub truncate: bool,
}

/// Opens (creating) `path` for reading and writing under the direct-I/O policy. Returns the
/// file and whether O_DIRECT is in effect.
pub fn open_data_file(path: &Path, spec: OpenSpec) -> Result<(File, bool), FileError> {
    let want_direct = spec.direct != DirectIo::Disabled;
    if want_direct {
        let dir = path.parent().unwrap_or(Path::new("."));
        let fs_name = filesystem_name(dir);
        if is_memory_fs(&fs_name) {
            if spec.direct == DirectIo::Required {
                return Err(FileError::DirectIoUnsupported {
                    path: path.to_path_buf(),
                    fs_name,
                });
            }
            return open_flags(path, spec.truncate, 0).map(|f| (f, false));
        }
    }
    let flags = if want_direct { libc::O_DIRECT } else { 0 };
    match open_flags(path, spec.truncate, flags) {
        Ok(f) => Ok((f, want_direct)),
        Err(FileError::Os {
            errno: libc::EINVAL,
            ..
        }) if want_direct => {
            let fs_name = filesystem_name(path.parent().unwrap_or(Path::new(".")));
            if spec.direct == DirectIo::Required {
                Err(FileError::DirectIoUnsupported {
                    path: path.to_path_buf(),
                    fs_name,
                })
            } else {
                open_flags(path, spec.truncate, 0).map(|f| (f, false))
            }
        }
        Err(e) => Err(e),
    }
}

fn open_flags(path: &Path, truncate: bool, flags: i32) -> Result<File, FileError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(truncate)
        .custom_flags(flags | libc::O_CLOEXEC)
        .mode(0o644)
        .open(path)
        .map_err(|e| FileError::os("create", path, e.raw_os_error().unwrap_or(libc::EIO)))
}

/// Proves that direct I/O works in `dir` with one aligned write to a scratch file (some
/// filesystems accept O_DIRECT at open and refuse the first I/O with EINVAL).
pub fn trial_direct_write(dir: &Path, align: &DioAlignment) -> Result<(), FileError> {
    // Unique per call: shards prepare their files concurrently in the same directory.
    static TRIALS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = TRIALS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!(".weir-dio-trial-{}-{n}", std::process::id()));
    let spec = OpenSpec {
        direct: DirectIo::Required,
        truncate: true,
    };
    let (file, _) = open_data_file(&path, spec)?;
    let result = (|| {
        let len = align.offset_align_bytes.max(512) as usize;
        let pool = DmaBufferPool::new(1, len, align).map_err(FileError::Buffers)?;
        // SAFETY: the buffer is valid for `len` bytes and aligned for this file.
        let rc = unsafe { libc::pwrite(file.as_raw_fd(), pool.ptr(0).cast(), len, 0) };
        if rc < 0 {
            let errno = crate::errno::last_errno();
            if errno == libc::EINVAL {
                return Err(FileError::DirectIoUnsupported {
                    path: path.clone(),
                    fs_name: filesystem_name(dir),
                });
            }
            return Err(FileError::os("trial direct write", &path, errno));
        }
        Ok(())
    })();
    let _ = std::fs::remove_file(&path);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_cause_and_fix() {
        let p = Path::new("/data/run/test-a-0");
        let e = FileError::os("create", p, libc::EACCES);
        let m = e.to_string();
        assert!(m.contains("EACCES") && m.contains("not writable") && m.contains("/data/run"));
        let m = FileError::os("prefill write", p, libc::ENOSPC).to_string();
        assert!(m.contains("ENOSPC") && m.contains("full"), "{m}");
        let m = FileError::DirectIoUnsupported {
            path: p.to_path_buf(),
            fs_name: "tmpfs".into(),
        }
        .to_string();
        assert!(m.contains("tmpfs") && m.contains("--buffered"), "{m}");
        assert!(FileError::os("create", p, libc::EROFS)
            .to_string()
            .contains("read-only"));
    }

    #[test]
    fn names_filesystems() {
        assert_eq!(fs_magic_name(0x5846_5342), "xfs");
        assert!(fs_magic_name(1).starts_with("unknown"));
        assert_ne!(filesystem_name(Path::new("/var/tmp")), "unknown");
    }

    #[test]
    fn missing_dir_is_enoent_with_fix() {
        let spec = OpenSpec {
            direct: DirectIo::Required,
            truncate: true,
        };
        let err = open_data_file(Path::new("/nonexistent-weir/x"), spec).expect_err("enoent");
        assert_eq!(err.errno(), Some(libc::ENOENT));
        assert!(err.to_string().contains("--dir"));
    }
}
