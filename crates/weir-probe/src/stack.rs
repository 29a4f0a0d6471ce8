//! The block device stack under a filesystem, walked through sysfs down to the leaf devices.
//!
//! Each layer is a [`DeviceNode`]: a partition points at its disk; a loop device at the device
//! holding its backing file (found through that file's own mount); device-mapper and md devices
//! at their `slaves/`. The leaves are the devices that do the physical I/O, and their queue
//! limits (physical sector, minimum and optimal I/O size) are what a filesystem must respect:
//! a virtual layer on top may report smaller numbers than the medium beneath it.

use serde::Serialize;

use crate::mountinfo::{mount_for, read_mounts};
use crate::sysroot::SysRoot;

/// Deeper stacks than this are treated as a cycle in a (possibly corrupt) fixture tree.
const MAX_DEPTH: usize = 8;

/// A block device's request-queue limits and settings (`/sys/block/<disk>/queue/*`).
/// `None` fields were not present on this kernel or device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct QueueFacts {
    pub logical_block_bytes: Option<u64>,
    pub physical_block_bytes: Option<u64>,
    pub minimum_io_bytes: Option<u64>,
    pub optimal_io_bytes: Option<u64>,
    pub rotational: Option<bool>,
    /// `write back` or `write through`.
    pub write_cache: Option<String>,
    /// The selected scheduler (the bracketed entry), e.g. `none`, `mq-deadline`.
    pub scheduler: Option<String>,
    pub nr_requests: Option<u64>,
    /// 0 merges allowed, 1 simple merges only, 2 no merges.
    pub nomerges: Option<u64>,
    pub discard_granularity_bytes: Option<u64>,
    pub discard_max_bytes: Option<u64>,
    pub max_sectors_kb: Option<u64>,
}

impl QueueFacts {
    /// Reads the queue directory of `disk` (a whole disk's name, e.g. `vda`, `md0`).
    pub fn read(root: &SysRoot, disk: &str) -> QueueFacts {
        let q = |f: &str| format!("/sys/block/{disk}/queue/{f}");
        let num = |f: &str| root.read_u64(&q(f));
        let scheduler = root.read(&q("scheduler")).map(|s| {
            s.split_whitespace()
                .find(|w| w.starts_with('['))
                .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
                .unwrap_or(s)
        });
        QueueFacts {
            logical_block_bytes: num("logical_block_size"),
            physical_block_bytes: num("physical_block_size"),
            minimum_io_bytes: num("minimum_io_size"),
            optimal_io_bytes: num("optimal_io_size"),
            rotational: num("rotational").map(|v| v != 0),
            write_cache: root.read(&q("write_cache")),
            scheduler,
            nr_requests: num("nr_requests"),
            nomerges: num("nomerges"),
            discard_granularity_bytes: num("discard_granularity"),
            discard_max_bytes: num("discard_max_bytes"),
            max_sectors_kb: num("max_sectors_kb"),
        }
    }

    /// Whether the device accepts discard (TRIM) at all.
    pub fn supports_discard(&self) -> bool {
        self.discard_max_bytes.unwrap_or(0) > 0
    }
}

/// What a layer of the stack is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DeviceKind {
    /// A physical (or virtio/NVMe/SCSI) disk: a leaf.
    Disk {
        /// `device/model` when the driver exposes one.
        model: Option<String>,
        /// `nvme`, `virtio`, `scsi`, ... guessed from the name.
        transport: String,
    },
    Partition {
        /// First sector (512 B units, as sysfs counts).
        start_sector: u64,
        size_sectors: Option<u64>,
        /// Bytes by which the partition start is off the device's natural alignment.
        alignment_offset_bytes: Option<u64>,
    },
    Loop {
        backing_file: Option<String>,
        /// Whether the loop device writes its backing file with O_DIRECT.
        direct_io: Option<bool>,
        offset_bytes: Option<u64>,
        /// Filesystem type of the mount holding the backing file.
        backing_fs_type: Option<String>,
    },
    DeviceMapper {
        name: Option<String>,
        uuid: Option<String>,
    },
    Md {
        /// `raid0`, `raid1`, `raid5`, ...
        level: Option<String>,
        chunk_bytes: Option<u64>,
        raid_disks: Option<u64>,
    },
    /// A stacked device of another kind (has slaves, no loop/md/dm directory).
    Stacked,
}

/// One device of the stack, with the devices beneath it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceNode {
    /// Kernel name (`vda`, `vda1`, `loop0`, `md0`, `dm-0`, `nvme0n1`).
    pub name: String,
    /// `major:minor`.
    pub dev: Option<String>,
    pub size_bytes: Option<u64>,
    #[serde(flatten)]
    pub kind: DeviceKind,
    /// The queue in effect for this node (a partition's is its disk's).
    pub queue: QueueFacts,
    pub below: Vec<DeviceNode>,
}

impl DeviceNode {
    /// The leaf devices (no device beneath), depth first.
    pub fn leaves(&self) -> Vec<&DeviceNode> {
        if self.below.is_empty() {
            return vec![self];
        }
        self.below.iter().flat_map(|n| n.leaves()).collect()
    }

    /// Every node, depth first, this one first.
    pub fn all(&self) -> Vec<&DeviceNode> {
        let mut out = vec![self];
        for n in &self.below {
            out.extend(n.all());
        }
        out
    }

    /// The first md node in the stack, if any.
    pub fn md(&self) -> Option<&DeviceNode> {
        self.all()
            .into_iter()
            .find(|n| matches!(n.kind, DeviceKind::Md { .. }))
    }

    /// A one-line chain like `loop0 -> vda` or `md0 -> nvme0n1 + nvme1n1 + ...`.
    pub fn chain(&self) -> String {
        if self.below.is_empty() {
            return self.name.clone();
        }
        let below: Vec<String> = self.below.iter().map(DeviceNode::chain).collect();
        format!("{} -> {}", self.name, below.join(" + "))
    }
}

/// Finds the kernel name of block device `major:minor`: the live `/sys/dev/block` link when
/// present, else a scan of `/sys/block/*/dev` and partitions (fixtures need no symlinks).
pub fn name_for_dev(root: &SysRoot, major: u32, minor: u32) -> Option<String> {
    let want = format!("{major}:{minor}");
    if let Ok(target) = std::fs::read_link(root.path(&format!("/sys/dev/block/{want}"))) {
        if let Some(name) = target.file_name() {
            return Some(name.to_string_lossy().into_owned());
        }
    }
    for disk in root.list("/sys/block") {
        if root.read(&format!("/sys/block/{disk}/dev")).as_deref() == Some(want.as_str()) {
            return Some(disk);
        }
        for part in partitions_of(root, &disk) {
            if root
                .read(&format!("/sys/block/{disk}/{part}/dev"))
                .as_deref()
                == Some(&want)
            {
                return Some(part);
            }
        }
    }
    None
}

fn partitions_of(root: &SysRoot, disk: &str) -> Vec<String> {
    root.list(&format!("/sys/block/{disk}"))
        .into_iter()
        .filter(|e| root.exists(&format!("/sys/block/{disk}/{e}/partition")))
        .collect()
}

/// The disk a partition belongs to, if `name` is a partition.
fn disk_of_partition(root: &SysRoot, name: &str) -> Option<String> {
    root.list("/sys/block")
        .into_iter()
        .find(|disk| root.exists(&format!("/sys/block/{disk}/{name}/partition")))
}

/// Builds the stack below block device `name`. `live` tells whether paths (loop backing files)
/// can be stat()ed on this machine.
pub fn walk(root: &SysRoot, name: &str) -> DeviceNode {
    walk_depth(root, name, 0)
}

fn walk_depth(root: &SysRoot, name: &str, depth: usize) -> DeviceNode {
    if let Some(disk) = disk_of_partition(root, name) {
        let base = format!("/sys/block/{disk}/{name}");
        let below = if depth < MAX_DEPTH {
            vec![walk_depth(root, &disk, depth + 1)]
        } else {
            Vec::new()
        };
        return DeviceNode {
            name: name.to_string(),
            dev: root.read(&format!("{base}/dev")),
            size_bytes: root.read_u64(&format!("{base}/size")).map(|s| s * 512),
            kind: DeviceKind::Partition {
                start_sector: root.read_u64(&format!("{base}/start")).unwrap_or(0),
                size_sectors: root.read_u64(&format!("{base}/size")),
                alignment_offset_bytes: root.read_u64(&format!("{base}/alignment_offset")),
            },
            queue: QueueFacts::read(root, &disk),
            below,
        };
    }
    let base = format!("/sys/block/{name}");
    let (kind, below_names_or_nodes) = classify(root, name, depth);
    DeviceNode {
        name: name.to_string(),
        dev: root.read(&format!("{base}/dev")),
        size_bytes: root.read_u64(&format!("{base}/size")).map(|s| s * 512),
        kind,
        queue: QueueFacts::read(root, name),
        below: below_names_or_nodes,
    }
}

fn classify(root: &SysRoot, name: &str, depth: usize) -> (DeviceKind, Vec<DeviceNode>) {
    let base = format!("/sys/block/{name}");
    let slaves: Vec<DeviceNode> = if depth < MAX_DEPTH {
        root.list(&format!("{base}/slaves"))
            .iter()
            .map(|s| walk_depth(root, s, depth + 1))
            .collect()
    } else {
        Vec::new()
    };
    if root.exists(&format!("{base}/loop")) {
        let backing_file = root.read(&format!("{base}/loop/backing_file"));
        let (backing_fs_type, below) = match &backing_file {
            Some(file) if depth < MAX_DEPTH => backing_device(root, file, depth),
            _ => (None, Vec::new()),
        };
        let kind = DeviceKind::Loop {
            backing_file,
            direct_io: root.read_u64(&format!("{base}/loop/dio")).map(|v| v != 0),
            offset_bytes: root.read_u64(&format!("{base}/loop/offset")),
            backing_fs_type,
        };
        return (kind, below);
    }
    if root.exists(&format!("{base}/md")) {
        let kind = DeviceKind::Md {
            level: root.read(&format!("{base}/md/level")),
            chunk_bytes: root.read_u64(&format!("{base}/md/chunk_size")),
            raid_disks: root.read_u64(&format!("{base}/md/raid_disks")),
        };
        return (kind, slaves);
    }
    if root.exists(&format!("{base}/dm")) {
        let kind = DeviceKind::DeviceMapper {
            name: root.read(&format!("{base}/dm/name")),
            uuid: root.read(&format!("{base}/dm/uuid")),
        };
        return (kind, slaves);
    }
    if !slaves.is_empty() {
        return (DeviceKind::Stacked, slaves);
    }
    let transport = if name.starts_with("nvme") {
        "nvme"
    } else if name.starts_with("vd") {
        "virtio"
    } else if name.starts_with("sd") {
        "scsi"
    } else if name.starts_with("zram") || name.starts_with("ram") {
        "memory"
    } else {
        "unknown"
    };
    let kind = DeviceKind::Disk {
        model: root.read(&format!("{base}/device/model")),
        transport: transport.to_string(),
    };
    (kind, Vec::new())
}

/// The device holding a loop device's backing file, found through the mount that holds the
/// file: by its st_dev on a live root (exact, follows bind mounts), by the longest containing
/// mount point in a fixture. The `(deleted)` suffix sysfs appends to unlinked files is dropped.
fn backing_device(root: &SysRoot, file: &str, depth: usize) -> (Option<String>, Vec<DeviceNode>) {
    let file = file.trim_end_matches(" (deleted)");
    let dev = if root.is_live() {
        std::fs::metadata(file).ok().map(|m| {
            use std::os::unix::fs::MetadataExt;
            let d = m.dev();
            (libc::major(d), libc::minor(d))
        })
    } else {
        None
    };
    let mounts = read_mounts(root);
    let Some(mount) = mount_for(&mounts, file, dev) else {
        return (None, Vec::new());
    };
    let (major, minor) = dev.unwrap_or((mount.major, mount.minor));
    let name = name_for_dev(root, major, minor).or_else(|| {
        mount
            .source
            .strip_prefix("/dev/")
            .map(|s| s.rsplit('/').next().unwrap_or(s).to_string())
            .filter(|s| {
                root.exists(&format!("/sys/block/{s}")) || disk_of_partition(root, s).is_some()
            })
    });
    let below = name
        .map(|n| vec![walk_depth(root, &n, depth + 1)])
        .unwrap_or_default();
    (Some(mount.fs_type), below)
}
