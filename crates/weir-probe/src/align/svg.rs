//! A hand-written SVG bar chart of the alignment distributions: one group of bars per
//! alignment bucket, one bar per preparation mode, at the deepest address level reached.

use super::run::AlignReport;
use super::{bucket_label, BUCKETS_BYTES};

const COLORS: [&str; 5] = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd"];
const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 70.0;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The chart as an SVG document.
pub fn render(report: &AlignReport) -> String {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let groups = BUCKETS_BYTES.len() as f64;
    let modes = report.modes.len().max(1) as f64;
    let group_w = plot_w / groups;
    let bar_w = group_w * 0.8 / modes;
    let device = report
        .modes
        .first()
        .and_then(|m| m.levels.last())
        .map_or("device", |l| l.device.as_str());
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{LEFT}\" y=\"20\" font-size=\"15\">{}</text>\n\
         <text x=\"{LEFT}\" y=\"38\" fill=\"#555\">{}</text>\n",
        escape(&format!(
            "Request alignment on {device}: {} {} B blocks, {} KiB writes",
            report.fs_type,
            report.fs_block_bytes,
            report.request_bytes >> 10
        )),
        escape(&format!(
            "{} (share of requests by largest power of two dividing the device address)",
            report.path
        ))
    );
    // Y axis: 0..100 %.
    for pct in (0..=100).step_by(25) {
        let y = TOP + plot_h * (1.0 - pct as f64 / 100.0);
        s.push_str(&format!(
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{pct}%</text>\n",
            LEFT + plot_w,
            LEFT - 6.0,
            y + 4.0
        ));
    }
    for (g, _) in BUCKETS_BYTES.iter().enumerate() {
        let gx = LEFT + group_w * g as f64;
        for (m, mode) in report.modes.iter().enumerate() {
            let Some(level) = mode.levels.last() else {
                continue;
            };
            let h = &level.histogram;
            let share = if h.requests > 0 {
                h.counts[g] as f64 / h.requests as f64
            } else {
                0.0
            };
            let bh = plot_h * share;
            let x = gx + group_w * 0.1 + bar_w * m as f64;
            s.push_str(&format!(
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{bar_w:.1}\" height=\"{bh:.1}\" fill=\"{}\"><title>{} {}: {:.1}%</title></rect>\n",
                TOP + plot_h - bh,
                COLORS[m % COLORS.len()],
                escape(&mode.mode),
                bucket_label(g),
                share * 100.0
            ));
        }
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            gx + group_w / 2.0,
            TOP + plot_h + 16.0,
            bucket_label(g)
        ));
    }
    s.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">alignment of the request's device address (bytes)</text>\n",
        LEFT + plot_w / 2.0,
        TOP + plot_h + 34.0
    ));
    for (m, mode) in report.modes.iter().enumerate() {
        let x = LEFT + 150.0 * m as f64;
        let y = HEIGHT - 14.0;
        s.push_str(&format!(
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{y:.1}\">{}</text>\n",
            y - 10.0,
            COLORS[m % COLORS.len()],
            x + 16.0,
            escape(&mode.mode)
        ));
    }
    s.push_str("</svg>\n");
    s
}
