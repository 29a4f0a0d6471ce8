//! Grouped bars over named categories: one group per category, one bar per series (the
//! alignment histogram: buckets `512`..`1M+`, one bar per preparation mode). A category axis
//! has no numeric scale, so it is its own chart kind rather than a [`crate::Figure`] layer.

use crate::scale::format_si;
use crate::svg::{document_start, escape, line, rect, text};

/// One series: a value per category, drawn in `color`.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupSeries {
    pub label: String,
    pub color: String,
    /// One value per category of the chart; missing values draw nothing.
    pub values: Vec<f64>,
}

/// A grouped bar chart; values start at zero.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupedBars {
    pub title: String,
    pub subtitle: String,
    pub categories: Vec<String>,
    /// What the categories are ("alignment of the device address").
    pub category_label: String,
    pub y_label: String,
    /// The unit of the values ("%", "requests").
    pub y_unit: String,
    pub series: Vec<GroupSeries>,
    pub width: f64,
    pub height: f64,
}

const LEFT: f64 = 90.0;
const TOP: f64 = 58.0;
const BOTTOM: f64 = 60.0;
const RIGHT: f64 = 190.0;

impl GroupedBars {
    pub fn new(title: &str, categories: Vec<String>, y_label: &str, y_unit: &str) -> Self {
        GroupedBars {
            title: title.into(),
            subtitle: String::new(),
            categories,
            category_label: String::new(),
            y_label: y_label.into(),
            y_unit: y_unit.into(),
            series: Vec::new(),
            width: 860.0,
            height: 520.0,
        }
    }

    /// The top of the value axis: the largest value rounded up to a 1-2-5 step.
    fn y_max(&self) -> f64 {
        let hi = self
            .series
            .iter()
            .flat_map(|s| s.values.iter().copied())
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        if hi <= 0.0 {
            return 1.0;
        }
        let magnitude = 10f64.powf(hi.log10().floor());
        [1.0, 2.0, 2.5, 5.0, 10.0]
            .iter()
            .map(|m| m * magnitude)
            .find(|s| *s >= hi)
            .unwrap_or(magnitude * 10.0)
    }

    /// The chart as a standalone SVG document (no scripts, fonts or external references).
    pub fn to_svg(&self) -> String {
        let plot_w = self.width - LEFT - RIGHT;
        let plot_h = self.height - TOP - BOTTOM;
        let y_max = self.y_max();
        let py = |v: f64| TOP + plot_h * (1.0 - (v / y_max).clamp(0.0, 1.0));
        let mut s = document_start(self.width, self.height, LEFT, &self.title, &self.subtitle);
        for i in 0..=4 {
            let v = y_max * f64::from(i) / 4.0;
            s.push_str(&line(LEFT, py(v), LEFT + plot_w, py(v), "#e4e4e4"));
            s.push_str(&text(
                LEFT - 6.0,
                py(v) + 4.0,
                "end",
                "",
                &format_si(v, &self.y_unit),
            ));
        }
        let groups = self.categories.len().max(1) as f64;
        let group_w = plot_w / groups;
        let bar_w = group_w * 0.8 / self.series.len().max(1) as f64;
        for (g, category) in self.categories.iter().enumerate() {
            let gx = LEFT + group_w * g as f64;
            for (m, series) in self.series.iter().enumerate() {
                let Some(v) = series.values.get(g).copied().filter(|v| v.is_finite()) else {
                    continue;
                };
                let top = py(v);
                let tip = format!(
                    "{} {category}: {}",
                    series.label,
                    format_si(v, &self.y_unit)
                );
                s.push_str(&rect(
                    gx + group_w * 0.1 + bar_w * m as f64,
                    top,
                    bar_w,
                    TOP + plot_h - top,
                    &series.color,
                    Some(&tip),
                ));
            }
            s.push_str(&text(
                gx + group_w / 2.0,
                TOP + plot_h + 16.0,
                "middle",
                "",
                category,
            ));
        }
        s.push_str(&format!(
            "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{plot_w:.1}\" height=\"{plot_h:.1}\" fill=\"none\" stroke=\"#333\"/>\n"
        ));
        s.push_str(&text(
            LEFT + plot_w / 2.0,
            TOP + plot_h + 40.0,
            "middle",
            "",
            &self.category_label,
        ));
        let (ly, lx) = (TOP + plot_h / 2.0, 18.0);
        s.push_str(&format!(
            "<text x=\"{lx}\" y=\"{ly:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 {lx} {ly:.1})\">{}</text>\n",
            escape(&self.y_label)
        ));
        let x = LEFT + plot_w + 20.0;
        for (m, series) in self.series.iter().enumerate() {
            let y = TOP + 20.0 * m as f64;
            s.push_str(&rect(x, y, 18.0, 10.0, &series.color, None));
            s.push_str(&text(x + 24.0, y + 9.0, "start", "", &series.label));
        }
        s.push_str("</svg>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bar_per_value_and_a_legend() {
        let mut chart = GroupedBars::new(
            "alignment",
            vec!["512".into(), "4K".into(), "1M+".into()],
            "share",
            "%",
        );
        for (label, values) in [
            ("append", [10.0, 60.0, 30.0]),
            ("sloppy", [80.0, 20.0, 0.0]),
        ] {
            chart.series.push(GroupSeries {
                label: label.into(),
                color: "#1f77b4".into(),
                values: values.to_vec(),
            });
        }
        let svg = chart.to_svg();
        assert_eq!(svg.matches("<title>").count(), 6);
        assert!(svg.contains("<title>append 4K: 60%</title>"), "{svg}");
        assert!(svg.contains(">sloppy</text>"));
        assert_eq!(chart.y_max(), 100.0);
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn empty_chart_renders() {
        let svg = GroupedBars::new("none", Vec::new(), "share", "%").to_svg();
        assert!(svg.ends_with("</svg>\n") && !svg.contains("NaN"));
    }
}
