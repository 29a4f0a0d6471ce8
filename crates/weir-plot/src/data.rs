//! Turning raw samples into drawable series.

/// The empirical CDF of `values`: (value, fraction of values <= it), one step per distinct
/// value, ready for [`crate::Layer::Line`]. NaNs are dropped.
pub fn cdf(values: &[f64]) -> Vec<(f64, f64)> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len() as f64;
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (i, v) in sorted.iter().enumerate() {
        let f = (i + 1) as f64 / n;
        match out.last_mut() {
            Some(last) if last.0 == *v => last.1 = f,
            _ => out.push((*v, f)),
        }
    }
    out
}

/// `values` counted in `bins` equal bins between their min and max: (bin start, bin end,
/// count). An empty input gives no bins.
pub fn histogram(values: &[f64], bins: usize) -> Vec<(f64, f64, u64)> {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let (Some(lo), Some(hi)) = (
        finite.iter().copied().reduce(f64::min),
        finite.iter().copied().reduce(f64::max),
    ) else {
        return Vec::new();
    };
    let bins = bins.max(1);
    let width = if hi > lo {
        (hi - lo) / bins as f64
    } else {
        1.0
    };
    let mut counts = vec![0u64; bins];
    for v in finite {
        let i = (((v - lo) / width) as usize).min(bins - 1);
        counts[i] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, c)| (lo + i as f64 * width, lo + (i + 1) as f64 * width, c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_steps_reach_one() {
        let c = cdf(&[3.0, 1.0, 2.0, 2.0, f64::NAN]);
        assert_eq!(c, vec![(1.0, 0.25), (2.0, 0.75), (3.0, 1.0)]);
        assert!(cdf(&[]).is_empty());
    }

    #[test]
    fn histogram_counts_everything_once() {
        let h = histogram(&[0.0, 0.5, 1.0, 9.9, 10.0], 10);
        assert_eq!(h.len(), 10);
        assert_eq!(h.iter().map(|b| b.2).sum::<u64>(), 5);
        assert_eq!((h[0].2, h[1].2), (2, 1));
        assert_eq!(h[9].2, 2);
        assert!(histogram(&[], 4).is_empty());
    }
}
