//! `weir run --plot`'s pictures: each job's latency CDF and its bandwidth over time. Input:
//! [`crate::samples::run_plot_json`].

use serde_json::Value;

use super::{line_series, list};
use crate::chart::{AxisSpec, Chart, ChartBody};

pub fn charts(run: &Value) -> Vec<Chart> {
    let conditions = format!(
        "{} s on {} shard(s), {} backend",
        run.pointer("/report/duration_s")
            .and_then(Value::as_f64)
            .map_or_else(|| "?".into(), |d| format!("{d:.1}")),
        run.pointer("/report/shards")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        run.pointer("/report/backend")
            .and_then(Value::as_str)
            .unwrap_or("?")
    );
    let mut out = vec![
        Chart {
            id: "run-latency-cdf".into(),
            title: "Latency CDF per job".into(),
            subtitle: conditions.clone(),
            body: ChartBody::Xy {
                x: AxisSpec::log("latency (intended send to completion)", "ms"),
                y: AxisSpec::linear("fraction of requests at or below", ""),
                series: line_series(list(run, "/jobs"), "latency_cdf_ms"),
            },
        },
        Chart {
            id: "run-bandwidth-timeline".into(),
            title: "Bandwidth per job over time".into(),
            subtitle: format!("{conditions}; each point is one sampling window"),
            body: ChartBody::Xy {
                x: AxisSpec::linear("time", "s"),
                y: AxisSpec::linear("bandwidth", "B/s"),
                series: line_series(list(run, "/jobs"), "bandwidth_timeline"),
            },
        },
    ];
    out.retain(|c| !c.is_empty());
    out
}
