//! The scratch files the qualification tests write: an unlinked O_DIRECT file prepared the
//! way each test needs it.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use weir_engine::DmaBufferPool;

use super::{PrepareStep, QualifyError};

/// How the scratch file is prepared before the measured requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Empty: every write extends the file (size change, block allocation).
    Append,
    /// `ftruncate` to the final size: writes allocate blocks but do not change the size.
    Pretruncate,
    /// `fallocate` the final size: blocks exist (unwritten); writes convert them.
    Preallocate,
    /// Fully written and synced first: writes change nothing but data.
    Written,
}

/// Opens an unlinked scratch file in `dir` with O_DIRECT (and O_DSYNC when asked), and
/// prepares `total_bytes` of it per `layout`.
pub fn scratch_file(
    dir: &Path,
    layout: Layout,
    total_bytes: u64,
    dsync: bool,
) -> Result<File, QualifyError> {
    let mut flags = libc::O_DIRECT;
    if dsync {
        flags |= libc::O_DSYNC;
    }
    let file = open_unlinked(dir, flags)?;
    let fd = file.as_raw_fd();
    match layout {
        Layout::Append => {}
        Layout::Pretruncate => file
            .set_len(total_bytes)
            .map_err(|e| QualifyError::Prepare {
                step: PrepareStep::Truncate {
                    size_bytes: total_bytes,
                },
                errno: errno_of(&e),
            })?,
        Layout::Preallocate => {
            // SAFETY: plain syscall on an open fd.
            let rc = unsafe { libc::fallocate(fd, 0, 0, total_bytes as libc::off_t) };
            if rc != 0 {
                return Err(QualifyError::Prepare {
                    step: PrepareStep::Fallocate {
                        size_bytes: total_bytes,
                    },
                    errno: errno_of(&std::io::Error::last_os_error()),
                });
            }
        }
        Layout::Written => prefill(&file, total_bytes)?,
    }
    Ok(file)
}

/// Writes `total_bytes` of real data from the start of `file` and syncs it: plain `pwrite`
/// calls, one request at a time (nothing is in flight when this returns).
fn prefill(file: &File, total_bytes: u64) -> Result<(), QualifyError> {
    const CHUNK_BYTES: usize = 1 << 20;
    let alignment = weir_engine::dio_alignment_fd(file.as_raw_fd());
    let mut pool = DmaBufferPool::new(1, CHUNK_BYTES, &alignment).map_err(QualifyError::Buffers)?;
    // A recognisable pattern rather than zeros, so no layer can shortcut zero writes.
    pool.slice_mut(0).fill(0x5a);
    let chunk = &pool.slice(0)[..CHUNK_BYTES];
    let mut off = 0u64;
    while off < total_bytes {
        let n = (total_bytes - off).min(CHUNK_BYTES as u64) as usize;
        match file.write_at(&chunk[..n], off) {
            // A direct write that places nothing: the filesystem is full.
            Ok(0) => {
                return Err(QualifyError::Short {
                    moved_bytes: 0,
                    request_bytes: n as u64,
                })
            }
            Ok(moved) => off += moved as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(QualifyError::Prepare {
                    step: PrepareStep::Prefill { offset_bytes: off },
                    errno: errno_of(&e),
                })
            }
        }
    }
    file.sync_data().map_err(|e| QualifyError::Prepare {
        step: PrepareStep::SyncAfterPrefill,
        errno: errno_of(&e),
    })
}

/// The errno behind a failed system call (every one of these sets it; EIO if not).
fn errno_of(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

fn open_unlinked(dir: &Path, extra_flags: i32) -> Result<File, QualifyError> {
    let tmp = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE | extra_flags)
        .mode(0o600)
        .open(dir);
    let err = match tmp {
        Ok(f) => return Ok(f),
        Err(e) => e,
    };
    match err.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) => {
            return Err(QualifyError::from_open(dir, &err));
        }
        Some(libc::EINVAL) if extra_flags & libc::O_DIRECT != 0 => {
            // O_TMPFILE is fine on every filesystem weir cares about, so EINVAL means no O_DIRECT;
            // confirm with a named file below.
        }
        _ => {}
    }
    let name = dir.join(format!(".weir-qualify-{}", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(extra_flags)
        .mode(0o600)
        .open(&name)
        .map_err(|e| QualifyError::from_open(dir, &e))?;
    let _ = std::fs::remove_file(&name);
    Ok(f)
}
