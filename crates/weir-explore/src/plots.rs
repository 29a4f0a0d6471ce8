//! The heatmaps: read (or write) p99 over the map's slice (write bandwidth x read IOPS, as
//! Diskplorer draws them, or write IOPS x read bandwidth), with the goal contour (the measured
//! frontier) and the chosen fit's boundary.

use weir_plot::{format_si, Axis, Cell, ColorScale, Figure, Layer, Stroke};

use crate::map::Map;

/// Which latency a heatmap colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
}

/// The heatmap of `direction`'s p99.
pub fn heatmap(map: &Map, direction: Direction) -> Figure {
    let name = match direction {
        Direction::Read => "Read p99",
        Direction::Write => "Write p99",
    };
    let axes = map.axes;
    let mut fig = Figure::new(
        &format!("{name} latency (arrival to completion)"),
        Axis::linear(axes.write.name, axes.write.unit),
        Axis::linear(axes.read.name, axes.read.unit),
    );
    // (x, y) of a load given in the fields.
    let at = |read_iops: f64, write_bytes_per_s: f64| {
        (
            map.write_axis_value(write_bytes_per_s),
            map.read_axis_value(read_iops),
        )
    };
    fig.subtitle = format!(
        "{}: {} writes, {} KiB reads x {} KiB writes, goal read p99 {}, {} points",
        map.source,
        map.write_regime.as_str(),
        map.read_bytes / 1024,
        map.write_bytes / 1024,
        format_si(map.goal_us, "us"),
        map.points.len()
    );
    let xy: Vec<(f64, f64)> = map
        .points
        .iter()
        .map(|p| at(p.read_iops, p.write_bytes_per_s))
        .collect();
    let (half_w, half_r) = cell_half_sizes(&xy);
    let cells = map
        .points
        .iter()
        .zip(&xy)
        .map(|(p, &(x, y))| {
            let value = match direction {
                Direction::Read => p.read_latency_us.p99,
                Direction::Write => p.write_latency_us.p99,
            };
            Cell {
                x0: (x - half_w).max(0.0),
                x1: x + half_w,
                y0: (y - half_r).max(0.0),
                y1: y + half_r,
                value: (p.kept_up && value > 0.0).then_some(value),
                title: Some(format!(
                    "{} reads, {} writes: read p99 {}, write p99 {}{}",
                    format_si(y, axes.read.unit),
                    format_si(x, axes.write.unit),
                    format_si(p.read_latency_us.p99, "us"),
                    format_si(p.write_latency_us.p99, "us"),
                    if p.kept_up { "" } else { " (did not keep up)" }
                )),
            }
        })
        .collect();
    fig.layers.push(Layer::Cells {
        cells,
        scale: ColorScale::around(name, "us", map.goal_us, 1.3),
    });
    let contour: Vec<(f64, f64)> = map
        .frontier
        .iter()
        .map(|f| at(f.read_iops, f.write_bytes_per_s))
        .collect();
    fig.layers.push(Layer::Line {
        points: contour.clone(),
        stroke: Stroke::solid("#111"),
        label: Some("goal contour (frontier)".into()),
    });
    fig.layers.push(Layer::Points {
        points: contour,
        stroke: Stroke::solid("#111"),
        label: None,
    });
    if let Some(fits) = &map.fits {
        let fit = fits.chosen_fit();
        let boundary = fit
            .boundary(60)
            .into_iter()
            .map(|(x, y)| at(x * fits.read_iops_axis, y * fits.write_bytes_per_s_axis))
            .collect();
        fig.layers.push(Layer::Line {
            points: boundary,
            stroke: Stroke::dashed("#6a1b9a"),
            label: Some(format!("fit: {}", fit.model.as_str())),
        });
        if let Some(model) = &map.model {
            let k = model.rate_factor;
            let (or, bw) = (model.read_iops as f64 * k, model.write_bandwidth as f64 * k);
            if !model.duplex && fit.model != crate::fit::ModelKind::HalfDuplex {
                fig.layers.push(Layer::Line {
                    points: vec![at(or, 0.0), at(0.0, bw)],
                    stroke: Stroke::dashed("#555"),
                    label: Some("Seastar line (io-properties)".into()),
                });
            }
        }
    }
    fig
}

/// Half the cell size: the grid step for a grid (Diskplorer), 1/40 of the range for rays.
fn cell_half_sizes(points: &[(f64, f64)]) -> (f64, f64) {
    let step = |values: Vec<f64>| -> f64 {
        let mut v = values;
        v.sort_by(f64::total_cmp);
        v.dedup_by(|a, b| (*a - *b).abs() <= 1e-9 * b.abs().max(1.0));
        let range = v.last().copied().unwrap_or(1.0) - v.first().copied().unwrap_or(0.0);
        let gaps: Vec<f64> = v.windows(2).map(|w| w[1] - w[0]).collect();
        let min_gap = gaps.iter().copied().fold(f64::INFINITY, f64::min);
        // A regular grid has few distinct values; rays have many.
        if v.len() <= 25 && min_gap.is_finite() && min_gap > range / 30.0 {
            min_gap / 2.0
        } else {
            range.max(1.0) / 40.0
        }
    };
    (
        step(points.iter().map(|p| p.0).collect()),
        step(points.iter().map(|p| p.1).collect()),
    )
}
