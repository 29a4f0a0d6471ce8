//! `--backend auto`: the backend a file wants, found by asking it for one read it must not
//! block on.
//!
//! io_uring first tries every request without blocking; a file that cannot take a
//! non-blocking request (no `FMODE_NOWAIT`, e.g. zram and other bio-based drivers without
//! `REQ_NOWAIT` support) makes it hand *every* request to an io-wq worker thread, which then
//! wakes the submitter: two context switches per I/O at QD1. Linux AIO's `io_submit` runs
//! such a driver's read in the submitting thread instead. So the probe is one block read with
//! `preadv2(..., RWF_NOWAIT)`: EOPNOTSUPP says the file takes no non-blocking request (AIO);
//! a read or EAGAIN ("would block now") says it does (io_uring).

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::backend::{Backend, UnknownBackend};
use crate::errno::{describe_errno, errno_name};
pub use crate::nowait_probe::{classify, probe_fd, probe_raw_fd, NowaitSupport};
use crate::nowait_probe::{AlignedBlock, PROBE_BYTES};

/// What `--backend` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// This backend, whatever the file.
    Fixed(Backend),
    /// Probe the target and pick (see the module docs).
    #[default]
    Auto,
}

impl FromStr for BackendChoice {
    type Err = UnknownBackend;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "auto" {
            return Ok(BackendChoice::Auto);
        }
        s.parse::<Backend>()
            .map(BackendChoice::Fixed)
            .map_err(|e| UnknownBackend { auto: true, ..e })
    }
}

/// The backend picked and why, for the run's header and JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub backend: Backend,
    /// One sentence: what was probed, what it said, what follows.
    pub reason: String,
}

/// The backend for a file whose probe said `support` (pure, so it is unit-tested).
pub fn choose(target: &Path, support: NowaitSupport) -> Chosen {
    let target = target.display();
    match support {
        NowaitSupport::Supported => Chosen {
            backend: Backend::Uring,
            reason: format!("{target} takes RWF_NOWAIT reads, so io_uring issues requests inline"),
        },
        NowaitSupport::Unsupported => Chosen {
            backend: Backend::Aio,
            reason: format!(
                "{target} refuses RWF_NOWAIT reads (EOPNOTSUPP), so io_uring would hand every \
                 request to a worker thread; Linux AIO submits them from the shard"
            ),
        },
        NowaitSupport::Inconclusive(errno) => Chosen {
            backend: Backend::Uring,
            reason: format!(
                "the RWF_NOWAIT probe of {target} failed with {}, which says nothing about \
                 non-blocking support: io_uring, the usual choice",
                errno_name(errno)
            ),
        },
    }
}

/// The probe could not even open or write its target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeError {
    pub path: PathBuf,
    pub step: &'static str,
    pub errno: i32,
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "--backend auto: cannot {} {} to probe it: {}; pass --backend uring or aio",
            self.step,
            self.path.display(),
            describe_errno(self.errno)
        )
    }
}

impl std::error::Error for ProbeError {}

/// Opens `path` for reading, O_DIRECT when the filesystem allows it (the run's own mode).
fn open_for_probe(path: &Path) -> Result<File, ProbeError> {
    let err = |e: std::io::Error| ProbeError {
        path: path.to_path_buf(),
        step: "open",
        errno: e.raw_os_error().unwrap_or(libc::EIO),
    };
    let direct = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path);
    match direct {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            // No O_DIRECT here (tmpfs): the run goes through the page cache too.
            OpenOptions::new().read(true).open(path).map_err(err)
        }
        other => other.map_err(err),
    }
}

/// Probes an existing file or block device and picks its backend.
pub fn choose_for_path(path: &Path) -> Result<Chosen, ProbeError> {
    let file = open_for_probe(path)?;
    Ok(choose(path, probe_fd(&file)))
}

/// Probes the filesystem holding `dir`: writes one block to a scratch file there, syncs it
/// so the read must go to the device, and probes it. The file is unnamed (`O_TMPFILE`), so it
/// never shows in the directory and vanishes even if the process dies; a filesystem without
/// `O_TMPFILE` gets a named file, removed after.
pub fn choose_for_dir(dir: &Path) -> Result<Chosen, ProbeError> {
    if let Some(file) = unnamed_scratch(dir) {
        return Ok(choose(dir, probe_fd(&file)));
    }
    let scratch = dir.join(format!(".weir-backend-probe-{}", std::process::id()));
    let written = write_scratch(&scratch);
    let chosen = written.and_then(|()| {
        let file = open_for_probe(&scratch)?;
        Ok(choose(dir, probe_fd(&file)))
    });
    let _ = std::fs::remove_file(&scratch);
    chosen
}

/// An `O_TMPFILE` in `dir` holding one synced block, O_DIRECT when the filesystem allows it;
/// None when the filesystem cannot make one (the caller falls back to a named file).
fn unnamed_scratch(dir: &Path) -> Option<File> {
    let open = |direct: i32| {
        OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_TMPFILE | direct)
            .open(dir)
    };
    let (mut file, direct) = match open(libc::O_DIRECT) {
        Ok(f) => (f, true),
        Err(_) => (open(0).ok()?, false),
    };
    if direct {
        let mut block = AlignedBlock::new();
        // SAFETY: the block is PROBE_BYTES long and lives until the call returns.
        let data = unsafe { std::slice::from_raw_parts_mut(block.ptr(), PROBE_BYTES) };
        data.fill(0x5a);
        std::os::unix::fs::FileExt::write_all_at(&file, data, 0).ok()?;
    } else {
        file.write_all(&[0x5a; PROBE_BYTES]).ok()?;
    }
    file.sync_all().ok()?;
    // Drop a cached copy, so the probe's read is not served from memory.
    // SAFETY: advisory call on an open descriptor.
    unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    Some(file)
}

/// What `choice` means for `target` (a block device or file when `is_dir` is false, else a
/// directory the run creates files in). Never fails: a target the probe cannot read keeps
/// io_uring and says why (the run then reports its own error on opening it, if any).
pub fn resolve(choice: BackendChoice, target: &Path, is_dir: bool) -> Chosen {
    match choice {
        BackendChoice::Fixed(backend) => Chosen {
            backend,
            reason: format!("--backend {backend}"),
        },
        BackendChoice::Auto => {
            let probed = if is_dir {
                choose_for_dir(target)
            } else {
                choose_for_path(target)
            };
            probed.unwrap_or_else(|e| Chosen {
                backend: Backend::Uring,
                reason: format!(
                    "could not probe {} ({} failed: {}): io_uring, the usual choice",
                    e.path.display(),
                    e.step,
                    errno_name(e.errno)
                ),
            })
        }
    }
}

fn write_scratch(path: &Path) -> Result<(), ProbeError> {
    let err = |step| {
        move |e: std::io::Error| ProbeError {
            path: path.to_path_buf(),
            step,
            errno: e.raw_os_error().unwrap_or(libc::EIO),
        }
    };
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(err("create"))?;
    file.write_all(&[0x5a; PROBE_BYTES]).map_err(err("write"))?;
    file.sync_all().map_err(err("sync"))?;
    // Drop the cached copy, so the probe's read is not served from memory.
    // SAFETY: advisory call on an open descriptor.
    unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_auto_and_fixed() {
        assert_eq!("auto".parse::<BackendChoice>(), Ok(BackendChoice::Auto));
        assert_eq!(
            "aio".parse::<BackendChoice>(),
            Ok(BackendChoice::Fixed(Backend::Aio))
        );
        assert_eq!(
            "io_uring".parse::<BackendChoice>(),
            Ok(BackendChoice::Fixed(Backend::Uring))
        );
        let e = "spdk".parse::<BackendChoice>().expect_err("unknown");
        assert!(e.auto && e.given == "spdk", "{e:?}");
        let e = e.to_string();
        assert!(e.contains("'auto'") && e.contains("'aio'"), "{e}");
    }

    #[test]
    fn errno_decides_support() {
        assert_eq!(classify(libc::EAGAIN), NowaitSupport::Supported);
        assert_eq!(classify(libc::EOPNOTSUPP), NowaitSupport::Unsupported);
        assert_eq!(
            classify(libc::EINVAL),
            NowaitSupport::Inconclusive(libc::EINVAL)
        );
    }

    #[test]
    fn unsupported_nowait_picks_aio_and_says_why() {
        let path = Path::new("/dev/zram7");
        let c = choose(path, NowaitSupport::Unsupported);
        assert_eq!(c.backend, Backend::Aio);
        assert!(c.reason.contains("/dev/zram7") && c.reason.contains("EOPNOTSUPP"));
        assert!(c.reason.contains("worker thread"), "{}", c.reason);
    }

    #[test]
    fn fixed_choice_is_kept_and_unprobeable_target_keeps_io_uring() {
        let missing = Path::new("/nonexistent/weir-auto-probe");
        let fixed = resolve(BackendChoice::Fixed(Backend::Aio), missing, false);
        assert_eq!(fixed.backend, Backend::Aio);
        let auto = resolve(BackendChoice::Auto, missing, true);
        assert_eq!(auto.backend, Backend::Uring);
        assert!(auto.reason.contains("ENOENT"), "{}", auto.reason);
    }

    #[test]
    fn supported_or_unknown_keeps_io_uring() {
        let path = Path::new("/mnt/data");
        assert_eq!(
            choose(path, NowaitSupport::Supported).backend,
            Backend::Uring
        );
        let c = choose(path, NowaitSupport::Inconclusive(libc::EINVAL));
        assert_eq!(c.backend, Backend::Uring);
        assert!(c.reason.contains("EINVAL"), "{}", c.reason);
    }
}
