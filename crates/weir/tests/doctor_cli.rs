//! `weir doctor` end to end: fixture trees, a real loop-mounted 1 KiB XFS, and bad input.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{text, weir_with as weir};
use weir_testfs::{require_root, require_root_with, TestFs};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../weir-probe/tests/fixtures")
        .join(name)
}

fn finding<'a>(doc: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    doc["findings"]
        .as_array()
        .and_then(|a| a.iter().find(|f| f["id"] == id))
        .unwrap_or_else(|| panic!("no finding {id} in {doc:#}"))
}

#[test]
fn fixture_md_raid0_fails_the_1k_block_and_exits_1() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = fixture("md-raid0-4nvme");
    let o = weir(&[
        "doctor",
        "--json",
        "--root",
        root.to_str().expect("utf8"),
        tmp.path().to_str().expect("utf8"),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "stdout {out}\nstderr {err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(doc["worst"], "FAIL");
    assert_eq!(
        finding(&doc, "fs.block_vs_physical_sector")["status"],
        "FAIL"
    );
    assert_eq!(finding(&doc, "raid.stripe_alignment")["status"], "PASS");
    assert_eq!(doc["facts"]["stack"]["kind"], "md");
    assert_eq!(doc["facts"]["stack"]["chunk_bytes"], 1048576);
    assert!(err.contains("FAIL"), "{err}");
}

#[test]
fn fixture_nvme_512_text_report_warns() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = fixture("nvme-512-physical");
    let o = weir(&[
        "doctor",
        "--root",
        root.to_str().expect("utf8"),
        tmp.path().to_str().expect("utf8"),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stdout {out}\nstderr {err}");
    assert!(
        out.contains("WARN  device.nvme0n1.physical_sector"),
        "{out}"
    );
    assert!(out.contains("device stack: nvme0n1p1 -> nvme0n1"), "{out}");
}

#[test]
fn live_1k_xfs_on_loop_fails_with_the_mkfs_fix() {
    let name = "live_1k_xfs_on_loop_fails";
    let Some(root) = require_root_with(name, &["mkfs.xfs"]) else {
        return;
    };
    let fs = TestFs::xfs(&root, name, 1024).expect("xfs");
    let o = weir(&["doctor", fs.path().to_str().expect("utf8")]);
    let (out, err) = text(&o);
    let vda_phys =
        std::fs::read_to_string("/sys/block/vda/queue/physical_block_size").unwrap_or_default();
    if vda_phys.trim() != "4096" {
        eprintln!("SKIP-PART {name}: host disk is not 4 KiB-physical; report was:\n{out}");
        return;
    }
    assert_eq!(o.status.code(), Some(1), "stdout {out}\nstderr {err}");
    assert!(out.contains("FAIL  fs.block_vs_physical_sector"), "{out}");
    assert!(
        out.contains("mkfs.xfs -f -b size=4096 -s size=4096"),
        "{out}"
    );
}

#[test]
fn not_a_directory_is_a_usage_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("file");
    std::fs::write(&file, b"x").expect("write");
    for (arg, needle) in [
        (file.clone(), "not a directory"),
        (tmp.path().join("missing"), "no such directory"),
    ] {
        let o = weir(&["doctor", arg.to_str().expect("utf8")]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{arg:?}: {out} {err}");
        assert!(err.contains(needle), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn bad_fixture_root_is_a_clear_runtime_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let o = weir(&[
        "doctor",
        "--root",
        tmp.path().to_str().expect("utf8"),
        tmp.path().to_str().expect("utf8"),
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("fs.json"), "{err}");
}

#[test]
fn no_permission_is_a_usage_error_naming_the_cause() {
    let name = "no_permission_is_a_usage_error";
    if require_root(name).is_none() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let locked = tmp.path().join("locked");
    std::fs::create_dir(&locked).expect("mkdir");
    let inner = locked.join("data");
    std::fs::create_dir(&inner).expect("mkdir");
    set_mode(tmp.path(), 0o755);
    set_mode(&locked, 0o700);
    let o = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_weir"))
        .args(["doctor", inner.to_str().expect("utf8")])
        .output();
    let Ok(o) = o else {
        weir_testfs::skip(name, "setpriv is not available");
        return;
    };
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out} {err}");
    assert!(err.contains("permission denied"), "{err}");
}

fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

#[test]
fn read_only_directory_gives_partial_results_with_a_note() {
    let name = "doctor_read_only_dir";
    if require_root_with(name, &["setpriv"]).is_none() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    set_mode(tmp.path(), 0o755);
    let o = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_weir"))
        .args(["doctor", "--json", tmp.path().to_str().expect("utf8")])
        .output()
        .expect("run setpriv");
    let (out, err) = text(&o);
    let doc: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    let dio = finding(&doc, "dio.alignment");
    assert_eq!(dio["status"], "WARN", "{dio:#}");
    assert!(
        dio["evidence"].as_str().unwrap_or("").contains("EACCES"),
        "{dio:#}"
    );
    // Everything else is still checked.
    assert_eq!(
        finding(&doc, "fs.block_vs_physical_sector")["status"],
        "PASS"
    );
}
