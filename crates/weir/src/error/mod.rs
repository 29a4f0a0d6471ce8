//! How a command fails, and the exit code each kind maps to (the README's "Exit codes" table).
//!
//! One enum per concern, so a caller (and a test) can match the cause instead of a string:
//! [`UsageError`] for flags and arguments, [`InputError`] for the files the operator passes,
//! [`RuntimeError`] for a run the system failed, [`Problem`] for a run that found a problem.
//! The library crates' typed errors are carried whole. The messages are the ones operators saw
//! when these were strings (a few have since gained the flag or the fix they lacked):
//! `weir: error: ` and then what was wrong, where (the flag, or file:line:column), and the fix.

mod input;
mod runtime;
mod usage;

use std::fmt;

pub use input::{InputError, InputFile};
pub use runtime::{OutputFile, Problem, RuntimeError};
pub use usage::UsageError;

use weir_explore::ExploreError;
use weir_probe::ProbeError;
use weir_tune::TuneError;

/// A failed command.
#[derive(Debug)]
#[non_exhaustive]
pub enum CliError {
    /// Bad flags or arguments: exit code 2.
    Usage(UsageError),
    /// A job, io-properties, group, disk or result file that cannot be read or is malformed:
    /// exit code 2.
    Input(InputError),
    /// The run started and the system failed it (disk full, I/O error, Ctrl-C): exit code 1.
    Runtime(RuntimeError),
    /// The run finished and found a problem (corruption, a FAIL, a BAD verdict): exit code 1.
    Problem(Problem),
}

/// Exit code of a usage error or a bad input file (README: "Exit codes").
pub const EXIT_USAGE: i32 = 2;
/// Exit code of a runtime failure or a finding (README: "Exit codes").
pub const EXIT_FAILURE: i32 = 1;

impl CliError {
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Usage(_) | CliError::Input(_) => EXIT_USAGE,
            CliError::Runtime(_) | CliError::Problem(_) => EXIT_FAILURE,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(e) => e.fmt(f),
            CliError::Input(e) => e.fmt(f),
            CliError::Runtime(e) => e.fmt(f),
            CliError::Problem(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CliError {
    // Transparent: each variant prints its inner error's message, so the chain goes on below it.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CliError::Usage(e) => e.source(),
            CliError::Input(e) => e.source(),
            CliError::Runtime(e) => e.source(),
            CliError::Problem(_) => None,
        }
    }
}

impl From<UsageError> for CliError {
    fn from(e: UsageError) -> Self {
        CliError::Usage(e)
    }
}

impl From<InputError> for CliError {
    fn from(e: InputError) -> Self {
        CliError::Input(e)
    }
}

impl From<RuntimeError> for CliError {
    fn from(e: RuntimeError) -> Self {
        CliError::Runtime(e)
    }
}

impl From<Problem> for CliError {
    fn from(e: Problem) -> Self {
        CliError::Problem(e)
    }
}

/// A tune the operator pointed at something unmeasurable is a usage error; the rest failed.
impl From<TuneError> for CliError {
    fn from(e: TuneError) -> Self {
        if e.is_usage() {
            CliError::Usage(UsageError::Tune(e))
        } else {
            CliError::Runtime(RuntimeError::Tune(e))
        }
    }
}

/// A bad directory argument is a usage error; a probe that failed on a good one is not.
impl From<ProbeError> for CliError {
    fn from(e: ProbeError) -> Self {
        match e {
            ProbeError::NotFound(_)
            | ProbeError::NotADirectory(_)
            | ProbeError::PermissionDenied(_) => CliError::Usage(UsageError::Directory(e)),
            ProbeError::Fixture { .. } => CliError::Runtime(RuntimeError::Fixture(e)),
            other => CliError::Runtime(RuntimeError::Probe(other)),
        }
    }
}

/// Bad explore flags and unreadable Diskplorer results are the operator's; the rest failed.
impl From<ExploreError> for CliError {
    fn from(e: ExploreError) -> Self {
        match e {
            e if e.is_usage() => CliError::Usage(UsageError::Explore(e)),
            ExploreError::Import { .. } => CliError::Input(InputError::Explore(e)),
            other => CliError::Runtime(RuntimeError::Explore(other)),
        }
    }
}

pub type CliResult = Result<(), CliError>;

#[cfg(test)]
mod tests;
