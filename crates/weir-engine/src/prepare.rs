//! Preparing a job's data file, in each of the ways that change what a benchmark measures.
//!
//! The seeds' lesson: the same "write" workload is several different workloads for the
//! filesystem. Overwriting allocated blocks is pure data I/O; appending and writing into a
//! pre-truncated (sparse) file allocate blocks and change the size, which XFS and ext4
//! serialise and which blocks under RWF_NOWAIT; fallocated space is allocated but unwritten,
//! so the first write converts extents. [`Prepare`] names each mode so runs say which one they
//! measured:
//!
//! - `overwrite`: the file is filled to its size with real data first (large direct writes at
//!   a deep queue), so every later write overwrites allocated, written blocks.
//! - `append`: starts empty; writes at the end grow it.
//! - `pretruncate`: `ftruncate` to the final size (a sparse file: nothing allocated).
//! - `fallocate`: `fallocate(0)` to the final size (allocated, unwritten extents).
//! - `sloppy`: starts empty; when a write passes the size, the size jumps ahead to
//!   max(hint, 2 x size) with one `ftruncate` (Seastar's sloppy_size), so most appends do not
//!   change the size; [`PreparedFile::finish`] trims it back to the data written.

use std::fmt;
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use weir_model::device::{DeviceError, Direction};

use crate::align::{dio_alignment_fd, DioAlignment};
use crate::backend::{Backend, EngineDevice};
use crate::buffers::DmaBufferPool;
use crate::errno::last_errno;
use crate::extent::ExtentHintOutcome;
use crate::file::{open_data_file, trial_direct_write, DirectIo, FileError, OpenSpec};
use crate::shard_loop::{
    Done, Flow, LoopBuffers, LoopError, LoopOptions, Next, Op, OpSource, Outcome, RunError,
    ShardLoop,
};

/// How a data file is prepared before a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Prepare {
    /// Written in full before the run (every block allocated and holding data).
    #[default]
    Overwrite,
    /// Empty; every write extends the file.
    Append,
    /// `ftruncate` to the data size: a sparse file whose blocks are allocated by the writes.
    Pretruncate,
    /// `fallocate` of the data size: blocks reserved as unwritten extents.
    Fallocate,
    /// Empty, but extended ahead of the writes with `ftruncate` (Seastar's sloppy size), and
    /// truncated back to the data written at the end.
    Sloppy,
}

impl Prepare {
    pub const ALL: [Prepare; 5] = [
        Prepare::Overwrite,
        Prepare::Append,
        Prepare::Pretruncate,
        Prepare::Fallocate,
        Prepare::Sloppy,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Prepare::Overwrite => "overwrite",
            Prepare::Append => "append",
            Prepare::Pretruncate => "pretruncate",
            Prepare::Fallocate => "fallocate",
            Prepare::Sloppy => "sloppy",
        }
    }

    pub fn from_name(name: &str) -> Option<Prepare> {
        Prepare::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// Whether writes extend the file (the file starts empty).
    pub fn extends_file(self) -> bool {
        matches!(self, Prepare::Append | Prepare::Sloppy)
    }
}

impl fmt::Display for Prepare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Prepare {
    type Err = UnknownPrepare;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Prepare::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownPrepare {
                given: s.to_string(),
            })
    }
}

/// A file preparation name that is not one of [`Prepare::ALL`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPrepare {
    pub given: String,
}

impl fmt::Display for UnknownPrepare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown file preparation '{}': expected one of overwrite, append, pretruncate, \
             fallocate, sloppy",
            self.given
        )
    }
}

impl std::error::Error for UnknownPrepare {}

/// The default growth hint of `sloppy` (Seastar's default `sloppy_size_hint`).
pub const SLOPPY_SIZE_HINT_BYTES: u64 = 1 << 20;

/// Options for [`PreparedFile::create`].
#[derive(Debug, Clone)]
pub struct PrepareOptions {
    pub mode: Prepare,
    /// The file's final size (io_tester `data_size` for this shard).
    pub size_bytes: u64,
    pub direct: DirectIo,
    /// `sloppy` grows the file by at least this much.
    pub sloppy_size_hint_bytes: u64,
    /// Keep the file after the run (`--keep-files`).
    pub keep: bool,
    /// With `keep`: mark the kept file as this process's rather than as kept for later runs,
    /// so it serves this process's later runs (explore's points) and, once the process is
    /// gone, the next weir removes it as a leftover.
    pub keep_until_exit: bool,
    /// `overwrite`: reuse an existing file that is already fully written at this size
    /// instead of filling it again.
    pub reuse_existing: bool,
    /// The backend that fills `overwrite` files.
    pub backend: Backend,
    /// io_tester's `extent_allocation_size_hint`: set on the new file before it is prepared
    /// (see [`crate::extent`]); [`PreparedFile::extent_hint`] says whether it took.
    pub extent_size_hint_bytes: Option<u32>,
    /// Stops an `overwrite` prefill early (the file is then removed and the error is EINTR).
    pub cancel: Option<crate::Cancel>,
}

impl PrepareOptions {
    pub fn new(mode: Prepare, size_bytes: u64) -> Self {
        PrepareOptions {
            mode,
            size_bytes,
            direct: DirectIo::Required,
            sloppy_size_hint_bytes: SLOPPY_SIZE_HINT_BYTES,
            keep: false,
            keep_until_exit: false,
            reuse_existing: false,
            backend: Backend::Uring,
            extent_size_hint_bytes: None,
            cancel: None,
        }
    }
}

/// The data file of a job's shard: `weir-<job>-<shard>.data`. Not io_tester's
/// `test-<job>-<shard>`: a directory shared with the operator (or with io_tester) may hold
/// files by that name, and weir's files must not collide with theirs.
pub fn data_file_name(job: &str, shard: u32) -> String {
    format!("weir-{job}-{shard}.data")
}

/// A prepared data file. Removed on drop unless kept.
pub struct PreparedFile {
    file: File,
    path: PathBuf,
    mode: Prepare,
    direct: bool,
    alignment: DioAlignment,
    /// The file's size as this process last set it (sloppy/append tracking).
    size_bytes: u64,
    /// The end of the furthest write announced through `before_write`.
    high_water_bytes: u64,
    sloppy_hint_bytes: u64,
    keep: bool,
    keep_until_exit: bool,
    prefill_ns: u64,
    prefilled: bool,
    extent_hint: Option<ExtentHintOutcome>,
}

/// The prefill's request size and queue depth: large writes at a deep queue, as fio would.
const PREFILL_CHUNK_BYTES: u64 = 1 << 20;
const PREFILL_DEPTH: u32 = 8;
/// Prefilled data is stamped every this many bytes.
pub const PREFILL_BLOCK_BYTES: usize = 4096;
const PREFILL_MAGIC: &[u8; 8] = b"weirfill";

/// Fills `buf` (whose first byte lands at `file_offset`, a multiple of 4096) with prefill
/// data: each 4 KiB block starts with its file offset (little endian) and `weirfill`, then a
/// fixed pattern. Readers of an `overwrite` file can check blocks with [`prefill_matches`].
pub fn prefill_pattern(buf: &mut [u8], file_offset: u64) {
    for (i, block) in buf.chunks_mut(PREFILL_BLOCK_BYTES).enumerate() {
        fill_body(block);
        stamp(block, file_offset + (i * PREFILL_BLOCK_BYTES) as u64);
    }
}

/// Whether `buf` (read at `file_offset`, a multiple of 4096) holds prefill data.
pub fn prefill_matches(buf: &[u8], file_offset: u64) -> bool {
    let mut expect = [0u8; PREFILL_BLOCK_BYTES];
    buf.chunks(PREFILL_BLOCK_BYTES)
        .enumerate()
        .all(|(i, block)| {
            let e = &mut expect[..block.len()];
            prefill_pattern(e, file_offset + (i * PREFILL_BLOCK_BYTES) as u64);
            block == e
        })
}

fn fill_body(block: &mut [u8]) {
    for (i, b) in block.iter_mut().enumerate() {
        *b = (i as u32).wrapping_mul(2_654_435_761).rotate_right(13) as u8;
    }
}

fn stamp(block: &mut [u8], offset: u64) {
    let head = offset.to_le_bytes();
    let n = block.len().min(8);
    block[..n].copy_from_slice(&head[..n]);
    if block.len() >= 16 {
        block[8..16].copy_from_slice(PREFILL_MAGIC);
    }
}

impl PreparedFile {
    /// Prepares `dir/weir-<job>-<shard>.data`. See [`PreparedFile::create_at`].
    pub fn create(
        dir: &Path,
        job: &str,
        shard: u32,
        opts: &PrepareOptions,
    ) -> Result<Self, FileError> {
        Self::create_at(&dir.join(data_file_name(job, shard)), opts)
    }

    /// Opens `path` under the direct-I/O policy and prepares it per `opts.mode`. On any
    /// error the file is removed (unless `keep`) before returning.
    ///
    /// The path is claimed first ([`weir_guard::owned::claim`]): created with `O_EXCL |
    /// O_NOFOLLOW` and marked as weir's, or taken over when a file there already carries
    /// weir's mark (kept by `--keep-files`, or left by a killed run). Anything else there (the
    /// operator's file, a symlink, a file a running weir holds) is refused with
    /// [`FileError::NotWeirs`] and left untouched.
    pub fn create_at(path: &Path, opts: &PrepareOptions) -> Result<Self, FileError> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let (claimed, created) = match weir_guard::owned::claim(path) {
            Ok(weir_guard::owned::Claimed::Created { file, .. }) => (file, true),
            Ok(weir_guard::owned::Claimed::Existing(file)) => (file, false),
            Err(weir_guard::owned::ClaimError::Io { error, .. }) => {
                return Err(FileError::os("create", path, errno_of(&error)))
            }
            Err(e) => return Err(FileError::NotWeirs(e)),
        };
        let forget = |claimed: &File| {
            if created {
                weir_guard::owned::remove_if_same(path, claimed);
            }
        };
        // A hint can only be set on a file without data, so a kept file is reused only if it
        // already carries the requested hint.
        let reuse = !created
            && opts.mode == Prepare::Overwrite
            && opts.reuse_existing
            && is_full(path, opts)
            && match opts.extent_size_hint_bytes {
                None => true,
                Some(hint) => has_hint(path, hint),
            };
        // Never truncate at open: the opened file is checked to be the claimed one first.
        let spec = OpenSpec {
            direct: opts.direct,
            truncate: false,
        };
        let (file, direct) = open_data_file(path, spec).inspect_err(|_| forget(&claimed))?;
        if !same_inode(&file, &claimed) || !weir_guard::owned::same_file(path, &file) {
            forget(&claimed);
            return Err(FileError::NotWeirs(
                weir_guard::owned::ClaimError::Foreign {
                    path: path.to_path_buf(),
                    why: weir_guard::Foreign::Symlink,
                },
            ));
        }
        drop(claimed);
        if !reuse && !created {
            file.set_len(0)
                .map_err(|e| FileError::os("truncate", path, errno_of(&e)))?;
        }
        let alignment = dio_alignment_fd(file.as_raw_fd());
        let mut prepared = PreparedFile {
            file,
            path: path.to_path_buf(),
            mode: opts.mode,
            direct,
            alignment,
            size_bytes: 0,
            high_water_bytes: 0,
            sloppy_hint_bytes: opts.sloppy_size_hint_bytes.max(1),
            keep: opts.keep,
            keep_until_exit: opts.keep_until_exit,
            prefill_ns: 0,
            prefilled: false,
            extent_hint: None,
        };
        if let Some(hint) = opts.extent_size_hint_bytes {
            prepared.extent_hint = Some(if reuse {
                ExtentHintOutcome::Applied { bytes: hint }
            } else {
                let fs = crate::file::filesystem_name(dir);
                crate::extent::set_extent_size_hint(prepared.fd(), hint, &fs)
            });
        }
        if direct {
            trial_direct_write(dir, &alignment)?;
            let align = u64::from(alignment.offset_align_bytes);
            if opts.size_bytes % align != 0 {
                return Err(FileError::MisalignedSize {
                    path: path.to_path_buf(),
                    size_bytes: opts.size_bytes,
                    align_bytes: alignment.offset_align_bytes,
                });
            }
        }
        match opts.mode {
            Prepare::Overwrite if reuse => prepared.size_bytes = opts.size_bytes,
            Prepare::Overwrite => {
                prepared.prefill(opts.size_bytes, opts.backend, opts.cancel.clone())?
            }
            Prepare::Append | Prepare::Sloppy => {}
            Prepare::Pretruncate => prepared.truncate_to(opts.size_bytes)?,
            Prepare::Fallocate => prepared.fallocate(opts.size_bytes)?,
        }
        if matches!(opts.mode, Prepare::Overwrite) {
            prepared.high_water_bytes = opts.size_bytes;
        }
        Ok(prepared)
    }

    /// What happened to the requested extent size hint; None when none was requested.
    pub fn extent_hint(&self) -> Option<&ExtentHintOutcome> {
        self.extent_hint.as_ref()
    }

    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    pub fn file(&self) -> &File {
        &self.file
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn mode(&self) -> Prepare {
        self.mode
    }

    /// Whether the file is open with O_DIRECT.
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    /// The direct-I/O alignment of this file.
    pub fn alignment(&self) -> DioAlignment {
        self.alignment
    }

    /// The size this process last gave the file (grows under append and sloppy).
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    /// The end of the furthest write announced through [`Self::before_write`] (or the
    /// prefilled size).
    pub fn high_water_bytes(&self) -> u64 {
        self.high_water_bytes
    }

    /// How long the `overwrite` prefill took, in nanoseconds (0 when there was none).
    pub fn prefill_ns(&self) -> u64 {
        self.prefill_ns
    }

    /// Whether this run filled the file (false when an existing full file was reused).
    pub fn prefilled(&self) -> bool {
        self.prefilled
    }

    /// Keep (or stop keeping) the file after drop.
    pub fn set_keep(&mut self, keep: bool) {
        self.keep = keep;
    }

    /// Announces a write of `len_bytes` at `offset_bytes` before it is submitted. Under
    /// `sloppy`, a write past the size first grows the file to max(end, hint, 2 x size) with
    /// one ftruncate; in every other mode this only records the high-water mark.
    pub fn before_write(&mut self, offset_bytes: u64, len_bytes: u32) -> Result<(), FileError> {
        let end = offset_bytes + u64::from(len_bytes);
        self.high_water_bytes = self.high_water_bytes.max(end);
        if end <= self.size_bytes {
            return Ok(());
        }
        if self.mode == Prepare::Sloppy {
            let align = u64::from(self.alignment.offset_align_bytes.max(1));
            let target = end
                .max(self.sloppy_hint_bytes)
                .max(self.size_bytes.saturating_mul(2));
            self.truncate_to(target.div_ceil(align) * align)?;
        } else {
            // Writes past the end extend the file themselves.
            self.size_bytes = end;
        }
        Ok(())
    }

    /// Ends the run: under `sloppy`, trims the file back to the high-water mark of writes.
    pub fn finish(&mut self) -> Result<(), FileError> {
        if self.mode == Prepare::Sloppy && self.size_bytes > self.high_water_bytes {
            self.truncate_to(self.high_water_bytes)?;
        }
        Ok(())
    }

    fn truncate_to(&mut self, size_bytes: u64) -> Result<(), FileError> {
        self.file
            .set_len(size_bytes)
            .map_err(|e| FileError::os("ftruncate", &self.path, errno_of(&e)))?;
        self.size_bytes = size_bytes;
        Ok(())
    }

    fn fallocate(&mut self, size_bytes: u64) -> Result<(), FileError> {
        if size_bytes == 0 {
            return Ok(());
        }
        // SAFETY: a plain syscall on an open descriptor.
        let rc = unsafe { libc::fallocate(self.fd(), 0, 0, size_bytes as libc::off_t) };
        if rc != 0 {
            return Err(FileError::os("fallocate", &self.path, last_errno()));
        }
        self.size_bytes = size_bytes;
        Ok(())
    }

    /// Writes real data over the whole file: 1 MiB direct writes, 8 in flight.
    fn prefill(
        &mut self,
        size_bytes: u64,
        backend: Backend,
        cancel: Option<crate::Cancel>,
    ) -> Result<(), FileError> {
        let t0 = crate::clock::monotonic_ns();
        if size_bytes == 0 {
            return Ok(());
        }
        let chunk = PREFILL_CHUNK_BYTES.min(size_bytes);
        let depth = PREFILL_DEPTH.min(size_bytes.div_ceil(chunk) as u32);
        let mut pool = DmaBufferPool::new(depth as usize, chunk as usize, &self.alignment)
            .map_err(FileError::Buffers)?;
        for i in 0..pool.count() {
            prefill_pattern(pool.slice_mut(i), 0);
        }
        let dev = EngineDevice::open(backend, depth).map_err(FileError::Backend)?;
        let options = LoopOptions {
            offset_align_bytes: self.alignment.offset_align_bytes.max(1),
            cancel,
            ..LoopOptions::default()
        };
        let mut shard = ShardLoop::new(dev, vec![pool], options);
        let mut source = Prefill {
            file: self,
            size_bytes,
            chunk_bytes: chunk,
            next_offset: 0,
        };
        match shard.run(&mut source) {
            Ok(()) => {}
            Err(RunError::Source(e)) => return Err(e),
            Err(RunError::Interrupted) => {
                return Err(FileError::os("prefill", &self.path, libc::EINTR))
            }
            Err(RunError::Loop(e)) => return Err(self.loop_error(e)),
        }
        self.size_bytes = size_bytes;
        self.prefilled = true;
        self.prefill_ns = crate::clock::monotonic_ns() - t0;
        Ok(())
    }

    fn loop_error(&self, error: LoopError) -> FileError {
        let error = match error {
            LoopError::Device(e) => e,
            _ => DeviceError::QueueFull,
        };
        FileError::Device {
            path: self.path.clone(),
            error,
        }
    }
}

/// The prefill as a source of ops: the file front to back in `chunk_bytes` writes of the
/// offset-stamped pattern, every completion checked for a full write.
struct Prefill<'a> {
    file: &'a PreparedFile,
    size_bytes: u64,
    chunk_bytes: u64,
    next_offset: u64,
}

impl OpSource for Prefill<'_> {
    type Error = FileError;

    fn next_op(&mut self, _now_ns: u64, buffers: &mut LoopBuffers) -> Result<Next, FileError> {
        if self.next_offset >= self.size_bytes {
            return Ok(Next::Finished);
        }
        let Some(buf) = buffers.acquire(0) else {
            return Ok(Next::WaitForCompletion);
        };
        let offset = self.next_offset;
        let len = self.chunk_bytes.min(self.size_bytes - offset) as u32;
        let slice = &mut buffers.bytes_mut(buf)[..len as usize];
        for (i, block) in slice.chunks_mut(PREFILL_BLOCK_BYTES).enumerate() {
            stamp(block, offset + (i * PREFILL_BLOCK_BYTES) as u64);
        }
        self.next_offset += u64::from(len);
        let op = Op::new(0, Direction::Write, self.file.fd(), offset, buf, len);
        Ok(Next::Op(op))
    }

    fn on_done(&mut self, done: Done, buffers: &mut LoopBuffers) -> Result<Flow, FileError> {
        buffers.release(done.buf);
        let len = done.len_bytes as u32;
        match done.outcome {
            Outcome::Full => Ok(Flow::Continue),
            Outcome::Failed { errno } => {
                Err(FileError::os("prefill write", &self.file.path, errno))
            }
            Outcome::Short { .. } | Outcome::EndOfFile => Err(FileError::ShortIo {
                op: "prefill write",
                path: self.file.path.clone(),
                offset_bytes: done.offset_bytes,
                expected_bytes: len,
                got_bytes: done.moved_bytes() as u32,
            }),
        }
    }
}

impl Drop for PreparedFile {
    /// Kept files are marked as kept (a later run may reuse them); the rest are removed, but
    /// only while the path still names the file this run opened.
    fn drop(&mut self) {
        if self.keep {
            let _ = self.finish();
            if !self.keep_until_exit {
                let _ = weir_guard::owned::set_mark(&self.file, weir_guard::Holder::Kept);
            }
        } else {
            weir_guard::owned::remove_if_same(&self.path, &self.file);
        }
    }
}

/// Whether two open files are the same inode.
fn same_inode(a: &File, b: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (a.metadata(), b.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

fn errno_of(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// Whether `path` exists at exactly the requested size with no holes (fully written by an
/// earlier `overwrite` run kept with --keep-files).
/// Whether the file at `path` already has extent size hint `bytes`.
fn has_hint(path: &Path, bytes: u32) -> bool {
    File::open(path)
        .ok()
        .and_then(|f| crate::extent::extent_size_hint(f.as_raw_fd()).ok())
        == Some(bytes)
}

fn is_full(path: &Path, opts: &PrepareOptions) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let Ok(meta) = file.metadata() else {
        return false;
    };
    if meta.len() != opts.size_bytes || opts.size_bytes == 0 {
        return false;
    }
    // SAFETY: plain lseek on an open descriptor.
    let hole = unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_HOLE) };
    hole >= 0 && hole as u64 >= opts.size_bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_roundtrip() {
        for p in Prepare::ALL {
            assert_eq!(p.as_str().parse::<Prepare>(), Ok(p));
        }
        assert!("seqwrite".parse::<Prepare>().is_err());
        assert_eq!(data_file_name("big", 3), "weir-big-3.data");
    }

    #[test]
    fn prefill_pattern_is_offset_unique() {
        let mut a = vec![0u8; 8192];
        prefill_pattern(&mut a, 4096);
        assert!(prefill_matches(&a, 4096));
        assert!(!prefill_matches(&a, 0));
        assert!(prefill_matches(&a[4096..], 8192));
        assert_ne!(a[..4096], a[4096..]);
    }
}
