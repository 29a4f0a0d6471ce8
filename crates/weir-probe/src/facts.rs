//! [`PathFacts`]: everything known about the storage under a directory, from one call.

use std::path::Path;

use serde::Serialize;

use crate::fs::{fs_name, FsSnapshot, XfsGeometry};
use crate::mountinfo::{mount_for, read_mounts, MountEntry};
use crate::stack::{name_for_dev, walk, DeviceNode, QueueFacts};
use crate::sysroot::SysRoot;
use crate::ProbeError;

/// The filesystem holding the directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FilesystemFacts {
    /// `xfs`, `ext4`, ... from statfs, or the mount's type when the magic is unknown.
    pub fs_type: String,
    pub fs_magic: u64,
    pub block_bytes: u64,
    pub mount_point: Option<String>,
    /// The mount source (`/dev/vda`, `/dev/loop3`).
    pub source: Option<String>,
    pub mount_options: Option<String>,
    pub super_options: Option<String>,
    pub xfs: Option<XfsGeometry>,
}

/// Free and total space of the filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SpaceFacts {
    pub total_bytes: u64,
    pub free_bytes: u64,
    pub avail_bytes: u64,
}

/// The facts about the storage under a directory that `weir doctor` checks and `weir tune`'s
/// preflight reuses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathFacts {
    pub path: String,
    pub filesystem: FilesystemFacts,
    /// The device stack, top (the mount's device) first; `None` for filesystems without a
    /// block device (tmpfs, NFS).
    pub stack: Option<DeviceNode>,
    pub dio: Option<crate::fs::DioFacts>,
    pub space: SpaceFacts,
    /// Whether systemd's periodic `fstrim.timer` is enabled (`None`: no systemd here).
    pub fstrim_timer_enabled: Option<bool>,
    /// What could not be learned, and why (partial results are still reported).
    pub notes: Vec<String>,
}

impl PathFacts {
    /// The leaf devices of the stack (empty when there is none).
    pub fn leaves(&self) -> Vec<&DeviceNode> {
        self.stack
            .as_ref()
            .map(DeviceNode::leaves)
            .unwrap_or_default()
    }

    /// The largest physical sector size among the leaves: the smallest write the media can
    /// take without a read-modify-write.
    pub fn leaf_physical_block_bytes(&self) -> Option<u64> {
        self.leaves()
            .iter()
            .filter_map(|l| l.queue.physical_block_bytes)
            .max()
    }

    /// The queue of the top device (what the filesystem submits to).
    pub fn top_queue(&self) -> Option<&QueueFacts> {
        self.stack.as_ref().map(|n| &n.queue)
    }
}

/// Probes `dir` on the running machine.
pub fn probe_path(dir: &Path) -> Result<PathFacts, ProbeError> {
    probe_path_in(dir, &SysRoot::live())
}

/// Probes `dir` with sysfs/procfs read from `root`. On a fixture root (not `/`) the syscall facts
/// come from `<root>/fs.json` and `dir` is only named in the output.
pub fn probe_path_in(dir: &Path, root: &SysRoot) -> Result<PathFacts, ProbeError> {
    let snap = if root.is_live() {
        crate::fs::snapshot(dir)?
    } else {
        let file = root.path("/fs.json");
        let text = std::fs::read_to_string(&file).map_err(|e| ProbeError::Fixture {
            file: file.display().to_string(),
            detail: e.to_string(),
        })?;
        serde_json::from_str(&text).map_err(|e| ProbeError::Fixture {
            file: file.display().to_string(),
            detail: e.to_string(),
        })?
    };
    Ok(describe(&snap, root))
}

/// Combines a snapshot with what sysfs/procfs under `root` say about its device.
pub fn describe(snap: &FsSnapshot, root: &SysRoot) -> PathFacts {
    let mut notes = Vec::new();
    if let Some(n) = &snap.dio_note {
        notes.push(n.clone());
    }
    let mounts = read_mounts(root);
    let dev = (snap.dev_major, snap.dev_minor);
    let mount: Option<MountEntry> = mount_for(&mounts, &snap.path, Some(dev));
    if mount.is_none() {
        notes.push(format!(
            "no entry in {} holds {}",
            root.path("/proc/self/mountinfo").display(),
            snap.path
        ));
    }
    let fs_type = fs_name(snap.fs_magic)
        .map(str::to_string)
        .or_else(|| mount.as_ref().map(|m| m.fs_type.clone()))
        .unwrap_or_else(|| format!("unknown (statfs magic {:#x})", snap.fs_magic));
    let stack = device_name(root, snap, mount.as_ref()).map(|name| walk(root, &name));
    if stack.is_none() && snap.dev_major != 0 {
        notes.push(format!(
            "block device {}:{} not found under {}",
            snap.dev_major,
            snap.dev_minor,
            root.path("/sys/block").display()
        ));
    }
    PathFacts {
        path: snap.path.clone(),
        filesystem: FilesystemFacts {
            fs_type,
            fs_magic: snap.fs_magic,
            block_bytes: snap.block_bytes,
            mount_point: mount.as_ref().map(|m| m.mount_point.clone()),
            source: mount.as_ref().map(|m| m.source.clone()),
            mount_options: mount.as_ref().map(|m| m.mount_options.clone()),
            super_options: mount.as_ref().map(|m| m.super_options.clone()),
            xfs: snap.xfs.clone(),
        },
        stack,
        dio: snap.dio.clone(),
        space: SpaceFacts {
            total_bytes: snap.total_bytes,
            free_bytes: snap.free_bytes,
            avail_bytes: snap.avail_bytes,
        },
        fstrim_timer_enabled: fstrim_timer(root),
        notes,
    }
}

/// The block device under the filesystem: by device number, or (btrfs, whose st_dev is an
/// anonymous 0:N) by the mount source.
fn device_name(root: &SysRoot, snap: &FsSnapshot, mount: Option<&MountEntry>) -> Option<String> {
    if snap.dev_major != 0 {
        if let Some(n) = name_for_dev(root, snap.dev_major, snap.dev_minor) {
            return Some(n);
        }
    }
    let source = mount?.source.strip_prefix("/dev/")?.to_string();
    let live_target = std::fs::canonicalize(root.path(&format!("/dev/{source}"))).ok();
    let name = live_target
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| source.rsplit('/').next().unwrap_or(&source).to_string());
    let known = root.exists(&format!("/sys/block/{name}"))
        || root
            .list("/sys/block")
            .iter()
            .any(|d| root.exists(&format!("/sys/block/{d}/{name}/partition")));
    known.then_some(name)
}

/// Whether `fstrim.timer` is enabled under systemd (`None` without systemd).
fn fstrim_timer(root: &SysRoot) -> Option<bool> {
    if !root.exists("/etc/systemd/system") && !root.exists("/run/systemd/system") {
        return None;
    }
    Some(
        root.exists("/etc/systemd/system/timers.target.wants/fstrim.timer")
            || root.exists("/usr/lib/systemd/system/timers.target.wants/fstrim.timer"),
    )
}
