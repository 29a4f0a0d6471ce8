//! Files the operator passes that cannot be read or are malformed (exit code 2). A parse
//! error is printed after its file's path, so it reads `file:line:column: field: problem`.

use std::fmt;
use std::path::PathBuf;

use weir_explore::ExploreError;
use weir_model::cost::CostModelError;
use weir_model::io_properties::IoPropertiesError;
use weir_sim::DiskFileError;
use weir_workload::parse::ParseError;

/// Which input file could not be read; each has its own fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputFile {
    /// `weir run JOBFILE`.
    JobFile,
    /// `weir run --sched-groups FILE`.
    SchedGroups,
    /// `weir run --simulate DISK.yaml`.
    SimDisk,
    /// `weir run --io-properties FILE`.
    IoProperties,
    /// `weir explore --import` / `--grid`: Diskplorer's fio JSON.
    DiskplorerResult,
    /// `weir explore --compare`: a weir explore.json.
    ExploreJson,
}

#[derive(Debug)]
#[non_exhaustive]
pub enum InputError {
    /// The file could not be read at all.
    Read {
        file: InputFile,
        path: PathBuf,
        error: std::io::Error,
    },
    /// The job file is not a list of io_tester jobs.
    JobFile { path: PathBuf, error: ParseError },
    /// The `--sched-groups` file is not a list of groups.
    SchedGroups { path: PathBuf, error: ParseError },
    /// A job's `class` does not fit the `--sched-groups` file.
    SchedGroupsPlacement(weir_workload::sched_groups::PlacementError),
    /// The `--simulate` file is not a disk description.
    SimDisk { path: PathBuf, error: DiskFileError },
    /// The `--io-properties` file cannot be read or is malformed (its own path and line).
    IoProperties(IoPropertiesError),
    /// The `--io-properties` file describes no disk holding the run's directory or device.
    NoDiskFor {
        file: PathBuf,
        target: PathBuf,
        dir: PathBuf,
    },
    /// A disk entry of the `--io-properties` file cannot make a cost model.
    CostModel {
        path: PathBuf,
        error: CostModelError,
    },
    /// A Diskplorer result or explore.json that cannot be used (an `ExploreError::Import`).
    Explore(ExploreError),
}

impl InputFile {
    /// What the message calls the file, and the fix it ends with.
    fn name_and_fix(self) -> (&'static str, &'static str) {
        match self {
            InputFile::JobFile => (
                "the job file ",
                "pass the path of an io_tester YAML job file (see examples/ and docs/reference/job-files.md)",
            ),
            InputFile::SchedGroups => (
                "the --sched-groups file ",
                "pass the path of a YAML list of groups (name, shares, parent), such as \
                 Seastar's apps/io_tester/sched.yaml",
            ),
            InputFile::SimDisk => (
                "the --simulate disk file ",
                "pass the path of a YAML disk description such as examples/sim-raid0.yaml",
            ),
            InputFile::IoProperties => (
                "the --io-properties file ",
                "pass the io-properties.yaml that `weir tune --dir DIR` wrote for the disk \
                 under --dir (or Seastar's iotune)",
            ),
            InputFile::DiskplorerResult => ("", "pass Diskplorer's --result-file"),
            InputFile::ExploreJson => ("", "pass the explore.json of a weir explore run"),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Read { file, path, error } => {
                let (name, fix) = file.name_and_fix();
                write!(f, "cannot read {name}{}: {error}; {fix}", path.display())
            }
            // `file:line:column: ...`; an error of the whole file has no position to join.
            InputError::JobFile { path, error } | InputError::SchedGroups { path, error } => {
                let space = if error.line.is_some() { "" } else { " " };
                write!(f, "{}:{space}{error}", path.display())
            }
            InputError::SimDisk { path, error } => {
                let space = if error.line.is_some() { "" } else { " " };
                write!(f, "{}:{space}{error}", path.display())
            }
            InputError::SchedGroupsPlacement(e) => e.fmt(f),
            InputError::IoProperties(e) => e.fmt(f),
            InputError::NoDiskFor { file, target, dir } => write!(
                f,
                "{} describes no disk holding {}: add an entry whose mountpoint is on that disk, \
             or pass the io-properties file measured for it (weir tune --dir {})",
                file.display(),
                target.display(),
                dir.display()
            ),
            InputError::CostModel { path, error } => write!(f, "{}: {error}", path.display()),
            InputError::Explore(e) => e.fmt(f),
        }
    }
}

// As in usage.rs: messages embed their cause, so only the transparent wrappers pass a source on.
impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InputError::IoProperties(e) => e.source(),
            InputError::Explore(e) => e.source(),
            _ => None,
        }
    }
}
