//! What a cross-check found: per figure, the pairs of weir and fio runs and their ratios.
//! Plain data, carried in the tune's report and its JSON.

use crate::meter::Load;
use crate::regime::Regime;

/// One pair of runs.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Pair {
    /// weir's engine: IOPS (random loads) or bytes/s (sequential ones).
    pub weir: f64,
    pub fio: f64,
    /// weir / fio.
    pub ratio: f64,
    pub weir_first: bool,
}

/// One figure's cross-check.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FigureCheck {
    /// `read_iops`, `write_iops`, `read_bandwidth` or `write_bandwidth`.
    pub figure: &'static str,
    pub load: Load,
    pub regime: Regime,
    /// "IOPS" or "B/s".
    pub unit: &'static str,
    /// The figure tune reported (io-properties.yaml).
    pub tune_value: f64,
    pub pairs: Vec<Pair>,
    pub weir_median: f64,
    pub fio_median: f64,
    /// Median over the pairs of weir / fio, and the lowest and highest pair.
    pub ratio_median: f64,
    pub ratio_min: f64,
    pub ratio_max: f64,
    /// tune's figure / fio's median: how far the reported number is from fio's at its point.
    pub tune_over_fio: f64,
    /// fio's spread over the pairs: (max - min) / median of its runs.
    pub fio_spread: f64,
    /// The fio command of this figure's runs (file names are the cross-check's own).
    pub fio_command: String,
}

/// The cross-check of one tuned directory.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CrossCheck {
    /// `fio --version`.
    pub fio_version: String,
    pub pairs: u32,
    pub run_s: f64,
    pub ramp_s: f64,
    pub data_bytes_per_shard: u64,
    pub shards: u32,
    pub figures: Vec<FigureCheck>,
}
