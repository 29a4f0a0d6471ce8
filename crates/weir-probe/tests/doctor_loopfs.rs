//! The probe and doctor on real loop-mounted filesystems (root only; skipped with a printed
//! reason otherwise). The images live in /tmp, so the loop devices' backing files sit on the
//! host disk and the walk goes loop -> that disk.

use weir_probe::doctor::{checks, find_finding, Finding, Status};
use weir_probe::{probe_path, DeviceKind};
use weir_testfs::{require_root_with, FsKind, TestFs, TestFsOptions};

fn find<'a>(findings: &'a [Finding], id: &str) -> &'a Finding {
    find_finding(findings, id).unwrap_or_else(|| panic!("no finding {id} in {findings:#?}"))
}

#[test]
fn xfs_1k_over_4k_physical_backing_device_fails() {
    let name = "xfs_1k_over_4k_physical_backing_device_fails";
    let Some(root) = require_root_with(name, &["mkfs.xfs"]) else {
        return;
    };
    let fs = TestFs::xfs(&root, name, 1024).expect("xfs 1k");
    let facts = probe_path(fs.path()).expect("probe");
    let stack = facts.stack.as_ref().expect("stack");
    assert!(
        matches!(
            stack.kind,
            DeviceKind::Loop {
                direct_io: Some(true),
                ..
            }
        ),
        "{stack:#?}"
    );
    assert!(
        !stack.below.is_empty(),
        "loop backing device not found: {facts:#?}"
    );
    let phys = facts.leaf_physical_block_bytes().expect("leaf physical");
    let findings = checks(&facts);
    let block = find(&findings, "fs.block_vs_physical_sector");
    if phys < 2048 {
        // The host disk under /tmp reports small physical sectors: the article's setup cannot be
        // reproduced here, and the doctor must not invent a FAIL.
        eprintln!("SKIP-PART {name}: /tmp's device reports {phys} B physical sectors; asserting PASS instead");
        assert_eq!(block.status, Status::Pass);
        return;
    }
    assert_eq!(block.status, Status::Fail, "{block:#?}");
    let fix = block.fix.as_deref().expect("fix");
    assert!(fix.contains(&format!("-b size={phys}")), "{fix}");
    let g = facts.filesystem.xfs.as_ref().expect("xfs geometry");
    assert_eq!(g.block_bytes, 1024);
    // The evidence names the leaf that decided it, below the loop device.
    assert!(
        block.evidence.contains(&format!("physical {phys} B")),
        "{block:#?}"
    );
}

#[test]
fn xfs_4k_passes_the_block_check_and_reports_stripe_geometry() {
    let name = "xfs_4k_passes_the_block_check";
    let Some(root) = require_root_with(name, &["mkfs.xfs"]) else {
        return;
    };
    let opts = TestFsOptions::new(FsKind::Xfs { block_bytes: 4096 })
        .direct_io(true)
        .mkfs_arg("-d")
        .mkfs_arg("su=64k,sw=4")
        .size_bytes(1 << 30);
    let fs = TestFs::create(&root, name, &opts).expect("xfs 4k");
    let facts = probe_path(fs.path()).expect("probe");
    let g = facts.filesystem.xfs.as_ref().expect("xfs geometry");
    assert_eq!(
        (g.block_bytes, g.sunit_bytes(), g.swidth_bytes()),
        (4096, 64 << 10, 256 << 10)
    );
    let findings = checks(&facts);
    assert_eq!(find(&findings, "fs.type").status, Status::Pass);
    assert_eq!(
        find(&findings, "fs.block_vs_physical_sector").status,
        Status::Pass
    );
    let loop_name = fs
        .loop_device()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .expect("loop name");
    assert_eq!(
        find(&findings, &format!("loop.{loop_name}.direct_io")).status,
        Status::Pass
    );
    assert_eq!(facts.dio.as_ref().map(|d| d.source.as_str()), Some("statx"));
}

#[test]
fn ext4_warns_on_type_and_buffered_loop_warns() {
    let name = "ext4_warns_on_type";
    let Some(root) = require_root_with(name, &["mkfs.ext4"]) else {
        return;
    };
    let opts = TestFsOptions::new(FsKind::Ext4 { block_bytes: 4096 });
    let fs = TestFs::create(&root, name, &opts).expect("ext4");
    let facts = probe_path(fs.path()).expect("probe");
    assert_eq!(facts.filesystem.fs_type, "ext4");
    let findings = checks(&facts);
    assert_eq!(find(&findings, "fs.type").status, Status::Warn);
    let loop_name = fs
        .loop_device()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .expect("loop name");
    let lp = find(&findings, &format!("loop.{loop_name}.direct_io"));
    assert_eq!(lp.status, Status::Warn, "{lp:#?}");
    assert!(lp.fix.as_deref().unwrap_or("").contains("--direct-io=on"));
}

#[test]
fn tmpfs_fails_the_type_check_and_has_no_stack() {
    let name = "tmpfs_fails_the_type_check";
    let Some(root) = require_root_with(name, &[]) else {
        return;
    };
    let fs = TestFs::tmpfs(&root, name).expect("tmpfs");
    let facts = probe_path(fs.path()).expect("probe");
    assert!(facts.stack.is_none());
    let findings = checks(&facts);
    assert_eq!(find(&findings, "fs.type").status, Status::Fail);
}
