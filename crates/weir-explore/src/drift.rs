//! Did the device stay the same disk for the whole map? The pure loads (the calibration's
//! closed-loop runs) are measured again after the last ray and compared with the start.
//!
//! A frontier is drawn between the pure loads: when they move, it moves with them, and two
//! maps can then not agree better than the device did. Two zram maps made minutes apart on an
//! idle machine can differ by 12-27% in their pure loads (or by less than 1%), and without the
//! drift nothing in explore.json says whether that happened between the maps or during one. With the drift beside each map, a
//! frontier spread can be put down to the method or to the device.

use serde::Serialize;

use crate::meter::{Calibration, WriteRegime};

/// Two maps' frontiers are compared against the target only when each map's pure loads
/// held within this share from its start to its end, and the two maps' within it of each
/// other (reads and the mapped regime's writes). zram on an idle machine holds to ~2%; a
/// frontier spread of 5% cannot be laid at the method's door when the device itself moved
/// by more than 2%, as the remaining 3% is what the method may take.
pub const PURE_LOAD_TOLERANCE: f64 = 0.02;

/// The pure loads at the map's end against its start (`calibration`), in percent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Drift {
    /// The closing runs: the same closed-loop reads and writes as the calibration.
    pub calibration_end: Calibration,
    /// (end - start) / start x 100.
    pub read_percent: f64,
    pub fresh_write_percent: f64,
    pub overwrite_write_percent: f64,
}

/// (b - a) / a, None when a is not positive.
pub fn relative(a: f64, b: f64) -> Option<f64> {
    (a > 0.0 && b.is_finite()).then(|| (b - a) / a)
}

impl Drift {
    /// The drift from `start` to `end` (a rate that was zero at the start drifts by 0%).
    pub fn between(start: &Calibration, end: Calibration) -> Drift {
        let pct = |a: f64, b: f64| relative(a, b).map_or(0.0, |d| d * 100.0);
        Drift {
            calibration_end: end,
            read_percent: pct(start.read_iops, end.read_iops),
            fresh_write_percent: pct(start.fresh_write_bytes_per_s, end.fresh_write_bytes_per_s),
            overwrite_write_percent: pct(
                start.overwrite_write_bytes_per_s,
                end.overwrite_write_bytes_per_s,
            ),
        }
    }

    /// The larger |drift| of the reads and of the mapped regime's writes, in percent.
    pub fn largest_percent(&self, regime: WriteRegime) -> f64 {
        let writes = match regime {
            WriteRegime::Fresh => self.fresh_write_percent,
            WriteRegime::Overwrite => self.overwrite_write_percent,
        };
        self.read_percent.abs().max(writes.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cal(reads: f64, fresh: f64, overwrite: f64) -> Calibration {
        Calibration {
            read_iops: reads,
            fresh_write_bytes_per_s: fresh,
            overwrite_write_bytes_per_s: overwrite,
        }
    }

    #[test]
    fn drift_is_end_against_start_in_percent() {
        let d = Drift::between(&cal(400e3, 2e9, 2.5e9), cal(410e3, 1.5e9, 2.45e9));
        assert!((d.read_percent - 2.5).abs() < 1e-9, "{d:?}");
        assert!((d.fresh_write_percent + 25.0).abs() < 1e-9, "{d:?}");
        assert!((d.overwrite_write_percent + 2.0).abs() < 1e-9, "{d:?}");
        // The mapped regime's writes count, the other regime's do not.
        assert!((d.largest_percent(WriteRegime::Overwrite) - 2.5).abs() < 1e-9);
        assert!((d.largest_percent(WriteRegime::Fresh) - 25.0).abs() < 1e-9);
        let none = Drift::between(&cal(0.0, 1e9, 1e9), cal(5.0, 1e9, 1e9));
        assert_eq!(none.read_percent, 0.0);
        assert_eq!(relative(0.0, 1.0), None);
    }
}
