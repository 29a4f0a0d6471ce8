//! Bad flags and arguments (exit code 2): each variant names the flag and says the fix.

use std::fmt;
use std::path::PathBuf;

use weir_explore::ExploreError;
use weir_model::units::UnitError;
use weir_probe::ProbeError;
use weir_tune::TuneError;

#[derive(Debug)]
#[non_exhaustive]
pub enum UsageError {
    /// A size or duration flag that does not parse. `value` is echoed after the flag where
    /// the command always did (`--goal x: ...`), and left out where it did not (`--duration:`).
    Unit {
        flag: &'static str,
        value: Option<String>,
        error: UnitError,
    },
    /// A flag's value parsed but lies outside what the command accepts, which `accepted` says.
    OutOfRange {
        flag: &'static str,
        value: String,
        accepted: &'static str,
    },
    /// `weir align`: each file is written in whole requests, so its size is a multiple of theirs.
    FileSizeNotMultiple {
        file_size: String,
        request_size: String,
    },
    /// An environment switch (`WEIR_SCHED_KNEE`) set to something other than 0, 1, on or off.
    EnvSwitch { var: &'static str, value: String },
    /// A count or time that must be above zero; `rule` finishes the sentence after the flags.
    Zero {
        flags: &'static str,
        rule: &'static str,
    },
    /// `--verify` with `/dev/null` as the storage: nothing is stored, so nothing can be checked.
    VerifyNullStorage,
    /// `--metrics` without `--io-properties`: the metrics are the scheduler's.
    MetricsWithoutModel,
    /// `--latency-goal` without `--io-properties`: the goal is the scheduler's.
    GoalWithoutModel,
    /// `--compare` without exactly two files.
    CompareArity,
    /// `--backend` names no backend; the message lists the ones there are.
    Backend(weir_engine::UnknownBackend),
    /// `--modes` names an unknown file preparation.
    Modes(weir_engine::UnknownPrepare),
    /// The directory argument is missing, not a directory, or not accessible.
    Directory(ProbeError),
    /// `--dir` of report or explore cannot be inspected; `purpose` says what the disk is for.
    DirFlag {
        dir: PathBuf,
        error: std::io::Error,
        purpose: &'static str,
    },
    /// `--dir` of report or explore is not a directory.
    DirFlagNotADirectory { dir: PathBuf },
    /// An output file (`weir report --out`, `weir tune --properties-file`) cannot be written:
    /// checked before the measuring, which would otherwise be lost.
    OutFlag {
        flag: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    /// An output path holds a file weir did not write (`--force` replaces it).
    OutputExists {
        flag: &'static str,
        refused: weir_guard::OutputRefused,
    },
    /// `weir qualify` on a memory filesystem, where every verdict would be a meaningless GOOD.
    MemoryFilesystem { path: String, fs_type: String },
    /// `weir explore --dir` has too little free space for its files.
    NoSpace {
        dir: PathBuf,
        free_bytes: u64,
        need_bytes: u64,
    },
    /// The run's own checks refused the job file, the flags or the directory.
    Workload(weir_workload::UsageError),
    /// `weir tune` was pointed at something it cannot measure (`TuneError::is_usage`).
    Tune(TuneError),
    /// `weir explore`'s own checks refused the flags or the directory (`ExploreError::is_usage`).
    Explore(ExploreError),
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::Unit {
                flag,
                value: Some(value),
                error,
            } => write!(f, "{flag} {value}: {error}"),
            UsageError::Unit {
                flag,
                value: None,
                error,
            } => write!(f, "{flag}: {error}"),
            UsageError::OutOfRange {
                flag,
                value,
                accepted,
            } => write!(f, "{flag} {value}: {accepted}"),
            UsageError::FileSizeNotMultiple {
                file_size,
                request_size,
            } => write!(
                f,
                "--file-size {file_size}: must be a multiple of --request-size {request_size}"
            ),
            UsageError::EnvSwitch { var, value } => write!(
                f,
                "{var}={value:?}: accepted values are 0, 1, on and off (or leave it unset for off)"
            ),
            UsageError::Zero { flags, rule } => write!(f, "{flags} {rule}"),
            UsageError::VerifyNullStorage => f.write_str(
                "--verify cannot check /dev/null, which stores nothing: drop --verify or use --dir",
            ),
            UsageError::MetricsWithoutModel => {
                f.write_str("--metrics needs --io-properties: the metrics are the scheduler's")
            }
            UsageError::GoalWithoutModel => f.write_str(
                "--latency-goal needs --io-properties: the goal is the scheduler's, which runs \
                 only with a disk model (write one with `weir tune`)",
            ),
            UsageError::CompareArity => f.write_str("--compare takes two explore.json files"),
            UsageError::Backend(error) => write!(f, "--backend: {error}"),
            UsageError::Modes(error) => write!(f, "--modes: {error}"),
            UsageError::DirFlag {
                dir,
                error,
                purpose,
            } => write!(
                f,
                "--dir {}: {error}; pass an existing directory on the disk to {purpose}",
                dir.display()
            ),
            UsageError::DirFlagNotADirectory { dir } => write!(
                f,
                "--dir {}: not a directory; pass the directory where the data files will live",
                dir.display()
            ),
            UsageError::OutputExists { flag, refused } => write!(f, "{flag} {refused}"),
            UsageError::OutFlag { flag, path, error } => write!(
                f,
                "{flag} {}: cannot write it ({error}); pass a writable path",
                path.display()
            ),
            UsageError::MemoryFilesystem { path, fs_type } => write!(
                f,
                "{path}: {fs_type} is memory, not a disk: there is no asynchronous disk I/O to \
                 qualify; run weir qualify in a directory on the disk-backed filesystem that will \
                 hold the data"
            ),
            UsageError::NoSpace {
                dir,
                free_bytes,
                need_bytes,
            } => write!(
                f,
                "{} has {} MiB free; explore needs at least {} MiB for its read file, overwrite \
                 region and fresh write files: free space or pass another --dir",
                dir.display(),
                free_bytes >> 20,
                need_bytes >> 20
            ),
            UsageError::Directory(e) => e.fmt(f),
            UsageError::Workload(e) => e.fmt(f),
            UsageError::Tune(e) => e.fmt(f),
            UsageError::Explore(e) => e.fmt(f),
        }
    }
}

// Every message embeds its cause's text, so `source` does not hand the same cause out again
// (std's rule: one or the other); a variant that only wraps a library error is transparent
// and passes on that error's own source, as thiserror's `transparent` does.
impl std::error::Error for UsageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            UsageError::Directory(e) => e.source(),
            UsageError::Workload(e) => e.source(),
            UsageError::Tune(e) => e.source(),
            UsageError::Explore(e) => e.source(),
            _ => None,
        }
    }
}
