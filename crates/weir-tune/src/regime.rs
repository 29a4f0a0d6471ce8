//! [`Regime`]: where a figure's requests land (data written before, fresh extents, or
//! overwrites), which moves a disk's rate severalfold; every figure tune prints names it.

use crate::meter::{Load, Pattern};
use weir_model::device::Direction;

/// Where a figure's requests land, for both the tune and its cross-check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Regime {
    /// Reads of data written once by 1 MiB sequential writes a few requests deep.
    WrittenData,
    /// Writes into space never written before (pre-truncated, sparse): the filesystem
    /// allocates as they go.
    FreshExtents,
    /// Writes over data written before (allocated, holding data).
    Overwrite,
    /// Sequential re-reads of data written once that a cache below the device answered: the
    /// cache probe read the data again at least [`crate::cache::CACHED_RATIO_MIN`]x faster
    /// than the first time.
    CachedBelow,
}

impl Regime {
    /// The regime of a load as tune runs it.
    pub fn of(load: &Load) -> Regime {
        match (load.pattern, load.direction) {
            (_, Direction::Read) => Regime::WrittenData,
            (Pattern::Sequential, Direction::Write) => Regime::FreshExtents,
            (Pattern::Random, Direction::Write) => Regime::Overwrite,
        }
    }

    /// Two or three words for a summary row.
    pub fn short(self) -> &'static str {
        match self {
            Regime::WrittenData => "written data",
            Regime::FreshExtents => "fresh extents",
            Regime::Overwrite => "overwrite",
            Regime::CachedBelow => "cached below",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Regime::WrittenData => "reads of data written once by 1 MiB sequential writes",
            Regime::FreshExtents => {
                "writes into fresh extents (never-written, pre-truncated space)"
            }
            Regime::Overwrite => "overwrites of data written before",
            Regime::CachedBelow => {
                "re-reads of data written once, answered by a cache below the device (re-reads ran 1.5x or more the first read)"
            }
        }
    }
}
