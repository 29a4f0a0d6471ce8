//! `weir tune`'s pictures: the depth sweeps with the chosen knee marked, the saturation
//! (request size) sweeps and the sector sweep. Input: the tune section's JSON, whose `report`
//! is `weir tune --format json`'s `dirs[].report`.

use serde_json::Value;

use super::{at, list, num};
use crate::chart::{color, AxisSpec, Chart, ChartBody, Series, SeriesKind};

/// The sweeps in the order drawn: (JSON key, label, metric plotted).
const IOPS_SWEEPS: [(&str, &str); 2] = [
    ("random_read", "random read"),
    ("random_write", "random write"),
];
const BANDWIDTH_SWEEPS: [(&str, &str); 2] = [
    ("sequential_read", "sequential read"),
    ("sequential_write", "sequential write"),
];

/// Every tune chart that has data.
pub fn charts(tune: &Value) -> Vec<Chart> {
    let Some(report) = tune.get("report") else {
        return Vec::new();
    };
    let mut out = vec![
        depth_chart(
            report,
            "tune-depth-iops",
            "Random I/O: rate by queue depth",
            &IOPS_SWEEPS,
            "iops",
            AxisSpec::linear("rate", "IOPS"),
        ),
        depth_chart(
            report,
            "tune-depth-bandwidth",
            "Sequential I/O: bandwidth by queue depth",
            &BANDWIDTH_SWEEPS,
            "bandwidth_bytes_per_s",
            AxisSpec::linear("bandwidth", "B/s"),
        ),
        saturation_chart(report),
        sector_chart(report),
    ];
    out.retain(|c| !c.is_empty());
    out
}

type Point = (f64, f64);

/// (depth, metric) of every step of a knee sweep, and the knee's point.
fn sweep_points(sweep: &Value, metric: &str) -> (Vec<Point>, Option<Point>) {
    let steps = list(sweep, "/steps");
    let points: Vec<(f64, f64)> = steps
        .iter()
        .filter_map(|s| Some((at(s, "/load/depth")?, num(s, metric)?)))
        .collect();
    let knee = num(sweep, "knee")
        .and_then(|k| steps.get(k as usize))
        .and_then(|s| Some((at(s, "/load/depth")?, num(s, metric)?)));
    (points, knee)
}

fn depth_chart(
    report: &Value,
    id: &str,
    title: &str,
    sweeps: &[(&str, &str)],
    metric: &str,
    y: AxisSpec,
) -> Chart {
    let mut series = Vec::new();
    for (i, (key, label)) in sweeps.iter().enumerate() {
        let Some(sweep) = report.pointer(&format!("/sweeps/{key}")) else {
            continue;
        };
        let (points, knee) = sweep_points(sweep, metric);
        series.push(Series {
            label: (*label).into(),
            kind: SeriesKind::Line,
            color: color(i),
            points,
        });
        if let Some(k) = knee {
            // A dashed stem from the axis to the knee's rate: unlike a marker it stays
            // visible when the sweep has a single step under it.
            series.push(Series {
                // Short: the legend is ~22 characters wide.
                label: format!("{} knee: {}", label.split(' ').nth(1).unwrap_or(label), k.0),
                kind: SeriesKind::DashedLine,
                color: color(i),
                points: vec![(k.0, 0.0), k],
            });
        }
    }
    Chart {
        id: id.into(),
        title: title.into(),
        subtitle: "each step of the depth sweep; the dashed stem is the knee weir chose (the smallest depth within accuracy of the best)".into(),
        body: ChartBody::Xy {
            x: AxisSpec::log("requests in flight (all shards)", ""),
            y,
            series,
        },
    }
}

fn saturation_chart(report: &Value) -> Chart {
    let mut series = Vec::new();
    for (i, (key, label)) in [
        ("read_saturation", "sequential read"),
        ("write_saturation", "sequential write"),
    ]
    .iter()
    .enumerate()
    {
        let points = list(report, &format!("/sweeps/{key}/steps"))
            .iter()
            .filter_map(|s| {
                Some((
                    at(s, "/load/request_bytes")?,
                    num(s, "bandwidth_bytes_per_s")?,
                ))
            })
            .collect();
        series.push(Series {
            label: (*label).into(),
            kind: SeriesKind::Line,
            color: color(i),
            points,
        });
    }
    Chart {
        id: "tune-saturation".into(),
        title: "Saturation length: bandwidth by request size at constant bytes in flight".into(),
        subtitle: format!(
            "read saturates at {} B, write at {} B",
            num(report, "read_saturation_bytes").unwrap_or(f64::NAN),
            num(report, "write_saturation_bytes").unwrap_or(f64::NAN)
        ),
        body: ChartBody::Xy {
            x: AxisSpec::log("request size", "B"),
            y: AxisSpec::linear("bandwidth", "B/s"),
            series,
        },
    }
}

fn sector_chart(report: &Value) -> Chart {
    let points: Vec<(f64, f64)> = list(report, "/sector/points")
        .iter()
        .filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?)))
        .collect();
    let measured = at(report, "/sector/measured_bytes");
    let mut series = vec![Series {
        label: "random write".into(),
        kind: SeriesKind::Line,
        color: color(1),
        points: points.clone(),
    }];
    if let Some(m) = measured.and_then(|m| points.iter().find(|p| p.0 == m)) {
        series.push(Series {
            label: format!("sector: {} B", m.0),
            kind: SeriesKind::DashedLine,
            color: color(0),
            points: vec![(m.0, 0.0), *m],
        });
    }
    Chart {
        id: "tune-sector".into(),
        title: "Sector sweep: random-write IOPS by request size".into(),
        subtitle: format!(
            "the physical sector is where IOPS stop improving with smaller writes; verdict {} B (kernel reports {})",
            at(report, "/sector/physical_bytes").unwrap_or(f64::NAN),
            report
                .get("reported_physical_sector_bytes")
                .and_then(Value::as_f64)
                .map_or_else(|| "nothing".to_string(), |b| format!("{b} B"))
        ),
        body: ChartBody::Xy {
            x: AxisSpec::log("request size", "B"),
            y: AxisSpec::linear("rate", "IOPS"),
            series,
        },
    }
}
