//! Files opened for weir's I/O loops: the descriptor, its direct-I/O alignment, and the
//! append position.

use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::Error;

/// How to open a file.
///
/// ```
/// use weir_io::FileOptions;
///
/// let opts = FileOptions::new().create(true).direct(true);
/// assert!(opts.is_direct());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileOptions {
    create: bool,
    truncate: bool,
    write: bool,
    direct: bool,
}

impl Default for FileOptions {
    fn default() -> Self {
        FileOptions::new()
    }
}

impl FileOptions {
    /// Read and write, no create, direct I/O (O_DIRECT).
    pub fn new() -> FileOptions {
        FileOptions {
            create: false,
            truncate: false,
            write: true,
            direct: true,
        }
    }

    /// Create the file if it does not exist.
    pub fn create(mut self, create: bool) -> Self {
        self.create = create;
        self
    }

    /// Empty the file when opening it.
    pub fn truncate(mut self, truncate: bool) -> Self {
        self.truncate = truncate;
        self
    }

    /// Open for writing too (on by default); off opens read-only.
    pub fn write(mut self, write: bool) -> Self {
        self.write = write;
        self
    }

    /// O_DIRECT (on by default): I/O bypasses the page cache, so offsets, lengths and buffer
    /// addresses must be aligned (see [`File::align_bytes`]). Off goes through the page cache.
    pub fn direct(mut self, direct: bool) -> Self {
        self.direct = direct;
        self
    }

    /// Whether the file is opened with O_DIRECT.
    pub fn is_direct(&self) -> bool {
        self.direct
    }
}

/// A file for weir's I/O loops. Cloning is cheap (the descriptor is shared and closed when
/// the last clone and the last request on it are gone).
#[derive(Debug, Clone)]
pub struct File {
    pub(crate) inner: Arc<FileInner>,
}

#[derive(Debug)]
pub(crate) struct FileInner {
    file: std::fs::File,
    path: PathBuf,
    align_bytes: u32,
    direct: bool,
    /// Where the next [`crate::Disk::append`] goes: the size at open, then advanced by each
    /// append's reservation.
    append_at: AtomicU64,
}

impl File {
    /// Opens `path` with `options`.
    pub fn open(path: impl AsRef<Path>, options: FileOptions) -> Result<File, Error> {
        let path = path.as_ref();
        let mut o = std::fs::OpenOptions::new();
        o.read(true)
            .write(options.write)
            .create(options.create && options.write)
            .truncate(options.truncate && options.write);
        if options.direct {
            o.custom_flags(libc::O_DIRECT);
        }
        let file = o.open(path).map_err(|source| Error::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let len = file
            .metadata()
            .map_err(|source| Error::Open {
                path: path.to_path_buf(),
                source,
            })?
            .len();
        let align_bytes = if options.direct {
            weir_engine::dio_alignment_fd(file.as_raw_fd())
                .offset_align_bytes
                .max(1)
        } else {
            1
        };
        Ok(File {
            inner: Arc::new(FileInner {
                file,
                path: path.to_path_buf(),
                align_bytes,
                direct: options.direct,
                append_at: AtomicU64::new(len),
            }),
        })
    }

    /// The path it was opened with.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Offsets and lengths must be multiples of this (the filesystem's direct-I/O alignment;
    /// 1 when opened buffered).
    pub fn align_bytes(&self) -> u32 {
        self.inner.align_bytes
    }

    /// Whether it was opened with O_DIRECT.
    pub fn is_direct(&self) -> bool {
        self.inner.direct
    }

    /// Where the next append lands, in bytes from the start.
    pub fn append_position(&self) -> u64 {
        self.inner.append_at.load(Ordering::Acquire)
    }

    /// Reserves `len_bytes` at the end for an append; returns the offset.
    pub(crate) fn reserve_append(&self, len_bytes: u64) -> u64 {
        self.inner.append_at.fetch_add(len_bytes, Ordering::AcqRel)
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.inner.file.as_raw_fd()
    }

    /// Checks a request against the file's alignment.
    pub(crate) fn check(&self, offset_bytes: u64, len_bytes: usize) -> Result<(), Error> {
        let align = u64::from(self.inner.align_bytes);
        if offset_bytes % align != 0 {
            return Err(Error::Misaligned {
                what: "offset",
                value_bytes: offset_bytes,
                align_bytes: self.inner.align_bytes,
            });
        }
        if len_bytes as u64 % align != 0 {
            return Err(Error::Misaligned {
                what: "length",
                value_bytes: len_bytes as u64,
                align_bytes: self.inner.align_bytes,
            });
        }
        Ok(())
    }

    /// Flushes the file's data and metadata to stable storage (fdatasync), on the calling
    /// thread.
    pub fn sync_data(&self) -> Result<(), Error> {
        self.inner.file.sync_data().map_err(|e| Error::Io {
            op: "fdatasync",
            offset_bytes: 0,
            errno: e.raw_os_error().unwrap_or(libc::EIO),
        })
    }

    /// Sets the file's size (to pre-size a data file, or cut it), on the calling thread.
    pub fn set_len(&self, len_bytes: u64) -> Result<(), Error> {
        self.inner.file.set_len(len_bytes).map_err(|e| Error::Io {
            op: "ftruncate",
            offset_bytes: len_bytes,
            errno: e.raw_os_error().unwrap_or(libc::EIO),
        })?;
        self.inner.append_at.fetch_max(len_bytes, Ordering::AcqRel);
        Ok(())
    }
}
