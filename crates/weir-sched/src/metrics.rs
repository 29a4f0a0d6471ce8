//! Per-class counters and latency histograms, and their Prometheus text exposition.
//!
//! The histograms are log-linear (16 sub-buckets per power of two, so any percentile is within
//! 6.25% of the true value) over 1 ns .. 2^40 ns, fixed-size and allocation-free to record into,
//! so 1000 classes cost about 10 MB and recording costs a few nanoseconds. They merge exactly
//! across shards.

use std::fmt::Write as _;

use crate::LaneStats;

const SUB_BUCKET_BITS: u32 = 4;
const SUB_BUCKETS: usize = 1 << SUB_BUCKET_BITS;
const OCTAVES: usize = 41;
const BUCKETS: usize = OCTAVES * SUB_BUCKETS;

/// A latency histogram in nanoseconds. See the module documentation.
///
/// ```
/// use weir_sched::LatencyHistogram;
///
/// let mut h = LatencyHistogram::default();
/// for us in 1..=100 {
///     h.record(us * 1000);
/// }
/// assert_eq!(h.count(), 100);
/// assert_eq!(h.max_ns(), 100_000);
/// let p99 = h.percentile_ns(99.0);
/// assert!((99_000..=100_000).contains(&p99), "{p99}");
/// ```
#[derive(Clone)]
pub struct LatencyHistogram {
    counts: Box<[u64; BUCKETS]>,
    total: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl std::fmt::Debug for LatencyHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LatencyHistogram")
            .field("count", &self.total)
            .field("p50_ns", &self.percentile_ns(50.0))
            .field("p99_ns", &self.percentile_ns(99.0))
            .field("max_ns", &self.max_ns)
            .finish()
    }
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            counts: Box::new([0; BUCKETS]),
            total: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

fn bucket_of(ns: u64) -> usize {
    if ns < SUB_BUCKETS as u64 {
        return ns as usize;
    }
    let octave = 63 - ns.leading_zeros(); // >= SUB_BUCKET_BITS
    let sub = (ns >> (octave - SUB_BUCKET_BITS)) as usize & (SUB_BUCKETS - 1);
    let index = (octave - SUB_BUCKET_BITS + 1) as usize * SUB_BUCKETS + sub;
    index.min(BUCKETS - 1)
}

/// The upper edge of a bucket, in nanoseconds.
fn bucket_high_ns(index: usize) -> u64 {
    if index < SUB_BUCKETS {
        return index as u64;
    }
    let octave = (index / SUB_BUCKETS) as u32 - 1 + SUB_BUCKET_BITS;
    let sub = (index % SUB_BUCKETS) as u64;
    ((SUB_BUCKETS as u64 + sub + 1) << (octave - SUB_BUCKET_BITS)) - 1
}

impl LatencyHistogram {
    /// Records one latency.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.counts[bucket_of(ns)] += 1;
        self.total += 1;
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// Adds another histogram's samples.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.total += other.total;
        self.sum_ns += other.sum_ns;
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// Sum of all samples, in seconds.
    pub fn sum_sec(&self) -> f64 {
        self.sum_ns as f64 / 1e9
    }

    /// The mean sample (0 with none).
    pub fn mean_ns(&self) -> u64 {
        if self.total == 0 {
            0
        } else {
            (self.sum_ns / u128::from(self.total)) as u64
        }
    }

    /// The largest sample.
    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// The latency at `percent` (0..=100): the upper edge of its bucket, never above the max.
    pub fn percentile_ns(&self, percent: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((percent / 100.0) * self.total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (index, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return bucket_high_ns(index).min(self.max_ns);
            }
        }
        self.max_ns
    }
}

/// Counters for one class on one shard. Cumulative since the queue was built.
#[derive(Debug, Clone, Default)]
pub struct ClassMetrics {
    /// The class's name.
    pub name: String,
    /// The class's shares now.
    pub shares: u32,
    /// Read pieces dispatched.
    pub read_ops: u64,
    /// Write pieces dispatched.
    pub write_ops: u64,
    /// Bytes of read pieces dispatched.
    pub read_bytes: u64,
    /// Bytes of write pieces dispatched.
    pub write_bytes: u64,
    /// Time from `enqueue` to dispatch, per dispatched piece.
    pub queue_latency: LatencyHistogram,
    /// Time from dispatch to `complete`, per piece.
    pub disk_latency: LatencyHistogram,
    /// Disk time dispatched, in seconds (1.0 per second of wall time = the whole disk).
    pub consumption_sec: f64,
    /// Disk time completed, in seconds.
    pub completed_sec: f64,
    /// Time the class had requests queued while none of them could be dispatched.
    pub starvation_sec: f64,
    /// Requests (pieces) waiting in the queue now.
    pub queue_length: u64,
    /// Pieces in the disk now.
    pub disk_queue_length: u64,
    /// Dispatched over completed disk time, smoothed (1.0 = the disk keeps up).
    pub flow_ratio: f64,
}

impl ClassMetrics {
    /// Counts one dispatched piece of `len_bytes` on `direction`.
    pub(crate) fn count_piece(&mut self, direction: weir_model::device::Direction, len_bytes: u64) {
        match direction {
            weir_model::device::Direction::Read => {
                self.read_ops += 1;
                self.read_bytes += len_bytes;
            }
            weir_model::device::Direction::Write => {
                self.write_ops += 1;
                self.write_bytes += len_bytes;
            }
        }
    }

    /// Adds another shard's counters for the same class (for totals across shards).
    pub fn merge(&mut self, other: &ClassMetrics) {
        self.read_ops += other.read_ops;
        self.write_ops += other.write_ops;
        self.read_bytes += other.read_bytes;
        self.write_bytes += other.write_bytes;
        self.queue_latency.merge(&other.queue_latency);
        self.disk_latency.merge(&other.disk_latency);
        self.consumption_sec += other.consumption_sec;
        self.completed_sec += other.completed_sec;
        self.starvation_sec += other.starvation_sec;
        self.queue_length += other.queue_length;
        self.disk_queue_length += other.disk_queue_length;
        self.flow_ratio = self.flow_ratio.max(other.flow_ratio);
    }
}

/// One shard's view, as returned by `ShardQueue::metrics`.
#[derive(Debug, Clone, Default)]
pub struct ShardMetrics {
    /// The shard (0-based).
    pub shard: usize,
    /// Every class of the shard, in the order they were added.
    pub classes: Vec<ClassMetrics>,
    /// Measured disk speed relative to the model (see `LaneStats::speed_factor`).
    pub speed_factor: f64,
    /// The tail guard's factor on the write window (see `LaneStats::tail_guard`).
    pub tail_guard: f64,
    /// Run-time K of the write lane (see `LaneStats::rate_factor`).
    pub rate_factor: f64,
    /// Both lanes of the shared budget (read, write; one lane twice on a half-duplex disk),
    /// with what their controllers did (`LaneStats::counters`).
    pub lanes: [LaneStats; 2],
    /// `dispatch` calls that stopped to let another shard catch up in virtual time.
    pub lag_stalls: u64,
    /// Of those, the stalls of a shard with nothing in the disk woken at the laggard's next
    /// expected `dispatch` call rather than after goal / 8 (docs/scheduler-rate.md section 19).
    pub lag_short_wakes: u64,
    /// Leads the cross-shard lag let go because the shard that waited on the budget was long
    /// past its own next call: runnable but off its CPU (docs/scheduler-cost-per-io.md).
    pub lag_overdue_skips: u64,
    /// `dispatch` calls bound to stop at the first class they empty, after a round the device
    /// served whole before the next call (an inline device such as zram;
    /// docs/scheduler-rate.md section 18).
    pub round_bounds: u64,
    /// Pieces the caller's loop sent merged with their neighbours in the file, and the
    /// requests that carried them (the queue itself leaves this zero; a loop that merges
    /// with [`crate::merge::Merger`] fills it in).
    pub merged: crate::merge::MergeCounts,
}

fn escape(label: &str) -> String {
    label
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

struct Family {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
}

const FAMILIES: [Family; 11] = [
    Family {
        name: "total_bytes",
        kind: "counter",
        help: "Bytes dispatched to the disk",
    },
    Family {
        name: "total_ops",
        kind: "counter",
        help: "Requests dispatched to the disk",
    },
    Family {
        name: "total_delay_sec",
        kind: "counter",
        help: "Total time requests spent in the queue",
    },
    Family {
        name: "total_exec_sec",
        kind: "counter",
        help: "Total time requests spent in the disk",
    },
    Family {
        name: "starvation_time_sec",
        kind: "counter",
        help: "Time a class waited with requests queued and none dispatched",
    },
    Family {
        name: "queue_length",
        kind: "gauge",
        help: "Requests waiting in the queue",
    },
    Family {
        name: "disk_queue_length",
        kind: "gauge",
        help: "Requests in the disk",
    },
    Family {
        name: "shares",
        kind: "gauge",
        help: "The class's shares",
    },
    Family {
        name: "consumption",
        kind: "counter",
        help: "Disk time dispatched, in seconds (1 per second = saturated)",
    },
    Family {
        name: "flow_ratio",
        kind: "gauge",
        help: "Dispatched over completed disk time, smoothed",
    },
    Family {
        name: "delay_quantile_sec",
        kind: "gauge",
        help: "Queue and disk latency percentiles",
    },
];

/// Renders Prometheus text exposition for every shard and class, with metric names modelled
/// on Seastar's `seastar_io_queue_*` (prefix `weir_io_queue_`) and labels `mountpoint`,
/// `shard`, `class` and, where it applies, `direction` or `stage` and `quantile`.
pub fn render_prometheus(mountpoint: &str, shards: &[ShardMetrics]) -> String {
    let mut out = String::new();
    let mp = escape(mountpoint);
    for family in &FAMILIES {
        let name = format!("weir_io_queue_{}", family.name);
        let _ = writeln!(out, "# HELP {name} {}", family.help);
        let _ = writeln!(out, "# TYPE {name} {}", family.kind);
        for shard in shards {
            for c in &shard.classes {
                let labels = format!(
                    "class=\"{}\",mountpoint=\"{mp}\",shard=\"{}\"",
                    escape(&c.name),
                    shard.shard
                );
                let mut line = |extra: &str, value: f64| {
                    let _ = writeln!(out, "{name}{{{labels}{extra}}} {value}");
                };
                match family.name {
                    "total_bytes" => {
                        line(",direction=\"read\"", c.read_bytes as f64);
                        line(",direction=\"write\"", c.write_bytes as f64);
                    }
                    "total_ops" => {
                        line(",direction=\"read\"", c.read_ops as f64);
                        line(",direction=\"write\"", c.write_ops as f64);
                    }
                    "total_delay_sec" => line("", c.queue_latency.sum_sec()),
                    "total_exec_sec" => line("", c.disk_latency.sum_sec()),
                    "starvation_time_sec" => line("", c.starvation_sec),
                    "queue_length" => line("", c.queue_length as f64),
                    "disk_queue_length" => line("", c.disk_queue_length as f64),
                    "shares" => line("", f64::from(c.shares)),
                    "consumption" => line("", c.consumption_sec),
                    "flow_ratio" => line("", c.flow_ratio),
                    _ => {
                        for (stage, h) in [("queue", &c.queue_latency), ("disk", &c.disk_latency)] {
                            for q in [0.5, 0.95, 0.99, 0.999] {
                                let extra = format!(",stage=\"{stage}\",quantile=\"{q}\"");
                                line(&extra, h.percentile_ns(q * 100.0) as f64 / 1e9);
                            }
                        }
                    }
                }
            }
        }
    }
    render_lanes(&mut out, &mp, shards);
    out
}

/// One figure of a lane, for `render_lanes`.
type LaneFigure = fn(&LaneStats) -> f64;

/// One per-shard counter, `NAME{mountpoint,shard}`, with its TYPE line.
fn render_shard_counter(
    out: &mut String,
    mp: &str,
    shards: &[ShardMetrics],
    name: &str,
    value: fn(&ShardMetrics) -> u64,
) {
    let _ = writeln!(out, "# TYPE {name} counter");
    for shard in shards {
        let _ = writeln!(
            out,
            "{name}{{mountpoint=\"{mp}\",shard=\"{}\"}} {}",
            shard.shard,
            value(shard)
        );
    }
}

/// The lanes' state and controller counters, `weir_io_lane_*{mountpoint,direction}` gauges.
/// The lanes belong to the budget every shard shares, so they are written once (shard 0's
/// view).
fn render_lanes(out: &mut String, mp: &str, shards: &[ShardMetrics]) {
    render_shard_counter(out, mp, shards, "weir_io_queue_lag_stalls", |s| {
        s.lag_stalls
    });
    render_shard_counter(out, mp, shards, "weir_io_queue_lag_short_wakes", |s| {
        s.lag_short_wakes
    });
    render_shard_counter(out, mp, shards, "weir_io_queue_lag_overdue_skips", |s| {
        s.lag_overdue_skips
    });
    render_shard_counter(out, mp, shards, "weir_io_queue_round_bounds", |s| {
        s.round_bounds
    });
    let Some(first) = shards.first() else {
        return;
    };
    let rows: [(&str, LaneFigure); 28] = [
        ("solo_probe_periods", |l| {
            l.counters.solo_probe_periods as f64
        }),
        ("unloaded_sec", |l| l.unloaded_sec),
        ("min_latency_sec", |l| l.min_latency_sec),
        ("in_flight_sec", |l| l.in_flight_sec),
        ("window_sec", |l| l.window_sec),
        ("speed_factor", |l| l.speed_factor),
        ("tail_guard", |l| l.tail_guard),
        ("rate_factor", |l| l.rate_factor),
        ("pipeline_sec", |l| l.pipeline_sec),
        ("depth_cap_sec", |l| l.depth_cap_sec),
        ("window_refusals", |l| l.window_refusals as f64),
        ("bucket_refusals", |l| l.bucket_refusals as f64),
        ("period_sec", |l| l.counters.period_sec),
        ("periods", |l| l.counters.periods as f64),
        ("window_bound_periods", |l| {
            l.counters.window_bound_periods as f64
        }),
        ("bucket_bound_periods", |l| {
            l.counters.bucket_bound_periods as f64
        }),
        ("pipeline_open_periods", |l| {
            l.counters.pipeline_open_periods as f64
        }),
        ("share_gate_periods", |l| {
            l.counters.share_gate_periods as f64
        }),
        ("depth_cap_engagements", |l| {
            l.counters.depth_cap_engagements as f64
        }),
        ("depth_cap_periods", |l| l.counters.depth_cap_periods as f64),
        ("depth_queueing_periods", |l| {
            l.counters.depth_queueing_periods as f64
        }),
        ("depth_blocked_bound", |l| {
            l.counters.depth_blocked_bound as f64
        }),
        ("depth_blocked_other_lane", |l| {
            l.counters.depth_blocked_other_lane as f64
        }),
        ("depth_blocked_idle", |l| {
            l.counters.depth_blocked_idle as f64
        }),
        ("queue_ratio_max", |l| l.counters.queue_ratio_max),
        ("queue_ratio_last", |l| l.counters.queue_ratio_last),
        ("disk_knee_cuts", |l| l.counters.disk_knee_cuts as f64),
        ("disk_knee_misses", |l| l.counters.disk_knee_misses as f64),
    ];
    for (name, value) in rows {
        let _ = writeln!(out, "# TYPE weir_io_lane_{name} gauge");
        for (direction, lane) in ["read", "write"].iter().zip(&first.lanes) {
            let _ = writeln!(
                out,
                "weir_io_lane_{name}{{mountpoint=\"{mp}\",direction=\"{direction}\"}} {}",
                value(lane)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_within_one_bucket() {
        let mut h = LatencyHistogram::default();
        for ns in 1..=100_000u64 {
            h.record(ns * 10);
        }
        for p in [50.0, 90.0, 99.0, 99.9] {
            let exact = (p / 100.0 * 100_000.0) * 10.0;
            let got = h.percentile_ns(p) as f64;
            assert!(
                got >= exact * 0.999 && got <= exact * 1.0626,
                "p{p}: {got} vs {exact}"
            );
        }
        assert_eq!(h.percentile_ns(100.0), 1_000_000);
        assert_eq!(h.count(), 100_000);
        let mut merged = LatencyHistogram::default();
        merged.merge(&h);
        merged.merge(&h);
        assert_eq!(merged.count(), 200_000);
        assert_eq!(merged.percentile_ns(50.0), h.percentile_ns(50.0));
    }

    #[test]
    fn buckets_are_monotonic() {
        let mut last = 0;
        for ns in [
            0u64,
            1,
            15,
            16,
            17,
            31,
            32,
            1000,
            1 << 30,
            1 << 41,
            u64::MAX,
        ] {
            let b = bucket_of(ns);
            assert!(b >= last);
            assert!(bucket_high_ns(b) >= ns.min(bucket_high_ns(BUCKETS - 1)));
            last = b;
        }
    }

    #[test]
    fn prometheus_text_has_seastar_like_names_and_labels() {
        let mut c = ClassMetrics {
            name: "query \"a\"".into(),
            shares: 1000,
            read_ops: 3,
            ..Default::default()
        };
        c.disk_latency.record(100_000);
        let text = render_prometheus(
            "/var/lib/weir",
            &[ShardMetrics {
                shard: 1,
                classes: vec![c],
                speed_factor: 1.0,
                tail_guard: 1.0,
                rate_factor: 1.0,
                lanes: Default::default(),
                lag_stalls: 7,
                lag_short_wakes: 5,
                lag_overdue_skips: 4,
                round_bounds: 9,
                merged: Default::default(),
            }],
        );
        assert!(text.contains("# TYPE weir_io_queue_total_ops counter"));
        assert!(text.contains(
            "weir_io_queue_total_ops{class=\"query \\\"a\\\"\",mountpoint=\"/var/lib/weir\",shard=\"1\",direction=\"read\"} 3"
        ), "{text}");
        assert!(text.contains("weir_io_queue_shares{"));
        assert!(
            text.contains("weir_io_lane_depth_cap_engagements{mountpoint=\"/var/lib/weir\",direction=\"write\"} 0"),
            "{text}"
        );
        assert!(
            text.contains("stage=\"disk\",quantile=\"0.99\"} 0.0001"),
            "{text}"
        );
        // The per-shard counters bench/shares.sh reads, each with its TYPE line.
        assert!(
            text.contains("# TYPE weir_io_queue_lag_stalls counter"),
            "{text}"
        );
        assert!(
            text.contains("weir_io_queue_lag_stalls{mountpoint=\"/var/lib/weir\",shard=\"1\"} 7"),
            "{text}"
        );
        assert!(
            text.contains(
                "weir_io_queue_lag_short_wakes{mountpoint=\"/var/lib/weir\",shard=\"1\"} 5"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "weir_io_queue_lag_overdue_skips{mountpoint=\"/var/lib/weir\",shard=\"1\"} 4"
            ),
            "{text}"
        );
        assert!(
            text.contains("weir_io_queue_round_bounds{mountpoint=\"/var/lib/weir\",shard=\"1\"} 9"),
            "{text}"
        );
    }
}
