//! Why a map could not be made.

use std::fmt;

/// An explore failure. `Usage` and `Import` are the operator's to fix (exit code 2).
#[derive(Debug)]
#[non_exhaustive]
pub enum ExploreError {
    /// Bad flags, directory or plan; the message says the fix.
    Usage(String),
    /// A point's run failed (I/O error, disk full, setup).
    Run(String),
    /// Ctrl-C or SIGTERM: the points measured so far are in the partial outputs.
    Interrupted,
    /// A Diskplorer result file that cannot be read: where and why.
    Import { file: String, message: String },
    /// Writing an output file failed.
    Output { file: String, error: std::io::Error },
}

impl fmt::Display for ExploreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExploreError::Usage(m) | ExploreError::Run(m) => f.write_str(m),
            ExploreError::Interrupted => f.write_str("interrupted"),
            ExploreError::Import { file, message } => write!(f, "{file}: {message}"),
            ExploreError::Output { file, error } => {
                write!(
                    f,
                    "cannot write {file}: {error}; pass another --out directory"
                )
            }
        }
    }
}

impl std::error::Error for ExploreError {}
