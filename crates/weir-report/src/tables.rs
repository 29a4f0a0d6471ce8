//! The page's tables, each read from its section's JSON: the doctor checklist, qualify's
//! verdicts, tune's four numbers, the QoS runs side by side, the alignment summary.

use serde_json::Value;

use crate::doc::SectionKind;
use crate::escape::esc;
use crate::figures::list;
use weir_plot::format_si;

/// A JSON value as table text: strings bare, numbers rounded to 4 significant digits, null as
/// a dash.
fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "-".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.as_f64().map_or_else(|| n.to_string(), round4),
        Some(other) => other.to_string(),
    }
}

fn round4(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{x}");
    }
    let digits = (3 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.digits$}")
}

fn si(v: Option<&Value>, unit: &str) -> String {
    v.and_then(Value::as_f64)
        .map_or_else(|| "-".into(), |x| format_si(x, unit))
}

/// A table with a header row; each row's cells are HTML already, with an optional class for
/// the row's verdict cell (the first cell).
fn table(id: &str, header: &[&str], rows: &[(Option<String>, Vec<String>)]) -> String {
    let mut s = format!("<table id=\"{id}\"><tr>");
    for h in header {
        s.push_str(&format!("<th>{}</th>", esc(h)));
    }
    s.push_str("</tr>\n");
    for (class, cells) in rows {
        s.push_str("<tr>");
        for (i, c) in cells.iter().enumerate() {
            match class.as_deref().filter(|_| i == 0) {
                Some(k) => s.push_str(&format!("<td class=\"{}\">{c}</td>", esc(k))),
                None => s.push_str(&format!("<td>{c}</td>")),
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    s
}

pub fn section_tables(kind: SectionKind, json: &Value) -> String {
    if json.is_null() {
        return String::new();
    }
    match kind {
        SectionKind::Doctor => doctor(json),
        SectionKind::Qualify => qualify(json),
        SectionKind::Tune => tune(json),
        SectionKind::Qos => qos(json),
        SectionKind::Align => align(json),
        SectionKind::Explore => explore(json),
    }
}

fn doctor(json: &Value) -> String {
    let rows: Vec<_> = list(json, "/findings")
        .iter()
        .map(|f| {
            let status = cell(f.get("status"));
            let fix = f
                .get("fix")
                .and_then(Value::as_str)
                .map_or_else(String::new, |x| format!("<code>{}</code>", esc(x)));
            (
                Some(status.clone()),
                vec![
                    esc(&status),
                    esc(&cell(f.get("id"))),
                    esc(&cell(f.get("summary"))),
                    esc(&cell(f.get("evidence"))),
                    fix,
                ],
            )
        })
        .collect();
    table(
        "doctor-checklist",
        &["status", "check", "finding", "evidence", "fix"],
        &rows,
    )
}

fn qualify(json: &Value) -> String {
    let rows: Vec<_> = list(json, "/results")
        .iter()
        .map(|r| {
            let verdict = cell(r.get("verdict"));
            let meaning = r
                .get("error")
                .and_then(Value::as_str)
                .or_else(|| r.get("meaning").and_then(Value::as_str))
                .unwrap_or("");
            (
                Some(verdict.clone()),
                vec![
                    esc(&verdict),
                    esc(&cell(r.get("id"))),
                    esc(&cell(r.get("metric"))),
                    esc(&cell(r.get("value"))),
                    esc(&cell(r.get("threshold"))),
                    esc(meaning),
                ],
            )
        })
        .collect();
    table(
        "qualify-verdicts",
        &[
            "verdict",
            "test",
            "metric",
            "value",
            "threshold",
            "what it means",
        ],
        &rows,
    )
}

fn tune(json: &Value) -> String {
    let Some(report) = json.get("report") else {
        return String::new();
    };
    let rows: Vec<_> = [
        ("read_iops", "read IOPS", "IOPS"),
        ("write_iops", "write IOPS", "IOPS"),
        ("read_bandwidth", "read bandwidth", "B/s"),
        ("write_bandwidth", "write bandwidth", "B/s"),
    ]
    .iter()
    .map(|(key, label, unit)| {
        let f = report.get(*key);
        let field = |k: &str| f.and_then(|f| f.get(k));
        (
            None,
            vec![
                esc(label),
                format!("<b>{}</b>", esc(&si(field("value"), unit))),
                esc(&field("request_bytes")
                    .and_then(Value::as_u64)
                    .map_or_else(|| "-".into(), weir_model::units::format_bytes)),
                esc(&cell(field("depth_knee"))),
                esc(&cell(field("depth_best"))),
                esc(&cell(field("confirmed"))),
                esc(&cell(field("latency_us_mean_at_knee"))),
                esc(&field("regime")
                    .and_then(Value::as_str)
                    .unwrap_or("-")
                    .replace('_', " ")),
            ],
        )
    })
    .collect();
    let mut s = table(
        "tune-numbers",
        &[
            "figure",
            "value",
            "request",
            "depth at knee",
            "best depth",
            "confirmed",
            "mean latency at knee (us)",
            "regime",
        ],
        &rows,
    );
    s.push_str(&tune_cross_check(report));
    s.push_str(&format!(
        "<p>Physical sector as measured: {} B (kernel reports {}).</p>\n",
        cell(report.get("physical_sector_bytes")),
        esc(&cell(report.get("reported_physical_sector_bytes")))
    ));
    if let Some(yaml) = json.get("io_properties_yaml").and_then(Value::as_str) {
        s.push_str(&format!(
            "<p>io-properties.yaml:</p><pre>{}</pre>\n",
            esc(yaml)
        ));
    }
    s
}

/// `weir tune --cross-check`'s table: per figure, weir / fio over the pairs.
fn tune_cross_check(report: &Value) -> String {
    let Some(figures) = report
        .pointer("/cross_check/figures")
        .and_then(Value::as_array)
    else {
        return String::new();
    };
    let num = |f: &Value, k: &str| f.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let rows: Vec<_> = figures
        .iter()
        .map(|f| {
            (
                None,
                vec![
                    esc(&f["figure"].as_str().unwrap_or("-").replace('_', " ")),
                    esc(&format!(
                        "{} x{}",
                        f.pointer("/load/request_bytes")
                            .and_then(Value::as_u64)
                            .map_or_else(|| "-".into(), weir_model::units::format_bytes),
                        cell(f.pointer("/load/depth"))
                    )),
                    esc(&f["regime"].as_str().unwrap_or("-").replace('_', " ")),
                    format!("<b>{:.2}</b>", num(f, "ratio_median")),
                    format!("{:.2} .. {:.2}", num(f, "ratio_min"), num(f, "ratio_max")),
                    format!("{:.0}%", 100.0 * num(f, "fio_spread")),
                    format!("{:.2}", num(f, "tune_over_fio")),
                ],
            )
        })
        .collect();
    let mut s = format!(
        "<p>Cross-check against {} ({} pairs per figure, weir's engine and fio alternately at each figure's point):</p>\n",
        esc(&cell(report.pointer("/cross_check/fio_version"))),
        esc(&cell(report.pointer("/cross_check/pairs")))
    );
    s.push_str(&table(
        "tune-cross-check",
        &[
            "figure",
            "point",
            "regime",
            "weir / fio (median)",
            "range",
            "fio's spread",
            "tune's figure / fio",
        ],
        &rows,
    ));
    s
}

fn qos(json: &Value) -> String {
    let job = |run: &Value, name: &str| -> Option<Value> {
        list(run, "/report/jobs")
            .iter()
            .find(|j| j.get("name").and_then(Value::as_str) == Some(name))
            .cloned()
    };
    let rows: Vec<_> = list(json, "/runs")
        .iter()
        .map(|run| {
            let reads = job(run, "reads");
            let writes = job(run, "writes");
            let r = |p: &str| reads.as_ref().and_then(|j| j.pointer(p));
            let status = cell(run.get("status"));
            (
                Some(status.replace(' ', "-")),
                vec![
                    esc(&status),
                    esc(&cell(run.get("name"))),
                    esc(&si(r("/iops"), "IOPS")),
                    esc(&cell(r("/latency_us/p50"))),
                    esc(&cell(r("/latency_us/p99"))),
                    esc(&cell(r("/latency_us/p999"))),
                    esc(&si(
                        writes.as_ref().and_then(|j| j.get("bandwidth_bytes_per_s")),
                        "B/s",
                    )),
                ],
            )
        })
        .collect();
    let mut s = table(
        "qos-runs",
        &[
            "status",
            "run",
            "read rate",
            "read p50 (us)",
            "read p99 (us)",
            "read p99.9 (us)",
            "write bandwidth",
        ],
        &rows,
    );
    if let Some(yaml) = json.get("job_yaml").and_then(Value::as_str) {
        s.push_str(&format!(
            "<p>The job file (<code>qos.yaml</code> in the commands below):</p><pre>{}</pre>\n",
            esc(yaml)
        ));
    }
    if let Some(yaml) = json.get("io_properties_yaml").and_then(Value::as_str) {
        s.push_str(&format!(
            "<p>The scheduler's model (<code>io-properties.yaml</code> below): the tuned figures with <code>duplex: true</code>, as bench/qos.sh runs it:</p><pre>{}</pre>\n",
            esc(yaml)
        ));
    }
    s
}

fn explore(json: &Value) -> String {
    let map = json.get("map").unwrap_or(&Value::Null);
    let cal = |k: &str| map.pointer(&format!("/calibration/{k}"));
    let rows = vec![
        (
            None,
            vec![
                "pure 4 KiB random reads (QD 64)".into(),
                esc(&si(cal("read_iops"), "IOPS")),
            ],
        ),
        (
            None,
            vec![
                "pure 128 KiB writes, fresh extents (QD 16)".into(),
                esc(&si(cal("fresh_write_bytes_per_s"), "B/s")),
            ],
        ),
        (
            None,
            vec![
                "pure 128 KiB writes, overwrite (QD 16)".into(),
                esc(&si(cal("overwrite_write_bytes_per_s"), "B/s")),
            ],
        ),
    ];
    let mut s = table("explore-pure-rates", &["calibration", "rate"], &rows);
    s.push_str(&format!(
        "<p>{} points in {:.0} s, goal read p99 {} us; chosen fit: {}{}</p>\n",
        list(map, "/points").len(),
        map.get("seconds").and_then(Value::as_f64).unwrap_or(0.0),
        cell(map.get("goal_us")),
        esc(&cell(map.pointer("/fits/chosen"))),
        map.get("fits_missing")
            .and_then(Value::as_str)
            .map_or_else(String::new, |m| format!(" (no fit: {})", esc(m)))
    ));
    if let Some(yaml) = json.get("io_properties_yaml").and_then(Value::as_str) {
        s.push_str(&format!(
            "<p>The model explore fitted:</p><pre>{}</pre>\n",
            esc(yaml)
        ));
    }
    s
}

fn align(json: &Value) -> String {
    let rows: Vec<_> = list(json, "/modes")
        .iter()
        .map(|m| {
            let deepest = m
                .get("levels")
                .and_then(Value::as_array)
                .and_then(|l| l.last());
            let h = |k: &str| deepest.and_then(|l| l.pointer(&format!("/histogram/{k}")));
            let extents = list(m, "/extents_per_file");
            let mean =
                extents.iter().filter_map(Value::as_f64).sum::<f64>() / extents.len().max(1) as f64;
            (
                None,
                vec![
                    esc(&cell(m.get("mode"))),
                    esc(&cell(deepest.and_then(|l| l.get("device")))),
                    esc(&cell(h("requests"))),
                    esc(&cell(h("split_requests"))),
                    esc(&round4(mean)),
                ],
            )
        })
        .collect();
    table(
        "align-modes",
        &[
            "mode",
            "device",
            "requests",
            "split requests",
            "extents per file",
        ],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_to_four_digits() {
        assert_eq!(round4(0.012345), "0.01235");
        assert_eq!(round4(1234.5678), "1235");
        assert_eq!(round4(12.0), "12");
        assert_eq!(cell(None), "-");
    }

    #[test]
    fn doctor_rows_carry_their_status_class() {
        let json = serde_json::json!({"findings": [
            {"id": "fs.type", "status": "WARN", "summary": "ext4", "evidence": "statfs", "fix": "mkfs.xfs <dev>"}
        ]});
        let html = section_tables(SectionKind::Doctor, &json);
        assert!(html.contains("<td class=\"WARN\">WARN</td>"));
        assert!(html.contains("<code>mkfs.xfs &lt;dev&gt;</code>"));
    }

    #[test]
    fn tune_rows_name_their_regime_and_the_cross_check_shows_its_ratios() {
        let json = serde_json::json!({"report": {
            "read_iops": {"value": 1000.0, "request_bytes": 4096, "regime": "written_data"},
            "cross_check": {"fio_version": "fio-3.33", "pairs": 3, "figures": [
                {"figure": "read_iops", "load": {"request_bytes": 4096, "depth": 64},
                 "regime": "written_data", "ratio_median": 0.97, "ratio_min": 0.9,
                 "ratio_max": 1.02, "fio_spread": 0.05, "tune_over_fio": 1.01}
            ]}
        }});
        let html = section_tables(SectionKind::Tune, &json);
        assert!(html.contains("<td>written data</td>"), "{html}");
        assert!(
            html.contains("tune-cross-check") && html.contains("<b>0.97</b>"),
            "{html}"
        );
        assert!(
            html.contains("0.90 .. 1.02") && html.contains("fio-3.33"),
            "{html}"
        );
    }
}
