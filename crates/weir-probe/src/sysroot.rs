//! Where sysfs and procfs are read from: the live `/` or a fixture tree laid out the same way.
//!
//! Everything the probe learns from text files (`/sys/block/...`, `/proc/self/mountinfo`,
//! `/etc/systemd/...`) goes through a [`SysRoot`], so tests point it at a directory holding a
//! recorded machine (an md RAID0 of four NVMe drives, a drive whose firmware reports 512 B
//! physical sectors) and get the same code paths as production.
//!
//! Facts that only a syscall on the path can give (statfs, statx, the XFS geometry ioctl) cannot
//! come from files; a fixture supplies them as `fs.json` (a serialized
//! [`crate::fs::FsSnapshot`]) at its top.

use std::path::{Path, PathBuf};

/// A root directory for sysfs/procfs reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysRoot {
    base: PathBuf,
}

impl SysRoot {
    /// The running machine: `/sys`, `/proc`, `/etc`.
    pub fn live() -> Self {
        SysRoot {
            base: PathBuf::from("/"),
        }
    }

    /// A fixture tree: `<base>/sys`, `<base>/proc`, `<base>/etc`, `<base>/fs.json`.
    pub fn at(base: impl Into<PathBuf>) -> Self {
        SysRoot { base: base.into() }
    }

    /// Whether this is the running machine (syscalls on paths agree with the files).
    pub fn is_live(&self) -> bool {
        self.base == Path::new("/")
    }

    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The location of an absolute path such as `/sys/block/vda` under this root.
    pub fn path(&self, abs: &str) -> PathBuf {
        self.base.join(abs.trim_start_matches('/'))
    }

    /// A file's text with surrounding whitespace removed, or `None` if unreadable. Sysfs files
    /// that do not exist on this kernel or device are normal, so absence is not an error.
    pub fn read(&self, abs: &str) -> Option<String> {
        std::fs::read_to_string(self.path(abs))
            .ok()
            .map(|s| s.trim().to_string())
    }

    /// A file holding one unsigned number.
    pub fn read_u64(&self, abs: &str) -> Option<u64> {
        self.read(abs).and_then(|s| s.parse().ok())
    }

    pub fn exists(&self, abs: &str) -> bool {
        self.path(abs).exists()
    }

    /// Entry names in a directory, sorted (for stable output); empty if it does not exist.
    pub fn list(&self, abs: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(abs))
            .map(|it| {
                it.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }
}
