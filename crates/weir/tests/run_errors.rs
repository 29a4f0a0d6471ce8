//! `weir run` on bad input and faults: each gets a one-paragraph error naming the fix, exit
//! code 2 for usage errors and 1 for runtime failures, and never a panic.

mod common;

use std::time::{Duration, Instant};

use common::*;
use weir_testfs::{require_root, FsKind, TestFs, TestFsOptions};

const SMALL_READS: &str =
    "- name: r\n  type: randread\n  data_size: 2MB\n  shard_info:\n    parallelism: 1\n";

fn assert_clean_error(o: &std::process::Output, code: i32, needles: &[&str]) {
    assert_exit(o, code);
    let err = stderr(o);
    assert!(err.starts_with("weir: error: "), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
    for n in needles {
        assert!(err.contains(n), "missing `{n}` in:\n{err}");
    }
}

#[test]
fn missing_directory_says_create_it() {
    let s = Scratch::new();
    let job = s.job("j.yaml", SMALL_READS);
    let missing = s.dir().join("nope");
    let o = run(&job, &missing, &["--duration", "100ms"]);
    assert_clean_error(&o, 2, &["does not exist", "mkdir -p"]);
}

#[test]
fn unwritable_directory_says_fix_permissions() {
    let s = Scratch::new();
    let job = s.job("j.yaml", SMALL_READS);
    let dir = s.dir().join("locked");
    std::fs::create_dir(&dir).expect("mkdir");
    // Root ignores mode bits, so as root the directory is made immutable instead.
    let guard = Lock::new(&dir);
    if guard.is_none() {
        weir_testfs::skip(
            "unwritable_directory_says_fix_permissions",
            &format!(
                "cannot make {} unwritable (`chattr +i` failed or is missing)",
                dir.display()
            ),
        );
        return;
    }
    let o = run(&job, &dir, &["--duration", "100ms"]);
    drop(guard);
    assert_clean_error(&o, 2, &["not writable", "chmod"]);
}

/// Makes a directory unwritable (chattr +i as root, chmod 555 otherwise) until dropped.
struct Lock {
    dir: std::path::PathBuf,
    immutable: bool,
}

impl Lock {
    fn new(dir: &std::path::Path) -> Option<Lock> {
        use std::os::unix::fs::PermissionsExt;
        if is_root() {
            let ok = std::process::Command::new("chattr")
                .arg("+i")
                .arg(dir)
                .status()
                .is_ok_and(|s| s.success());
            ok.then(|| Lock {
                dir: dir.to_path_buf(),
                immutable: true,
            })
        } else {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).ok()?;
            Some(Lock {
                dir: dir.to_path_buf(),
                immutable: false,
            })
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if self.immutable {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&self.dir)
                .status();
        } else {
            let _ = std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o755));
        }
    }
}

#[test]
fn malformed_yaml_points_at_line_and_column() {
    let s = Scratch::new();
    let job = s.job("bad.yaml", "- name: r\n  type: [randread\n");
    let o = run(&job, s.dir(), &["--duration", "100ms"]);
    assert_clean_error(&o, 2, &["bad.yaml:"]);
    let unknown = s.job(
        "key.yaml",
        "- name: r\n  type: randread\n  shard_info:\n    paralelism: 2\n",
    );
    let o = run(&unknown, s.dir(), &["--duration", "100ms"]);
    assert_clean_error(&o, 2, &["key.yaml:4:5:", "paralelism", "`parallelism`"]);
}

#[test]
fn unknown_type_lists_the_valid_ones() {
    let s = Scratch::new();
    let job = s.job("t.yaml", "- name: r\n  type: randrw\n");
    let o = run(&job, s.dir(), &["--duration", "100ms"]);
    assert_clean_error(
        &o,
        2,
        &["t.yaml:2:9:", "randrw", "seqread, seqwrite, overwrite"],
    );
}

#[test]
fn bad_flags_are_usage_errors() {
    let s = Scratch::new();
    let job = s.job("j.yaml", SMALL_READS);
    let o = run(&job, s.dir(), &["--duration", "soon"]);
    assert_clean_error(&o, 2, &["--duration"]);
    let o = run(&job, s.dir(), &["--backend", "spdk"]);
    assert_clean_error(&o, 2, &["'uring'", "'aio'"]);
    let o = run("/nonexistent/job.yaml".as_ref(), s.dir(), &[]);
    assert_clean_error(&o, 2, &["cannot read the job file"]);
    let o = run(&job, s.dir(), &["--output", "xml"]);
    assert_exit(&o, 2);
}

#[test]
fn request_size_not_a_multiple_of_the_alignment() {
    let s = Scratch::new();
    let job = s.job(
        "odd.yaml",
        "- name: r\n  type: randread\n  data_size: 2MB\n  shard_info:\n    reqsize: 1000\n",
    );
    let o = run(&job, s.dir(), &["--duration", "100ms"]);
    // The alignment is 512 on this machine's disk (4096 on some): the message names it and
    // the nearest valid sizes either way.
    assert_clean_error(
        &o,
        2,
        &["reqsize 1000 bytes", "direct-I/O alignment", "--buffered"],
    );
    let err = stderr(&o);
    assert!(
        err.contains("512 or 1024") || err.contains("4096 bytes"),
        "{err}"
    );
    assert!(files_in(s.dir()).is_empty());
}

#[test]
fn read_only_filesystem_is_a_usage_error() {
    let Some(root) = require_root("run_read_only_filesystem") else {
        return;
    };
    let opts = TestFsOptions::new(FsKind::Xfs { block_bytes: 4096 }).read_only(true);
    let fs = match TestFs::create(&root, "run-ro", &opts) {
        Ok(fs) => fs,
        Err(e) => {
            // As root (CI) a tier that cannot set up fails rather than passing unrun.
            weir_testfs::skip(
                "run_read_only_filesystem",
                &format!("cannot build a read-only XFS: {e}"),
            );
            return;
        }
    };
    let s = Scratch::new();
    let job = s.job("j.yaml", SMALL_READS);
    let o = run(&job, fs.path(), &["--duration", "100ms"]);
    assert_clean_error(&o, 2, &["read-only filesystem", "--dir"]);
}

#[test]
fn tmpfs_without_buffered_names_the_flag() {
    let Some(root) = require_root("run_tmpfs_without_buffered") else {
        return;
    };
    let fs = match TestFs::tmpfs(&root, "run-tmpfs") {
        Ok(fs) => fs,
        Err(e) => {
            // As root (CI) a tier that cannot set up fails rather than passing unrun.
            weir_testfs::skip(
                "run_tmpfs_without_buffered",
                &format!("cannot mount tmpfs: {e}"),
            );
            return;
        }
    };
    let s = Scratch::new();
    let job = s.job("j.yaml", SMALL_READS);
    let o = run(&job, fs.path(), &["--duration", "100ms"]);
    assert_clean_error(&o, 2, &["tmpfs", "--buffered"]);
    // With --buffered it runs.
    let o = run(
        &job,
        fs.path(),
        &["--duration", "100ms", "--buffered", "--shards", "1"],
    );
    assert_exit(&o, 0);
    assert!(files_in(fs.path()).is_empty());
}

#[test]
fn disk_full_mid_run_reports_what_was_measured_and_removes_files() {
    let Some(root) = require_root("run_disk_full") else {
        return;
    };
    let fs = match TestFs::tmpfs(&root, "run-enospc") {
        Ok(fs) => fs,
        Err(e) => {
            // As root (CI) a tier that cannot set up fails rather than passing unrun.
            weir_testfs::skip("run_disk_full", &format!("cannot mount tmpfs: {e}"));
            return;
        }
    };
    let s = Scratch::new();
    // An unbounded append fills the 64 MiB tmpfs quickly.
    let job = s.job(
        "fill.yaml",
        "- name: fill\n  type: append\n  shard_info:\n    parallelism: 4\n    reqsize: 1MB\n",
    );
    let started = Instant::now();
    let o = run(
        &job,
        fs.path(),
        &[
            "--duration",
            "30s",
            "--buffered",
            "--shards",
            "1",
            "--output",
            "json",
        ],
    );
    // A run that did not stop at ENOSPC runs the whole 30 s asked; how much sooner it stops
    // depends on the machine's load, so that is not checked.
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "did not stop at ENOSPC ({:?})",
        started.elapsed()
    );
    assert_clean_error(&o, 1, &["disk filled up", "free space"]);
    let v = json(&o);
    assert!(v["jobs"][0]["ops"].as_u64().unwrap_or(0) > 0, "{v}");
    assert!(v["stopped_early"].as_str().is_some(), "{v}");
    assert!(files_in(fs.path()).is_empty(), "{:?}", files_in(fs.path()));
}

#[test]
fn ctrl_c_stops_prints_results_and_removes_files() {
    let s = Scratch::new();
    let job = s.job("j.yaml", SMALL_READS);
    let spawned = Instant::now();
    let child = weir()
        .arg("run")
        .arg(&job)
        .arg("--dir")
        .arg(s.dir())
        .args(["--duration", "60s", "--shards", "1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Wait until the run has started (its file exists), then a little longer. The deadline
    // only bounds a run that never starts.
    let deadline = Instant::now() + Duration::from_secs(50);
    while files_in(s.dir()).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill() on our own child's pid.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let o = child.wait_with_output().expect("wait");
    // The signal, not the 60 s asked, ended the run (how soon after the signal depends on the
    // machine's load, so that is not checked; "stopped early" below says the same).
    assert!(
        spawned.elapsed() < Duration::from_secs(60),
        "ran the whole 60 s: {:?}",
        spawned.elapsed()
    );
    assert_clean_error(&o, 1, &["interrupted"]);
    let out = stdout(&o);
    assert!(
        out.contains("p99.9") && out.contains("stopped early"),
        "{out}"
    );
    assert!(files_in(s.dir()).is_empty(), "{:?}", files_in(s.dir()));
}

/// Ctrl-C while an `overwrite` job's file is being filled (the prepare phase, before any load
/// runs) stops the fill within moments, removes the half-filled file and says the run was
/// interrupted. 8 GiB take 4 s or more to fill on any disk this runs on; the signal comes
/// once the file exists.
#[test]
fn ctrl_c_during_the_overwrite_prefill_stops_it_and_removes_the_file() {
    let dir = tempfile::Builder::new()
        .prefix("weir-prefill-sigint-")
        .tempdir_in("/var/tmp")
        .expect("tempdir in /var/tmp");
    let job = dir.path().join("job.yaml");
    std::fs::write(
        &job,
        "- name: fill\n  type: randread\n  prepare: overwrite\n  data_size: 8GB\n  shard_info:\n    \
         parallelism: 1\n    reqsize: 4kB\n",
    )
    .expect("job file");
    let data = dir.path().join("data");
    std::fs::create_dir(&data).expect("data dir");
    let child = common::weir()
        .args(["run", "--shards", "1", "--duration", "1s", "--dir"])
        .arg(&data)
        .arg(&job)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn weir run");
    // A wait, not a speed check: the bound only stops a run that never starts.
    let start = Instant::now();
    while common::files_in(&data).is_empty() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !common::files_in(&data).is_empty(),
        "the prefill never started"
    );
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: plain kill(2) on our own child's pid.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    let signalled = Instant::now();
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("interrupt"), "{err}");
    // Bounds a prefill that ignored the signal and ran to its end (4 s or more).
    assert!(
        signalled.elapsed() < Duration::from_secs(3),
        "the prefill went on {:?} after SIGINT: {err}",
        signalled.elapsed()
    );
    assert!(
        common::files_in(&data).is_empty(),
        "left behind: {:?}",
        common::files_in(&data)
    );
}
