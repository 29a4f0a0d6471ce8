//! The QoS demo's pictures: read latency CDFs and write bandwidth over time, one line per run
//! (reads alone, beside writes without the scheduler, through weir's scheduler). Input: the
//! qos section's JSON (`runs[]` with `read_latency_cdf_ms` and `write_bandwidth_timeline`,
//! both built from the run's exact histogram and its progress samples).

use serde_json::Value;

use super::{line_series, list};
use crate::chart::{AxisSpec, Chart, ChartBody};

pub fn charts(qos: &Value) -> Vec<Chart> {
    let runs = list(qos, "/runs");
    let goal = qos
        .get("latency_goal_us")
        .and_then(Value::as_f64)
        .map_or_else(String::new, |g| format!("; scheduler goal {g} us"));
    let workload = qos
        .get("workload")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut out = vec![
        Chart {
            id: "qos-read-cdf".into(),
            title: "Read latency CDF, with and without the scheduler".into(),
            subtitle: format!("{workload}{goal}"),
            body: ChartBody::Xy {
                x: AxisSpec::log("read latency (intended send to completion)", "ms"),
                y: AxisSpec::linear("fraction of reads at or below", ""),
                series: line_series(runs, "read_latency_cdf_ms"),
            },
        },
        Chart {
            id: "qos-write-timeline".into(),
            title: "Write bandwidth over time beside the reads".into(),
            subtitle: format!(
                "{}; each point is one sampling window",
                qos.get("write_regime")
                    .and_then(Value::as_str)
                    .unwrap_or("writes")
            ),
            body: ChartBody::Xy {
                x: AxisSpec::linear("time", "s"),
                y: AxisSpec::linear("write bandwidth", "B/s"),
                series: line_series(runs, "write_bandwidth_timeline"),
            },
        },
    ];
    out.retain(|c| !c.is_empty());
    out
}
