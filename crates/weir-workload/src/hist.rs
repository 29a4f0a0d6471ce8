//! Exact latency histograms.
//!
//! Every request's latency is recorded in an HDR histogram at nanosecond resolution with three
//! significant digits (a recorded value is off by at most 0.1%), per job and per shard, and the
//! shards' histograms are added together for the job's totals. Unlike io_tester's streaming
//! quantile estimators, the percentiles of a merged histogram are the percentiles of all the
//! requests, not an average of per-shard estimates.

use hdrhistogram::Histogram;
use serde::Serialize;

/// The largest latency recorded exactly: one hour. Longer values are clamped to it (and the
/// clamp is visible as a max of one hour).
pub const MAX_TRACKED_NS: u64 = 3_600_000_000_000;

/// A latency histogram in nanoseconds.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    inner: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        // The bounds are constants well inside what hdrhistogram accepts (low >= 1, high >=
        // 2 x low, 3 significant digits), so construction cannot fail for any input.
        let inner = Histogram::new_with_bounds(1, MAX_TRACKED_NS, 3)
            .expect("constant histogram bounds are valid");
        LatencyHistogram { inner }
    }

    /// Records one latency.
    #[inline]
    pub fn record_ns(&mut self, latency_ns: u64) {
        self.inner
            .saturating_record(latency_ns.clamp(1, MAX_TRACKED_NS));
    }

    /// Adds every value of `other`.
    pub fn add(&mut self, other: &LatencyHistogram) {
        // Both sides share the same bounds, so adding cannot fail; count a failure as lost
        // values rather than crash the report.
        let _ = self.inner.add(&other.inner);
    }

    pub fn count(&self) -> u64 {
        self.inner.len()
    }

    pub fn reset(&mut self) {
        self.inner.reset();
    }

    /// The value at quantile `q` (0..=1), in nanoseconds.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        self.inner.value_at_quantile(q)
    }

    /// Average, percentiles and max in microseconds.
    pub fn summary_us(&self) -> LatencySummary {
        if self.inner.is_empty() {
            return LatencySummary::default();
        }
        let us = |ns: u64| ns as f64 / 1e3;
        LatencySummary {
            avg: self.inner.mean() / 1e3,
            p50: us(self.inner.value_at_quantile(0.5)),
            p95: us(self.inner.value_at_quantile(0.95)),
            p99: us(self.inner.value_at_quantile(0.99)),
            p999: us(self.inner.value_at_quantile(0.999)),
            max: us(self.inner.max()),
        }
    }
}

/// Latency statistics in microseconds (field names are the JSON keys).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    pub avg: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut h = LatencyHistogram::new();
        for us in 1..=1000u64 {
            h.record_ns(us * 1000);
        }
        let s = h.summary_us();
        assert!((s.p50 - 500.0).abs() <= 0.5, "{s:?}");
        assert!((s.p99 - 990.0).abs() <= 1.0, "{s:?}");
        assert!((s.p999 - 999.0).abs() <= 1.0, "{s:?}");
        assert!((s.max - 1000.0).abs() <= 1.0, "{s:?}");
        assert!((s.avg - 500.5).abs() <= 0.5, "{s:?}");
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut all = LatencyHistogram::new();
        for i in 0..10_000u64 {
            // Two shards with very different latencies: the merged p50 must sit between them,
            // which averaging per-shard percentiles would not reproduce at p99.
            let (fast, slow) = (10_000 + i, 5_000_000 + 100 * i);
            a.record_ns(fast);
            b.record_ns(slow);
            all.record_ns(fast);
            all.record_ns(slow);
        }
        let mut merged = a.clone();
        merged.add(&b);
        assert_eq!(merged.count(), 20_000);
        assert_eq!(merged.summary_us(), all.summary_us());
        assert!(merged.summary_us().p99 > 5_000.0);
    }

    #[test]
    fn out_of_range_values_are_clamped_not_lost() {
        let mut h = LatencyHistogram::new();
        h.record_ns(0);
        h.record_ns(u64::MAX);
        assert_eq!(h.count(), 2);
        assert!(h.summary_us().max >= MAX_TRACKED_NS as f64 / 1e3 * 0.999);
        assert_eq!(
            LatencyHistogram::new().summary_us(),
            LatencySummary::default()
        );
    }
}
