//! Colour scales for cells.

/// Maps a value to a colour on a logarithmic scale from `min` to `max` with a highlighted
/// `pivot` (a latency goal): values below the pivot are shades of blue-green, values above it
/// yellow to red, so "inside the goal" reads at a glance as Diskplorer's cyan area does.
#[derive(Debug, Clone, PartialEq)]
pub struct ColorScale {
    pub label: String,
    pub unit: String,
    pub min: f64,
    pub max: f64,
    pub pivot: f64,
}

/// Colour stops below the pivot (fraction 0..1 of the log distance min..pivot).
const BELOW: [(f64, [u8; 3]); 3] = [
    (0.0, [0x1d, 0x4e, 0x89]),
    (0.6, [0x2a, 0x9d, 0x8f]),
    (1.0, [0x9a, 0xe6, 0xe4]),
];
/// Colour stops above the pivot (fraction 0..1 of the log distance pivot..max).
const ABOVE: [(f64, [u8; 3]); 3] = [
    (0.0, [0xf4, 0xd3, 0x5e]),
    (0.5, [0xee, 0x96, 0x4b]),
    (1.0, [0xa4, 0x16, 0x23]),
];

impl ColorScale {
    /// A scale around `pivot` spanning `decades` powers of ten on each side.
    pub fn around(label: &str, unit: &str, pivot: f64, decades: f64) -> Self {
        let pivot = if pivot > 0.0 { pivot } else { 1.0 };
        let span = 10f64.powf(decades.max(0.1));
        ColorScale {
            label: label.into(),
            unit: unit.into(),
            min: pivot / span,
            max: pivot * span,
            pivot,
        }
    }

    /// The colour of `value` as `#rrggbb`; values outside the range take the end colours.
    pub fn color(&self, value: f64) -> String {
        // NaN and non-positive values take the bottom colour.
        let rgb = if value.is_nan() || value <= 0.0 || value <= self.pivot {
            let f = log_fraction(value.max(self.min), self.min, self.pivot);
            interpolate(&BELOW, f)
        } else {
            let f = log_fraction(value.min(self.max), self.pivot, self.max);
            interpolate(&ABOVE, f)
        };
        format!("#{:02x}{:02x}{:02x}", rgb[0], rgb[1], rgb[2])
    }
}

fn log_fraction(value: f64, lo: f64, hi: f64) -> f64 {
    if hi.is_nan() || lo.is_nan() || hi <= lo || value.is_nan() || value <= 0.0 {
        return 0.0;
    }
    ((value.ln() - lo.ln()) / (hi.ln() - lo.ln())).clamp(0.0, 1.0)
}

fn interpolate(stops: &[(f64, [u8; 3])], f: f64) -> [u8; 3] {
    for pair in stops.windows(2) {
        let ((f0, c0), (f1, c1)) = (pair[0], pair[1]);
        if f <= f1 {
            let t = if f1 > f0 { (f - f0) / (f1 - f0) } else { 0.0 };
            let mix =
                |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
            return [mix(c0[0], c1[0]), mix(c0[1], c1[1]), mix(c0[2], c1[2])];
        }
    }
    stops.last().map_or([0, 0, 0], |s| s.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goal_splits_cool_and_warm() {
        let scale = ColorScale::around("read p99", "us", 1000.0, 1.0);
        assert_eq!(scale.color(100.0), "#1d4e89");
        assert_eq!(scale.color(1000.0), "#9ae6e4");
        assert_eq!(scale.color(1000.1), "#f4d35e");
        assert_eq!(scale.color(1e9), "#a41623");
        // Missing values (0, NaN) take the coolest colour rather than panicking.
        assert_eq!(scale.color(0.0), "#1d4e89");
        assert_eq!(scale.color(f64::NAN), "#1d4e89");
    }
}
