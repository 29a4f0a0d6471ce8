//! Writing a map's files: explore.json, explore.csv, the heatmaps (SVG and PNG),
//! io-properties.yaml and summary.txt.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use weir_plot::format_si;

use crate::error::ExploreError;
use crate::map::Map;
use crate::plots::{heatmap, Direction};

/// The CSV header; one row per point.
pub const CSV_HEADER: &str = "read_iops,write_bytes_per_s,achieved_read_iops,achieved_write_bytes_per_s,\
read_p50_us,read_p95_us,read_p99_us,read_p999_us,write_p50_us,write_p95_us,write_p99_us,write_p999_us,\
kept_up,within_goal,seconds,steady,windows,read_bytes_per_s,write_iops";

pub fn to_csv(map: &Map) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for p in &map.points {
        let (r, w) = (p.read_latency_us, p.write_latency_us);
        let _ = writeln!(
            s,
            "{:.1},{:.0},{:.1},{:.0},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{},{},{:.2},{},{},{:.0},{:.1}",
            p.read_iops,
            p.write_bytes_per_s,
            p.achieved_read_iops,
            p.achieved_write_bytes_per_s,
            r.p50,
            r.p95,
            r.p99,
            r.p999,
            w.p50,
            w.p95,
            w.p99,
            w.p999,
            p.kept_up,
            p.within_goal,
            p.seconds,
            serde_json::to_value(p.steady)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            p.windows,
            p.read_iops * f64::from(map.read_bytes),
            p.write_bytes_per_s / f64::from(map.write_bytes.max(1))
        );
    }
    s
}

/// The text summary (also printed by the CLI).
pub fn summary(map: &Map) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} writes, {} KiB reads x {} KiB writes, read p99 goal {} (arrival to completion)",
        map.source,
        map.write_regime.as_str(),
        map.read_bytes / 1024,
        map.write_bytes / 1024,
        format_si(map.goal_us, "us")
    );
    if let Some(c) = &map.calibration {
        let _ = writeln!(
            s,
            "pure loads (closed loop): reads {} at QD64; writes {} fresh, {} overwrite at QD16 ({:.2}x)",
            format_si(c.read_iops, "IOPS"),
            format_si(c.fresh_write_bytes_per_s, "B/s"),
            format_si(c.overwrite_write_bytes_per_s, "B/s"),
            c.overwrite_write_bytes_per_s / c.fresh_write_bytes_per_s.max(1.0)
        );
    }
    if let Some(d) = &map.drift {
        let _ = writeln!(
            s,
            "device drift over the map (pure loads again at the end vs the start): reads {:+.1}%, \
             writes {:+.1}% fresh, {:+.1}% overwrite{}",
            d.read_percent,
            d.fresh_write_percent,
            d.overwrite_write_percent,
            if d.largest_percent(map.write_regime) > crate::drift::PURE_LOAD_TOLERANCE * 100.0 {
                format!(
                    " (more than {:.0}%: the device moved during the map, and the frontier may \
                     have moved with it)",
                    crate::drift::PURE_LOAD_TOLERANCE * 100.0
                )
            } else {
                String::new()
            }
        );
    }
    if let Some(first) = map.settling.first() {
        let p99s: Vec<String> = map
            .settling
            .iter()
            .map(|p| format!("{:.0}", p.read_latency_us.p99))
            .collect();
        let _ = writeln!(
            s,
            "settling after the calibration: {} probe(s) of {:.0} reads/s alone, read p99 {} us, \
             {:.0} s measured",
            map.settling.len(),
            first.read_iops,
            p99s.join(", "),
            map.settling.iter().map(|p| p.seconds).sum::<f64>()
        );
    }
    let inside = map.points.iter().filter(|p| p.within_goal).count();
    let _ = writeln!(
        s,
        "{} points ({} within the goal) on {} rays in {:.0} s{}",
        map.points.len(),
        inside,
        map.rays.len(),
        map.seconds,
        if map.stopped_by_budget {
            "; the budget ended the search early"
        } else {
            ""
        }
    );
    let axes = map.axes;
    let _ = writeln!(
        s,
        "frontier ({} with read p99 <= goal; slice {}):",
        map.slice.frontier_words(),
        map.slice.as_str()
    );
    for f in &map.frontier_in_axes {
        let _ = writeln!(
            s,
            "  {:>12}  {:>12}",
            format_si(f.read, axes.read.unit),
            format_si(f.write, axes.write.unit)
        );
    }
    if !map.frontier_dominated.is_empty() {
        let _ = writeln!(
            s,
            "  ({} more entries dominated: a second entry at one read rate, or fewer writes than \
             a higher read rate held; explore.json frontier_dominated)",
            map.frontier_dominated.len()
        );
    }
    if let Some(g) = &map.scheduler_goal {
        let _ = writeln!(
            s,
            "scheduler in-disk goal per read rate (aim {} - reads alone p99 - 2 x one write {}):",
            format_si(g.aimed_read_p99_us, "us"),
            format_si(g.write_cost_us, "us")
        );
        for e in &g.per_read_rate {
            let _ = writeln!(
                s,
                "  {:>12}  reads alone p99 {:>8}  goal {:>8}{}",
                format_si(map.read_axis_value(e.read_iops), axes.read.unit),
                format_si(e.read_alone_p99_us, "us"),
                format_si(e.in_disk_goal_us, "us"),
                if e.floored {
                    " (floor: two writes)"
                } else {
                    ""
                }
            );
        }
        let _ = writeln!(
            s,
            "weir_latency_goal_us {:.0}: {}",
            g.in_disk_goal_us, g.why
        );
    }
    match (&map.fits, &map.model) {
        (Some(fits), Some(model)) => {
            for f in [&fits.half_duplex, &fits.duplex, &fits.curve, &fits.capped] {
                let extra = match (f.exponent, f.mixed_write_ceiling) {
                    (Some(a), _) => format!(", a {a:.2}"),
                    (_, Some(c)) => format!(", ceiling {:.0}% of Bw", c * 100.0),
                    _ => String::new(),
                };
                let _ = writeln!(
                    s,
                    "fit {:<12} K {:.3}{extra}: rms error {:.1}%, max {:.1}%",
                    f.model.as_str(),
                    f.rate_factor,
                    f.rms_error * 100.0,
                    f.max_error * 100.0
                );
            }
            let _ = writeln!(s, "chosen: {} because {}", fits.chosen.as_str(), fits.why);
            let _ = writeln!(
                s,
                "io-properties: read_iops {} write_bandwidth {} rate_factor {} duplex {} ({})",
                model.read_iops, model.write_bandwidth, model.rate_factor, model.duplex, model.note
            );
        }
        _ => {
            let _ = writeln!(
                s,
                "no fit: {}",
                map.fits_missing.as_deref().unwrap_or("unknown")
            );
        }
    }
    s
}

/// Writes every output into `dir` (created if missing) and returns the paths written.
/// `mountpoint` is the disk entry's mount point in io-properties.yaml.
pub fn write_all(map: &Map, dir: &Path, mountpoint: &str) -> Result<Vec<PathBuf>, ExploreError> {
    let out_err = |file: &Path, error: std::io::Error| ExploreError::Output {
        file: file.display().to_string(),
        error,
    };
    std::fs::create_dir_all(dir).map_err(|e| out_err(dir, e))?;
    let mut files: Vec<(PathBuf, String)> = vec![
        (
            dir.join("explore.json"),
            serde_json::to_string_pretty(map).unwrap_or_default() + "\n",
        ),
        (dir.join("explore.csv"), to_csv(map)),
        (
            dir.join("read-p99.svg"),
            heatmap(map, Direction::Read).to_svg(),
        ),
        (
            dir.join("write-p99.svg"),
            heatmap(map, Direction::Write).to_svg(),
        ),
        (dir.join("summary.txt"), summary(map)),
    ];
    if let Some(yaml) = map.io_properties_yaml(mountpoint) {
        files.push((dir.join("io-properties.yaml"), yaml));
    }
    let mut written = Vec::new();
    for (path, text) in files {
        if path.extension().is_some_and(|e| e == "svg") {
            // A PNG beside each heatmap, for places that show images but not SVG.
            let png_path = path.with_extension("png");
            let png = weir_plot::svg_to_png(&text, 1.5)
                .map_err(|e| out_err(&png_path, std::io::Error::other(e.to_string())))?;
            std::fs::write(&png_path, png).map_err(|e| out_err(&png_path, e))?;
            written.push(png_path);
        }
        std::fs::write(&path, text).map_err(|e| out_err(&path, e))?;
        written.push(path);
    }
    Ok(written)
}
