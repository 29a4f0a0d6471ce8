//! Comparing maps: weir beside Diskplorer at the same loads, and two weir maps' frontiers.
//!
//! - [`measure_grid`] runs weir's open-loop points at exactly the loads of an imported
//!   Diskplorer grid, so the two tools' read p99 can be read side by side at the same read
//!   rate x write bandwidth (Diskplorer's is fio's `clat`, from submission; weir's from the
//!   intended arrival).
//! - [`compare_frontiers`] puts two `explore.json` files side by side: at each read rate of
//!   either frontier (where both are defined), both frontiers' writes (linearly interpolated
//!   between entries) and the relative difference, beside the difference of the two runs' pure loads
//!   (calibration), so a frontier spread can be judged against the disk's own run-to-run
//!   spread. It reads only `frontier`, `calibration`, `goal_us` and `write_regime`, so other
//!   keys may change spelling without breaking it.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use crate::error::ExploreError;
use crate::map::Map;
use crate::meter::Meter;
use crate::point::PointResult;
use crate::radial::{radial_rows, RadialRow};

/// One grid load measured by both tools.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GridRow {
    pub diskplorer: PointResult,
    pub weir: PointResult,
}

/// Measures weir at every point of `imported` (a Diskplorer grid read by
/// [`crate::import::import`]), in the meter's regime; `on_point(done, total, point)` after each.
pub fn measure_grid(
    meter: &mut dyn Meter,
    imported: &Map,
    on_point: &mut dyn FnMut(usize, usize, &PointResult),
) -> Result<Vec<GridRow>, ExploreError> {
    let total = imported.points.len();
    let mut rows = Vec::with_capacity(total);
    for (i, theirs) in imported.points.iter().enumerate() {
        let ours = meter.measure(theirs.offered())?;
        on_point(i + 1, total, &ours);
        rows.push(GridRow {
            diskplorer: theirs.clone(),
            weir: ours,
        });
    }
    Ok(rows)
}

fn verdict(p: &PointResult) -> &'static str {
    if p.within_goal {
        "inside"
    } else if p.kept_up {
        "over"
    } else {
        "behind"
    }
}

/// The side-by-side table (Markdown, so docs/design/explore.md can quote it as is) and a closing line
/// counting the loads where the two tools' verdicts agree.
pub fn grid_table(rows: &[GridRow], goal_us: f64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| reads/s | writes MB/s | Diskplorer read p99 us (clat) | verdict | weir read p99 us (arrival) | verdict | weir / Diskplorer p99 |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---|---:|---|---:|");
    let mut agree = 0;
    for r in rows {
        let (d, w) = (&r.diskplorer, &r.weir);
        if verdict(d) == verdict(w) {
            agree += 1;
        }
        let ratio = if d.read_latency_us.p99 > 0.0 {
            format!("{:.2}", w.read_latency_us.p99 / d.read_latency_us.p99)
        } else {
            "-".into()
        };
        let _ = writeln!(
            out,
            "| {:.0} | {:.0} | {:.0} | {} | {:.0} | {} | {ratio} |",
            d.read_iops,
            d.write_bytes_per_s / 1e6,
            d.read_latency_us.p99,
            verdict(d),
            w.read_latency_us.p99,
            verdict(w),
        );
    }
    let _ = writeln!(
        out,
        "\nverdicts agree at {agree} of {} loads (goal read p99 {goal_us:.0} us; inside = kept up and within the goal, over = kept up but over it, behind = not kept up)",
        rows.len()
    );
    out
}

/// One read rate of either frontier, with both maps' writes there.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FrontierRow {
    pub read_iops: f64,
    pub a_write_bytes_per_s: f64,
    pub b_write_bytes_per_s: f64,
    /// (b - a) / a; infinite where A has no writes and B has some.
    pub difference: f64,
}

/// Two maps side by side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrontierComparison {
    pub rows: Vec<FrontierRow>,
    /// The largest |difference| over the rows.
    pub max_abs_difference: f64,
    /// The same frontiers along rays from the origin (see `radial`: well-conditioned where
    /// the frontier falls steeply to the read axis, where `rows` are not).
    pub radial: Vec<RadialRow>,
    /// The largest |difference| along the rays (0 when no ray meets both).
    pub max_abs_radial_difference: f64,
    /// Relative differences (b - a) / a of the pure loads: reads, fresh writes, overwrite
    /// writes (None where a map has no calibration).
    pub pure_read_difference: Option<f64>,
    pub pure_fresh_write_difference: Option<f64>,
    pub pure_overwrite_write_difference: Option<f64>,
    /// Each map's own drift from its start to its end (`drift`), as shares: reads, fresh
    /// writes, overwrite writes (None for a map without a closing calibration).
    pub a_drift: Option<[f64; 3]>,
    pub b_drift: Option<[f64; 3]>,
    /// The largest move of the reads and the mapped regime's writes, between the maps and
    /// within each, as a share (None without calibrations).
    pub largest_pure_move: Option<f64>,
}

impl FrontierComparison {
    /// Whether the frontier spread says something about the method: the pure loads held
    /// within `drift::PURE_LOAD_TOLERANCE` between the maps and within each.
    pub fn pure_loads_repeat(&self) -> bool {
        self.largest_pure_move
            .is_some_and(|m| m <= crate::drift::PURE_LOAD_TOLERANCE)
    }
}

fn frontier_of(v: &Value, file: &str) -> Result<Vec<(f64, f64)>, ExploreError> {
    let err = |message: String| ExploreError::Import {
        file: file.into(),
        message,
    };
    let entries = v
        .get("frontier")
        .and_then(Value::as_array)
        .ok_or_else(|| err("no `frontier` array: pass an explore.json".into()))?;
    let mut points = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let get = |key: &str| {
            e.get(key).and_then(Value::as_f64).ok_or_else(|| {
                err(format!(
                    "frontier[{i}] has no number `{key}`; pass an explore.json"
                ))
            })
        };
        points.push((get("read_iops")?, get("write_bytes_per_s")?));
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(points)
}

/// The frontier's writes at `read_iops`: linear between its neighbours, None outside its range.
fn writes_at(frontier: &[(f64, f64)], read_iops: f64) -> Option<f64> {
    let i = frontier.iter().position(|&(r, _)| r >= read_iops)?;
    let (r1, w1) = frontier[i];
    if r1 == read_iops || i == 0 {
        return (r1 == read_iops).then_some(w1);
    }
    let (r0, w0) = frontier[i - 1];
    Some(w0 + (w1 - w0) * (read_iops - r0) / (r1 - r0))
}

fn relative(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if a > 0.0 => Some((b - a) / a),
        _ => None,
    }
}

/// Compares two explore.json texts (`a_file`, `b_file` name them in errors).
pub fn compare_frontiers(
    a_text: &str,
    a_file: &str,
    b_text: &str,
    b_file: &str,
) -> Result<FrontierComparison, ExploreError> {
    let parse = |text: &str, file: &str| {
        serde_json::from_str::<Value>(text).map_err(|e| ExploreError::Import {
            file: file.into(),
            message: format!(
                "not JSON (line {}, column {}): {e}; pass an explore.json",
                e.line(),
                e.column()
            ),
        })
    };
    let (a, b) = (parse(a_text, a_file)?, parse(b_text, b_file)?);
    let (regime_a, regime_b) = (a.get("write_regime"), b.get("write_regime"));
    if regime_a != regime_b {
        return Err(ExploreError::RegimeMismatch {
            a_file: a_file.to_string(),
            b_file: b_file.to_string(),
            regime_a: regime_a.cloned().unwrap_or(Value::Null),
            regime_b: regime_b.cloned().unwrap_or(Value::Null),
        });
    }
    let (fa, fb) = (frontier_of(&a, a_file)?, frontier_of(&b, b_file)?);
    // Every read rate of either frontier where both are defined, so neither map's bends are
    // skipped.
    let mut read_rates: Vec<f64> = fa.iter().chain(&fb).map(|&(r, _)| r).collect();
    read_rates.sort_by(f64::total_cmp);
    read_rates.dedup();
    let rows: Vec<FrontierRow> = read_rates
        .into_iter()
        .filter_map(|read_iops| {
            let (a_w, b_w) = (writes_at(&fa, read_iops)?, writes_at(&fb, read_iops)?);
            Some(FrontierRow {
                read_iops,
                a_write_bytes_per_s: a_w,
                b_write_bytes_per_s: b_w,
                difference: relative(Some(a_w), Some(b_w)).unwrap_or(if b_w > 0.0 {
                    // A says no writes here, B says some: no ratio, and no agreement.
                    f64::INFINITY
                } else {
                    0.0
                }),
            })
        })
        .collect();
    let max_abs_difference = rows.iter().map(|r| r.difference.abs()).fold(0.0, f64::max);
    let radial = radial_rows(&fa, &fb);
    let max_abs_radial_difference = radial
        .iter()
        .map(|r| r.difference.abs())
        .fold(0.0, f64::max);
    let cal = |v: &Value, key: &str| v.pointer(&format!("/calibration/{key}"))?.as_f64();
    let pure = |key: &str| relative(cal(&a, key), cal(&b, key));
    let drift = |v: &Value| -> Option<[f64; 3]> {
        let get = |key: &str| Some(v.pointer(&format!("/drift/{key}"))?.as_f64()? / 100.0);
        Some([
            get("read_percent")?,
            get("fresh_write_percent")?,
            get("overwrite_write_percent")?,
        ])
    };
    let (a_drift, b_drift) = (drift(&a), drift(&b));
    let write_key = if regime_a.and_then(Value::as_str) == Some("fresh") {
        "fresh_write_bytes_per_s"
    } else {
        "overwrite_write_bytes_per_s"
    };
    let write_index = if write_key.starts_with("fresh") { 1 } else { 2 };
    let between = [pure("read_iops"), pure(write_key)];
    let within = [a_drift, b_drift]
        .into_iter()
        .flatten()
        .flat_map(|d| [Some(d[0]), Some(d[write_index])]);
    let moves: Option<Vec<f64>> = between.into_iter().chain(within).collect();
    let largest_pure_move = moves.map(|m| m.iter().map(|d| d.abs()).fold(0.0, f64::max));
    Ok(FrontierComparison {
        rows,
        max_abs_difference,
        radial,
        max_abs_radial_difference,
        pure_read_difference: pure("read_iops"),
        pure_fresh_write_difference: pure("fresh_write_bytes_per_s"),
        pure_overwrite_write_difference: pure("overwrite_write_bytes_per_s"),
        a_drift,
        b_drift,
        largest_pure_move,
    })
}

/// The comparison as text: one row per read rate, then the frontier's largest difference
/// beside the pure loads' differences and whether it is within `tolerance` (e.g. 0.05).
pub fn comparison_text(c: &FrontierComparison, tolerance: f64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>12} {:>14} {:>14} {:>10}",
        "reads/s", "A writes MB/s", "B writes MB/s", "B vs A"
    );
    for r in &c.rows {
        let _ = writeln!(
            out,
            "{:>12.0} {:>14.1} {:>14.1} {:>10}",
            r.read_iops,
            r.a_write_bytes_per_s / 1e6,
            r.b_write_bytes_per_s / 1e6,
            if r.difference.is_finite() {
                format!("{:+.1}%", r.difference * 100.0)
            } else {
                "A has 0".into()
            }
        );
    }
    let pct = |d: Option<f64>| d.map_or("-".into(), |d| format!("{:+.1}%", d * 100.0));
    let _ = writeln!(
        out,
        "frontier spread: largest |B vs A| {} over {} read rates ({} the {:.0}% target)",
        if c.max_abs_difference.is_finite() {
            format!("{:.1}%", c.max_abs_difference * 100.0)
        } else {
            "unbounded (A has no writes where B has)".into()
        },
        c.rows.len(),
        if c.max_abs_difference <= tolerance {
            "within"
        } else {
            "outside"
        },
        tolerance * 100.0
    );
    let _ = writeln!(
        out,
        "frontier spread along rays from the origin: largest |B vs A| {:.1}% over {} rays ({} the \
         {:.0}% target; per read rate the writes near the read axis differ by far more than the \
         disks do)",
        c.max_abs_radial_difference * 100.0,
        c.radial.len(),
        if c.max_abs_radial_difference <= tolerance && !c.radial.is_empty() {
            "within"
        } else {
            "outside"
        },
        tolerance * 100.0
    );
    for r in &c.radial {
        let _ = writeln!(
            out,
            "  ray {:>5.1} deg: A {:.3}  B {:.3}  {:+.1}%",
            r.angle_deg,
            r.a_radius,
            r.b_radius,
            r.difference * 100.0
        );
    }
    let _ = writeln!(
        out,
        "pure-load spread of the same runs: reads {}, fresh writes {}, overwrite writes {}",
        pct(c.pure_read_difference),
        pct(c.pure_fresh_write_difference),
        pct(c.pure_overwrite_write_difference)
    );
    for (name, d) in [("A", c.a_drift), ("B", c.b_drift)] {
        let _ = writeln!(
            out,
            "pure-load drift within map {name} (end vs start): {}",
            d.map_or(
                "not measured (a map without a closing calibration)".into(),
                |d| format!(
                    "reads {:+.1}%, fresh writes {:+.1}%, overwrite writes {:+.1}%",
                    d[0] * 100.0,
                    d[1] * 100.0,
                    d[2] * 100.0
                )
            )
        );
    }
    let judged = c.max_abs_radial_difference <= tolerance && !c.radial.is_empty();
    let _ = writeln!(
        out,
        "verdict: {}",
        match c.largest_pure_move {
            Some(m) if c.pure_loads_repeat() => format!(
                "the pure loads repeat (largest move {:.1}% <= {:.0}%, reads and the mapped \
                 regime's writes, between the maps and within each): the frontier along rays is \
                 {} the {:.0}% target",
                m * 100.0,
                crate::drift::PURE_LOAD_TOLERANCE * 100.0,
                if judged { "within" } else { "outside" },
                tolerance * 100.0
            ),
            Some(m) => format!(
                "not judged: the pure loads moved by {:.1}% (more than {:.0}%), so the device, \
                 not only the method, moved the frontier; rerun on a quieter machine",
                m * 100.0,
                crate::drift::PURE_LOAD_TOLERANCE * 100.0
            ),
            None => "not judged: a map without calibration or drift".into(),
        }
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map_json(regime: &str, frontier: &[(f64, f64)], reads: f64) -> String {
        let f: Vec<String> = frontier
            .iter()
            .map(|(r, w)| format!("{{\"read_iops\": {r}, \"write_bytes_per_s\": {w}}}"))
            .collect();
        format!(
            "{{\"write_regime\": \"{regime}\", \"calibration\": {{\"read_iops\": {reads}, \
             \"fresh_write_bytes_per_s\": 1e9, \"overwrite_write_bytes_per_s\": 2e9}}, \
             \"frontier\": [{}]}}",
            f.join(",")
        )
    }

    /// `map_json` with a drift object: reads and overwrite writes moved by `percent`.
    fn drifting_json(frontier: &[(f64, f64)], reads: f64, percent: f64) -> String {
        let base = map_json("overwrite", frontier, reads);
        let drift = format!(
            ", \"drift\": {{\"read_percent\": {percent}, \"fresh_write_percent\": 30, \
             \"overwrite_write_percent\": {percent}}}}}"
        );
        base[..base.len() - 1].to_string() + &drift
    }

    #[test]
    fn the_frontier_is_judged_only_when_the_pure_loads_repeat() {
        let frontier = [(0.0, 100.0), (1000.0, 50.0), (2000.0, 0.0)];
        let (a, b) = (
            drifting_json(&frontier, 1000.0, 1.0),
            drifting_json(&frontier, 1010.0, -1.5),
        );
        let c = compare_frontiers(&a, "a", &b, "b").expect("compares");
        // Between the maps 1% (reads), within them 1% and 1.5%; the fresh writes' 30% is
        // the regime not mapped.
        assert_eq!(c.a_drift, Some([0.01, 0.3, 0.01]));
        assert!((c.largest_pure_move.expect("moves") - 0.015).abs() < 1e-9);
        assert!(c.pure_loads_repeat());
        let text = comparison_text(&c, 0.05);
        assert!(text.contains("pure-load drift within map B (end vs start): reads -1.5%"));
        assert!(text.contains("verdict: the pure loads repeat"), "{text}");
        assert!(text.contains("is within the 5% target"), "{text}");
        // Map B's device moved 3% during the map: no verdict on the frontier.
        let b = drifting_json(&frontier, 1010.0, 3.0);
        let c = compare_frontiers(&a, "a", &b, "b").expect("compares");
        assert!(!c.pure_loads_repeat());
        let text = comparison_text(&c, 0.05);
        assert!(
            text.contains("verdict: not judged: the pure loads moved by 3.0%"),
            "{text}"
        );
        // Maps without a closing calibration: drift not measured, judged between the maps only.
        let (a, b) = (
            map_json("overwrite", &frontier, 1000.0),
            map_json("overwrite", &frontier, 1010.0),
        );
        let c = compare_frontiers(&a, "a", &b, "b").expect("compares");
        assert!(c.pure_loads_repeat() && c.b_drift.is_none());
        assert!(comparison_text(&c, 0.05).contains("not measured"));
    }

    #[test]
    fn interpolation_is_linear_and_bounded() {
        let f = [(0.0, 100.0), (10.0, 50.0), (20.0, 0.0)];
        assert_eq!(writes_at(&f, 0.0), Some(100.0));
        assert_eq!(writes_at(&f, 5.0), Some(75.0));
        assert_eq!(writes_at(&f, 20.0), Some(0.0));
        assert_eq!(writes_at(&f, 21.0), None);
        assert_eq!(writes_at(&f[1..], 5.0), None);
    }

    #[test]
    fn frontiers_are_compared_at_both_maps_read_rates() {
        let a = map_json("overwrite", &[(0.0, 100.0), (1000.0, 50.0)], 2000.0);
        let b = map_json("overwrite", &[(0.0, 104.0), (2000.0, 0.0)], 2100.0);
        let c = compare_frontiers(&a, "a.json", &b, "b.json").expect("compares");
        // A ends at 1000 reads/s, so B's 2000 has no partner.
        assert_eq!(c.rows.len(), 2);
        assert!((c.rows[0].difference - 0.04).abs() < 1e-9);
        // B at 1000 reads/s: halfway between 104 and 0.
        assert!((c.rows[1].b_write_bytes_per_s - 52.0).abs() < 1e-9);
        let rev = compare_frontiers(&b, "b.json", &a, "a.json").expect("compares");
        assert_eq!(
            rev.rows.len(),
            2,
            "B's read rates with A's partner: {rev:?}"
        );
        // A bend only B has (500 reads/s) is compared too.
        let a2 = map_json(
            "overwrite",
            &[(0.0, 100.0), (1000.0, 50.0), (2000.0, 0.0)],
            1.0,
        );
        let b2 = map_json(
            "overwrite",
            &[(0.0, 100.0), (500.0, 60.0), (2000.0, 0.0)],
            1.0,
        );
        let bend = compare_frontiers(&a2, "a.json", &b2, "b.json").expect("compares");
        let rates: Vec<f64> = bend.rows.iter().map(|r| r.read_iops).collect();
        assert_eq!(rates, vec![0.0, 500.0, 1000.0, 2000.0]);
        assert!((bend.rows[1].difference - (60.0 - 75.0) / 75.0).abs() < 1e-9);
        // Where A has no writes and B has some there is no ratio, and no agreement.
        let a3 = map_json("overwrite", &[(0.0, 100.0), (1000.0, 0.0)], 1.0);
        let b3 = map_json("overwrite", &[(0.0, 100.0), (1000.0, 10.0)], 1.0);
        let none = compare_frontiers(&a3, "a.json", &b3, "b.json").expect("compares");
        assert!(none.max_abs_difference.is_infinite());
        let text = comparison_text(&none, 0.05);
        assert!(text.contains("A has 0"), "{text}");
        assert!(text.contains("largest |B vs A| unbounded"), "{text}");
        assert!(text.contains("outside the 5% target"), "{text}");
        assert!((c.max_abs_difference - 0.04).abs() < 1e-9);
        assert!((c.pure_read_difference.unwrap_or(0.0) - 0.05).abs() < 1e-9);
        let text = comparison_text(&c, 0.05);
        assert!(text.contains("largest |B vs A| 4.0%"), "{text}");
        assert!(text.contains("within the 5% target"), "{text}");
        assert!(text.contains("reads +5.0%"), "{text}");
        let text = comparison_text(&c, 0.03);
        assert!(text.contains("outside the 3% target"), "{text}");
    }

    /// A disk whose read p99 is 100 us plus 1 us per MB/s of writes, keeping up below 500 MB/s.
    struct LineDisk;

    impl Meter for LineDisk {
        fn calibrate(&mut self) -> Result<crate::meter::Calibration, ExploreError> {
            Err(ExploreError::NoLoad)
        }
        fn measure(&mut self, load: crate::point::Load) -> Result<PointResult, ExploreError> {
            let mut p = point(load.read_iops, load.write_bytes_per_s, 0.0);
            p.read_latency_us.p99 = 100.0 + load.write_bytes_per_s / 1e6;
            p.kept_up = load.write_bytes_per_s < 500e6;
            p.within_goal = p.kept_up && p.read_latency_us.p99 <= 300.0;
            p.read_share_over_goal = Some(if p.read_latency_us.p99 <= 300.0 {
                0.0
            } else {
                1.0
            });
            Ok(p)
        }
    }

    fn point(read_iops: f64, write_bytes_per_s: f64, p99: f64) -> PointResult {
        PointResult {
            read_iops,
            write_bytes_per_s,
            achieved_read_iops: read_iops,
            achieved_write_bytes_per_s: write_bytes_per_s,
            read_latency_us: crate::point::Percentiles {
                p99,
                ..Default::default()
            },
            write_latency_us: Default::default(),
            read_share_over_goal: Some(if p99 <= 300.0 { 0.0 } else { 1.0 }),
            kept_up: true,
            within_goal: p99 <= 300.0,
            seconds: 1.0,
            steady: crate::point::Steady::Capped,
            windows: 1,
        }
    }

    #[test]
    fn the_grid_is_measured_at_diskplorers_loads_and_verdicts_counted() {
        let text = r#"{"jobs": [
            {"jobname": "job(r_idx=1,w_idx=0,write_bw=0,r_iops=1000)",
             "read": {"iops": 1000, "clat_ns": {"percentile": {"99.000000": 150000}}},
             "write": {"bw_bytes": 0}},
            {"jobname": "job(r_idx=1,w_idx=1,write_bw=400000000,r_iops=1000)",
             "read": {"iops": 1000, "clat_ns": {"percentile": {"99.000000": 250000}}},
             "write": {"bw_bytes": 400000000}}]}"#;
        let imported = crate::import::import(text, "r.json", 300.0, 4096, 131072).expect("imports");
        let mut seen = Vec::new();
        let rows = measure_grid(&mut LineDisk, &imported, &mut |done, total, p| {
            seen.push((done, total, p.write_bytes_per_s))
        })
        .expect("measures");
        assert_eq!(seen, vec![(1, 2, 0.0), (2, 2, 400e6)]);
        assert_eq!(rows[1].weir.read_latency_us.p99, 500.0);
        let table = grid_table(&rows, 300.0);
        assert!(
            table.contains("| 1000 | 400 | 250 | inside | 500 | over | 2.00 |"),
            "{table}"
        );
        assert!(table.contains("verdicts agree at 1 of 2 loads"), "{table}");
    }

    #[test]
    fn regimes_must_match_and_bad_files_say_why() {
        let a = map_json("overwrite", &[(0.0, 100.0)], 1.0);
        let b = map_json("fresh", &[(0.0, 100.0)], 1.0);
        let e = compare_frontiers(&a, "a.json", &b, "b.json")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("compare maps of one regime"), "{e}");
        let e = compare_frontiers(&a, "a.json", "{\"write_regime\": \"overwrite\"}", "b.json")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.starts_with("b.json: no `frontier` array"), "{e}");
    }
}
