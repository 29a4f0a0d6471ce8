//! Each picture on the page shows the data embedded beside it, and that data is the command's
//! JSON: rendered from a recorded `weir report --quick` document (vda, ext4, this project's VM),
//! the SVG's polylines, markers and bars are read back and mapped to data coordinates.

use serde_json::Value;
use weir_report::chart::{ChartBody, SeriesKind};
use weir_report::page::{embedded_charts, embedded_doc, render, section_charts};
use weir_report::{Chart, ReportDoc, SectionKind};

fn fixture() -> ReportDoc {
    let text = include_str!("fixtures/quick-vda-ext4.json");
    serde_json::from_str(text).unwrap_or_else(|e| panic!("fixture does not parse: {e}"))
}

/// The `<figure>` of chart `id` in `html`.
fn figure<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<figure class=\"chart\" id=\"chart-{id}\">"))
        .unwrap_or_else(|| panic!("no figure for chart {id}"));
    let end = html[start..]
        .find("</figure>")
        .unwrap_or_else(|| panic!("figure {id} not closed"));
    &html[start..start + end]
}

/// The value of `attr="..."` in an element's text.
fn attr(element: &str, name: &str) -> Option<f64> {
    let key = format!(" {name}=\"");
    let i = element.find(&key)? + key.len();
    let j = element[i..].find('"')?;
    element[i..i + j].parse().ok()
}

/// Every `<polyline>`'s points, in document order.
fn polylines(svg: &str) -> Vec<Vec<(f64, f64)>> {
    svg.split("<polyline points=\"")
        .skip(1)
        .map(|rest| {
            let end = rest.find('"').unwrap_or(0);
            rest[..end]
                .split_whitespace()
                .filter_map(|p| {
                    let (x, y) = p.split_once(',')?;
                    Some((x.parse().ok()?, y.parse().ok()?))
                })
                .collect()
        })
        .collect()
}

/// Plot markers (the legend's swatch circles have r="4"; layer markers are smaller).
fn markers(svg: &str) -> Vec<(f64, f64)> {
    svg.split("<circle")
        .skip(1)
        .filter(|c| attr(c, "r") != Some(4.0))
        .filter_map(|c| Some((attr(c, "cx")?, attr(c, "cy")?)))
        .collect()
}

/// Checks that pixel = a + b * f(data) for one axis, within rounding (0.1 px steps).
fn assert_affine(pairs: &[(f64, f64)], log: bool, what: &str) {
    let t = |v: f64| if log { v.log10() } else { v };
    let pairs: Vec<(f64, f64)> = pairs.iter().map(|(d, p)| (t(*d), *p)).collect();
    let (lo, hi) = pairs.iter().fold((pairs[0], pairs[0]), |(lo, hi), p| {
        (
            if p.0 < lo.0 { *p } else { lo },
            if p.0 > hi.0 { *p } else { hi },
        )
    });
    if hi.0 == lo.0 {
        let same = pairs.iter().all(|p| (p.1 - lo.1).abs() < 0.11);
        assert!(
            same,
            "{what}: equal values drawn at different pixels: {pairs:?}"
        );
        return;
    }
    let b = (hi.1 - lo.1) / (hi.0 - lo.0);
    for (d, p) in &pairs {
        let expected = lo.1 + b * (d - lo.0);
        assert!(
            (expected - p).abs() < 0.2,
            "{what}: value {d} drawn at {p} px, the axis puts it at {expected:.2} px"
        );
    }
}

fn check_xy_chart(chart: &Chart, svg: &str) {
    let ChartBody::Xy { x, y, series } = &chart.body else {
        return;
    };
    let lines = polylines(svg);
    let dots = markers(svg);
    let mut drawn_x: Vec<(f64, f64)> = Vec::new();
    let mut drawn_y: Vec<(f64, f64)> = Vec::new();
    let (mut li, mut di) = (0, 0);
    for s in series {
        let pixels: Vec<(f64, f64)> = match s.kind {
            SeriesKind::Line | SeriesKind::DashedLine if s.points.len() >= 2 => {
                li += 1;
                lines.get(li - 1).cloned().unwrap_or_default()
            }
            // A one-point line is drawn as a marker; an empty one draws nothing.
            SeriesKind::Line | SeriesKind::DashedLine if s.points.is_empty() => continue,
            SeriesKind::Line | SeriesKind::DashedLine | SeriesKind::Points => {
                di += s.points.len();
                dots.get(di - s.points.len()..di)
                    .map(<[_]>::to_vec)
                    .unwrap_or_default()
            }
        };
        assert_eq!(
            pixels.len(),
            s.points.len(),
            "chart {}: series {:?} has {} points in its data and {} drawn",
            chart.id,
            s.label,
            s.points.len(),
            pixels.len()
        );
        for ((dx, dy), (px, py)) in s.points.iter().zip(&pixels) {
            drawn_x.push((*dx, *px));
            drawn_y.push((*dy, *py));
        }
    }
    assert_eq!(
        li,
        lines.len(),
        "chart {}: a polyline without data",
        chart.id
    );
    assert_eq!(di, dots.len(), "chart {}: a marker without data", chart.id);
    assert!(!drawn_x.is_empty(), "chart {} draws nothing", chart.id);
    // Every point lies inside the plot area (none clamped to an edge) ...
    for (_, px) in &drawn_x {
        assert!(
            (89.9..=670.1).contains(px),
            "chart {}: x pixel {px} outside the plot",
            chart.id
        );
    }
    for (_, py) in &drawn_y {
        assert!(
            (57.9..=460.1).contains(py),
            "chart {}: y pixel {py} outside the plot",
            chart.id
        );
    }
    // ... and at the place its axes give its value.
    assert_affine(&drawn_x, x.log, &format!("chart {} x", chart.id));
    assert_affine(&drawn_y, y.log, &format!("chart {} y", chart.id));
}

fn check_grouped_chart(chart: &Chart, svg: &str) {
    let ChartBody::Grouped {
        series, categories, ..
    } = &chart.body
    else {
        return;
    };
    let bars: Vec<(f64, String)> = svg
        .split("<rect")
        .skip(1)
        .filter(|r| r.contains("<title>"))
        .filter_map(|r| Some((attr(r, "height")?, r.split("<title>").nth(1)?.to_string())))
        .collect();
    // Bars are drawn category by category, one per series within each.
    let values: Vec<(f64, &str)> = (0..categories.len())
        .flat_map(|g| {
            series
                .iter()
                .filter_map(move |s| Some((*s.values.get(g)?, s.label.as_str())))
        })
        .collect();
    assert_eq!(
        bars.len(),
        values.len(),
        "chart {}: one bar per value",
        chart.id
    );
    let scale = values
        .iter()
        .zip(&bars)
        .find(|((v, _), _)| *v > 0.0)
        .map(|((v, _), (h, _))| h / v)
        .unwrap_or_else(|| panic!("chart {}: no bar above zero", chart.id));
    for ((v, label), (h, title)) in values.iter().zip(&bars) {
        assert!(
            title.starts_with(label),
            "bar {title:?} is not series {label}"
        );
        assert!(
            (v * scale - h).abs() < 0.11,
            "chart {}: {label} {v} drawn {h} px high",
            chart.id
        );
    }
}

#[test]
fn every_plot_shows_the_data_embedded_beside_it() {
    let doc = fixture();
    let html = render(&doc);
    let charts = embedded_charts(&html);
    let expected: Vec<Chart> = doc.sections.iter().flat_map(section_charts).collect();
    assert_eq!(charts.len(), expected.len());
    assert!(
        charts.len() >= 7,
        "tune 4, qos 2 and align 1 charts: {}",
        charts.len()
    );
    for ((id, data), chart) in charts.iter().zip(&expected) {
        let embedded: Chart = serde_json::from_value(data.clone())
            .unwrap_or_else(|e| panic!("chart {id}'s data does not parse: {e}"));
        assert_eq!(
            &embedded, chart,
            "chart {id}'s embedded data is what its section's JSON gives"
        );
        let svg = figure(&html, id);
        check_xy_chart(chart, svg);
        check_grouped_chart(chart, svg);
    }
}

#[test]
fn chart_data_comes_from_the_commands_json() {
    let doc = fixture();
    let tune = doc
        .sections
        .iter()
        .find(|s| s.kind == SectionKind::Tune)
        .unwrap_or_else(|| panic!("no tune section"));
    let steps = tune
        .json
        .pointer("/report/sweeps/random_read/steps")
        .and_then(Value::as_array);
    let raw: Vec<(f64, f64)> = steps
        .unwrap_or_else(|| panic!("no random-read sweep in the tune JSON"))
        .iter()
        .filter_map(|s| {
            Some((
                s.pointer("/load/depth")?.as_f64()?,
                s.get("iops")?.as_f64()?,
            ))
        })
        .collect();
    let charts = section_charts(tune);
    let depth = charts
        .iter()
        .find(|c| c.id == "tune-depth-iops")
        .unwrap_or_else(|| panic!("no depth chart"));
    let ChartBody::Xy { series, .. } = &depth.body else {
        panic!("depth chart is not xy")
    };
    assert_eq!(
        series[0].points, raw,
        "the random-read curve is the sweep's steps"
    );
    let knee = tune
        .json
        .pointer("/report/sweeps/random_read/knee")
        .and_then(Value::as_u64);
    let knee = knee.unwrap_or_else(|| panic!("no knee")) as usize;
    let stem = vec![(raw[knee].0, 0.0), raw[knee]];
    assert_eq!(series[1].points, stem, "the stem marks the chosen knee");
}

#[test]
fn page_is_self_contained_small_and_round_trips() {
    let doc = fixture();
    let html = render(&doc);
    assert!(html.len() < 2 << 20, "page is {} bytes", html.len());
    for forbidden in ["<link", " src=", "href=\"http", "url(http", "@import"] {
        assert!(
            !html.contains(forbidden),
            "the page fetches something: {forbidden}"
        );
    }
    // Only the SVG namespace URI may appear (it is a name, never fetched).
    let urls = html.matches("http://").count() + html.matches("https://").count();
    let namespaces = html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
    assert_eq!(urls, namespaces, "a URL other than the SVG namespace");
    assert_eq!(
        embedded_doc(&html),
        Some(doc),
        "the embedded JSON is the document"
    );
    for kind in SectionKind::ALL {
        assert!(html.contains(&format!("<section id=\"section-{}\">", kind.id())));
    }
}
