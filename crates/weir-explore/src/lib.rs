//! weir-explore: map a disk under mixed reads and writes, find where read latency leaves the
//! goal, and fit the scheduler's model to that boundary (the method of Diskplorer's "The Data" and "The Math").
//!
//! - [`point`]: one map point. Reads (random, Poisson arrivals) and writes (sequential, paced)
//!   are offered open-loop at once; latency is measured from each request's intended send time
//!   to its completion. A warm-up is discarded, then windows are measured until two agree
//!   ([`point::SteadyRule`]) or a cap; a point is *within the goal* when both directions kept
//!   up (achieved >= 97% of offered) and read p99 <= goal.
//! - [`meter`]: [`meter::Meter`] measures points; [`meter::WorkloadMeter`] runs each as a
//!   weir-workload plan on real files or a simulated disk, in a [`meter::WriteRegime`]
//!   (`fresh` fallocated files that never wrap, or `overwrite` of a region laid down first).
//! - [`search`](mod@search): bisection along rays from the origin, both pure axes included, refined where
//!   the boundary bends, within a time budget.
//! - [`fit`]: the half-duplex line (Seastar's `rate_factor`), the max() model (Seastar's
//!   `duplex: true`), a curve `(x^a + y^a)^(1/a)` (concave for a < 1) and a capped line (mixed
//!   writes fail above a ceiling); one is chosen, and the Seastar model it implies is written.
//! - [`map`], [`output`], [`plots`]: explore.json, explore.csv, heatmaps (drawn by weir-plot),
//!   io-properties.yaml and a text summary.
//! - [`slice`](mod@slice): which slice a map shows (read IOPS x write bandwidth, as Diskplorer maps, or read
//!   bandwidth x write IOPS): request sizes' defaults, axis names and units.
//! - [`drift`]: the pure loads measured again at the map's end, against its start.
//! - [`import`]: Diskplorer's fio JSON read into the same map.
//! - [`compare`]: weir measured at a Diskplorer grid's loads, and two maps' frontiers side by
//!   side beside their pure loads' spread.

pub mod compare;
pub mod drift;
pub mod error;
pub mod fit;
pub mod frontier;
pub mod goal;
pub mod import;
pub mod map;
pub mod meter;
pub mod output;
pub mod plots;
pub mod point;
pub mod pooled;
pub mod radial;
pub mod regions;
pub mod search;
pub mod slice;
pub mod tail;

pub use error::ExploreError;
pub use map::Map;
pub use meter::{Calibration, Meter, WorkloadMeter, WriteRegime};
pub use point::{Load, PointResult, SteadyRule};
pub use search::{search, SearchProgress, SearchSettings};
pub use slice::Slice;
