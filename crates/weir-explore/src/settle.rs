//! Waiting for the calibration's writes to settle before the first ray.
//!
//! The calibration writes closed-loop at queue depth 16 in both regimes (on vda about 20 GB in
//! 6 s), and the device is still busy with them afterwards: vda maps on an idle machine meet read p99s
//! of 1.6-4 ms at 24k-51k reads/s in the pure-read ray's first 15-25 s and 0.3-0.7 ms at the
//! same loads later, and without settling the ray spends 14 points (90 s) re-bisecting what
//! those first verdicts got wrong. So before the first ray the search measures one read-only
//! probe load again and again until two probes agree, and only then bisects. The probes are
//! kept apart (`settling` in explore.json): their verdicts describe the calibration's wake, not
//! the disk, so no load is judged on them.

use super::Search;
use crate::error::ExploreError;
use crate::point::PointResult;

/// The probe's read rate: a quarter of the way along the pure-read ray, the load the disturbed
/// maps' second point missed the goal at.
const PROBE_RAY_SHARE: f64 = 0.25;
/// Two probes agree when their read p99s are within this share of the larger...
const AGREE_SHARE: f64 = 0.25;
/// ...or both are within this share of the goal (a tail far below it moves by more than a
/// quarter between seconds without meaning anything).
const QUIET_GOAL_SHARE: f64 = 0.5;

impl Search<'_> {
    /// Probes until two in a row agree, at most `settle_probes`; returns the probes.
    pub(super) fn settle(&mut self) -> Result<Vec<PointResult>, ExploreError> {
        let load = self.load(0.0, PROBE_RAY_SHARE);
        let mut probes: Vec<PointResult> = Vec::new();
        while probes.len() < self.settings.settle_probes {
            probes.push(self.meter.measure(load)?);
            if let [.., a, b] = probes.as_slice() {
                if agree(a, b, self.settings.goal_us) {
                    break;
                }
            }
        }
        Ok(probes)
    }
}

/// Two probes whose read tails say the device is as it will stay.
fn agree(a: &PointResult, b: &PointResult, goal_us: f64) -> bool {
    let (pa, pb) = (a.read_latency_us.p99, b.read_latency_us.p99);
    let quiet = pa.max(pb) <= QUIET_GOAL_SHARE * goal_us;
    let close = (pa - pb).abs() <= AGREE_SHARE * pa.max(pb);
    a.kept_up && b.kept_up && (quiet || close)
}
