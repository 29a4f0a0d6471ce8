//! A figure: axes, layers, legend, colour bar, rendered to SVG.

use crate::color::ColorScale;
use crate::scale::{format_si, Axis};
use crate::svg::{document_start, escape, line, rect, text};

/// One coloured rectangle in data coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
    /// Coloured by the layer's scale; None draws the cell grey (no value: e.g. the load did
    /// not keep up, as Diskplorer masks such cells).
    pub value: Option<f64>,
    /// A tooltip.
    pub title: Option<String>,
}

/// One bar from `y = 0` (or the axis minimum on a log axis) to `height`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub x0: f64,
    pub x1: f64,
    pub height: f64,
}

/// How a line or marker is drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Stroke {
    pub color: String,
    pub width: f64,
    /// SVG dash pattern ("6 4"); None is solid.
    pub dash: Option<String>,
}

impl Stroke {
    pub fn solid(color: &str) -> Self {
        Stroke {
            color: color.into(),
            width: 2.0,
            dash: None,
        }
    }

    pub fn dashed(color: &str) -> Self {
        Stroke {
            dash: Some("7 4".into()),
            ..Stroke::solid(color)
        }
    }
}

/// What a figure draws, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Layer {
    Cells {
        cells: Vec<Cell>,
        scale: ColorScale,
    },
    Line {
        points: Vec<(f64, f64)>,
        stroke: Stroke,
        label: Option<String>,
    },
    Points {
        points: Vec<(f64, f64)>,
        stroke: Stroke,
        label: Option<String>,
    },
    Bars {
        bars: Vec<Bar>,
        fill: String,
        label: Option<String>,
    },
}

/// A chart; see the crate documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub title: String,
    /// A second, smaller line under the title (conditions: disk, regime, goal).
    pub subtitle: String,
    pub x: Axis,
    pub y: Axis,
    pub layers: Vec<Layer>,
    pub width: f64,
    pub height: f64,
}

const LEFT: f64 = 90.0;
const TOP: f64 = 58.0;
const BOTTOM: f64 = 60.0;
/// Room on the right for the colour bar and the legend.
const RIGHT: f64 = 230.0;

/// The plot rectangle and the resolved ranges.
struct Frame {
    x_range: (f64, f64),
    y_range: (f64, f64),
    plot_w: f64,
    plot_h: f64,
}

impl Figure {
    pub fn new(title: &str, x: Axis, y: Axis) -> Self {
        Figure {
            title: title.into(),
            subtitle: String::new(),
            x,
            y,
            layers: Vec::new(),
            width: 900.0,
            height: 520.0,
        }
    }

    /// The data extent over every layer: ((x lo, x hi), (y lo, y hi)).
    fn extent(&self) -> ((f64, f64), (f64, f64)) {
        let mut xs: Vec<f64> = Vec::new();
        let mut ys: Vec<f64> = Vec::new();
        for layer in &self.layers {
            match layer {
                Layer::Cells { cells, .. } => {
                    for c in cells {
                        xs.extend([c.x0, c.x1]);
                        ys.extend([c.y0, c.y1]);
                    }
                }
                Layer::Line { points, .. } | Layer::Points { points, .. } => {
                    for (x, y) in points {
                        xs.push(*x);
                        ys.push(*y);
                    }
                }
                Layer::Bars { bars, .. } => {
                    for b in bars {
                        xs.extend([b.x0, b.x1]);
                        ys.push(b.height);
                    }
                }
            }
        }
        let span = |v: &[f64]| {
            let finite = v.iter().copied().filter(|x| x.is_finite());
            let lo = finite.clone().reduce(f64::min).unwrap_or(0.0);
            let hi = finite.reduce(f64::max).unwrap_or(1.0);
            (lo, hi)
        };
        (span(&xs), span(&ys))
    }

    fn frame(&self) -> Frame {
        let (xe, ye) = self.extent();
        Frame {
            x_range: self.x.resolve(xe.0, xe.1),
            y_range: self.y.resolve(ye.0, ye.1),
            plot_w: self.width - LEFT - RIGHT,
            plot_h: self.height - TOP - BOTTOM,
        }
    }

    fn px(&self, f: &Frame, x: f64) -> f64 {
        LEFT + f.plot_w
            * self
                .x
                .fraction(x, f.x_range.0, f.x_range.1)
                .clamp(-0.02, 1.02)
    }

    fn py(&self, f: &Frame, y: f64) -> f64 {
        TOP + f.plot_h
            * (1.0
                - self
                    .y
                    .fraction(y, f.y_range.0, f.y_range.1)
                    .clamp(-0.02, 1.02))
    }

    /// The figure as a standalone SVG document.
    pub fn to_svg(&self) -> String {
        let f = self.frame();
        let mut s = document_start(self.width, self.height, LEFT, &self.title, &self.subtitle);
        s.push_str(&format!(
            "<clipPath id=\"plot\"><rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\"/></clipPath>\n",
            f.plot_w, f.plot_h
        ));
        s.push_str(&self.grid(&f));
        s.push_str("<g clip-path=\"url(#plot)\">\n");
        for layer in &self.layers {
            s.push_str(&self.layer(&f, layer));
        }
        s.push_str("</g>\n");
        s.push_str(&format!(
            "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#333\"/>\n",
            f.plot_w, f.plot_h
        ));
        s.push_str(&self.side_panel(&f));
        s.push_str("</svg>\n");
        s
    }

    fn grid(&self, f: &Frame) -> String {
        let mut s = String::new();
        let bottom = TOP + f.plot_h;
        for t in self.x.ticks(f.x_range.0, f.x_range.1) {
            let x = self.px(f, t);
            s.push_str(&line(x, TOP, x, bottom, "#e4e4e4"));
            s.push_str(&text(
                x,
                bottom + 16.0,
                "middle",
                "",
                &format_si(t, &self.x.unit),
            ));
        }
        for t in self.y.ticks(f.y_range.0, f.y_range.1) {
            let y = self.py(f, t);
            s.push_str(&line(LEFT, y, LEFT + f.plot_w, y, "#e4e4e4"));
            s.push_str(&text(
                LEFT - 6.0,
                y + 4.0,
                "end",
                "",
                &format_si(t, &self.y.unit),
            ));
        }
        s.push_str(&text(
            LEFT + f.plot_w / 2.0,
            bottom + 40.0,
            "middle",
            "",
            &self.x.label,
        ));
        let (ly, lx) = (TOP + f.plot_h / 2.0, 18.0);
        s.push_str(&format!(
            "<text x=\"{lx}\" y=\"{ly:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 {lx} {ly:.1})\">{}</text>\n",
            escape(&self.y.label)
        ));
        s
    }

    fn layer(&self, f: &Frame, layer: &Layer) -> String {
        let mut s = String::new();
        match layer {
            Layer::Cells { cells, scale } => {
                for c in cells {
                    let (x0, x1) = (self.px(f, c.x0), self.px(f, c.x1));
                    let (y0, y1) = (self.py(f, c.y1), self.py(f, c.y0));
                    let fill = c
                        .value
                        .map_or_else(|| "#c8c8c8".to_string(), |v| scale.color(v));
                    s.push_str(&rect(
                        x0,
                        y0,
                        (x1 - x0).max(0.5),
                        (y1 - y0).max(0.5),
                        &fill,
                        c.title.as_deref(),
                    ));
                }
            }
            Layer::Line { points, stroke, .. } => {
                if points.len() >= 2 {
                    let path: Vec<String> = points
                        .iter()
                        .map(|(x, y)| format!("{:.1},{:.1}", self.px(f, *x), self.py(f, *y)))
                        .collect();
                    s.push_str(&format!(
                        "<polyline points=\"{}\" fill=\"none\" {}/>\n",
                        path.join(" "),
                        stroke_attrs(stroke)
                    ));
                }
            }
            Layer::Points { points, stroke, .. } => {
                for (x, y) in points {
                    s.push_str(&format!(
                        "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{:.1}\" fill=\"{}\"/>\n",
                        self.px(f, *x),
                        self.py(f, *y),
                        stroke.width + 1.5,
                        stroke.color
                    ));
                }
            }
            Layer::Bars { bars, fill, .. } => {
                // Bars grow from zero, or from the bottom of a log axis (which has no zero).
                let floor = match self.y.scale {
                    crate::Scale::Log => f.y_range.0,
                    crate::Scale::Linear => f.y_range.0.max(0.0),
                };
                let base = self.py(f, floor);
                for b in bars {
                    let (x0, x1) = (self.px(f, b.x0), self.px(f, b.x1));
                    let top = self.py(f, b.height);
                    s.push_str(&rect(
                        x0,
                        top,
                        (x1 - x0 - 1.0).max(0.5),
                        (base - top).max(0.0),
                        fill,
                        None,
                    ));
                }
            }
        }
        s
    }

    /// The colour bar (when a layer has cells) and the legend (labelled layers).
    fn side_panel(&self, f: &Frame) -> String {
        let mut s = String::new();
        let x = LEFT + f.plot_w + 20.0;
        let mut y = TOP;
        if let Some(scale) = self.layers.iter().find_map(|l| match l {
            Layer::Cells { scale, .. } => Some(scale),
            _ => None,
        }) {
            s.push_str(&text(x, y + 4.0, "start", "", &scale.label));
            y += 12.0;
            let steps = 40;
            let bar_h = 160.0;
            for i in 0..steps {
                // Top of the bar is the maximum.
                let frac = 1.0 - (i as f64 + 0.5) / steps as f64;
                let v = (scale.min.ln() + frac * (scale.max.ln() - scale.min.ln())).exp();
                s.push_str(&rect(
                    x,
                    y + bar_h * i as f64 / steps as f64,
                    18.0,
                    bar_h / steps as f64 + 0.5,
                    &scale.color(v),
                    None,
                ));
            }
            for (v, note) in [(scale.max, ""), (scale.pivot, " (goal)"), (scale.min, "")] {
                let frac = (v.ln() - scale.min.ln()) / (scale.max.ln() - scale.min.ln());
                let ty = y + bar_h * (1.0 - frac);
                s.push_str(&text(
                    x + 24.0,
                    ty + 4.0,
                    "start",
                    "",
                    &format!("{}{note}", format_si(v, &scale.unit)),
                ));
            }
            y += bar_h + 12.0;
            s.push_str(&rect(x, y, 18.0, 10.0, "#c8c8c8", None));
            s.push_str(&text(x + 24.0, y + 9.0, "start", "", "did not keep up"));
            y += 30.0;
        }
        for layer in &self.layers {
            let (label, swatch) = match layer {
                Layer::Line {
                    label: Some(l),
                    stroke,
                    ..
                } => (
                    l,
                    format!(
                        "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" {}/>\n",
                        y + 5.0,
                        x + 18.0,
                        y + 5.0,
                        stroke_attrs(stroke)
                    ),
                ),
                Layer::Points {
                    label: Some(l),
                    stroke,
                    ..
                } => (
                    l,
                    format!(
                        "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{}\"/>\n",
                        x + 9.0,
                        y + 5.0,
                        stroke.color
                    ),
                ),
                Layer::Bars {
                    label: Some(l),
                    fill,
                    ..
                } => (l, rect(x, y, 18.0, 10.0, fill, None)),
                _ => continue,
            };
            s.push_str(&swatch);
            s.push_str(&text(x + 24.0, y + 9.0, "start", "", label));
            y += 20.0;
        }
        s
    }
}

fn stroke_attrs(stroke: &Stroke) -> String {
    let dash = stroke
        .dash
        .as_ref()
        .map_or(String::new(), |d| format!(" stroke-dasharray=\"{d}\""));
    format!(
        "stroke=\"{}\" stroke-width=\"{}\"{dash}",
        stroke.color, stroke.width
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heatmap() -> Figure {
        let mut fig = Figure::new(
            "Read p99",
            Axis::linear("write bandwidth", "B/s"),
            Axis::linear("read rate", "IOPS"),
        );
        let cells = (0..4)
            .map(|i| Cell {
                x0: f64::from(i) * 5e8,
                x1: f64::from(i + 1) * 5e8,
                y0: 0.0,
                y1: 1e4,
                value: if i == 3 {
                    None
                } else {
                    Some(200.0 * f64::from(i + 1))
                },
                title: Some(format!("cell {i}")),
            })
            .collect();
        fig.layers.push(Layer::Cells {
            cells,
            scale: ColorScale::around("read p99", "us", 500.0, 1.0),
        });
        fig.layers.push(Layer::Line {
            points: vec![(0.0, 1e4), (1.5e9, 0.0)],
            stroke: Stroke::dashed("#000"),
            label: Some("fit: half-duplex".into()),
        });
        fig
    }

    #[test]
    fn heatmap_has_every_cell_line_and_legend() {
        let svg = heatmap().to_svg();
        assert_eq!(svg.matches("<title>cell").count(), 4);
        assert!(svg.contains("#c8c8c8"), "the masked cell is grey");
        assert!(svg.contains("<polyline"));
        assert!(svg.contains("fit: half-duplex"));
        assert!(svg.contains("500 us (goal)"));
        assert!(svg.contains("2 GB/s"), "x ticks reach the data: {svg}");
        assert!(svg.ends_with("</svg>\n"));
    }

    #[test]
    fn bars_and_points_render() {
        let mut fig = Figure::new("hist", Axis::linear("x", ""), Axis::log("count", ""));
        fig.layers.push(Layer::Bars {
            bars: vec![
                Bar {
                    x0: 0.0,
                    x1: 1.0,
                    height: 10.0,
                },
                Bar {
                    x0: 1.0,
                    x1: 2.0,
                    height: 1000.0,
                },
            ],
            fill: "#1f77b4".into(),
            label: Some("requests".into()),
        });
        fig.layers.push(Layer::Points {
            points: vec![(0.5, 10.0)],
            stroke: Stroke::solid("#d62728"),
            label: None,
        });
        let svg = fig.to_svg();
        assert_eq!(svg.matches("<circle").count(), 1);
        assert!(svg.contains("requests"));
        assert!(!svg.contains("NaN"));
    }
}
