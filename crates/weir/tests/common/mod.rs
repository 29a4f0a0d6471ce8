//! Helpers shared by the `weir` integration tests: run the built binary (on job files in fresh
//! temporary directories for `weir run`) and read its text and JSON.

#![allow(dead_code)] // Each test binary uses a different subset.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `weir` binary built for this test run.
pub fn weir() -> Command {
    Command::new(env!("CARGO_BIN_EXE_weir"))
}

/// A fresh directory for test files and one for job files.
pub struct Scratch {
    pub data: tempfile::TempDir,
    pub jobs: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        // Under the target directory's filesystem rather than /tmp, which may be tmpfs (no
        // O_DIRECT) on some machines.
        let base = std::env::var_os("CARGO_TARGET_TMPDIR")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        Scratch {
            data: tempfile::tempdir_in(&base).expect("data tempdir"),
            jobs: tempfile::tempdir_in(&base).expect("jobs tempdir"),
        }
    }

    pub fn dir(&self) -> &Path {
        self.data.path()
    }

    /// Writes a job file and returns its path.
    pub fn job(&self, name: &str, yaml: &str) -> PathBuf {
        let path = self.jobs.path().join(name);
        std::fs::write(&path, yaml).expect("write job file");
        path
    }
}

/// Runs `weir run JOB --dir DIR <extra>` and returns its output.
pub fn run(job: &Path, dir: &Path, extra: &[&str]) -> Output {
    weir()
        .arg("run")
        .arg(job)
        .arg("--dir")
        .arg(dir)
        .args(extra)
        .output()
        .expect("spawn weir")
}

/// The flags of a 1 s one-shard `--verify` run on `backend` with JSON output (1 s, not less:
/// on a busy disk an allocating write can stall for hundreds of milliseconds, and the tests
/// need completed writes); callers append their own.
pub fn verified_run_args(backend: &str) -> Vec<&str> {
    vec![
        "--duration",
        "1s",
        "--shards",
        "1",
        "--backend",
        backend,
        "--verify",
        "--output",
        "json",
    ]
}

/// Runs the built `weir` with these arguments.
pub fn weir_with(args: &[&str]) -> Output {
    weir().args(args).output().expect("spawn weir")
}

/// Both streams as text: (stdout, stderr).
pub fn text(o: &Output) -> (String, String) {
    (stdout(o), stderr(o))
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The JSON report on stdout; panics with both streams when it is not JSON.
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e})\nstatus: {:?}\nstdout:\n{}\nstderr:\n{}",
            o.status,
            stdout(o),
            stderr(o)
        )
    })
}

/// Asserts the exit code, showing both streams on failure.
pub fn assert_exit(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        stdout(o),
        stderr(o)
    );
}

/// Names of the files in `dir`.
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
