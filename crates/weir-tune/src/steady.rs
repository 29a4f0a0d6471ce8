//! Steady-state detection and spread statistics over per-sample rates.
//!
//! Like fio's `ss=iops_slope:X%`, a run is steady when the least-squares line through the last
//! window of per-interval rates drifts, end to end, by no more than a fraction of their mean.
//! Unlike a fixed duration this ends a measurement as soon as more time would not change the
//! answer, which is how the default run fits in 30 s; `--sustained` uses a much longer window.

use crate::load::{Metric, Sample};

/// When the last samples count as steady.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SteadyRule {
    /// Intervals at the start that never count (queues filling, caches warming).
    pub ramp_samples: usize,
    /// Intervals in the judged window.
    pub window_samples: usize,
    /// Largest allowed end-to-end drift of the fitted line across the window, as a fraction
    /// of the window's mean rate.
    pub drift_max: f64,
}

/// The per-interval rate of `metric` between consecutive cumulative samples (per second).
pub fn interval_rates(samples: &[Sample], metric: Metric) -> Vec<f64> {
    samples
        .windows(2)
        .filter_map(|w| {
            let dt_ns = w[1].elapsed_ns.checked_sub(w[0].elapsed_ns)?;
            if dt_ns == 0 {
                return None;
            }
            let amount = match metric {
                Metric::Iops => w[1].ops.saturating_sub(w[0].ops),
                Metric::Bandwidth => w[1].bytes.saturating_sub(w[0].bytes),
            };
            Some(amount as f64 * 1e9 / dt_ns as f64)
        })
        .collect()
}

/// Slope of the least-squares line through `ys` at x = 0, 1, 2, ... (rate units per interval).
pub fn slope(ys: &[f64]) -> f64 {
    let n = ys.len() as f64;
    if ys.len() < 2 {
        return 0.0;
    }
    let x_mean = (n - 1.0) / 2.0;
    let y_mean = ys.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in ys.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxy += dx * (y - y_mean);
        sxx += dx * dx;
    }
    sxy / sxx
}

/// True when the last `window_samples` rates after the ramp drift by at most `drift_max`.
pub fn is_steady(rates: &[f64], rule: &SteadyRule) -> bool {
    if rates.len() < rule.ramp_samples.saturating_add(rule.window_samples)
        || rule.window_samples < 2
    {
        return false;
    }
    let window = &rates[rates.len() - rule.window_samples..];
    let mean = window.iter().sum::<f64>() / window.len() as f64;
    if mean <= 0.0 {
        return false;
    }
    let drift = slope(window).abs() * (window.len() - 1) as f64;
    drift <= rule.drift_max * mean
}

/// How much per-sample rates varied inside a measurement's window.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Spread {
    pub mean: f64,
    /// The mean of the middle half of the rates (the lowest and the highest quarter left
    /// out): what a confirmation reports, see [`Spread::middle_half_mean_of`].
    pub middle_half_mean: f64,
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(rates: &[f64]) -> Spread {
        if rates.is_empty() {
            return Spread::default();
        }
        let n = rates.len() as f64;
        let mean = rates.iter().sum::<f64>() / n;
        let var = rates.iter().map(|r| (r - mean) * (r - mean)).sum::<f64>() / n;
        Spread {
            mean,
            middle_half_mean: Spread::middle_half_mean_of(rates),
            stddev: var.sqrt(),
            min: rates.iter().copied().fold(f64::INFINITY, f64::min),
            max: rates.iter().copied().fold(0.0, f64::max),
        }
    }

    /// The interquartile mean: sorted, a quarter of the rates (rounded down) left out at each
    /// end, the rest averaged. Symmetric noise averages out as in the plain mean, but a burst
    /// of another thread's work that takes the CPU for under a quarter of the window (it only
    /// ever lowers the rate) is left out instead of averaged in: on an idle zram a run read 4 KiB
    /// reads at 530.5 K over a window whose samples dipped to 493 K, 3.6% under its sweep and
    /// so no second opinion, and the mean put the figure 2.5% off the run before it.
    pub fn middle_half_mean_of(rates: &[f64]) -> f64 {
        if rates.is_empty() {
            return 0.0;
        }
        let mut sorted = rates.to_vec();
        sorted.sort_by(f64::total_cmp);
        let cut = sorted.len() / 4;
        let middle = &sorted[cut..sorted.len() - cut];
        middle.iter().sum::<f64>() / middle.len() as f64
    }

    /// Standard deviation as a percentage of the mean.
    pub fn cv_percent(&self) -> f64 {
        if self.mean > 0.0 {
            100.0 * self.stddev / self.mean
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: SteadyRule = SteadyRule {
        ramp_samples: 1,
        window_samples: 4,
        drift_max: 0.05,
    };

    #[test]
    fn slope_of_a_line_is_its_step() {
        assert!((slope(&[1.0, 3.0, 5.0, 7.0]) - 2.0).abs() < 1e-9);
        assert_eq!(slope(&[4.0, 4.0, 4.0]), 0.0);
    }

    #[test]
    fn flat_noisy_rates_are_steady_and_a_ramp_is_not() {
        assert!(is_steady(&[10.0, 100.0, 101.0, 99.0, 100.5], &RULE));
        assert!(!is_steady(&[10.0, 80.0, 90.0, 100.0, 110.0], &RULE));
        // Too few samples after the ramp: never steady.
        assert!(!is_steady(&[100.0, 100.0, 100.0], &RULE));
    }

    #[test]
    fn rates_come_from_cumulative_deltas() {
        let s = |t, ops, bytes| Sample {
            elapsed_ns: t,
            ops,
            bytes,
            latency_ns_sum: 0,
        };
        let samples = [
            s(0, 0, 0),
            s(500_000_000, 50, 5000),
            s(1_000_000_000, 150, 6000),
        ];
        assert_eq!(interval_rates(&samples, Metric::Iops), vec![100.0, 200.0]);
        assert_eq!(
            interval_rates(&samples, Metric::Bandwidth),
            vec![10000.0, 2000.0]
        );
    }

    #[test]
    fn spread_reports_mean_and_extremes() {
        let s = Spread::of(&[90.0, 110.0]);
        assert_eq!((s.mean, s.min, s.max), (100.0, 90.0, 110.0));
        assert!((s.cv_percent() - 10.0).abs() < 1e-9);
    }

    #[test]
    fn the_middle_half_leaves_out_a_short_dip_and_keeps_symmetric_noise() {
        // 13 samples, 3 of them in a burst at 0.8x: the mean reads 4.6% low, the middle half
        // not at all.
        let mut rates = vec![100.0; 13];
        rates[4..7].fill(80.0);
        let s = Spread::of(&rates);
        assert!(s.mean < 96.0, "{s:?}");
        assert!((s.middle_half_mean / 100.0 - 1.0).abs() < 1e-9, "{s:?}");
        // A +-2% zigzag averages to within 0.3% either way.
        let zigzag: Vec<f64> = (0..13)
            .map(|i| if i % 2 == 0 { 102.0 } else { 98.0 })
            .collect();
        let z = Spread::middle_half_mean_of(&zigzag);
        assert!((z / 100.0 - 1.0).abs() < 0.003, "{z}");
        // A change that covers the whole window is not hidden.
        assert!((Spread::middle_half_mean_of(&[80.0; 13]) / 80.0 - 1.0).abs() < 1e-9);
        assert_eq!(Spread::middle_half_mean_of(&[]), 0.0);
        assert!((Spread::middle_half_mean_of(&[7.0]) / 7.0 - 1.0).abs() < 1e-9);
    }
}
