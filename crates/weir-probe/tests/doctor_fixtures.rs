//! The doctor against recorded machines (fixture sysfs/procfs trees): machines this test host
//! does not have, read through exactly the production code.

use std::path::PathBuf;

use weir_probe::doctor::{checks, find_finding, Finding, Status};
use weir_probe::{describe, probe_path_in, DeviceKind, FsSnapshot, PathFacts, SysRoot};

fn fixture(name: &str) -> SysRoot {
    SysRoot::at(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
}

fn load(name: &str) -> (SysRoot, FsSnapshot) {
    let root = fixture(name);
    let text = std::fs::read_to_string(root.path("/fs.json")).expect("fs.json");
    (root, serde_json::from_str(&text).expect("fs.json parses"))
}

fn find<'a>(findings: &'a [Finding], id: &str) -> &'a Finding {
    find_finding(findings, id).unwrap_or_else(|| panic!("no finding {id} in {findings:#?}"))
}

#[test]
fn md_raid0_stack_is_walked_to_four_nvme_leaves() {
    let root = fixture("md-raid0-4nvme");
    let facts = probe_path_in(std::path::Path::new("/ignored"), &root).expect("probe");
    let stack = facts.stack.as_ref().expect("stack");
    assert_eq!(stack.name, "md0");
    assert_eq!(
        stack.chain(),
        "md0 -> nvme0n1 + nvme1n1 + nvme2n1 + nvme3n1"
    );
    match &stack.kind {
        DeviceKind::Md {
            level,
            chunk_bytes,
            raid_disks,
        } => {
            assert_eq!(level.as_deref(), Some("raid0"));
            assert_eq!(*chunk_bytes, Some(1 << 20));
            assert_eq!(*raid_disks, Some(4));
        }
        other => panic!("md0 classified as {other:?}"),
    }
    assert_eq!(facts.leaves().len(), 4);
    assert_eq!(facts.leaf_physical_block_bytes(), Some(4096));
    assert_eq!(
        facts.filesystem.mount_point.as_deref(),
        Some("/var/lib/scylla")
    );
    assert_eq!(facts.filesystem.fs_type, "xfs");
}

#[test]
fn md_raid0_with_1k_xfs_fails_block_size_and_passes_stripe_alignment() {
    let root = fixture("md-raid0-4nvme");
    let facts = probe_path_in(std::path::Path::new("/ignored"), &root).expect("probe");
    let findings = checks(&facts);
    let block = find(&findings, "fs.block_vs_physical_sector");
    assert_eq!(block.status, Status::Fail, "{block:#?}");
    let fix = block.fix.as_deref().expect("fix");
    assert!(
        fix.contains("mkfs.xfs") && fix.contains("-b size=4096") && fix.contains("/dev/md0"),
        "{fix}"
    );
    let raid = find(&findings, "raid.stripe_alignment");
    assert_eq!(raid.status, Status::Pass, "{raid:#?}");
    assert!(raid.evidence.contains("chunk 1024 KiB") && raid.evidence.contains("4 members"));
    // No fstrim timer and no discard mount option on discard-capable drives.
    assert_eq!(find(&findings, "mount.discard").status, Status::Warn);
    for i in 0..4 {
        let id = format!("device.nvme{i}n1.scheduler");
        assert_eq!(find(&findings, &id).status, Status::Pass);
    }
}

#[test]
fn stripe_geometry_mismatch_warns_with_mkfs_su_sw() {
    let (root, mut snap) = load("md-raid0-4nvme");
    let geometry = snap.xfs.as_mut().expect("xfs");
    geometry.block_bytes = 4096;
    geometry.sunit_blocks = 16; // 64 KiB: the mkfs default guess, not the 1 MiB chunk
    geometry.swidth_blocks = 64;
    snap.block_bytes = 4096;
    let findings = checks(&describe(&snap, &root));
    let raid = find(&findings, "raid.stripe_alignment");
    assert_eq!(raid.status, Status::Warn, "{raid:#?}");
    assert!(
        raid.fix.as_deref().unwrap_or("").contains("su=1024k,sw=4"),
        "{raid:#?}"
    );
    assert_eq!(
        find(&findings, "fs.block_vs_physical_sector").status,
        Status::Pass
    );
}

#[test]
fn nvme_reporting_512_physical_is_flagged_for_measurement() {
    let root = fixture("nvme-512-physical");
    let facts: PathFacts = probe_path_in(std::path::Path::new("/ignored"), &root).expect("probe");
    assert_eq!(
        facts.stack.as_ref().map(|s| s.chain()).as_deref(),
        Some("nvme0n1p1 -> nvme0n1")
    );
    let findings = checks(&facts);
    let sector = find(&findings, "device.nvme0n1.physical_sector");
    assert_eq!(sector.status, Status::Warn, "{sector:#?}");
    assert!(sector.fix.as_deref().unwrap_or("").contains("--bs=4k"));
    // The filesystem block (4 KiB) is not below what the firmware reports: no FAIL from a lie.
    assert_eq!(
        find(&findings, "fs.block_vs_physical_sector").status,
        Status::Pass
    );
    assert_eq!(
        find(&findings, "partition.nvme0n1p1.alignment").status,
        Status::Pass
    );
    // fstrim.timer enabled, no discard mount option: the periodic-trim warning.
    let discard = find(&findings, "mount.discard");
    assert_eq!(discard.status, Status::Warn);
    assert!(discard.summary.contains("periodic fstrim"));
}

#[test]
fn misaligned_partition_fails() {
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nvme-512-physical");
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_tree(&base, tmp.path());
    let start = tmp.path().join("sys/block/nvme0n1/nvme0n1p1/start");
    std::fs::write(&start, "63\n").expect("write start");
    std::fs::write(
        tmp.path()
            .join("sys/block/nvme0n1/queue/physical_block_size"),
        "4096\n",
    )
    .expect("write physical");
    let facts =
        probe_path_in(std::path::Path::new("/ignored"), &SysRoot::at(tmp.path())).expect("probe");
    let findings = checks(&facts);
    let part = find(&findings, "partition.nvme0n1p1.alignment");
    assert_eq!(part.status, Status::Fail, "{part:#?}");
    assert!(part.evidence.contains("start sector 63"));
}

#[test]
fn missing_fixture_snapshot_is_a_clear_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let err = probe_path_in(std::path::Path::new("/x"), &SysRoot::at(tmp.path()))
        .expect_err("no fs.json");
    assert!(err.to_string().contains("fs.json"), "{err}");
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let dest = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            std::fs::create_dir_all(&dest).expect("mkdir");
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).expect("copy");
        }
    }
}

#[test]
fn loop_backing_file_is_followed_to_a_partitioned_disk_by_mount_prefix() {
    let root = fixture("loop-on-partition");
    let facts = probe_path_in(std::path::Path::new("/ignored"), &root).expect("probe");
    let stack = facts.stack.as_ref().expect("stack");
    assert_eq!(stack.chain(), "loop0 -> sda1 -> sda");
    match &stack.kind {
        DeviceKind::Loop {
            backing_file,
            direct_io,
            backing_fs_type,
            ..
        } => {
            assert_eq!(backing_file.as_deref(), Some("/srv/images/data.img"));
            assert_eq!(*direct_io, Some(false));
            assert_eq!(backing_fs_type.as_deref(), Some("ext4"));
        }
        other => panic!("loop0 classified as {other:?}"),
    }
    let findings = checks(&facts);
    assert_eq!(
        find(&findings, "fs.block_vs_physical_sector").status,
        Status::Fail
    );
    assert_eq!(find(&findings, "loop.loop0.direct_io").status, Status::Warn);
    assert_eq!(
        find(&findings, "partition.sda1.alignment").status,
        Status::Pass
    );
    assert_eq!(find(&findings, "device.sda.scheduler").status, Status::Warn);
    // The probe file could not be created: partial result with the reason as evidence.
    let dio = find(&findings, "dio.alignment");
    assert_eq!(dio.status, Status::Warn);
    assert!(dio.evidence.contains("EACCES"), "{dio:#?}");
}
