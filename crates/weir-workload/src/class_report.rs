//! Per-class results when the run goes through the scheduler: exact latency percentiles split
//! into time in queue and time in the disk (merged from the jobs of each class), and the
//! scheduler's own counters (disk time consumed, flow ratio, starvation).

use std::fmt::Write as _;

use serde::Serialize;
use weir_sched::{ClassMetrics, ShardMetrics};

use crate::job_report::JobReport;
use crate::measures::{JobHistograms, Latencies, Throughput};
use crate::options::SchedulerOptions;
use weir_sched::merge::MergeCounts;

/// The scheduler section of a report.
#[derive(Debug, Clone, Serialize)]
pub struct SchedulerReport {
    /// False with `--no-scheduler`: classes are measured but nothing is held back.
    pub limiting: bool,
    pub latency_goal_us: f64,
    /// The slowest shard's measured disk speed relative to the model (1.0 = as modelled).
    pub speed_factor: f64,
    /// The tail guard's factor on the write window (1.0 = none; below 1 the reads' tail
    /// latency held the writes back). The smallest over shards.
    pub tail_guard: f64,
    /// Run-time K: the rate the budget refills at, relative to the model, at the end of
    /// the run (the budget is shared, so every shard reports the same).
    pub rate_factor: f64,
    /// Pieces sent merged with their neighbours in the file, and the requests that carried
    /// them (all classes and shards).
    #[serde(serialize_with = "merge_counts_json")]
    pub merged: MergeCounts,
    pub classes: Vec<ClassReport>,
}

/// One scheduling class, all its jobs and shards merged.
#[derive(Debug, Clone, Serialize)]
pub struct ClassReport {
    pub name: String,
    pub shares: u32,
    /// The supergroup (`--sched-groups`) holding the class, and its shares; null at the top
    /// level.
    pub supergroup: Option<String>,
    pub supergroup_shares: Option<u32>,
    pub jobs: Vec<String>,
    #[serde(flatten)]
    pub throughput: Throughput,
    #[serde(flatten)]
    pub latencies: Latencies,
    /// Seconds of modelled disk time dispatched per second of run (1.0 = the whole disk).
    pub consumption: f64,
    /// Dispatched over completed disk time, smoothed (1.0 = the disk keeps up).
    pub flow_ratio: f64,
    /// Seconds this class had requests queued while none could be dispatched.
    pub starvation_s: f64,
}

impl SchedulerReport {
    /// Groups jobs by class and adds the scheduler's counters.
    pub fn build(
        options: &SchedulerOptions,
        jobs: &[JobReport],
        shards: &[ShardMetrics],
        merged: MergeCounts,
        window_s: f64,
    ) -> SchedulerReport {
        let mut names: Vec<&str> = Vec::new();
        for job in jobs {
            if !names.contains(&job.class.as_str()) {
                names.push(&job.class);
            }
        }
        let rate = |v: f64| if window_s > 0.0 { v / window_s } else { 0.0 };
        let classes = names
            .into_iter()
            .map(|name| {
                let members: Vec<&JobReport> = jobs.iter().filter(|j| j.class == name).collect();
                let histograms =
                    JobHistograms::merged(members.iter().filter_map(|j| j.histograms.as_deref()));
                let mut counters = ClassMetrics::default();
                for shard in shards {
                    for c in shard.classes.iter().filter(|c| c.name == name) {
                        counters.merge(c);
                        counters.shares = c.shares;
                    }
                }
                let ops: u64 = members.iter().map(|j| j.throughput.ops).sum();
                let bytes: u64 = members.iter().map(|j| j.throughput.bytes).sum();
                let parent = options
                    .groups
                    .as_ref()
                    .and_then(|g| g.get(name))
                    .and_then(|g| g.parent.as_deref())
                    .and_then(|p| options.groups.as_ref().and_then(|g| g.get(p)));
                ClassReport {
                    name: name.to_string(),
                    shares: counters.shares,
                    supergroup: parent.map(|p| p.name.clone()),
                    supergroup_shares: parent.map(|p| p.shares),
                    jobs: members.iter().map(|j| j.name.clone()).collect(),
                    throughput: Throughput::over(ops, bytes, window_s),
                    latencies: Latencies::of(&histograms),
                    consumption: rate(counters.consumption_sec),
                    flow_ratio: counters.flow_ratio,
                    starvation_s: counters.starvation_sec,
                }
            })
            .collect();
        SchedulerReport {
            limiting: !options.config.unlimited,
            latency_goal_us: options.config.latency_goal.as_secs_f64() * 1e6,
            speed_factor: shards
                .iter()
                .map(|s| s.speed_factor)
                .fold(f64::INFINITY, f64::min)
                .min(1e9),
            tail_guard: shards
                .iter()
                .map(|s| s.tail_guard)
                .fold(f64::INFINITY, f64::min)
                .min(1e9),
            rate_factor: shards.first().map_or(1.0, |s| s.rate_factor),
            merged,
            classes,
        }
    }

    /// The per-class table printed under the jobs.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "scheduler: {}, latency goal {:.0} us, rate K {:.2} x model, disk speed {:.2} x model, \
             tail guard {:.2}",
            if self.limiting {
                "on"
            } else {
                "measuring only (--no-scheduler)"
            },
            self.latency_goal_us,
            self.rate_factor,
            self.speed_factor,
            self.tail_guard
        );
        if self.merged.requests > 0 {
            let _ = writeln!(
                out,
                "merged: {} pieces that continue each other went out as {} requests ({:.1} \
                 pieces each)",
                self.merged.pieces,
                self.merged.requests,
                self.merged.pieces as f64 / self.merged.requests as f64
            );
        }
        let mut rows = vec![[
            "class",
            "shares",
            "IOPS",
            "MiB/s",
            "p99",
            "queue p50",
            "queue p99",
            "disk p50",
            "disk p99",
            "consumption",
            "flow",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()];
        for c in &self.classes {
            // A class in a supergroup reads `group/class` and `group shares/class shares`.
            let (name, shares) = match (&c.supergroup, c.supergroup_shares) {
                (Some(g), Some(gs)) => (format!("{g}/{}", c.name), format!("{gs}/{}", c.shares)),
                _ => (c.name.clone(), c.shares.to_string()),
            };
            rows.push(vec![
                name,
                shares,
                format!("{:.0}", c.throughput.iops),
                format!(
                    "{:.1}",
                    c.throughput.bandwidth_bytes_per_s / (1024.0 * 1024.0)
                ),
                format!("{:.0}", c.latencies.latency_us.p99),
                format!("{:.0}", c.latencies.queue_latency_us.p50),
                format!("{:.0}", c.latencies.queue_latency_us.p99),
                format!("{:.0}", c.latencies.disk_latency_us.p50),
                format!("{:.0}", c.latencies.disk_latency_us.p99),
                format!("{:.2}", c.consumption),
                format!("{:.2}", c.flow_ratio),
            ]);
        }
        crate::text_table::write_table(&mut out, &rows);
        out
    }
}

/// `MergeCounts` as `{"pieces": .., "requests": ..}` (weir-sched has no serde).
fn merge_counts_json<S: serde::Serializer>(m: &MergeCounts, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct;
    let mut out = s.serialize_struct("MergeCounts", 2)?;
    out.serialize_field("pieces", &m.pieces)?;
    out.serialize_field("requests", &m.requests)?;
    out.end()
}
