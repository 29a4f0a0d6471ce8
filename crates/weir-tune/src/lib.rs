//! weir-tune: measure a disk's Seastar model — read and write IOPS and bandwidth, the queue
//! depth where each stops rising (the knee), the saturation length, and the physical sector —
//! in a default run of at most 30 s.
//!
//! # Design
//!
//! The algorithms never touch the disk. They talk to a [`meter::Meter`], which runs one
//! closed-loop load (direction, pattern, request size, total requests in flight) and reports
//! cumulative counters every sample interval until told to stop. Two meters exist:
//! [`meters::ShardedMeter`] (one thread and one ring per shard, all shards loading the disk at
//! once, wall clock) and [`meters::DeviceMeter`] (one device on the caller's thread, the
//! device's clock — with the simulated disk of `weir-sim` this makes every search deterministic
//! and testable, including against a disk that lies about its sector size).
//!
//! On top of the meter:
//! - [`steady`]: a measurement ends when the least-squares line through its last samples is
//!   flat (fio's `ss=iops_slope`), not after a fixed time; `--sustained` uses a long window.
//! - [`search::find_knee`]: double the depth while throughput still rises, stop at the first
//!   step that does not (Little's law: beyond the knee extra depth is only latency, and some
//!   disks lose bandwidth when overloaded, so never sweep far past it). Random reads first
//!   reach the depth weir's scheduler drives (64 per shard), which prices every read; the
//!   bandwidth sweeps keep time for one step at the deepest depth, since large requests keep
//!   gaining from depth long after small ones stop.
//! - [`cache::probe`]: the first data the sequential reads read, read twice at the start of
//!   them; a re-read 1.5x the first read or faster names the read-bandwidth figure cached below
//!   the device, with a finding.
//! - [`crosscheck`]: `--cross-check` measures each figure again with weir's engine and with
//!   fio, alternately, at the figure's point and file regime, and reports weir / fio.
//! - [`confirm`]: each figure is a 1.5 s re-measurement at the depth its sweep chose, and a
//!   second opinion runs when that one reads under the sweep (a CPU-bound disk losing the CPU
//!   for a while: the same depth again; a lucky step standing alone: the best other depth):
//!   the higher of the two is the figure.
//! - [`search::find_saturation`]: halve the request size at constant bytes in flight until
//!   bandwidth drops; the smallest size that still reached the best is the saturation length.
//! - [`search::detect_sector`]: random-write IOPS at 512 B .. 8 KiB at the random-write knee
//!   depth; the first size whose successor gains under 5% is the physical sector.
//! - [`plan::tune`]: the order (sequential write into fresh pre-truncated space, sequential
//!   read of it, random write over it, random read) and the time budget, split by weights so
//!   time one phase does not use flows to the next.
//! - [`output`]: io-properties.yaml exactly as iotune writes it, iotune's option lines, and a
//!   human summary with each figure's spread.

pub mod cache;
pub mod confirm;
pub mod crosscheck;
pub mod drive;
pub mod error;
pub mod load;
pub mod meter;
pub mod meters;
pub mod output;
pub mod plan;
pub mod real;
pub mod regime;
pub mod search;
pub mod steady;
pub mod target;
pub mod trace;

pub use error::TuneError;
pub use meter::{Load, Measurement, Meter, Pattern};
pub use plan::{tune, tune_with_progress, TuneConfig, TuneReport};
