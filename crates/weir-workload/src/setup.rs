//! Before the run: checks that turn operator mistakes into usage errors with a fix, and the
//! per-shard preparation of files and buffers.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use weir_engine::align::DEFAULT_ALIGN_BYTES;
use weir_engine::{
    AlignmentSource, BlockDevice, DioAlignment, DmaBufferPool, FileError, PrepareOptions,
    PreparedFile,
};

use crate::error::{OptionsError, RunError, SetupError, UsageError};
use crate::job::{Plan, ShardSet};
use crate::job_run::{JobSetup, JobTarget};
use crate::options::{direct_policy, RunOptions};
use crate::verify::VERIFY_BLOCK_BYTES;

/// Facts established by [`check`].
#[derive(Debug, Clone)]
pub struct Checked {
    pub direct_io: bool,
    pub alignment: DioAlignment,
    /// `--device`: the claimed device and each (job, shard)'s region on it.
    pub device: Option<DeviceLayout>,
    /// For the report: what the checks let through on the operator's word (`--destroy-data`).
    pub warnings: Vec<String>,
}

/// Jobs on a raw device: one disjoint region per (job index, shard), in plan order.
#[derive(Debug, Clone)]
pub struct DeviceLayout {
    pub device: Arc<BlockDevice>,
    /// (job index, shard, first byte, bytes).
    pub regions: Vec<(usize, usize, u64, u64)>,
}

impl DeviceLayout {
    fn region(&self, job: usize, shard: usize) -> Option<(u64, u64)> {
        self.regions
            .iter()
            .find(|r| r.0 == job && r.1 == shard)
            .map(|r| (r.2, r.3))
    }
}

/// (job index, shard, first byte, bytes).
pub(crate) type Region = (usize, usize, u64, u64);

/// Regions start on this boundary (any device's alignment divides it).
const REGION_ALIGN_BYTES: u64 = 1 << 20;

/// Checks the directory and the plan against it. Every error is a usage error naming the fix.
pub fn check(plan: &Plan, options: &RunOptions, shard_count: usize) -> Result<Checked, RunError> {
    let options_usage = |e: OptionsError| Err(RunError::Usage(UsageError::Options(e)));
    // Bounds first, before anything is allocated or created.
    if shard_count > crate::options::MAX_SHARDS {
        return options_usage(OptionsError::TooManyShards {
            shards: shard_count,
        });
    }
    if options.duration.is_zero() {
        return options_usage(OptionsError::ZeroDuration);
    }
    if options.duration > crate::options::MAX_DURATION {
        return options_usage(OptionsError::DurationTooLong {
            seconds: options.duration.as_secs(),
        });
    }
    for job in &plan.jobs {
        if job.job_type == crate::job::JobType::Unlink && options.dir.is_none() {
            return Err(job_usage(
                &job.name,
                format!(
                    "job `{}` unlinks files, which needs a directory (as in io_tester): run it \
                 with --dir",
                    job.name
                ),
            ));
        }
        if let ShardSet::List(list) = &job.shards {
            if let Some(bad) = list.iter().find(|s| **s >= shard_count) {
                return Err(job_usage(
                    &job.name,
                    format!(
                        "job `{}` lists shard {bad}, but this run has {shard_count} shard(s) \
                     (0..{}); raise --shards or change the job's `shards`",
                        job.name,
                        shard_count - 1
                    ),
                ));
            }
        }
        if options.verify && job.request_bytes as usize % VERIFY_BLOCK_BYTES != 0 {
            return Err(job_usage(
                &job.name,
                format!(
                "job `{}`: --verify needs request sizes that are multiples of {VERIFY_BLOCK_BYTES} \
                 bytes (reqsize is {} bytes)",
                job.name, job.request_bytes
            ),
            ));
        }
    }
    if let Some(device) = &options.device {
        if options.dir.is_some() {
            return options_usage(OptionsError::DirAndDevice);
        }
        return check_device(plan, options, shard_count, device);
    }
    let Some(dir) = &options.dir else {
        if options.verify {
            return options_usage(OptionsError::VerifyWithoutFiles);
        }
        return Ok(Checked {
            direct_io: !options.buffered,
            alignment: DioAlignment {
                mem_align_bytes: DEFAULT_ALIGN_BYTES,
                offset_align_bytes: 512,
                source: AlignmentSource::Default,
            },
            device: None,
            warnings: Vec::new(),
        });
    };
    check_directory(dir)?;
    check_space(plan, dir, shard_count)?;
    let alignment = weir_engine::dio_alignment(dir).map_err(|errno| {
        dir_usage(
            dir,
            format!(
                "cannot open the directory {}: {}",
                dir.display(),
                weir_engine::describe_errno(errno)
            ),
        )
    })?;
    if !options.buffered {
        check_request_alignment(plan, &alignment, &dir.display().to_string())?;
    }
    Ok(Checked {
        direct_io: !options.buffered,
        alignment,
        device: None,
        warnings: Vec::new(),
    })
}

/// Every request size must be a multiple of the direct-I/O alignment of `target`.
fn check_request_alignment(
    plan: &Plan,
    alignment: &DioAlignment,
    target: &str,
) -> Result<(), RunError> {
    let align_bytes = alignment.offset_align_bytes.max(1);
    match plan
        .jobs
        .iter()
        .find(|j| j.request_bytes % align_bytes != 0)
    {
        Some(job) => Err(RunError::Usage(UsageError::Misaligned {
            job: job.name.clone(),
            request_bytes: job.request_bytes,
            align_bytes,
            target: target.to_string(),
            source: alignment.source.as_str(),
        })),
        None => Ok(()),
    }
}

/// `--device`: claims the device, refuses what cannot run on one, and lays the jobs out in
/// disjoint regions that must fit.
fn check_device(
    plan: &Plan,
    options: &RunOptions,
    shard_count: usize,
    path: &Path,
) -> Result<Checked, RunError> {
    let options_usage = |e: OptionsError| Err(RunError::Usage(UsageError::Options(e)));
    if options.buffered {
        return options_usage(OptionsError::BufferedDevice);
    }
    if options.verify {
        return options_usage(OptionsError::VerifyDevice);
    }
    if let Some(job) = plan.jobs.iter().find(|j| j.prepare().extends_file()) {
        return Err(job_usage(
            &job.name,
            format!(
                "job `{}` (type {}, prepare {}) grows its file, which a device cannot do: use \
             seqwrite or overwrite on --device, or run it with --dir",
                job.name,
                job.job_type,
                job.prepare()
            ),
        ));
    }
    // Claimed first, so a mounted or held device gets the message that names its holder.
    let device = BlockDevice::open(path).map_err(|e| {
        if e.usage {
            RunError::Usage(UsageError::Device(e))
        } else {
            RunError::Setup(SetupError::Device(e))
        }
    })?;
    let warnings = guard_device_data(plan, options, path)?;
    let alignment = device.alignment();
    check_request_alignment(plan, &alignment, &path.display().to_string())?;
    let (regions, next) = lay_out_regions(plan, shard_count)?;
    if next > device.capacity_bytes() {
        return Err(RunError::Usage(UsageError::DeviceTooSmall {
            device: path.to_path_buf(),
            need_bytes: next,
            regions: regions.len(),
            capacity_bytes: device.capacity_bytes(),
        }));
    }
    Ok(Checked {
        direct_io: true,
        alignment,
        device: Some(DeviceLayout {
            device: Arc::new(device),
            regions,
        }),
        warnings,
    })
}

/// Refuses a plan that writes to a device holding data weir recognises (a filesystem, a
/// partition table, an LVM, md or ZFS member, LUKS, swap) unless `--destroy-data` was given;
/// with it, returns the warning the report repeats. Read-only plans pass: they change nothing.
fn guard_device_data(
    plan: &Plan,
    options: &RunOptions,
    path: &Path,
) -> Result<Vec<String>, RunError> {
    let writers: Vec<String> = plan
        .jobs
        .iter()
        .filter(|j| j.job_type.does_io() && !j.job_type.is_read())
        .map(|j| format!("`{}` ({})", j.name, j.job_type))
        .collect();
    if writers.is_empty() {
        return Ok(Vec::new());
    }
    let found =
        weir_guard::probe_path(path).map_err(|e| RunError::Usage(UsageError::DeviceProbe(e)))?;
    if found.is_empty() {
        return Ok(Vec::new());
    }
    if !options.destroy_data {
        return Err(RunError::Usage(UsageError::DeviceHoldsData {
            device: path.to_path_buf(),
            found,
            writers,
        }));
    }
    let what = found
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ");
    Ok(vec![format!(
        "--destroy-data: {} held {what}; the jobs {} overwrote it as asked",
        path.display(),
        writers.join(", ")
    )])
}

/// One disjoint region per (job index, shard), in plan order, laid end to end from 0, each
/// starting on a [`REGION_ALIGN_BYTES`] boundary (as XFS aligns large files): (regions, end).
pub(crate) fn lay_out_regions(
    plan: &Plan,
    shard_count: usize,
) -> Result<(Vec<Region>, u64), RunError> {
    let mut regions = Vec::new();
    let mut next = 0u64;
    for (index, job) in plan.jobs.iter().enumerate() {
        let bytes = job.data_per_shard_bytes(shard_count).unwrap_or(0);
        for shard in job.shards.resolve(shard_count) {
            regions.push((index, shard, next, bytes));
            next = next
                .checked_add(bytes)
                .and_then(|end| end.checked_next_multiple_of(REGION_ALIGN_BYTES))
                .ok_or_else(|| {
                    job_usage(
                        &job.name,
                        format!(
                            "job `{}`: the jobs' data_size adds up to more than 2^64 bytes; \
                         lower data_size",
                            job.name
                        ),
                    )
                })?;
        }
    }
    Ok((regions, next))
}

/// The jobs' files must fit in the free space of `dir`'s filesystem (test files left by an
/// earlier `--keep-files` run count as free: they are reused). Without this a huge
/// `data_size` spends minutes prefilling before the disk fills, and fills it for everyone.
fn check_space(plan: &Plan, dir: &Path, shard_count: usize) -> Result<(), RunError> {
    let Some(avail_bytes) = free_bytes(dir) else {
        return Ok(()); // statvfs failed: the file creation reports the real cause
    };
    let mut need_bytes = 0u64;
    let mut reusable_bytes = 0u64;
    for job in &plan.jobs {
        let Some(mut bytes) = job.data_per_shard_bytes(shard_count) else {
            continue;
        };
        if job.job_type == crate::job::JobType::Unlink {
            let (count, file_bytes) = crate::unlink::file_sizes(job, bytes);
            bytes = count.saturating_mul(file_bytes);
        }
        for shard in job.shards.resolve(shard_count) {
            need_bytes = need_bytes.saturating_add(bytes);
            let name = weir_engine::data_file_name(&job.name, shard as u32);
            let existing = std::fs::metadata(dir.join(name)).map_or(0, |m| m.len());
            reusable_bytes = reusable_bytes.saturating_add(existing.min(bytes));
        }
    }
    let free = avail_bytes.saturating_add(reusable_bytes);
    if need_bytes <= free {
        return Ok(());
    }
    Err(RunError::Usage(UsageError::NoSpace {
        dir: dir.to_path_buf(),
        need_bytes,
        free_bytes: free,
    }))
}

/// Bytes an unprivileged writer may still use on `dir`'s filesystem.
fn free_bytes(dir: &Path) -> Option<u64> {
    let c_path = CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs is plain data; the path is NUL-terminated.
    let mut vfs: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers.
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut vfs) } != 0 {
        return None;
    }
    Some((vfs.f_bavail as u64).saturating_mul(vfs.f_frsize as u64))
}

fn check_directory(dir: &Path) -> Result<(), RunError> {
    let shown = dir.display();
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(dir_usage(
                dir,
                format!(
                    "the directory {shown} does not exist: create it (mkdir -p {shown}) or pass \
                 another --dir"
                ),
            ))
        }
        Err(e) => {
            return Err(dir_usage(
                dir,
                format!("cannot inspect the directory {shown}: {e}; pass another --dir"),
            ))
        }
    };
    if !meta.is_dir() {
        return Err(dir_usage(
            dir,
            format!(
            "{shown} is not a directory: --dir takes the directory where weir creates its test \
             files"
        ),
        ));
    }
    let c_path = CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| dir_usage(dir, format!("{shown}: the path contains a NUL byte")))?;
    // SAFETY: statvfs is plain data; the path is NUL-terminated.
    let mut vfs: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers.
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut vfs) } == 0 && vfs.f_flag & libc::ST_RDONLY != 0
    {
        return Err(dir_usage(
            dir,
            format!(
                "{shown} is on a read-only filesystem: pass a --dir on a writable filesystem, or \
             remount it read-write (mount -o remount,rw <mountpoint>)"
            ),
        ));
    }
    // SAFETY: valid NUL-terminated path.
    if unsafe { libc::access(c_path.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        let errno = std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EACCES);
        if errno == libc::EROFS {
            return Err(dir_usage(
                dir,
                format!(
                    "{shown} is on a read-only filesystem: pass a --dir on a writable filesystem, \
                 or remount it read-write"
                ),
            ));
        }
        return Err(dir_usage(
            dir,
            format!(
                "the directory {shown} is not writable by this user ({}): fix its permissions \
             (chmod u+w {shown}, or chown it) or pass another --dir",
                weir_engine::errno_name(errno)
            ),
        ));
    }
    Ok(())
}

/// Prepares the files and buffers of every job placed on `shard`. Also returns warnings for
/// the operator (a job option the filesystem cannot apply), the same text on every shard so
/// the caller can print each once.
pub fn prepare_shard(
    shard: usize,
    plan: &Plan,
    options: &RunOptions,
    checked: &Checked,
    shard_count: usize,
) -> Result<(Vec<JobSetup>, Vec<String>), RunError> {
    let mut setups = Vec::new();
    let mut warnings = Vec::new();
    for (index, job) in plan.jobs.iter().enumerate() {
        if !job.shards.contains(shard) {
            continue;
        }
        let data_bytes = job.data_per_shard_bytes(shard_count);
        let file_name = weir_engine::data_file_name(&job.name, shard as u32);
        let mut base_offset_bytes = 0;
        let mut device_name = None;
        let (file, alignment, prefilled) = match (&checked.device, &options.dir) {
            // A cpu job runs on the shard's thread and has no file.
            _ if !job.job_type.does_io() => (None, checked.alignment, false),
            (Some(layout), _) => {
                let (base, _) =
                    layout
                        .region(index, shard)
                        .ok_or(RunError::Setup(SetupError::NoRegion {
                            job_index: index,
                            shard,
                        }))?;
                base_offset_bytes = base;
                device_name = Some(format!(
                    "{} (region at {base} bytes)",
                    layout.device.path().display()
                ));
                (None, checked.alignment, false)
            }
            (None, Some(dir)) => {
                let mut opts = PrepareOptions::new(job.prepare(), data_bytes.unwrap_or(0));
                opts.direct = direct_policy(options);
                opts.keep = options.keep_files;
                opts.keep_until_exit = options.keep_files_until_exit;
                opts.reuse_existing = true;
                opts.backend = options.backend;
                // Ctrl-C during an `overwrite` prefill stops it; the file is then removed.
                opts.cancel = Some(options.cancel.clone());
                if let Some(hint) = job.sloppy_size_hint_bytes {
                    opts.sloppy_size_hint_bytes = hint;
                }
                // Validation keeps the hint within u32.
                opts.extent_size_hint_bytes = job
                    .extent_size_hint_bytes
                    .map(|h| u32::try_from(h).unwrap_or(u32::MAX));
                let file =
                    PreparedFile::create(dir, &job.name, shard as u32, &opts).map_err(classify)?;
                let hint_bytes = job.extent_size_hint_bytes.unwrap_or(0);
                if let Some(w) = file.extent_hint().and_then(|o| o.warning(hint_bytes)) {
                    warnings.push(format!("job `{}`: {w}", job.name));
                }
                let alignment = file.alignment();
                let prefilled = job.prepare() == crate::job::Prepare::Overwrite;
                (Some(file), alignment, prefilled)
            }
            // No files (the simulated disk): each job and shard gets its own region of the
            // one address space, as on a device, so a shared disk sees where each writes.
            (None, None) => {
                let (regions, _) = lay_out_regions(plan, shard_count)?;
                base_offset_bytes = regions
                    .iter()
                    .find(|r| r.0 == index && r.1 == shard)
                    .map_or(0, |r| r.2);
                (None, checked.alignment, false)
            }
        };
        let device_fd = checked.device.as_ref().map_or(-1, |l| l.device.fd());
        let fd = file.as_ref().map_or(device_fd, PreparedFile::fd);
        let file_name = match (&file, device_name) {
            (Some(f), _) => f.path().display().to_string(),
            (None, Some(name)) => name,
            (None, None) => file_name,
        };
        let unlink_files = match (&options.dir, job.job_type) {
            (Some(dir), crate::job::JobType::Unlink) => Some(crate::unlink::create_files(
                dir,
                job,
                shard,
                data_bytes.unwrap_or(0),
                options.keep_files,
            )?),
            _ => None,
        };
        let buffer_bytes = job.request_bytes as usize;
        let pool = DmaBufferPool::new(job.max_in_flight() as usize, buffer_bytes, &alignment)
            .map_err(|e| RunError::Setup(SetupError::Buffers(e)))?;
        setups.push(JobSetup {
            job: job.clone(),
            index,
            target: JobTarget {
                fd,
                file,
                file_name,
                data_bytes,
                base_offset_bytes,
                prefilled,
            },
            pool,
            verify: options.verify,
            seed: options.seed ^ (index as u64).wrapping_mul(0x9e37_79b9) ^ ((shard as u64) << 40),
            unlink_files,
        });
    }
    Ok((setups, warnings))
}

/// Operator-fixable file errors are usage errors; the rest are setup failures.
fn classify(e: FileError) -> RunError {
    let (errno, usage) = match &e {
        FileError::DirectIoUnsupported { .. }
        | FileError::MisalignedSize { .. }
        | FileError::NotWeirs(_) => (None, true),
        FileError::Os { errno, .. } => (
            Some(*errno),
            matches!(
                *errno,
                libc::ENOENT | libc::EACCES | libc::EPERM | libc::EROFS | libc::ENOTDIR
            ),
        ),
        _ => (None, false),
    };
    let message = e.to_string();
    if usage {
        RunError::Usage(UsageError::File { errno, message })
    } else {
        RunError::Setup(SetupError::File { errno, message })
    }
}

/// A job this run cannot carry.
fn job_usage(job: &str, message: String) -> RunError {
    RunError::Usage(UsageError::Job {
        job: job.to_string(),
        message,
    })
}

/// A `--dir` that cannot hold the test files.
fn dir_usage(dir: &Path, message: String) -> RunError {
    RunError::Usage(UsageError::Directory {
        dir: dir.to_path_buf(),
        message,
    })
}

#[cfg(test)]
#[path = "setup_tests.rs"]
mod tests;
