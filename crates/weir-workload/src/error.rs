//! Why a run did not produce a full report. A leaf: setup, the unlink load and the runner
//! all return it, and it imports only the report it may carry.

use crate::report::Report;

/// Why a run did not produce a full report.
#[derive(Debug)]
#[non_exhaustive]
pub enum RunError {
    /// The operator's input cannot work (bad plan, directory missing, not writable, read-only,
    /// no O_DIRECT, misaligned request size). Nothing was measured. Exit code 2 in the CLI.
    Usage(String),
    /// Setting up failed for a reason outside the operator's input (backend, memory, disk
    /// full while preparing files). Nothing was measured.
    Setup(String),
    /// The run started and then failed or was interrupted; `partial` holds what was measured
    /// until then. Files were removed (unless kept).
    Failed {
        message: String,
        interrupted: bool,
        partial: Box<Report>,
    },
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Usage(m) | RunError::Setup(m) => f.write_str(m),
            RunError::Failed { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for RunError {}
