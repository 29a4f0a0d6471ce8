//! weir-probe: facts about the storage under a path, and the checks built on them.
//!
//! - [`probe_path`] / [`probe_path_in`] gather [`PathFacts`]: the filesystem (type, block size,
//!   mount point and options, XFS geometry), the device stack walked through sysfs to the leaf
//!   devices (partition, loop with its backing file, device-mapper, md), each device's queue
//!   limits, the direct-I/O alignment from statx, and free space.
//! - [`doctor::checks`] turns those facts into findings (PASS/WARN/FAIL, the evidence, the
//!   fix). `weir doctor` prints them; `weir tune`'s preflight calls the same function, so the
//!   two never disagree about a machine.
//!
//! All sysfs/procfs reading goes through a [`SysRoot`], so the tests run the same code against
//! fixture trees of machines we do not have (an md RAID0 of four NVMe drives, a drive whose
//! firmware reports 512 B physical sectors).

pub mod align;
pub mod doctor;
pub mod facts;
pub mod fiemap;
pub mod fs;
pub mod mountinfo;
pub mod qualify;
pub mod stack;
pub mod sysroot;

pub use doctor::{checks, Finding, Status};
pub use facts::{describe, probe_path, probe_path_in, FilesystemFacts, PathFacts, SpaceFacts};
pub use fs::{DioFacts, FsSnapshot, XfsGeometry};
pub use stack::{DeviceKind, DeviceNode, QueueFacts};
pub use sysroot::SysRoot;

pub use crate::ProbeError as Error;

use std::fmt;
use std::path::Path;

/// Why a path could not be probed at all. Narrower failures (one sysfs file missing, no
/// permission to create a probe file) are notes in [`PathFacts::notes`], not errors.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProbeError {
    NotFound(String),
    NotADirectory(String),
    PermissionDenied(String),
    /// A fixture tree's `fs.json` is missing or malformed.
    Fixture {
        file: String,
        detail: String,
    },
    Io {
        path: String,
        detail: String,
    },
}

impl ProbeError {
    pub fn from_io(path: &Path, e: &std::io::Error) -> Self {
        let p = path.display().to_string();
        match e.raw_os_error() {
            Some(libc::ENOENT) => ProbeError::NotFound(p),
            Some(libc::ENOTDIR) => ProbeError::NotADirectory(p),
            Some(libc::EACCES) | Some(libc::EPERM) => ProbeError::PermissionDenied(p),
            _ => ProbeError::Io {
                path: p,
                detail: e.to_string(),
            },
        }
    }
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::NotFound(p) => {
                write!(
                    f,
                    "{p}: no such directory; pass an existing directory on the filesystem to check"
                )
            }
            ProbeError::NotADirectory(p) => write!(
                f,
                "{p}: not a directory; pass the directory where the data files will live"
            ),
            ProbeError::PermissionDenied(p) => write!(
                f,
                "{p}: permission denied; run as a user that can read and write it (or as root)"
            ),
            ProbeError::Fixture { file, detail } => {
                write!(
                    f,
                    "{file}: cannot read the fixture's filesystem snapshot: {detail}"
                )
            }
            ProbeError::Io { path, detail } => write!(f, "{path}: {detail}"),
        }
    }
}

impl std::error::Error for ProbeError {}
