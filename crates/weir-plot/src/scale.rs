//! Axes: the mapping from data to the unit interval, and their tick marks.

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    Linear,
    /// Base-10 logarithmic; values <= 0 are clamped to the axis minimum.
    Log,
}

/// One axis: a label with its unit, a scale and a range (None: fitted to the data).
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub label: String,
    /// The unit printed after tick values with an SI prefix ("B/s", "IOPS", "s").
    pub unit: String,
    pub scale: Scale,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

impl Axis {
    pub fn linear(label: &str, unit: &str) -> Self {
        Axis {
            label: label.into(),
            unit: unit.into(),
            scale: Scale::Linear,
            min: None,
            max: None,
        }
    }

    pub fn log(label: &str, unit: &str) -> Self {
        Axis {
            scale: Scale::Log,
            ..Axis::linear(label, unit)
        }
    }

    /// Fixes the range.
    pub fn range(mut self, min: f64, max: f64) -> Self {
        self.min = Some(min);
        self.max = Some(max);
        self
    }

    /// The range actually drawn, given the data's extent (lo, hi). Linear axes start at zero
    /// when the data are all positive (rates), so areas compare honestly.
    pub(crate) fn resolve(&self, data_lo: f64, data_hi: f64) -> (f64, f64) {
        let (mut lo, mut hi) = (self.min.unwrap_or(data_lo), self.max.unwrap_or(data_hi));
        match self.scale {
            Scale::Linear => {
                if self.min.is_none() && lo > 0.0 {
                    lo = 0.0;
                }
                if hi.is_nan() || hi <= lo {
                    hi = lo + 1.0;
                }
            }
            Scale::Log => {
                if lo.is_nan() || lo <= 0.0 {
                    lo = if hi > 0.0 { hi / 1e3 } else { 1.0 };
                }
                if hi.is_nan() || hi <= lo {
                    hi = lo * 10.0;
                }
            }
        }
        (lo, hi)
    }

    /// `value` as a fraction of the range (0 at `lo`, 1 at `hi`).
    pub(crate) fn fraction(&self, value: f64, lo: f64, hi: f64) -> f64 {
        match self.scale {
            Scale::Linear => (value - lo) / (hi - lo),
            Scale::Log => {
                let v = value.max(lo);
                (v.log10() - lo.log10()) / (hi.log10() - lo.log10())
            }
        }
    }

    /// Tick values within the range: 1-2-5 steps for linear axes, powers of ten for log axes.
    pub(crate) fn ticks(&self, lo: f64, hi: f64) -> Vec<f64> {
        match self.scale {
            Scale::Linear => {
                let raw = (hi - lo) / 8.0;
                let magnitude = 10f64.powf(raw.log10().floor());
                let step = [1.0, 2.0, 5.0, 10.0]
                    .iter()
                    .map(|m| m * magnitude)
                    .find(|s| *s >= raw)
                    .unwrap_or(magnitude * 10.0);
                let first = (lo / step).ceil() as i64;
                let last = (hi / step).floor() as i64;
                (first..=last).map(|i| i as f64 * step).collect()
            }
            Scale::Log => {
                let first = lo.log10().ceil() as i32;
                let last = hi.log10().floor() as i32;
                (first..=last).map(|e| 10f64.powi(e)).collect()
            }
        }
    }
}

/// `value` with an SI prefix and `unit`: 1.5e9 B/s is "1.5 GB/s", 85000 IOPS "85k IOPS".
pub fn format_si(value: f64, unit: &str) -> String {
    // Latencies read better in the unit a person would say: 1.5 ms, not 1.5 kus.
    if unit == "us" && value.abs() >= 1e6 {
        return format_si(value / 1e6, "s");
    }
    if unit == "us" && value.abs() >= 1e3 {
        return format_si(value / 1e3, "ms");
    }
    let (scaled, prefix) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .iter()
        .find(|(f, _)| value.abs() >= *f)
        .map_or((value, ""), |(f, p)| (value / f, *p));
    let digits = if scaled.abs() >= 100.0 || scaled.fract().abs() < 1e-9 {
        0
    } else if scaled.abs() >= 10.0 {
        1
    } else {
        2
    };
    let number = format!("{scaled:.digits$}");
    let number = if number.contains('.') {
        number
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        number
    };
    // Prefixes belong to bytes and seconds ("1.5 GB/s"); other units keep them on the number
    // ("85k IOPS").
    let prefixable = unit.starts_with('B') || unit == "s";
    if unit.is_empty() {
        format!("{number}{prefix}")
    } else if !prefixable && !prefix.is_empty() {
        format!("{number}{prefix} {unit}")
    } else {
        let sep = if prefix.is_empty() && !unit.starts_with(char::is_alphabetic) {
            ""
        } else {
            " "
        };
        format!("{number}{sep}{prefix}{unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round_and_inside() {
        let axis = Axis::linear("w", "B/s");
        let (lo, hi) = axis.resolve(3.0e8, 2.7e9);
        assert_eq!(lo, 0.0);
        let ticks = axis.ticks(lo, hi);
        assert_eq!(ticks.first().copied(), Some(0.0));
        assert!(ticks.iter().all(|t| *t <= hi));
        assert!(ticks.len() >= 4 && ticks.len() <= 11, "{ticks:?}");
        assert!((axis.fraction(hi, lo, hi) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn log_ticks_are_powers_of_ten() {
        let axis = Axis::log("p99", "us");
        let ticks = axis.ticks(50.0, 20_000.0);
        assert_eq!(ticks, vec![100.0, 1000.0, 10_000.0]);
        assert!((axis.fraction(1000.0, 100.0, 10_000.0) - 0.5).abs() < 1e-12);
        // Non-positive values sit at the bottom rather than producing NaN.
        assert_eq!(axis.fraction(0.0, 100.0, 10_000.0), 0.0);
    }

    #[test]
    fn si_formatting() {
        assert_eq!(format_si(1.5e9, "B/s"), "1.5 GB/s");
        assert_eq!(format_si(85_000.0, "IOPS"), "85k IOPS");
        assert_eq!(format_si(0.0, "B/s"), "0 B/s");
        assert_eq!(format_si(750.0, "us"), "750 us");
        assert_eq!(format_si(1500.0, "us"), "1.5 ms");
        assert_eq!(format_si(2.5e6, "us"), "2.5 s");
        assert_eq!(format_si(12.5, "%"), "12.5%");
    }
}
