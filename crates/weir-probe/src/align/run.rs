//! Writing the files for `weir align` through the engine, and mapping them with FIEMAP.

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use weir_engine::shard_loop::{
    Done, Flow, LoopBuffers, LoopOptions, Next, Op, OpSource, Outcome, ShardLoop,
};
pub use weir_engine::Prepare;
use weir_engine::{Backend, DmaBufferPool, EngineDevice, PrepareOptions, PreparedFile};
use weir_model::device::Direction;

use super::{analyse, AlignError, Level, LevelMap, LevelReport};
use crate::facts::PathFacts;
use crate::fiemap::fiemap;
use crate::stack::{DeviceKind, DeviceNode};

/// What to write.
#[derive(Debug, Clone)]
pub struct AlignOptions {
    pub request_bytes: u32,
    pub file_bytes: u64,
    /// Files written at once (like shards each appending to its own file).
    pub files: u32,
    /// Requests in flight per file.
    pub depth_per_file: u32,
    pub modes: Vec<Prepare>,
    /// RAID chunk to count crossings of; default: the md chunk found in the stack.
    pub chunk_bytes: Option<u64>,
    pub keep_files: bool,
    pub backend: Backend,
}

impl Default for AlignOptions {
    fn default() -> Self {
        AlignOptions {
            request_bytes: 128 << 10,
            file_bytes: 32 << 20,
            files: 4,
            depth_per_file: 1,
            modes: vec![
                Prepare::Append,
                Prepare::Pretruncate,
                Prepare::Fallocate,
                Prepare::Sloppy,
            ],
            chunk_bytes: None,
            keep_files: false,
            backend: Backend::Uring,
        }
    }
}

/// One preparation mode's results.
#[derive(Debug, Clone, Serialize)]
pub struct ModeReport {
    pub mode: String,
    pub requests: u64,
    /// FIEMAP extent count of each file.
    pub extents_per_file: Vec<u64>,
    pub write_seconds: f64,
    /// One histogram per address level, top (the filesystem's device) first.
    pub levels: Vec<LevelReport>,
}

/// The whole `weir align` result.
#[derive(Debug, Clone, Serialize)]
pub struct AlignReport {
    pub path: String,
    pub fs_type: String,
    pub fs_block_bytes: u64,
    pub device_stack: Option<String>,
    pub request_bytes: u32,
    pub file_bytes: u64,
    pub files: u32,
    pub depth_per_file: u32,
    pub backend: String,
    /// Bucket lower bounds of every histogram's `counts`.
    pub buckets_bytes: Vec<u64>,
    pub modes: Vec<ModeReport>,
    /// Levels that could not be reached and why (partial results are still reported).
    pub notes: Vec<String>,
}

/// Runs every mode in `opts.modes` in `dir` and maps the results.
pub fn run_align(
    dir: &Path,
    facts: &PathFacts,
    opts: &AlignOptions,
) -> Result<AlignReport, AlignError> {
    check_options(opts)?;
    let need = opts.file_bytes * u64::from(opts.files);
    if facts.space.avail_bytes < need + need / 10 {
        return Err(AlignError::NoSpace {
            dir: dir.to_path_buf(),
            avail_bytes: facts.space.avail_bytes,
            need_bytes: need,
            files: opts.files,
            file_bytes: opts.file_bytes,
        });
    }
    let mut report = AlignReport {
        path: facts.path.clone(),
        fs_type: facts.filesystem.fs_type.clone(),
        fs_block_bytes: facts.filesystem.block_bytes,
        device_stack: facts.stack.as_ref().map(DeviceNode::chain),
        request_bytes: opts.request_bytes,
        file_bytes: opts.file_bytes,
        files: opts.files,
        depth_per_file: opts.depth_per_file,
        backend: opts.backend.as_str().to_string(),
        buckets_bytes: super::BUCKETS_BYTES.to_vec(),
        modes: Vec::new(),
        notes: Vec::new(),
    };
    for &mode in &opts.modes {
        let started = Instant::now();
        let files = write_files(dir, mode, opts)?;
        let write_seconds = started.elapsed().as_secs_f64();
        // Levels are built after writing: a sparse loop image allocates as it is written.
        let (levels, notes) = build_levels(facts, opts.chunk_bytes);
        for n in notes {
            if !report.notes.contains(&n) {
                report.notes.push(n);
            }
        }
        let requests: Vec<(u64, u64)> = (0..opts.file_bytes / u64::from(opts.request_bytes))
            .map(|k| {
                (
                    k * u64::from(opts.request_bytes),
                    u64::from(opts.request_bytes),
                )
            })
            .collect();
        let mut level_reports = Vec::new();
        let mut extents_per_file = Vec::new();
        for f in &files {
            let extents = fiemap(f.fd()).map_err(|errno| AlignError::Fiemap {
                path: f.path().to_path_buf(),
                errno,
            })?;
            extents_per_file.push(extents.len() as u64);
            analyse(&requests, &extents, &levels, &mut level_reports);
        }
        report.modes.push(ModeReport {
            mode: mode.as_str().to_string(),
            requests: requests.len() as u64 * u64::from(opts.files),
            extents_per_file,
            write_seconds,
            levels: level_reports,
        });
        drop(files); // removed here unless --keep-files
    }
    Ok(report)
}

fn check_options(opts: &AlignOptions) -> Result<(), AlignError> {
    if opts.request_bytes == 0 || opts.request_bytes % 4096 != 0 {
        return Err(AlignError::RequestSize {
            request_bytes: opts.request_bytes,
        });
    }
    if opts.file_bytes < u64::from(opts.request_bytes)
        || opts.file_bytes % u64::from(opts.request_bytes) != 0
    {
        return Err(AlignError::FileSize {
            file_bytes: opts.file_bytes,
            request_bytes: opts.request_bytes,
        });
    }
    if opts.files == 0 || opts.depth_per_file == 0 || opts.files * opts.depth_per_file > 1024 {
        return Err(AlignError::FilesDepth {
            files: opts.files,
            depth_per_file: opts.depth_per_file,
        });
    }
    Ok(())
}

/// Writes `opts.files` files sequentially in `request_bytes` requests, each file keeping
/// `depth_per_file` in flight, all files at once.
fn write_files(
    dir: &Path,
    mode: Prepare,
    opts: &AlignOptions,
) -> Result<Vec<PreparedFile>, AlignError> {
    let req = opts.request_bytes;
    let depth = opts.files * opts.depth_per_file;
    let mut files = Vec::new();
    for i in 0..opts.files {
        let path = dir.join(format!(
            ".weir-align-{}-{}-{i}",
            std::process::id(),
            mode.as_str()
        ));
        let mut popts = PrepareOptions::new(mode, opts.file_bytes);
        popts.keep = opts.keep_files;
        popts.backend = opts.backend;
        files.push(PreparedFile::create_at(&path, &popts).map_err(AlignError::File)?);
    }
    let dev = EngineDevice::open(opts.backend, depth).map_err(AlignError::Backend)?;
    let mut pool = DmaBufferPool::new(depth as usize, req as usize, &files[0].alignment())
        .map_err(AlignError::Buffers)?;
    for b in 0..pool.count() {
        pool.slice_mut(b).fill(0xa5);
    }
    let options = LoopOptions {
        offset_align_bytes: files[0].alignment().offset_align_bytes.max(1),
        ..LoopOptions::default()
    };
    // The loop owns the buffers and drains every write before they are freed, on an error
    // too (this function used to return with writes in flight and free the pool first).
    let mut shard = ShardLoop::new(dev, vec![pool], options);
    let mut writes = AlignWrites {
        files: &mut files,
        request_bytes: req,
        file_bytes: opts.file_bytes,
        depth_per_file: opts.depth_per_file,
        next_bytes: vec![0; opts.files as usize],
        in_flight: vec![0; opts.files as usize],
    };
    shard.run(&mut writes).map_err(AlignError::from_loop)?;
    drop(shard);
    for f in files.iter_mut() {
        f.finish().map_err(AlignError::File)?;
    }
    Ok(files)
}

/// Every file written front to back at once, each with `depth_per_file` writes in flight.
struct AlignWrites<'a> {
    files: &'a mut [PreparedFile],
    request_bytes: u32,
    file_bytes: u64,
    depth_per_file: u32,
    /// Per file: where its next write goes, and how many of its writes are in flight.
    next_bytes: Vec<u64>,
    in_flight: Vec<u32>,
}

impl OpSource for AlignWrites<'_> {
    type Error = AlignError;

    fn next_op(&mut self, _now_ns: u64, buffers: &mut LoopBuffers) -> Result<Next, AlignError> {
        let req = self.request_bytes;
        let wanting = (0..self.files.len()).find(|&i| {
            self.in_flight[i] < self.depth_per_file && self.next_bytes[i] < self.file_bytes
        });
        let Some(i) = wanting else {
            let all_written = self.next_bytes.iter().all(|&n| n >= self.file_bytes);
            return Ok(if all_written {
                Next::Finished
            } else {
                Next::WaitForCompletion
            });
        };
        let Some(buf) = buffers.acquire(0) else {
            return Ok(Next::WaitForCompletion);
        };
        let f = &mut self.files[i];
        let offset = self.next_bytes[i];
        if let Err(e) = f.before_write(offset, req) {
            buffers.release(buf);
            return Err(AlignError::File(e));
        }
        self.next_bytes[i] += u64::from(req);
        self.in_flight[i] += 1;
        let op = Op::new(i as u64, Direction::Write, f.fd(), offset, buf, req);
        Ok(Next::Op(op))
    }

    fn on_done(&mut self, done: Done, buffers: &mut LoopBuffers) -> Result<Flow, AlignError> {
        buffers.release(done.buf);
        let file = done.tag as usize;
        self.in_flight[file] -= 1;
        let path = || PathBuf::from(self.files[file].path());
        match done.outcome {
            Outcome::Full => Ok(Flow::Continue),
            Outcome::Failed {
                errno: libc::ENOSPC,
            } => Err(AlignError::DiskFull { path: path() }),
            Outcome::Failed { errno } => Err(AlignError::Write {
                path: path(),
                errno,
            }),
            Outcome::Short { .. } | Outcome::EndOfFile => Err(AlignError::ShortWrite {
                path: path(),
                moved_bytes: done.moved_bytes(),
                request_bytes: self.request_bytes,
            }),
        }
    }
}

/// The address levels below the filesystem, with notes for levels that cannot be reached.
pub fn build_levels(facts: &PathFacts, chunk_override: Option<u64>) -> (Vec<Level>, Vec<String>) {
    let mut notes = Vec::new();
    let Some(top) = &facts.stack else {
        let device = facts
            .filesystem
            .source
            .clone()
            .unwrap_or_else(|| "filesystem device".into());
        let level = Level {
            device,
            how: "FIEMAP of the written files".into(),
            map: LevelMap::Offset(0),
            chunk_bytes: chunk_override,
        };
        return (vec![level], notes);
    };
    let md_chunk = top.md().and_then(|n| match &n.kind {
        DeviceKind::Md { chunk_bytes, .. } => chunk_bytes.map(|c| (n.name.clone(), c)),
        _ => None,
    });
    let mut levels = vec![Level {
        device: top.name.clone(),
        how: "FIEMAP of the written files".into(),
        map: LevelMap::Offset(0),
        chunk_bytes: None,
    }];
    let mut node = top;
    for _ in 0..8 {
        let Some(below) = node.below.first() else {
            break;
        };
        match &node.kind {
            DeviceKind::Partition { start_sector, .. } => levels.push(Level {
                device: below.name.clone(),
                how: format!(
                    "{} starts at byte {} of {}",
                    node.name,
                    start_sector * 512,
                    below.name
                ),
                map: LevelMap::Offset(start_sector * 512),
                chunk_bytes: None,
            }),
            DeviceKind::Loop {
                backing_file: Some(file),
                offset_bytes,
                ..
            } => match backing_extents(file) {
                Ok(extents) => levels.push(Level {
                    device: below.name.clone(),
                    how: format!("{}'s backing file {} mapped by FIEMAP", node.name, file),
                    map: LevelMap::File {
                        offset_bytes: offset_bytes.unwrap_or(0),
                        extents,
                    },
                    chunk_bytes: None,
                }),
                Err((errno, why)) => {
                    let hint = if errno == libc::EACCES || errno == libc::EPERM {
                        format!("; run as root to map them down to {}", below.name)
                    } else {
                        String::new()
                    };
                    notes.push(format!("addresses stop at {}: {why}{hint}", node.name));
                    break;
                }
            },
            _ => break, // md and dm: the level above is where chunks are counted
        }
        node = below;
    }
    let chunk = chunk_override.or(md_chunk.as_ref().map(|(_, c)| *c));
    let target = match (&md_chunk, chunk_override) {
        (Some((md, _)), None) => levels.iter().position(|l| &l.device == md),
        _ => Some(levels.len() - 1),
    };
    if let (Some(c), Some(i)) = (chunk, target) {
        levels[i].chunk_bytes = Some(c);
    }
    (levels, notes)
}

/// The backing file's extents, or (errno, message).
fn backing_extents(file: &str) -> Result<Vec<crate::fiemap::Extent>, (i32, String)> {
    let file = file.trim_end_matches(" (deleted)");
    let f = std::fs::File::open(file).map_err(|e| {
        let errno = e.raw_os_error().unwrap_or(0);
        let why = weir_engine::describe_errno(errno);
        (errno, format!("cannot open backing file {file}: {why}"))
    })?;
    fiemap(f.as_raw_fd()).map_err(|e| {
        let why = weir_engine::describe_errno(e);
        (e, format!("FIEMAP on backing file {file}: {why}"))
    })
}
