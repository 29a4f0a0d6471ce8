//! A chart as data: what it plots, serializable so the page embeds it beside its picture, and
//! rendered by weir-plot. A test (and a reader) can compare each picture with its numbers.

use serde::{Deserialize, Serialize};
use weir_plot::{Axis, Cell, ColorScale, Figure, GroupSeries, GroupedBars, Layer, Stroke};

/// One chart on the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chart {
    /// Unique on the page; also names the chart's embedded data block (`data-<id>`).
    pub id: String,
    pub title: String,
    pub subtitle: String,
    pub body: ChartBody,
}

/// The two kinds of chart the report draws.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChartBody {
    /// Lines and markers on numeric axes (depth sweeps, CDFs, throughput over time).
    Xy {
        x: AxisSpec,
        y: AxisSpec,
        series: Vec<Series>,
    },
    /// Coloured cells with lines over them (weir explore's latency maps), kept as drawn by
    /// explore's own figure builder ([`Chart::from_figure`]).
    Heatmap {
        x: AxisSpec,
        y: AxisSpec,
        cells: Vec<CellSpec>,
        scale: ScaleSpec,
        series: Vec<Series>,
    },
    /// Bars grouped by named category (the alignment histogram).
    Grouped {
        categories: Vec<String>,
        category_label: String,
        y_label: String,
        y_unit: String,
        series: Vec<GroupSpec>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AxisSpec {
    pub label: String,
    pub unit: String,
    pub log: bool,
}

impl AxisSpec {
    pub fn linear(label: &str, unit: &str) -> Self {
        AxisSpec {
            label: label.into(),
            unit: unit.into(),
            log: false,
        }
    }

    pub fn log(label: &str, unit: &str) -> Self {
        AxisSpec {
            log: true,
            ..AxisSpec::linear(label, unit)
        }
    }

    fn of(axis: &Axis) -> Self {
        AxisSpec {
            label: axis.label.clone(),
            unit: axis.unit.clone(),
            log: axis.scale == weir_plot::Scale::Log,
        }
    }

    fn axis(&self) -> Axis {
        if self.log {
            Axis::log(&self.label, &self.unit)
        } else {
            Axis::linear(&self.label, &self.unit)
        }
    }
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeriesKind {
    Line,
    DashedLine,
    Points,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub label: String,
    pub kind: SeriesKind,
    pub color: String,
    /// (x, y) in the axes' units.
    pub points: Vec<(f64, f64)>,
}

/// One heatmap cell in data coordinates; `value` None is drawn grey (did not keep up).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellSpec {
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
    pub value: Option<f64>,
    pub title: Option<String>,
}

/// A heatmap's colour scale: logarithmic from `min` to `max`, split at `pivot` (the goal).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaleSpec {
    pub label: String,
    pub unit: String,
    pub min: f64,
    pub max: f64,
    pub pivot: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupSpec {
    pub label: String,
    pub color: String,
    pub values: Vec<f64>,
}

/// Colours for series, in order (distinguishable in print and for most colour-blind readers).
pub const PALETTE: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
];

/// The `i`th palette colour.
pub fn color(i: usize) -> String {
    PALETTE[i % PALETTE.len()].to_string()
}

/// The x range with room at the ends: fitted exactly, a series at the lowest or highest x
/// (a sweep step repeated at one size) runs along the plot's frame, invisible. Log axes get
/// a factor of 1.25 on each side; a linear axis whose values are all equal gets +-1.
fn widen(axis: Axis, series: &[Series]) -> Axis {
    let xs = || series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (lo, hi) = (
        xs().fold(f64::INFINITY, f64::min),
        xs().fold(f64::NEG_INFINITY, f64::max),
    );
    if !lo.is_finite() || !hi.is_finite() {
        return axis;
    }
    match axis.scale {
        weir_plot::Scale::Log if lo > 0.0 => axis.range(lo / 1.25, hi * 1.25),
        weir_plot::Scale::Linear if lo == hi => axis.range(lo - 1.0, hi + 1.0),
        _ => axis,
    }
}

/// A linear y axis from just below zero (or the lowest value) to 5% above the highest value:
/// fitted exactly, the highest markers would sit on the plot's edge, half clipped.
fn headroom(axis: Axis, series: &[Series]) -> Axis {
    let ys = || series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (lo, hi) = (ys().fold(0.0, f64::min), ys().fold(f64::MIN, f64::max));
    if axis.scale != weir_plot::Scale::Linear || !hi.is_finite() || hi <= 0.0 {
        return axis;
    }
    // 2% below the lowest value too: a series at zero (writes starved) would otherwise run
    // under the plot's frame, invisible.
    axis.range(lo - hi * 0.02, hi * 1.05)
}

/// A series as a weir-plot layer; a line through one point is invisible, so it is drawn as
/// a marker.
fn series_layer(s: &Series) -> Layer {
    let label = Some(s.label.clone()).filter(|l| !l.is_empty());
    let points = s.points.clone();
    let kind = if points.len() == 1 {
        SeriesKind::Points
    } else {
        s.kind
    };
    match kind {
        SeriesKind::Line => Layer::Line {
            points,
            stroke: Stroke::solid(&s.color),
            label,
        },
        SeriesKind::DashedLine => Layer::Line {
            points,
            stroke: Stroke::dashed(&s.color),
            label,
        },
        SeriesKind::Points => Layer::Points {
            points,
            stroke: Stroke::solid(&s.color),
            label,
        },
    }
}

impl Chart {
    /// A chart from a figure another crate built (weir explore's heatmaps): its cells, lines
    /// and markers become data, so the page can embed and redraw them.
    pub fn from_figure(id: &str, fig: &Figure) -> Chart {
        let mut cells = Vec::new();
        let mut scale = None;
        let mut series = Vec::new();
        for layer in &fig.layers {
            match layer {
                Layer::Cells { cells: c, scale: s } => {
                    cells.extend(c.iter().map(|c| CellSpec {
                        x0: c.x0,
                        x1: c.x1,
                        y0: c.y0,
                        y1: c.y1,
                        value: c.value,
                        title: c.title.clone(),
                    }));
                    scale.get_or_insert(ScaleSpec {
                        label: s.label.clone(),
                        unit: s.unit.clone(),
                        min: s.min,
                        max: s.max,
                        pivot: s.pivot,
                    });
                }
                Layer::Line {
                    points,
                    stroke,
                    label,
                } => series.push(Series {
                    label: label.clone().unwrap_or_default(),
                    kind: if stroke.dash.is_some() {
                        SeriesKind::DashedLine
                    } else {
                        SeriesKind::Line
                    },
                    color: stroke.color.clone(),
                    points: points.clone(),
                }),
                Layer::Points {
                    points,
                    stroke,
                    label,
                } => series.push(Series {
                    label: label.clone().unwrap_or_default(),
                    kind: SeriesKind::Points,
                    color: stroke.color.clone(),
                    points: points.clone(),
                }),
                // No figure handed over carries bars.
                Layer::Bars { .. } => {}
            }
        }
        Chart {
            id: id.into(),
            title: fig.title.clone(),
            subtitle: fig.subtitle.clone(),
            body: ChartBody::Heatmap {
                x: AxisSpec::of(&fig.x),
                y: AxisSpec::of(&fig.y),
                cells,
                scale: scale.unwrap_or(ScaleSpec {
                    label: String::new(),
                    unit: String::new(),
                    min: 1.0,
                    max: 10.0,
                    pivot: 3.0,
                }),
                series,
            },
        }
    }

    /// Whether the chart has anything to draw.
    pub fn is_empty(&self) -> bool {
        match &self.body {
            ChartBody::Xy { series, .. } => series.iter().all(|s| s.points.is_empty()),
            ChartBody::Heatmap { cells, .. } => cells.is_empty(),
            ChartBody::Grouped { series, .. } => series.iter().all(|s| s.values.is_empty()),
        }
    }

    /// The chart as an SVG document ready to inline in the page.
    pub fn to_svg(&self) -> String {
        let svg = match &self.body {
            ChartBody::Xy { x, y, series } => {
                let mut fig = Figure::new(
                    &self.title,
                    widen(x.axis(), series),
                    headroom(y.axis(), series),
                );
                fig.subtitle = self.subtitle.clone();
                fig.layers.extend(series.iter().map(series_layer));
                fig.to_svg()
            }
            ChartBody::Heatmap {
                x,
                y,
                cells,
                scale,
                series,
            } => {
                let mut fig = Figure::new(&self.title, x.axis(), y.axis());
                fig.subtitle = self.subtitle.clone();
                fig.layers.push(Layer::Cells {
                    cells: cells
                        .iter()
                        .map(|c| Cell {
                            x0: c.x0,
                            x1: c.x1,
                            y0: c.y0,
                            y1: c.y1,
                            value: c.value,
                            title: c.title.clone(),
                        })
                        .collect(),
                    scale: ColorScale {
                        label: scale.label.clone(),
                        unit: scale.unit.clone(),
                        min: scale.min,
                        max: scale.max,
                        pivot: scale.pivot,
                    },
                });
                fig.layers.extend(series.iter().map(series_layer));
                fig.to_svg()
            }
            ChartBody::Grouped {
                categories,
                category_label,
                y_label,
                y_unit,
                series,
            } => {
                let mut chart = GroupedBars::new(&self.title, categories.clone(), y_label, y_unit);
                chart.subtitle = self.subtitle.clone();
                chart.category_label = category_label.clone();
                chart.series = series
                    .iter()
                    .map(|s| GroupSeries {
                        label: s.label.clone(),
                        color: s.color.clone(),
                        values: s.values.clone(),
                    })
                    .collect();
                chart.to_svg()
            }
        };
        // Every weir-plot figure names its clip path "plot"; many figures inlined in one HTML
        // document share one id space, so each gets its own name.
        svg.replace("id=\"plot\"", &format!("id=\"clip-{}\"", self.id))
            .replace("url(#plot)", &format!("url(#clip-{})", self.id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_ids_are_unique_per_chart() {
        let chart = Chart {
            id: "tune-iops".into(),
            title: "t".into(),
            subtitle: String::new(),
            body: ChartBody::Xy {
                x: AxisSpec::log("depth", ""),
                y: AxisSpec::linear("rate", "IOPS"),
                series: vec![Series {
                    label: "random read".into(),
                    kind: SeriesKind::Line,
                    color: color(0),
                    points: vec![(1.0, 10.0), (2.0, 20.0)],
                }],
            },
        };
        let svg = chart.to_svg();
        assert!(svg.contains("id=\"clip-tune-iops\"") && svg.contains("url(#clip-tune-iops)"));
        assert!(!svg.contains("url(#plot)"));
        let back: Chart = serde_json::from_str(&serde_json::to_string(&chart).unwrap_or_default())
            .unwrap_or_else(|e| panic!("chart JSON does not round-trip: {e}"));
        assert_eq!(back, chart);
    }
}
