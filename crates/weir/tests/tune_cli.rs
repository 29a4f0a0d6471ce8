//! `weir tune` end to end: bad input gives clear usage errors (exit 2), Ctrl-C removes the test
//! files (exit 1), and a short real run on a loop-mounted XFS writes an io-properties.yaml that
//! Seastar's format accepts. Root-only tests print SKIP and return when not root.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use weir_model::io_properties::IoProperties;
use weir_testfs::{require_root_with, FsKind, TestFs, TestFsOptions};

fn weir(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(args)
        .output()
        .expect("run weir")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn test_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".weir-tune-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_missing_directory_is_a_usage_error() {
    let o = weir(&["tune", "--dir", "/nonexistent/weir-tune-dir"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "stdout {out}\nstderr {err}");
    assert!(
        err.contains("/nonexistent/weir-tune-dir") && err.contains("no such directory"),
        "{err}"
    );
}

#[test]
fn a_too_short_duration_is_a_usage_error() {
    let o = weir(&["tune", "--dir", ".", "--duration", "1s"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--duration 1s"), "{err}");
}

#[test]
fn an_unwritable_properties_file_is_refused_before_measuring() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dir_arg = dir.path().to_str().expect("utf8");
    let started = Instant::now();
    let o = weir(&[
        "tune",
        "--dir",
        dir_arg,
        "--properties-file",
        "/nonexistent/weir-tune/io.yaml",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--properties-file /nonexistent/weir-tune/io.yaml: cannot write it")
            && err.contains("pass a writable path"),
        "{err}"
    );
    // Refused before the 30 s of measuring that the old order lost: a run that measured
    // first takes the whole default --duration (30 s), so anything shorter refused first,
    // however slow the machine (no bound on how fast the refusal is).
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "measured first ({:?})",
        started.elapsed()
    );
    assert!(test_files(dir.path()).is_empty());
}

#[test]
fn an_existing_properties_file_is_left_alone_by_the_check() {
    // The check opens the file to append: a tune that fails after it (here at the missing
    // --dir) leaves the operator's file as it was, not emptied.
    let dir = tempfile::tempdir().expect("tempdir");
    let yaml = dir.path().join("io.yaml");
    std::fs::write(&yaml, "disks: []\n").expect("write");
    let o = weir(&[
        "tune",
        "--dir",
        "/nonexistent/weir-tune-dir",
        "--properties-file",
        yaml.to_str().expect("utf8"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&yaml).expect("read"), "disks: []\n");
}

#[test]
fn tmpfs_is_refused_with_the_reason() {
    let Some(root) = require_root_with("tmpfs_is_refused_with_the_reason", &[]) else {
        return;
    };
    let fs = TestFs::tmpfs(&root, "tune-tmpfs").expect("tmpfs");
    let o = weir(&["tune", "--dir", fs.path().to_str().expect("utf8")]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("tmpfs") && err.contains("not a disk"), "{err}");
    assert!(test_files(fs.path()).is_empty());
}

#[test]
fn a_read_only_filesystem_is_refused() {
    let Some(root) = require_root_with("a_read_only_filesystem_is_refused", &["mkfs.xfs"]) else {
        return;
    };
    let opts = TestFsOptions::new(FsKind::Xfs { block_bytes: 4096 }).read_only(true);
    let fs = TestFs::create(&root, "tune-ro", &opts).expect("read-only xfs");
    let o = weir(&["tune", "--dir", fs.path().to_str().expect("utf8")]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("read-only"), "{err}");
}

#[test]
fn too_little_space_says_how_much_is_needed() {
    let Some(root) = require_root_with("too_little_space_says_how_much_is_needed", &["mkfs.xfs"])
    else {
        return;
    };
    let fs = TestFs::xfs(&root, "tune-small", 4096).expect("512 MiB xfs");
    let o = weir(&[
        "tune",
        "--dir",
        fs.path().to_str().expect("utf8"),
        "--shards",
        "2",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("needs at least 2.06 GiB") || err.contains("needs at least"),
        "{err}"
    );
    assert!(err.contains("free"), "{err}");
}

#[test]
#[cfg_attr(
    not(feature = "system-tests"),
    ignore = "system tier: cargo test --workspace --features weir/system-tests"
)]
fn ctrl_c_stops_the_run_and_removes_the_test_files() {
    let dir = tempfile::Builder::new()
        .prefix("weir-tune-sigint-")
        .tempdir_in("/var/tmp")
        .expect("tempdir in /var/tmp");
    let yaml = dir.path().join("io.yaml");
    let child = Command::new(env!("CARGO_BIN_EXE_weir"))
        .args([
            "tune",
            "--dir",
            dir.path().to_str().expect("utf8"),
            "--format",
            "json",
        ])
        .arg("--properties-file")
        .arg(&yaml)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn weir tune");
    // A wait, not a speed check: 60 s only bounds a tune that never starts (a loaded machine
    // may take seconds to start one).
    let start = Instant::now();
    while test_files(dir.path()).is_empty() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !test_files(dir.path()).is_empty(),
        "weir tune never created its test files"
    );
    // Let the load start, then interrupt it as Ctrl-C would.
    std::thread::sleep(Duration::from_millis(700));
    // SAFETY: plain kill(2) on our own child's pid.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(rc, 0);
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(
        test_files(dir.path()).is_empty(),
        "left behind: {:?}",
        test_files(dir.path())
    );
    assert!(
        !yaml.exists(),
        "an interrupted run must not write io-properties.yaml"
    );
}

#[test]
#[cfg_attr(
    not(feature = "system-tests"),
    ignore = "system tier: cargo test --workspace --features weir/system-tests"
)]
fn a_short_run_on_loop_xfs_writes_yaml_seastar_accepts() {
    let Some(root) = require_root_with(
        "a_short_run_on_loop_xfs_writes_yaml_seastar_accepts",
        &["mkfs.xfs"],
    ) else {
        return;
    };
    let opts = TestFsOptions::new(FsKind::Xfs { block_bytes: 4096 }).size_bytes(6 << 30);
    let fs = TestFs::create(&root, "tune-run", &opts).expect("6 GiB xfs");
    let mnt = fs.path().to_str().expect("utf8").to_string();
    let yaml = fs.path().join("io-properties.yaml");
    let o = weir(&[
        "tune",
        "--dir",
        &mnt,
        "--duration",
        "10s",
        "--shards",
        "2",
        "--format",
        "envfile",
        "--properties-file",
        yaml.to_str().expect("utf8"),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stdout {out}\nstderr {err}");
    assert!(
        out.starts_with("SEASTAR_IO=\"--io-properties-file=") && out.contains("io-properties.yaml"),
        "{out}"
    );
    let text = std::fs::read_to_string(&yaml).expect("yaml written");
    let props = IoProperties::parse(&text, "io-properties.yaml").expect("Seastar's format parses");
    let disk = &props.disks[0];
    assert_eq!(disk.mountpoints, vec![mnt.clone()], "{text}");
    assert!(disk.read_iops > 0 && disk.write_iops > 0, "{text}");
    assert!(
        disk.read_bytes_per_sec > 0 && disk.write_bytes_per_sec > 0,
        "{text}"
    );
    assert!(disk.physical_block_size_bytes.is_some(), "{text}");
    assert!(test_files(fs.path()).is_empty(), "test files left behind");
}

/// `--shards 0` is refused as `weir run` refuses it (it used to tune one shard silently and
/// write io-properties.yaml).
#[test]
fn zero_shards_is_refused_before_measuring() {
    let dir = tempfile::tempdir().expect("temp dir");
    let props = dir.path().join("p.yaml");
    let (d, p) = (
        dir.path().display().to_string(),
        props.display().to_string(),
    );
    let o = weir(&[
        "tune",
        "--duration",
        "5s",
        "--shards",
        "0",
        "--dir",
        &d,
        "--properties-file",
        &p,
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "stdout {out}\nstderr {err}");
    assert!(err.contains("--shards must be at least 1"), "{err}");
    assert!(!props.exists());
}

/// `--cross-check` measures each of the four figures again with weir's engine and with fio,
/// alternately, and records the pairs, the median ratio and the regime of each in the JSON;
/// its files are removed. A short tune and short runs
/// on a small data file keep it bounded (about 25 s); as root fio is installed by
/// scripts/install-deps.sh, so there it never skips.
#[test]
#[cfg_attr(
    not(feature = "system-tests"),
    ignore = "system tier: cargo test --workspace --features weir/system-tests"
)]
fn cross_check_compares_every_figure_with_fio() {
    let has_fio = Command::new("fio").arg("--version").output().is_ok();
    if !has_fio {
        // SAFETY: geteuid has no preconditions.
        assert_ne!(unsafe { libc::geteuid() }, 0, "fio missing as root");
        eprintln!("SKIP cross_check_compares_every_figure_with_fio: fio is not installed");
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("weir-tune-cross-check-")
        .tempdir_in("/var/tmp")
        .expect("tempdir in /var/tmp");
    let yaml = dir.path().join("io.yaml");
    let o = weir(&[
        "tune",
        "--dir",
        dir.path().to_str().expect("utf8"),
        "--duration",
        "10s",
        "--shards",
        "1",
        "--cross-check",
        "--cross-check-run",
        "250ms",
        "--format",
        "json",
        "--properties-file",
        yaml.to_str().expect("utf8"),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stdout {out}\nstderr {err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    let check = &doc["dirs"][0]["report"]["cross_check"];
    let figures = check["figures"].as_array().expect("cross_check.figures");
    let names: Vec<&str> = figures
        .iter()
        .filter_map(|f| f["figure"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "read_iops",
            "read_bandwidth",
            "write_iops",
            "write_bandwidth"
        ]
    );
    for f in figures {
        let pairs = f["pairs"].as_array().expect("pairs");
        assert_eq!(pairs.len(), 3, "{f}");
        for p in pairs {
            assert!(
                p["weir"].as_f64() > Some(0.0) && p["fio"].as_f64() > Some(0.0),
                "{f}"
            );
        }
        // Each pair's ratio is weir / fio, and the median lies within the pairs' range.
        let (lo, mid, hi) = (
            f["ratio_min"].as_f64().unwrap_or(0.0),
            f["ratio_median"].as_f64().unwrap_or(0.0),
            f["ratio_max"].as_f64().unwrap_or(0.0),
        );
        assert!(lo > 0.0 && lo <= mid && mid <= hi, "{f}");
        assert!(
            f["fio_command"]
                .as_str()
                .is_some_and(|c| c.contains("--direct=1")),
            "{f}"
        );
    }
    let regimes: Vec<&str> = figures
        .iter()
        .filter_map(|f| f["regime"].as_str())
        .collect();
    // A 10 s tune leaves the cache probe out (it needs 20 s of measuring), says so, and
    // names its sequential reads by the data they read.
    let report = &doc["dirs"][0]["report"];
    assert!(report["cache_probe"].is_null(), "{}", report["cache_probe"]);
    assert!(
        err.contains("cache below the device: not probed"),
        "no line on the skipped probe:\n{err}"
    );
    assert_eq!(
        regimes,
        ["written_data", "written_data", "overwrite", "fresh_extents"]
    );
    assert_eq!(
        report["read_bandwidth"]["regime"].as_str(),
        Some("written_data")
    );
    // io-properties.yaml stays iotune's exact shape: the cross-check lives in the JSON.
    let written = std::fs::read_to_string(&yaml).expect("yaml written");
    IoProperties::parse(&written, "io.yaml").expect("Seastar's format");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .expect("read dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".weir-"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Without fio, `--cross-check` says so, with the fix, before measuring anything.
#[test]
fn cross_check_without_fio_names_the_fix_before_measuring() {
    let dir = tempfile::tempdir().expect("temp dir");
    let props = dir.path().join("p.yaml");
    let o = Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(["tune", "--cross-check", "--dir"])
        .arg(dir.path())
        .arg("--properties-file")
        .arg(&props)
        .env("PATH", dir.path())
        .output()
        .expect("run weir");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "stdout {out}\nstderr {err}");
    assert!(err.contains("install fio"), "{err}");
    assert!(!props.exists());
}
