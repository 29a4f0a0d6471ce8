//! Runs that started and failed (exit code 1), and runs that finished and found a problem
//! (also exit code 1: a script must not mistake corruption for success).

use std::fmt;
use std::path::PathBuf;

use weir_explore::ExploreError;
use weir_probe::ProbeError;
use weir_tune::TuneError;
use weir_workload::report::CorruptionReport;
use weir_workload::{Failure, RunError, SetupError};

/// An output file the command writes; each has its own fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputFile {
    /// `--plot FILE.svg` of run, tune and align.
    Plot,
    /// `weir run --metrics FILE`.
    Metrics,
    /// `weir tune --properties-file FILE`.
    PropertiesFile,
    /// `weir explore --grid`'s grid.md and grid.json in `--out`.
    GridDir,
    /// `weir report --out FILE`, after the measuring.
    Page,
    /// `weir man --out-dir DIR`.
    ManPages,
}

#[derive(Debug)]
#[non_exhaustive]
pub enum RuntimeError {
    /// `sigaction` failed, so Ctrl-C would kill the process and leave test files behind.
    /// `signal` is how the command names it (`SIGINT` or `Ctrl-C`).
    InterruptHandler { signal: &'static str, errno: i32 },
    /// An output file could not be written.
    Write {
        file: OutputFile,
        path: PathBuf,
        error: std::io::Error,
    },
    /// A report could not be encoded as JSON; `what` names it.
    Encode {
        what: &'static str,
        error: serde_json::Error,
    },
    /// `weir run` could not set up (backend, memory, disk full while preparing files).
    Setup(SetupError),
    /// `weir run` started and stopped early; what was measured until then was printed.
    // The binary prints only the message; the cause is kept for a caller (and the tests) to
    // match, so in the binary alone it is never read.
    #[allow(dead_code)]
    RunStopped {
        message: String,
        interrupted: bool,
        /// The failure that stopped every shard; None when a signal stopped the run.
        failure: Option<Failure>,
        /// Whether the test files were kept (`--keep-files`) or removed.
        files_kept: bool,
    },
    /// `weir run` failed in a way newer than this binary's match (`RunError` is non-exhaustive).
    Workload(RunError),
    /// `weir tune` failed while measuring.
    Tune(TuneError),
    /// `weir explore` failed while measuring or writing its outputs.
    Explore(ExploreError),
    /// Probing a good directory failed (sysfs, procfs).
    Probe(ProbeError),
    /// `weir doctor --root ROOT`: the recorded tree lacks `fs.json` or holds a malformed one.
    Fixture(ProbeError),
    /// `weir align` failed.
    Align(weir_probe::align::AlignError),
    /// Ctrl-C stopped `weir explore`; the partial map was written to `out`.
    ExploreInterrupted { out: PathBuf },
    /// Ctrl-C stopped `weir report`; the page was written with what finished.
    ReportInterrupted,
}

/// The run finished and found a problem.
#[derive(Debug)]
#[non_exhaustive]
pub enum Problem {
    /// `weir run --verify`: blocks did not hold what weir wrote.
    Corruption {
        corruptions: u64,
        blocks_checked: u64,
        first: Option<Box<CorruptionReport>>,
    },
    /// `weir doctor`: checks FAILed; each says its fix.
    DoctorFailed { fails: usize, dir: PathBuf },
    /// `weir qualify`: tests could not run; the first one's id and error.
    QualifyCouldNotRun {
        count: usize,
        dir: PathBuf,
        first_id: String,
        first_error: Option<String>,
    },
    /// `weir qualify`: tests were BAD.
    QualifyBad { bad: usize, dir: PathBuf },
}

impl OutputFile {
    /// What the message calls the file, and the fix (empty where there was none).
    fn name_and_fix(self) -> (&'static str, &'static str) {
        match self {
            OutputFile::Plot => ("the plot to ", "; pass a writable --plot path"),
            OutputFile::Metrics => ("the metrics to ", "; pass a writable --metrics path"),
            OutputFile::PropertiesFile => ("", "; pass a writable --properties-file"),
            OutputFile::GridDir => ("into ", "; pass another --out directory"),
            OutputFile::ManPages => ("the man pages to ", "; pass a writable --out-dir"),
            OutputFile::Page => (
                "the page to ",
                "; the measurements are lost, rerun with a writable --out",
            ),
        }
    }
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuntimeError::InterruptHandler { signal, errno } => write!(
                f,
                "cannot install the {signal} handler: {}",
                weir_engine::describe_errno(*errno)
            ),
            RuntimeError::Write { file, path, error } => {
                let (name, fix) = file.name_and_fix();
                write!(f, "cannot write {name}{}: {error}{fix}", path.display())
            }
            RuntimeError::Encode { what, error } => write!(f, "cannot encode {what}: {error}"),
            RuntimeError::Setup(e) => e.fmt(f),
            RuntimeError::RunStopped {
                message,
                files_kept,
                ..
            } => write!(
                f,
                "{message}\nThe results above cover the time until the stop; the test files \
                 were {}.",
                if *files_kept { "kept" } else { "removed" }
            ),
            RuntimeError::Workload(e) => e.fmt(f),
            RuntimeError::Tune(e) => e.fmt(f),
            RuntimeError::Explore(e) => e.fmt(f),
            RuntimeError::Probe(e) => e.fmt(f),
            RuntimeError::Fixture(e) => write!(
                f,
                "{e}; pass as --root a tree recorded from a machine: ROOT/sys, \
                 ROOT/proc/self/mountinfo and ROOT/fs.json (docs/reference/probe.md, \"Fixture trees\")"
            ),
            RuntimeError::Align(e) => e.fmt(f),
            RuntimeError::ExploreInterrupted { out } => {
                write!(f, "interrupted: the partial map is in {}", out.display())
            }
            RuntimeError::ReportInterrupted => f.write_str(
                "interrupted: the page holds the parts that finished and says which did not",
            ),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Corruption {
                corruptions,
                blocks_checked,
                first,
            } => {
                write!(
                    f,
                    "data corruption: {corruptions} of {blocks_checked} blocks checked did not \
                     hold what weir wrote"
                )?;
                if let Some(c) = first {
                    write!(
                        f,
                        "; first at offset {} of {}: expected {}, found {}",
                        c.offset_bytes, c.file, c.expected, c.found
                    )?;
                }
                f.write_str(
                    ". Check the device (dmesg, SMART) and the filesystem (xfs_repair -n / \
                     fsck -n).",
                )
            }
            Problem::DoctorFailed { fails, dir } => write!(
                f,
                "{fails} check(s) FAILed for {}; each FAIL above says the fix",
                dir.display()
            ),
            Problem::QualifyCouldNotRun {
                count,
                dir,
                first_id,
                first_error,
            } => write!(
                f,
                "{count} test(s) could not run in {}; first: {first_id}: {}",
                dir.display(),
                first_error.as_deref().unwrap_or("?")
            ),
            Problem::QualifyBad { bad, dir } => write!(
                f,
                "{bad} test(s) BAD in {}: see each one's meaning above",
                dir.display()
            ),
        }
    }
}

// As in usage.rs: messages embed their cause, so only the transparent wrappers pass a source on.
impl std::error::Error for RuntimeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RuntimeError::Setup(e) => e.source(),
            RuntimeError::Workload(e) => e.source(),
            RuntimeError::Tune(e) => e.source(),
            RuntimeError::Explore(e) => e.source(),
            RuntimeError::Probe(e) | RuntimeError::Fixture(e) => e.source(),
            _ => None,
        }
    }
}

impl std::error::Error for Problem {}
