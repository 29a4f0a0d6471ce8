//! Turning a run's measurements into plottable series: a job's latency CDF from its exact
//! histogram, and each job's bandwidth per sampling window from the run's progress samples.
//! Used by the QoS demo and by `weir run --plot`.

use serde_json::{json, Value};
use weir_workload::{Progress, Report};

/// The quantiles a CDF is drawn through: evenly spaced, then ever closer to 1 for the tail.
const CDF_QUANTILES: [f64; 27] = [
    0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8,
    0.85, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99999, 1.0,
];

/// (latency ms, fraction of requests at or below) of job `name`, from its exact histogram;
/// empty when the job has no histogram or no requests.
pub fn job_cdf(report: &Report, name: &str) -> Vec<(f64, f64)> {
    let Some(h) = report
        .jobs
        .iter()
        .find(|j| j.name == name)
        .and_then(|j| j.histograms.as_ref())
    else {
        return Vec::new();
    };
    if h.latency.count() == 0 {
        return Vec::new();
    }
    let mut out: Vec<(f64, f64)> = Vec::new();
    for q in CDF_QUANTILES {
        // Milliseconds: the axis labels then read 0.1 ms .. 100 ms.
        let ms = h.latency.quantile_ns(q) as f64 / 1e6;
        match out.last_mut() {
            // One point per latency: the highest fraction reached at it.
            Some(last) if last.0 == ms => last.1 = q,
            _ => out.push((ms, q)),
        }
    }
    out
}

/// One job's samples so far.
#[derive(Debug, Clone)]
struct JobTimeline {
    name: String,
    /// The last sample: (seconds, cumulative bytes).
    last: (f64, u64),
    /// (seconds, B/s) per window.
    points: Vec<(f64, f64)>,
}

/// Each job's bandwidth in each window between progress samples.
#[derive(Debug, Default, Clone)]
pub struct Timeline {
    jobs: Vec<JobTimeline>,
}

impl Timeline {
    /// Records one progress sample (cumulative totals since the start).
    pub fn sample(&mut self, p: &Progress) {
        let t = p.elapsed.as_secs_f64();
        for job in &p.jobs {
            let i = match self.jobs.iter().position(|j| j.name == job.name) {
                Some(i) => i,
                None => {
                    self.jobs.push(JobTimeline {
                        name: job.name.clone(),
                        last: (0.0, 0),
                        points: Vec::new(),
                    });
                    self.jobs.len() - 1
                }
            };
            let j = &mut self.jobs[i];
            if t > j.last.0 {
                let bytes = job.bytes.saturating_sub(j.last.1);
                j.points.push((t, bytes as f64 / (t - j.last.0)));
                j.last = (t, job.bytes);
            }
        }
    }

    /// Job `name`'s points.
    pub fn job(&self, name: &str) -> Vec<(f64, f64)> {
        self.jobs
            .iter()
            .find(|j| j.name == name)
            .map_or_else(Vec::new, |j| j.points.clone())
    }

    pub fn job_names(&self) -> Vec<String> {
        self.jobs.iter().map(|j| j.name.clone()).collect()
    }
}

/// The JSON `weir run --plot` draws from: the run's report and, per job, its latency CDF and
/// its bandwidth per window.
pub fn run_plot_json(report: &Report, timeline: &Timeline) -> Value {
    let jobs: Vec<Value> = report
        .jobs
        .iter()
        .map(|j| {
            json!({
                "name": j.name,
                "latency_cdf_ms": job_cdf(report, &j.name),
                "bandwidth_timeline": timeline.job(&j.name),
            })
        })
        .collect();
    json!({
        "report": serde_json::from_str::<Value>(&report.to_json()).unwrap_or(Value::Null),
        "jobs": jobs,
    })
}
