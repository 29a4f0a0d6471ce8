//! The scratch files and buffers the qualification tests write: an unlinked O_DIRECT file
//! prepared the way each test needs it, and an aligned buffer.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use super::QualifyError;

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

/// A page-aligned, zero-initialised buffer for O_DIRECT.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl AlignedBuf {
    pub fn new(len_bytes: usize) -> Result<Self, QualifyError> {
        let layout = std::alloc::Layout::from_size_align(len_bytes.max(4096), 4096)
            .map_err(|e| QualifyError::Setup(format!("buffer layout: {e}")))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(QualifyError::Setup(format!(
                "cannot allocate {len_bytes} bytes"
            )));
        }
        // A recognisable pattern rather than zeros, so no layer can shortcut zero writes.
        // SAFETY: ptr is valid for layout.size() bytes.
        unsafe { std::ptr::write_bytes(ptr, 0x5a, layout.size()) };
        Ok(AlignedBuf { ptr, layout })
    }

    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }

    /// A sub-slice start for request `index` of `req_bytes` bytes.
    pub fn at(&self, index: usize, req_bytes: usize) -> *mut u8 {
        debug_assert!((index + 1) * req_bytes <= self.len());
        // SAFETY: the caller's index stays within the allocation (checked in debug builds).
        unsafe { self.ptr.add(index * req_bytes) }
    }

    fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid and initialised for len bytes while self lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with exactly this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
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
            .map_err(|e| QualifyError::Setup(format!("ftruncate {total_bytes} B: {e}")))?,
        Layout::Preallocate => {
            // SAFETY: plain syscall on an open fd.
            let rc = unsafe { libc::fallocate(fd, 0, 0, total_bytes as libc::off_t) };
            if rc != 0 {
                let e = std::io::Error::last_os_error();
                return Err(QualifyError::Unsupported(format!(
                    "fallocate {total_bytes} B: {} ({e})",
                    weir_engine::errno_name(e.raw_os_error().unwrap_or(0))
                )));
            }
        }
        Layout::Written => {
            let chunk = AlignedBuf::new(1 << 20)?;
            let mut off = 0u64;
            while off < total_bytes {
                let n = (total_bytes - off).min(chunk.len() as u64) as usize;
                file.write_all_at(&chunk.as_slice()[..n], off)
                    .map_err(|e| QualifyError::Setup(format!("prefill at {off}: {e}")))?;
                off += n as u64;
            }
            file.sync_data()
                .map_err(|e| QualifyError::Setup(format!("fdatasync after prefill: {e}")))?;
        }
    }
    Ok(file)
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
