//! The doctor's checklist: each check reads [`PathFacts`] and says PASS, WARN or FAIL, with the
//! evidence (the numbers it looked at, and where they came from) and the fix.
//!
//! The checks follow the pitfalls of ScyllaDB's disk articles: a filesystem block smaller than the media's physical
//! sector forces read-modify-write on every misaligned request (1 KiB XFS on 4 KiB NVMe cost
//! ScyllaDB a large share of write throughput); firmware that reports 512 B physical sectors on a
//! 4 KiB drive misleads every tool that trusts it; a filesystem whose stripe geometry does not
//! match the RAID chunk splits requests at chunk boundaries.

use serde::Serialize;

use crate::facts::PathFacts;
use crate::stack::{DeviceKind, DeviceNode};

/// A check's verdict. Ordered so that `max()` is the worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    Pass,
    Warn,
    Fail,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        }
    }
}

/// One item of the checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable identifier, e.g. `fs.block_vs_physical_sector` (documented in docs/reference/probe.md).
    pub id: String,
    pub status: Status,
    /// What was found, in one sentence.
    pub summary: String,
    /// The facts behind the verdict, with their sources.
    pub evidence: String,
    /// What to do about it (absent for a PASS).
    pub fix: Option<String>,
}

fn finding(
    id: &str,
    status: Status,
    summary: String,
    evidence: String,
    fix: Option<String>,
) -> Finding {
    Finding {
        id: id.to_string(),
        status,
        summary,
        evidence,
        fix,
    }
}

/// The finding with this stable id (see docs/reference/probe.md), if the checks produced it.
pub fn find_finding<'a>(findings: &'a [Finding], id: &str) -> Option<&'a Finding> {
    findings.iter().find(|f| f.id == id)
}

/// Runs every check over `facts`, in a fixed order.
pub fn checks(facts: &PathFacts) -> Vec<Finding> {
    let mut out = vec![check_fs_type(facts)];
    out.extend(check_block_vs_physical(facts));
    out.extend(check_xfs_sector(facts));
    out.extend(check_xfs_allocation_groups(facts));
    out.extend(check_dio(facts));
    if let Some(stack) = &facts.stack {
        out.extend(check_leaves(stack));
        out.extend(check_partitions(stack));
        out.extend(check_loops(stack));
        out.extend(check_raid(facts, stack));
    }
    out.push(check_discard(facts));
    out.push(check_space(facts));
    out
}

/// The findings that need attention (WARN and FAIL), for callers such as `weir tune`'s
/// preflight that print problems only.
pub fn problems(facts: &PathFacts) -> Vec<Finding> {
    checks(facts)
        .into_iter()
        .filter(|f| f.status != Status::Pass)
        .collect()
}

/// The worst status among findings (PASS when empty).
pub fn worst(findings: &[Finding]) -> Status {
    findings
        .iter()
        .map(|f| f.status)
        .max()
        .unwrap_or(Status::Pass)
}

fn source_dev(facts: &PathFacts) -> String {
    facts
        .filesystem
        .source
        .clone()
        .unwrap_or_else(|| "<device>".to_string())
}

fn check_fs_type(facts: &PathFacts) -> Finding {
    let t = facts.filesystem.fs_type.as_str();
    let ev = format!(
        "statfs type {} (magic {:#x}) mounted at {} from {}",
        t,
        facts.filesystem.fs_magic,
        facts.filesystem.mount_point.as_deref().unwrap_or("?"),
        facts.filesystem.source.as_deref().unwrap_or("?")
    );
    let src = source_dev(facts);
    let reformat = if src.starts_with("/dev/") {
        format!("put the data directory on XFS: mkfs.xfs -b size=4096 {src} (destroys its data), then `weir qualify DIR`")
    } else {
        "move the data directory to a disk-backed XFS filesystem (mkfs.xfs -b size=4096 <device>), then `weir qualify DIR`".to_string()
    };
    match t {
        "xfs" => finding(
            "fs.type",
            Status::Pass,
            "XFS: the filesystem with working asynchronous appending direct writes".into(),
            ev,
            None,
        ),
        "ext4" | "btrfs" => finding(
            "fs.type",
            Status::Warn,
            format!("{t} serializes size-changing direct writes: appending AIO writes block the submitter"),
            ev,
            Some(reformat),
        ),
        "tmpfs" => finding(
            "fs.type",
            Status::Fail,
            "tmpfs is memory, not a disk: direct I/O goes to the page cache and data is lost at reboot".into(),
            ev,
            Some("point weir at a directory on a disk-backed XFS filesystem".into()),
        ),
        _ => finding(
            "fs.type",
            Status::Warn,
            format!("{t} is not a filesystem weir has qualified for asynchronous direct I/O"),
            ev,
            Some(reformat),
        ),
    }
}

fn mkfs_fix(facts: &PathFacts, block_bytes: u64) -> String {
    let dev = source_dev(facts);
    match facts.filesystem.fs_type.as_str() {
        "ext4" => format!("mkfs.ext4 -b {block_bytes} {dev}   (reformat: destroys the data on {dev})"),
        _ => format!(
            "mkfs.xfs -f -b size={block_bytes} -s size={block_bytes} {dev}   (reformat: destroys the data on {dev})"
        ),
    }
}

fn leaf_list(facts: &PathFacts) -> String {
    facts
        .leaves()
        .iter()
        .map(|l| {
            format!(
                "{} physical {} B logical {} B",
                l.name,
                opt(l.queue.physical_block_bytes),
                opt(l.queue.logical_block_bytes)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "?".to_string(), |v| v.to_string())
}

fn check_block_vs_physical(facts: &PathFacts) -> Option<Finding> {
    facts.stack.as_ref()?;
    let block = facts.filesystem.block_bytes;
    let Some(phys) = facts.leaf_physical_block_bytes() else {
        return Some(finding(
            "fs.block_vs_physical_sector",
            Status::Warn,
            "the leaf devices' physical sector size is unknown".into(),
            format!("stack {}; no queue/physical_block_size", chain(facts)),
            Some("check /sys/block/<leaf>/queue/physical_block_size".into()),
        ));
    };
    let ev = format!(
        "filesystem block {block} B (statfs); stack {}; leaves: {}",
        chain(facts),
        leaf_list(facts)
    );
    if block < phys {
        Some(finding(
            "fs.block_vs_physical_sector",
            Status::Fail,
            format!(
                "filesystem block {block} B is smaller than the {phys} B physical sector: \
                 requests land {block} B-aligned and the drive does read-modify-write on their head and tail"
            ),
            ev,
            Some(mkfs_fix(facts, phys)),
        ))
    } else {
        Some(finding(
            "fs.block_vs_physical_sector",
            Status::Pass,
            format!("filesystem block {block} B is a multiple of the {phys} B physical sector"),
            ev,
            None,
        ))
    }
}

fn chain(facts: &PathFacts) -> String {
    facts
        .stack
        .as_ref()
        .map_or_else(|| "none".to_string(), DeviceNode::chain)
}

fn check_xfs_sector(facts: &PathFacts) -> Option<Finding> {
    let g = facts.filesystem.xfs.as_ref()?;
    let phys = facts.leaf_physical_block_bytes()?;
    let ev = format!(
        "XFS sectsz {} B, log sectsz {} B (XFS_IOC_FSGEOMETRY); leaf physical sector {phys} B",
        g.sector_bytes, g.log_sector_bytes
    );
    let small = u64::from(g.sector_bytes) < phys;
    Some(finding(
        "xfs.sector_size",
        if small { Status::Warn } else { Status::Pass },
        if small {
            format!(
                "XFS metadata and log sector {} B is below the {phys} B physical sector",
                g.sector_bytes
            )
        } else {
            "XFS sector size matches the physical sector".into()
        },
        ev,
        small.then(|| mkfs_fix(facts, phys.max(u64::from(g.block_bytes)))),
    ))
}

fn check_xfs_allocation_groups(facts: &PathFacts) -> Option<Finding> {
    let g = facts.filesystem.xfs.as_ref()?;
    let ag_bytes = u64::from(g.ag_blocks) * u64::from(g.block_bytes);
    let ev = format!(
        "agcount {} x agsize {} blocks ({} MiB each), block {} B",
        g.ag_count,
        g.ag_blocks,
        ag_bytes >> 20,
        g.block_bytes
    );
    let few = g.ag_count < 2;
    Some(finding(
        "xfs.allocation_groups",
        if few { Status::Warn } else { Status::Pass },
        if few {
            "one allocation group: every extent allocation in the filesystem contends for one lock"
                .into()
        } else {
            format!(
                "{} allocation groups: extent allocation can proceed in parallel",
                g.ag_count
            )
        },
        ev,
        few.then(|| format!("mkfs.xfs -d agcount=4 {}", source_dev(facts))),
    ))
}

fn check_dio(facts: &PathFacts) -> Vec<Finding> {
    let Some(d) = &facts.dio else {
        let why = facts
            .notes
            .first()
            .cloned()
            .unwrap_or_else(|| "no answer".into());
        return vec![finding(
            "dio.alignment",
            Status::Warn,
            "direct-I/O alignment unknown".into(),
            why,
            Some("run as a user that may create files in the directory".into()),
        )];
    };
    let ev = format!(
        "offset/length alignment {} B, buffer alignment {} B (from {})",
        d.offset_align_bytes, d.mem_align_bytes, d.source
    );
    if d.source != "statx" {
        return vec![finding(
            "dio.alignment",
            Status::Warn,
            "the filesystem does not report its direct-I/O alignment (statx STATX_DIOALIGN, Linux 6.1+)".into(),
            ev,
            Some("use the physical sector size as the request alignment".into()),
        )];
    }
    let phys = facts.leaf_physical_block_bytes().unwrap_or(0);
    let summary = if u64::from(d.offset_align_bytes) < phys {
        format!(
            "direct I/O accepts {} B-aligned requests, but writes below the {phys} B physical sector cost a read-modify-write: issue {phys} B-aligned requests",
            d.offset_align_bytes
        )
    } else {
        format!(
            "direct I/O needs {} B-aligned offsets and lengths",
            d.offset_align_bytes
        )
    };
    vec![finding("dio.alignment", Status::Pass, summary, ev, None)]
}

fn check_leaves(stack: &DeviceNode) -> Vec<Finding> {
    let mut out = Vec::new();
    for leaf in stack.leaves() {
        out.extend(check_leaf_sector(leaf));
        out.extend(check_leaf_queue(leaf));
    }
    out
}

fn check_leaf_sector(leaf: &DeviceNode) -> Option<Finding> {
    let q = &leaf.queue;
    let phys = q.physical_block_bytes?;
    let min_io = q.minimum_io_bytes.unwrap_or(phys);
    let is_nvme = matches!(&leaf.kind, DeviceKind::Disk { transport, .. } if transport == "nvme");
    let id = format!("device.{}.physical_sector", leaf.name);
    let ev = format!(
        "/sys/block/{}/queue: logical {} B, physical {phys} B, minimum_io {} B, optimal_io {} B",
        leaf.name,
        opt(q.logical_block_bytes),
        opt(q.minimum_io_bytes),
        opt(q.optimal_io_bytes)
    );
    let measure = format!(
        "measure instead of trusting firmware: compare 512 B and 4 KiB random writes on {} \
         (fio --filename=/dev/{} --direct=1 --rw=randwrite --bs=512 vs --bs=4k, read-only test: --rw=randread); \
         if 4 KiB wins, format with -b size=4096 -s size=4096",
        leaf.name, leaf.name
    );
    if phys < 4096 && min_io > phys {
        return Some(finding(
            &id,
            Status::Warn,
            format!("{} reports a {phys} B physical sector but prefers {min_io} B requests (minimum_io_size): the physical sector is likely misreported", leaf.name),
            ev,
            Some(measure),
        ));
    }
    if phys < 4096 && is_nvme {
        return Some(finding(
            &id,
            Status::Warn,
            format!("NVMe drive {} reports a {phys} B physical sector; modern NVMe is 4 KiB-optimized and some firmware misreports it (seen: 25% fewer read and 42% fewer write IOPS measured at 512 B)", leaf.name),
            ev,
            Some(measure),
        ));
    }
    Some(finding(
        &id,
        Status::Pass,
        format!("{} physical sector {phys} B", leaf.name),
        ev,
        None,
    ))
}

fn check_leaf_queue(leaf: &DeviceNode) -> Vec<Finding> {
    let q = &leaf.queue;
    let mut out = Vec::new();
    let name = &leaf.name;
    if let (Some(sched), Some(false)) = (&q.scheduler, q.rotational) {
        let ok = sched == "none";
        out.push(finding(
            &format!("device.{name}.scheduler"),
            if ok { Status::Pass } else { Status::Warn },
            if ok {
                "no kernel I/O scheduler on a solid-state device: weir's own scheduler decides the order".into()
            } else {
                format!("kernel scheduler {sched} on a solid-state device reorders and delays requests under weir's own scheduler")
            },
            format!("/sys/block/{name}/queue/scheduler [{sched}], rotational 0"),
            (!ok).then(|| format!("echo none > /sys/block/{name}/queue/scheduler (persist with a udev rule)")),
        ));
    }
    if q.rotational == Some(true) {
        out.push(finding(
            &format!("device.{name}.rotational"),
            Status::Warn,
            format!("{name} says it is rotational: random I/O costs a seek (or a virtual disk does not say it is solid-state)"),
            format!("/sys/block/{name}/queue/rotational 1"),
            Some("expect seek-bound random IOPS; `weir tune` measures the real figures".into()),
        ));
    }
    if let Some(nr) = q.nr_requests {
        let low = nr < 32;
        out.push(finding(
            &format!("device.{name}.nr_requests"),
            if low { Status::Warn } else { Status::Pass },
            format!("{nr} requests may queue per hardware queue"),
            format!(
                "/sys/block/{name}/queue/nr_requests {nr}, nomerges {}, max_sectors_kb {}",
                opt(q.nomerges),
                opt(q.max_sectors_kb)
            ),
            low.then(|| format!("echo 256 > /sys/block/{name}/queue/nr_requests")),
        ));
    }
    if let Some(wc) = &q.write_cache {
        out.push(finding(
            &format!("device.{name}.write_cache"),
            Status::Pass,
            if wc == "write back" {
                "volatile write cache: O_DSYNC writes and fdatasync send cache flushes".into()
            } else {
                "write-through cache: each write is durable when it completes".into()
            },
            format!("/sys/block/{name}/queue/write_cache {wc}"),
            None,
        ));
    }
    out
}

fn check_partitions(stack: &DeviceNode) -> Vec<Finding> {
    let mut out = Vec::new();
    for node in stack.all() {
        let DeviceKind::Partition {
            start_sector,
            alignment_offset_bytes,
            ..
        } = &node.kind
        else {
            continue;
        };
        let start_bytes = start_sector * 512;
        let phys = node.queue.physical_block_bytes.unwrap_or(512);
        let opt_io = node.queue.optimal_io_bytes.unwrap_or(0);
        let misaligned = start_bytes % phys != 0 || alignment_offset_bytes.unwrap_or(0) != 0;
        let off_opt = opt_io > 0 && start_bytes % opt_io != 0;
        let status = if misaligned {
            Status::Fail
        } else if off_opt {
            Status::Warn
        } else {
            Status::Pass
        };
        out.push(finding(
            &format!("partition.{}.alignment", node.name),
            status,
            match status {
                Status::Fail => format!("partition {} starts off the {phys} B physical sector: every request straddles two sectors", node.name),
                Status::Warn => format!("partition {} starts off the {opt_io} B optimal I/O boundary", node.name),
                Status::Pass => format!("partition {} starts on a {phys} B boundary", node.name),
            },
            format!(
                "start sector {start_sector} ({start_bytes} B), alignment_offset {} B, physical {phys} B, optimal_io {opt_io} B",
                opt(*alignment_offset_bytes)
            ),
            (status != Status::Pass).then(|| "recreate the partition on a 1 MiB boundary: parted -a optimal (destroys data)".to_string()),
        ));
    }
    out
}

fn check_loops(stack: &DeviceNode) -> Vec<Finding> {
    let mut out = Vec::new();
    for node in stack.all() {
        let DeviceKind::Loop {
            backing_file,
            direct_io,
            backing_fs_type,
            ..
        } = &node.kind
        else {
            continue;
        };
        let dio = direct_io.unwrap_or(false);
        out.push(finding(
            &format!("loop.{}.direct_io", node.name),
            if dio { Status::Pass } else { Status::Warn },
            if dio {
                format!("loop device {} writes its backing file with direct I/O: requests reach the device below at the same offsets", node.name)
            } else {
                format!("loop device {} writes its backing file through the page cache: direct I/O above it is not direct at the disk", node.name)
            },
            format!(
                "backing file {} on {} (dio {})",
                backing_file.as_deref().unwrap_or("?"),
                backing_fs_type.as_deref().unwrap_or("?"),
                u8::from(dio)
            ),
            (!dio).then(|| format!("losetup --direct-io=on {}", backing_file.as_deref().unwrap_or("FILE"))),
        ));
    }
    out
}

/// Data-bearing members per stripe for an md level.
fn data_disks(level: &str, members: u64) -> Option<u64> {
    match level {
        "raid0" => Some(members),
        "raid4" | "raid5" => members.checked_sub(1),
        "raid6" => members.checked_sub(2),
        "raid10" => Some(members / 2),
        _ => None,
    }
}

fn check_raid(facts: &PathFacts, stack: &DeviceNode) -> Vec<Finding> {
    let Some(md) = stack.md() else {
        return Vec::new();
    };
    let DeviceKind::Md {
        level,
        chunk_bytes,
        raid_disks,
    } = &md.kind
    else {
        return Vec::new();
    };
    let level = level.clone().unwrap_or_else(|| "?".into());
    let members = raid_disks.unwrap_or(md.below.len() as u64);
    let chunk = chunk_bytes.unwrap_or(0);
    let data = data_disks(&level, members);
    let mut ev = format!(
        "/sys/block/{}/md: level {level}, chunk {} KiB, {members} members ({})",
        md.name,
        chunk >> 10,
        md.below
            .iter()
            .map(|n| n.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let (Some(data), true) = (data, chunk > 0) else {
        return vec![finding(
            "raid.stripe_alignment",
            Status::Pass,
            format!("md {level}: no striping to align to"),
            ev,
            None,
        )];
    };
    let want_width = chunk * data;
    let fix = format!(
        "mkfs.xfs -f -b size=4096 -d su={}k,sw={data} {}   (reformat: destroys data)",
        chunk >> 10,
        source_dev(facts)
    );
    let Some(g) = &facts.filesystem.xfs else {
        ev.push_str(&format!("; filesystem {}", facts.filesystem.fs_type));
        return vec![finding(
            "raid.stripe_alignment",
            Status::Warn,
            format!(
                "cannot read the {} stripe geometry; it should be stripe unit {} KiB x {data}",
                facts.filesystem.fs_type,
                chunk >> 10
            ),
            ev,
            Some(format!(
                "mkfs.ext4 -E stride={},stripe_width={} (in filesystem blocks)",
                chunk / facts.filesystem.block_bytes.max(1),
                want_width / facts.filesystem.block_bytes.max(1)
            )),
        )];
    };
    ev.push_str(&format!(
        "; XFS sunit {} B, swidth {} B",
        g.sunit_bytes(),
        g.swidth_bytes()
    ));
    let ok = g.sunit_bytes() == chunk && g.swidth_bytes() == want_width;
    vec![finding(
        "raid.stripe_alignment",
        if ok { Status::Pass } else { Status::Warn },
        if ok {
            format!("XFS stripe unit {} KiB x {data} matches the md chunk and data members: files start on stripe boundaries", chunk >> 10)
        } else {
            format!("XFS stripe geometry does not match md {level} (chunk {} KiB x {data} data members): requests straddle chunk boundaries and split", chunk >> 10)
        },
        ev,
        (!ok).then_some(fix),
    )]
}

fn check_discard(facts: &PathFacts) -> Finding {
    let supports = facts.leaves().iter().any(|l| l.queue.supports_discard());
    let online = facts
        .filesystem
        .mount_options
        .iter()
        .chain(facts.filesystem.super_options.iter())
        .any(|o| o.split(',').any(|x| x == "discard"));
    let timer = facts.fstrim_timer_enabled;
    let ev = format!(
        "leaf discard support {}; mount option discard {}; fstrim.timer {}",
        if supports { "yes" } else { "no" },
        if online { "set" } else { "not set" },
        match timer {
            Some(true) => "enabled",
            Some(false) => "disabled",
            None => "unknown (no systemd)",
        }
    );
    let (status, summary, fix) = if !supports {
        (
            Status::Pass,
            "the devices do not accept discard: nothing to trim".to_string(),
            None,
        )
    } else if online {
        (
            Status::Pass,
            "online discard: freed blocks are trimmed as they are freed, in small batches"
                .to_string(),
            None,
        )
    } else if timer == Some(true) {
        (
            Status::Warn,
            "periodic fstrim: a week of freed space is trimmed at once, which stalled older NVMe controllers for seconds".to_string(),
            Some("run fstrim at a quiet hour (systemctl edit fstrim.timer), or mount with -o discard".to_string()),
        )
    } else {
        (
            Status::Warn,
            "freed blocks are never trimmed: the drive's garbage collection slows writes as it fills".to_string(),
            Some("systemctl enable --now fstrim.timer, or mount with -o discard".to_string()),
        )
    };
    finding("mount.discard", status, summary, ev, fix)
}

fn check_space(facts: &PathFacts) -> Finding {
    let s = facts.space;
    let pct = if s.total_bytes > 0 {
        s.avail_bytes as f64 * 100.0 / s.total_bytes as f64
    } else {
        0.0
    };
    let low = pct < 10.0;
    finding(
        "fs.free_space",
        if low { Status::Warn } else { Status::Pass },
        format!("{pct:.1}% free"),
        format!(
            "{} MiB available of {} MiB (statfs)",
            s.avail_bytes >> 20,
            s.total_bytes >> 20
        ),
        low.then(|| {
            "free space: a nearly full filesystem fragments new files into many extents".to_string()
        }),
    )
}
