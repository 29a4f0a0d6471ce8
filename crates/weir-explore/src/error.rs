//! Why a map could not be made.
//!
//! Each cause is its own variant carrying its data (the run's own error, the measured rates,
//! the two regimes), so a caller can match it; the text is the operator's message, unchanged
//! from when the causes were plain strings.

use std::fmt;

use serde_json::Value;
use weir_workload::{RunError, UsageError};

/// An explore failure. [`ExploreError::is_usage`] and `Import` are the operator's to fix
/// (exit code 2).
#[derive(Debug)]
#[non_exhaustive]
pub enum ExploreError {
    /// A point's run refused the plan, the flags or the directory; the message says the fix.
    Workload(UsageError),
    /// A map point with neither reads nor writes.
    NoLoad,
    /// `--compare` of two maps made under different write regimes (`fresh`, `overwrite`), as
    /// each file's JSON spells it (`null` when missing).
    RegimeMismatch {
        a_file: String,
        b_file: String,
        regime_a: Value,
        regime_b: Value,
    },
    /// A point's run failed (I/O error, disk full, setup).
    Run(Box<RunError>),
    /// The calibration measured no reads or no writes: the disk completed nothing.
    NoCompletions {
        read_iops: f64,
        write_bytes_per_s: f64,
    },
    /// Ctrl-C or SIGTERM: the points measured so far are in the partial outputs.
    Interrupted,
    /// The search's time budget would be spent before the next point ends. The search stops
    /// the ray it is on and keeps the rays before it; `search` never returns this.
    BudgetSpent,
    /// A Diskplorer result file that cannot be read: where and why.
    Import { file: String, message: String },
    /// Writing an output file failed.
    Output { file: String, error: std::io::Error },
}

impl ExploreError {
    /// True when the operator's input is at fault (bad flags, directory or plan).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            ExploreError::Workload(_) | ExploreError::NoLoad | ExploreError::RegimeMismatch { .. }
        )
    }
}

impl fmt::Display for ExploreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExploreError::Workload(e) => e.fmt(f),
            ExploreError::NoLoad => f.write_str("a map point needs reads or writes"),
            ExploreError::RegimeMismatch {
                a_file,
                b_file,
                regime_a,
                regime_b,
            } => write!(
                f,
                "{a_file} maps {regime_a} writes and {b_file} {regime_b}: compare maps of one \
                 regime"
            ),
            ExploreError::Run(e) => e.fmt(f),
            ExploreError::NoCompletions {
                read_iops,
                write_bytes_per_s,
            } => write!(
                f,
                "the calibration measured {read_iops:.0} reads/s and {write_bytes_per_s:.0} \
                 write B/s: the disk did not complete requests; check the directory with `weir \
                 doctor`"
            ),
            ExploreError::Interrupted => f.write_str("interrupted"),
            ExploreError::BudgetSpent => f.write_str(
                "the time budget ran out before the next point: raise --budget for a finer map",
            ),
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
