//! io_tester's `unlink` job: before the run each shard creates `files_count` files of the
//! job's data (`weir-<name>-shard-<shard>-file-<n>.data`, each `data_size / shards / files_count`
//! rounded up to 1 MiB, written in full and synced), and each request unlinks the next one on the
//! shard's thread ([`crate::inline`]). Like io_tester, a request after the last file counts as a request that
//! removed nothing, and the files left at the end are removed unless `--keep-files`.
//!
//! Each file is claimed like a data file ([`weir_guard::owned::claim`]): created exclusively
//! and marked as weir's, so a file of the operator's by that name is refused, never
//! truncated, and the clean-up removes only files that still carry this run's mark.

use crate::error::{RunError, SetupError, UsageError};
use crate::job::{Job, UNLINK_FILE_ALIGN_BYTES};
use crate::request::Failure;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// One shard's files of an unlink job, removed in order.
#[derive(Debug)]
pub struct UnlinkFiles {
    paths: Vec<PathBuf>,
    next: usize,
    /// Requests that came after the last file (io_tester warns and counts them).
    pub exhausted_requests: u64,
    /// `--keep-files`: leave the files no request removed.
    keep: bool,
}

impl Drop for UnlinkFiles {
    /// Removes the files no request removed, unless kept (also when setup failed halfway).
    fn drop(&mut self) {
        for path in &self.paths[self.next..] {
            if self.keep {
                let _ = weir_guard::owned::mark_path(path, weir_guard::Holder::Kept);
            } else {
                weir_guard::owned::remove_if_held(path);
            }
        }
    }
}

/// The file `n` of `job` on `shard`: io_tester's name with weir's prefix and suffix, so it
/// cannot collide with io_tester's files or the operator's.
fn file_path(dir: &Path, job: &Job, shard: usize, n: u64) -> PathBuf {
    dir.join(format!("weir-{}-shard-{shard}-file-{n}.data", job.name))
}

/// How many files a shard of the unlink `job` creates, and the bytes of each (its share of
/// the data rounded up to 1 MiB, so 5000 files of a 1 GiB share take 5000 MiB, as in io_tester).
pub(crate) fn file_sizes(job: &Job, data_per_shard_bytes: u64) -> (u64, u64) {
    let count = job.files_count.unwrap_or(1).max(1);
    let file_bytes = (data_per_shard_bytes / count)
        .max(1)
        .div_ceil(UNLINK_FILE_ALIGN_BYTES)
        * UNLINK_FILE_ALIGN_BYTES;
    (count, file_bytes)
}

/// Creates and fills the job's files for `shard` in `dir`.
pub(crate) fn create_files(
    dir: &Path,
    job: &Job,
    shard: usize,
    data_per_shard_bytes: u64,
    keep: bool,
) -> Result<UnlinkFiles, RunError> {
    let (count, file_bytes) = file_sizes(job, data_per_shard_bytes);
    let chunk = vec![0x5au8; UNLINK_FILE_ALIGN_BYTES as usize];
    let mut files = UnlinkFiles {
        paths: Vec::with_capacity(count as usize),
        next: 0,
        exhausted_requests: 0,
        keep,
    };
    for n in 0..count {
        let path = file_path(dir, job, shard, n);
        let failed = |e: std::io::Error| {
            let message = format!(
                "job `{}`: creating {} ({file_bytes} bytes, file {} of {count}): {e}; lower \
                 data_size or files_count, or free space",
                job.name,
                path.display(),
                n + 1
            );
            let errno = e.raw_os_error();
            match errno {
                Some(libc::ENOSPC | libc::EDQUOT | libc::EACCES | libc::EROFS) => {
                    RunError::Usage(UsageError::File { errno, message })
                }
                _ => RunError::Setup(SetupError::File { errno, message }),
            }
        };
        let mut file = match weir_guard::owned::claim(&path) {
            Ok(weir_guard::owned::Claimed::Created { file, .. }) => file,
            Ok(weir_guard::owned::Claimed::Existing(file)) => {
                file.set_len(0).map_err(failed)?;
                file
            }
            Err(weir_guard::owned::ClaimError::Io { error, .. }) => return Err(failed(error)),
            Err(e) => {
                return Err(RunError::Usage(UsageError::File {
                    errno: None,
                    message: format!("job `{}`: {e}", job.name),
                }))
            }
        };
        files.paths.push(path.clone());
        for _ in 0..file_bytes / UNLINK_FILE_ALIGN_BYTES {
            file.write_all(&chunk).map_err(failed)?;
        }
    }
    // The files were written through the page cache: write them back now, so the run does
    // not measure its I/O against their writeback.
    // (Opening the directory cannot fail where its files were just created; if it does, the
    // run goes on unsynced.)
    if let Ok(d) = std::fs::File::open(dir) {
        // SAFETY: syncfs takes any descriptor on the filesystem; d stays open for the call.
        if unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&d)) } != 0 {
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            let message = format!(
                "job `{}`: writing back its {count} files in {} failed: {}",
                job.name,
                dir.display(),
                weir_engine::describe_errno(errno)
            );
            return Err(match errno {
                libc::ENOSPC | libc::EDQUOT => RunError::Usage(UsageError::File {
                    errno: Some(errno),
                    message: format!("{message}; lower data_size or files_count, or free space"),
                }),
                // EIO and anything else: the filesystem failed, not the operator's input.
                _ => RunError::Setup(SetupError::File {
                    errno: Some(errno),
                    message,
                }),
            });
        }
    }
    Ok(files)
}

impl UnlinkFiles {
    /// Unlinks the next file; Ok(false) when none is left.
    pub(crate) fn unlink_next(&mut self, job: &str) -> Result<bool, Failure> {
        let Some(path) = self.paths.get(self.next) else {
            self.exhausted_requests += 1;
            return Ok(false);
        };
        self.next += 1;
        std::fs::remove_file(path).map_err(|e| Failure::Io {
            job: job.to_string(),
            detail: format!("unlink of {} failed: {e}", path.display()),
        })?;
        Ok(true)
    }
}
