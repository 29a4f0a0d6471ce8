//! What every report row measures: [`Throughput`] (requests and bytes over a window, and
//! their rates) and [`Latencies`] (the three latency summaries), each built by one
//! constructor, and [`JobHistograms`], the three histograms behind them with the one merge.
//! Job, shard and class rows embed both with `#[serde(flatten)]`, so their JSON keys stay
//! `ops`, `bytes`, `iops`, `bandwidth_bytes_per_s`, `latency_us`, `queue_latency_us`,
//! `disk_latency_us`, in that order. A leaf: it imports only the histogram.

use serde::Serialize;

use crate::hist::{LatencyHistogram, LatencySummary};

/// Requests and bytes completed in a window, and their rates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Throughput {
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bandwidth_bytes_per_s: f64,
}

impl Throughput {
    /// `ops` requests of `bytes` in all over `window_s` seconds; an empty window has zero
    /// rates rather than infinite ones.
    pub fn over(ops: u64, bytes: u64, window_s: f64) -> Throughput {
        let rate = |v: u64| {
            if window_s > 0.0 {
                v as f64 / window_s
            } else {
                0.0
            }
        };
        Throughput {
            ops,
            bytes,
            iops: rate(ops),
            bandwidth_bytes_per_s: rate(bytes),
        }
    }
}

/// A set of requests' latencies in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Latencies {
    /// From the intended send time (open loop) or the moment the fiber was ready (closed loop)
    /// to completion: what the application sees.
    pub latency_us: LatencySummary,
    /// Intended send time to dispatch to the device (scheduler queue, open-loop backlog).
    pub queue_latency_us: LatencySummary,
    /// Dispatch to completion: time in the kernel and the device.
    pub disk_latency_us: LatencySummary,
}

impl Latencies {
    /// The summaries of `histograms`.
    pub fn of(histograms: &JobHistograms) -> Latencies {
        Latencies {
            latency_us: histograms.latency.summary_us(),
            queue_latency_us: histograms.queue.summary_us(),
            disk_latency_us: histograms.disk.summary_us(),
        }
    }
}

/// The histograms behind a row's [`Latencies`] (not serialized).
#[derive(Debug, Clone, Default)]
pub struct JobHistograms {
    pub latency: LatencyHistogram,
    pub queue: LatencyHistogram,
    pub disk: LatencyHistogram,
}

impl JobHistograms {
    /// Records one request's total, queue and disk times.
    pub fn record_ns(&mut self, total_ns: u64, queue_ns: u64, disk_ns: u64) {
        self.latency.record_ns(total_ns);
        self.queue.record_ns(queue_ns);
        self.disk.record_ns(disk_ns);
    }

    /// Adds `other`'s requests to these histograms (exact: HDR histograms add bucket by
    /// bucket).
    pub fn add(&mut self, other: &JobHistograms) {
        self.latency.add(&other.latency);
        self.queue.add(&other.queue);
        self.disk.add(&other.disk);
    }

    /// Every histogram of `parts` added into one: the merge behind job, class and progress
    /// totals.
    pub fn merged<'a>(parts: impl IntoIterator<Item = &'a JobHistograms>) -> JobHistograms {
        let mut all = JobHistograms::default();
        for part in parts {
            all.add(part);
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_use_the_window_and_an_empty_window_has_none() {
        let t = Throughput::over(300, 300 * 4096, 2.0);
        assert_eq!((t.iops, t.bandwidth_bytes_per_s), (150.0, 150.0 * 4096.0));
        let empty = Throughput::over(5, 10, 0.0);
        assert_eq!(
            (empty.ops, empty.iops, empty.bandwidth_bytes_per_s),
            (5, 0.0, 0.0)
        );
    }

    #[test]
    fn merged_equals_recording_everything_in_one() {
        let mut one = JobHistograms::default();
        let mut parts = vec![JobHistograms::default(), JobHistograms::default()];
        for i in 0..1000u64 {
            let (total, queue, disk) = (1_000 + i * 37, i * 5, 1_000 + i * 32);
            one.record_ns(total, queue, disk);
            parts[(i % 2) as usize].record_ns(total, queue, disk);
        }
        let merged = JobHistograms::merged(&parts);
        assert_eq!(Latencies::of(&merged), Latencies::of(&one));
        assert_eq!(merged.disk.count(), 1000);
    }

    #[test]
    fn flattened_rows_keep_the_keys_and_their_order() {
        #[derive(Serialize)]
        struct Row {
            name: &'static str,
            #[serde(flatten)]
            throughput: Throughput,
            #[serde(flatten)]
            latencies: Latencies,
            errors: u64,
        }
        let row = Row {
            name: "r",
            throughput: Throughput::over(2, 8192, 1.0),
            latencies: Latencies::default(),
            errors: 0,
        };
        let json = serde_json::to_string(&row).expect("serializes");
        let keys = [
            "\"name\"",
            "\"ops\"",
            "\"bytes\"",
            "\"iops\"",
            "\"bandwidth_bytes_per_s\"",
            "\"latency_us\"",
            "\"queue_latency_us\"",
            "\"disk_latency_us\"",
            "\"errors\"",
        ];
        let at: Vec<usize> = keys
            .iter()
            .map(|k| {
                json.find(k)
                    .unwrap_or_else(|| panic!("{k} missing: {json}"))
            })
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{json}");
        assert!(json.contains("\"p999\":"), "{json}");
    }
}
