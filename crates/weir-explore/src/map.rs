//! The map: every point, the frontier, the fits and the model they imply. Serialised as
//! `explore.json` (the field names are the keys).

use serde::Serialize;
use weir_model::io_properties::{DiskProperties, IoProperties};

use crate::drift::Drift;
use crate::fit::{fit, Fits, SeastarLine};
use crate::frontier::envelope;
pub use crate::frontier::FrontierPoint;
use crate::goal::SchedulerGoal;
use crate::meter::{Calibration, WriteRegime};
use crate::point::PointResult;
use crate::search::{Ray, SearchOutcome};
use crate::slice::{AxisPoint, Slice, SliceAxes};

/// Bumped when a field changes meaning.
pub const SCHEMA_VERSION: u32 = 1;

/// The Seastar model written to io-properties.yaml, and the rates behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelOut {
    pub read_iops: u64,
    pub read_bandwidth: u64,
    pub write_iops: u64,
    pub write_bandwidth: u64,
    pub duplex: bool,
    pub rate_factor: f64,
    /// How the line was derived from the chosen fit.
    pub note: String,
    /// weir field `weir_latency_goal_us`: the scheduler's in-disk goal (see `goal`).
    pub latency_goal_us: Option<u64>,
}

/// A whole map.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Map {
    pub schema_version: u32,
    /// "weir explore" or "diskplorer import (FILE)".
    pub source: String,
    pub write_regime: WriteRegime,
    pub goal_us: f64,
    pub read_bytes: u32,
    pub write_bytes: u32,
    /// The slice drawn (`--slice`) and its axes: names, units and the fields that carry them.
    /// Points and `frontier` keep the fields in every slice (see `slice`).
    pub slice: Slice,
    pub axes: SliceAxes,
    /// `frontier` in the slice's units (`axes`): for each read-axis value the highest
    /// write-axis value with read p99 <= goal.
    pub frontier_in_axes: Vec<AxisPoint>,
    /// Closed-loop maxima, including both regimes' pure write rates (None for an import).
    pub calibration: Option<Calibration>,
    /// The pure loads measured again after the last ray, against `calibration` (None for an
    /// import, an interrupted map, or one from a version without the closing calibration).
    pub drift: Option<Drift>,
    /// Read-only probes run after the calibration until two agreed, before the first ray (see
    /// `search::settle`): the calibration's wake, judged on nothing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub settling: Vec<PointResult>,
    pub points: Vec<PointResult>,
    pub rays: Vec<Ray>,
    pub frontier: Vec<FrontierPoint>,
    /// Entries the search found that the frontier drops (see `frontier::envelope`): a second
    /// entry at one read rate, fewer writes than a higher read rate held within the goal, or
    /// an unconfirmed pass that would have pushed the frontier out over a confirmed one.
    pub frontier_dominated: Vec<FrontierPoint>,
    /// The in-disk goal the scheduler should run with to keep reads within `goal_us`.
    pub scheduler_goal: Option<SchedulerGoal>,
    pub fits: Option<Fits>,
    /// Why there are no fits (no pure-axis point within the goal).
    pub fits_missing: Option<String>,
    pub model: Option<ModelOut>,
    /// Wall time of the whole map.
    pub seconds: f64,
    pub stopped_by_budget: bool,
    /// Ctrl-C ended the map early: what is here was measured, the rest was not.
    pub interrupted: bool,
}

impl Map {
    /// A map from a finished search.
    pub fn from_search(
        outcome: SearchOutcome,
        regime: WriteRegime,
        goal_us: f64,
        read_bytes: u32,
        write_bytes: u32,
    ) -> Map {
        // A ray whose last pass failed its second measurement is not trusted to push the
        // frontier out over a confirmed entry (see `frontier::envelope`).
        let found: Vec<(FrontierPoint, bool)> = outcome
            .rays
            .iter()
            .filter_map(|r| {
                let l = r.boundary()?;
                let point = FrontierPoint {
                    read_iops: l.read_iops,
                    write_bytes_per_s: l.write_bytes_per_s,
                };
                Some((point, r.confirmed != Some(false)))
            })
            .collect();
        // At a read rate of zero the goal says nothing, so the frontier there is the most the
        // disk writes: the calibration's closed-loop rate in this regime. It differs from the
        // pure-write ray (which carries probe reads) exactly when mixed writes must stay
        // lower than pure writes can go, which is what the `capped` fit measures.
        let pure_writes = FrontierPoint {
            read_iops: 0.0,
            write_bytes_per_s: outcome.calibration.write_bytes_per_s(regime),
        };
        let (frontier, frontier_dominated) =
            envelope(found.into_iter().chain([(pure_writes, true)]).collect());
        let mut map = Map {
            schema_version: SCHEMA_VERSION,
            source: "weir explore".into(),
            write_regime: regime,
            goal_us,
            read_bytes,
            write_bytes,
            slice: Slice::default(),
            axes: Slice::default().axes(),
            frontier_in_axes: Vec::new(),
            calibration: Some(outcome.calibration),
            drift: outcome
                .calibration_end
                .map(|end| Drift::between(&outcome.calibration, end)),
            settling: outcome.settling,
            points: outcome.points,
            rays: outcome.rays,
            frontier,
            frontier_dominated,
            scheduler_goal: None,
            fits: None,
            fits_missing: None,
            model: None,
            seconds: outcome.seconds,
            stopped_by_budget: outcome.stopped_by_budget,
            interrupted: outcome.interrupted,
        };
        map.fit();
        map.set_slice(Slice::default());
        map
    }

    /// Shows the map in `slice`'s axes (the points and the fits do not change).
    pub fn set_slice(&mut self, slice: Slice) {
        self.slice = slice;
        self.axes = slice.axes();
        self.frontier_in_axes = self
            .frontier
            .iter()
            .map(|f| AxisPoint {
                read: self.read_axis_value(f.read_iops),
                write: self.write_axis_value(f.write_bytes_per_s),
            })
            .collect();
    }

    /// A read rate in requests/s on the slice's read axis.
    pub fn read_axis_value(&self, read_iops: f64) -> f64 {
        self.slice.read_value(read_iops, self.read_bytes)
    }

    /// A write rate in bytes/s on the slice's write axis.
    pub fn write_axis_value(&self, write_bytes_per_s: f64) -> f64 {
        self.slice.write_value(write_bytes_per_s, self.write_bytes)
    }

    /// Fits the frontier and derives the Seastar model. The axes are the frontier's own
    /// extremes: the most reads (the pure-read axis) and the most writes (the pure-write axis).
    pub fn fit(&mut self) {
        let or = self
            .frontier
            .iter()
            .map(|f| f.read_iops)
            .fold(0.0, f64::max);
        let bw = self
            .frontier
            .iter()
            .map(|f| f.write_bytes_per_s)
            .fold(0.0, f64::max);
        if !(or > 0.0 && bw > 0.0) || self.frontier.len() < 2 {
            self.fits_missing = Some(format!(
                "the frontier has {} point(s), {or:.0} reads/s and {bw:.0} write B/s at most: \
                 no pure load met the goal of {:.0} us; raise --goal",
                self.frontier.len(),
                self.goal_us
            ));
            return;
        }
        let points: Vec<(f64, f64)> = self
            .frontier
            .iter()
            .map(|f| (f.read_iops, f.write_bytes_per_s))
            .collect();
        let fits = fit(&points, or, bw);
        let line = fits.written_line(bw);
        let mut model = self.model_out(or, &line, &fits);
        // One write's disk time as the scheduler charges it: len / bandwidth / rate_factor.
        let write_cost_us = f64::from(self.write_bytes)
            / line.write_bytes_per_s.max(1.0)
            / line.rate_factor.max(f64::MIN_POSITIVE)
            * 1e6;
        self.scheduler_goal = crate::goal::derive(
            &self.points,
            &self.frontier,
            self.goal_us,
            write_cost_us,
            or,
        );
        model.latency_goal_us = self
            .scheduler_goal
            .as_ref()
            .map(|g| g.in_disk_goal_us.max(1.0) as u64);
        self.model = Some(model);
        self.fits = Some(fits);
    }

    fn model_out(&self, or: f64, line: &SeastarLine, fits: &Fits) -> ModelOut {
        let chosen = fits.chosen_fit();
        let note = match chosen.model {
            crate::fit::ModelKind::HalfDuplex => "the fitted half-duplex line as is".to_string(),
            crate::fit::ModelKind::Duplex => "the fitted duplex model as is".to_string(),
            crate::fit::ModelKind::Curve => format!(
                "the curve (exponent {:.2}, K {:.3}) as its fitted line, rate_factor {:.3} (the \
                 largest line under it: {:.3}; the scheduler's window and tail guard hold the \
                 reads where the line promises more)",
                chosen.exponent.unwrap_or(1.0),
                chosen.rate_factor,
                line.rate_factor,
                chosen.seastar_line(line.write_bytes_per_s).rate_factor
            ),
            crate::fit::ModelKind::Capped => format!(
                "the line under the mixed-write ceiling ({:.0}% of pure writes): write_bandwidth {:.0} B/s",
                chosen.mixed_write_ceiling.unwrap_or(1.0) * 100.0,
                line.write_bytes_per_s / line.rate_factor
            ),
        };
        // Explore measures one read size and one write size; the other two rates are set so
        // that they never make those requests cheaper than measured (a larger read is charged
        // as that many small reads, a smaller write as a whole large one): safe, not exact.
        let write_bandwidth = line.write_bytes_per_s;
        ModelOut {
            read_iops: or.round() as u64,
            read_bandwidth: (or * f64::from(self.read_bytes)).round() as u64,
            write_iops: (write_bandwidth / f64::from(self.write_bytes.max(1)))
                .round()
                .max(1.0) as u64,
            write_bandwidth: write_bandwidth.round() as u64,
            duplex: line.duplex,
            rate_factor: (line.rate_factor * 1000.0).round() / 1000.0,
            note,
            latency_goal_us: None,
        }
    }

    /// io-properties.yaml for `mountpoint`, with a comment naming the map and its fit.
    pub fn io_properties_yaml(&self, mountpoint: &str) -> Option<String> {
        let m = self.model.as_ref()?;
        let mut disk = DiskProperties::new(
            mountpoint,
            m.read_iops.max(1),
            m.read_bandwidth.max(1),
            m.write_iops.max(1),
            m.write_bandwidth.max(1),
        );
        disk.duplex = m.duplex;
        disk.rate_factor = m.rate_factor;
        disk.latency_goal_us = m.latency_goal_us;
        let body = IoProperties { disks: vec![disk] }.to_yaml_string();
        let fits = self.fits.as_ref()?;
        let chosen = fits.chosen_fit();
        let mut head = format!(
            "# weir explore: {} writes, read p99 goal {:.0} us, {} B reads x {} B writes.\n\
             # Chosen fit: {} (rms error {:.1}%): {}.\n# Seastar fields: {}.\n",
            self.write_regime.as_str(),
            self.goal_us,
            self.read_bytes,
            self.write_bytes,
            chosen.model.as_str(),
            chosen.rms_error * 100.0,
            fits.why,
            m.note
        );
        if let Some(g) = &self.scheduler_goal {
            head.push_str(&format!(
                "# weir field weir_latency_goal_us: the scheduler's in-disk goal for a read p99 \
                 within {:.0} us from arrival ({}).\n",
                self.goal_us, g.why
            ));
        }
        if let Some(a) = chosen.exponent {
            head.push_str(&format!(
                "# weir field (explore.json fits.curve): boundary (x^a + y^a)^(1/a) <= K, a = {a:.3}, K = {:.3}\n",
                chosen.rate_factor
            ));
        }
        if self.slice != Slice::default() {
            // The model prices every request from the two sizes measured here: a small read
            // costs as much as one of these large ones, a large write as many small ones.
            head.push_str(&format!(
                "# Slice {}: safe for other sizes, not exact: a read smaller than {} B is charged \
                 as one of {} B, a write larger than {} B as that many writes of {} B; for \
                 small reads beside large writes, map Diskplorer's slice (read-iops-write-bw).\n",
                self.slice.as_str(),
                self.read_bytes,
                self.read_bytes,
                self.write_bytes,
                self.write_bytes
            ));
        }
        Some(head + &body)
    }
}
