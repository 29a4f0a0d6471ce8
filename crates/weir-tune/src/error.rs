//! How tuning fails. The binary maps `Usage` to exit code 2 and the rest to exit code 1.

use std::fmt;

#[derive(Debug)]
#[non_exhaustive]
pub enum TuneError {
    /// The operator pointed weir at something it cannot measure (missing directory, tmpfs,
    /// read-only, too little space). The message says what and the fix.
    Usage(String),
    /// The measurement started and the system failed it.
    Runtime(String),
    /// Ctrl-C: the load stopped and the test files were removed.
    Interrupted,
}

impl fmt::Display for TuneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TuneError::Usage(m) | TuneError::Runtime(m) => f.write_str(m),
            TuneError::Interrupted => {
                f.write_str("interrupted: the load stopped and the test files were removed")
            }
        }
    }
}

impl std::error::Error for TuneError {}
