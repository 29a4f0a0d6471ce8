//! The page as a person sees it: rendered by headless Chromium (Debian package `chromium`,
//! installed by scripts/install-deps.sh), screenshotted, and every section and chart checked to
//! be present and not blank. Without Chromium the test prints SKIP, except as root, where the
//! install script can always provide it, so a missing browser fails instead of hiding.
//! `WEIR_REPORT_SCREENSHOTS=DIR` keeps the screenshots.

use std::path::{Path, PathBuf};
use std::process::Command;

use weir_report::chart::{ChartBody, PALETTE};
use weir_report::page::{chart_html, render, section_charts, section_html};
use weir_report::{Chart, ReportDoc};

/// Chart size (weir-plot's default figure) and its plot rectangle.
const CHART_W: u32 = 860;
const CHART_H: u32 = 520;
const PLOT: (u32, u32, u32, u32) = (91, 59, 669, 459);

fn fixture() -> ReportDoc {
    serde_json::from_str(include_str!("fixtures/quick-vda-ext4.json"))
        .unwrap_or_else(|e| panic!("fixture does not parse: {e}"))
}

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join(name))
                    .find(|p| p.is_file())
            })
        })
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc_geteuid() == 0 }
}

extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}

/// An RGB image.
struct Shot {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Shot {
    fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let i = ((y * self.width + x) * 3) as usize;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    /// Luminance variance over a rectangle.
    fn variance(&self, (x0, y0, x1, y1): (u32, u32, u32, u32)) -> f64 {
        let mut n = 0.0;
        let (mut sum, mut sq) = (0.0, 0.0);
        for y in y0..y1.min(self.height) {
            for x in x0..x1.min(self.width) {
                let [r, g, b] = self.pixel(x, y);
                let l = 0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b);
                sum += l;
                sq += l * l;
                n += 1.0;
            }
        }
        if n == 0.0 {
            return 0.0;
        }
        sq / n - (sum / n).powi(2)
    }

    /// Pixels in a rectangle within `tolerance` of `color` on every channel.
    fn count_color(&self, color: [u8; 3], (x0, y0, x1, y1): (u32, u32, u32, u32)) -> usize {
        let mut n = 0;
        for y in y0..y1.min(self.height) {
            for x in x0..x1.min(self.width) {
                let p = self.pixel(x, y);
                if p.iter().zip(color).all(|(a, b)| a.abs_diff(b) <= 40) {
                    n += 1;
                }
            }
        }
        n
    }
}

fn decode(path: &Path) -> Shot {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap_or_else(|e| panic!("{}: not a PNG: {e}", path.display()));
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader
        .next_frame(&mut buf)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let channels = info.color_type.samples();
    let rgb = buf[..info.buffer_size()]
        .chunks(channels)
        .flat_map(|p| [p[0], p[1 % channels], p[2 % channels]])
        .collect();
    Shot {
        width: info.width,
        height: info.height,
        rgb,
    }
}

/// Renders `html` (written to `dir/name.html`) at `width` x `height` and decodes the shot.
fn screenshot(browser: &Path, dir: &Path, name: &str, html: &str, width: u32, height: u32) -> Shot {
    let page = dir.join(format!("{name}.html"));
    let png = dir.join(format!("{name}.png"));
    std::fs::write(&page, html).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            // No network at all: the page must not need it.
            "--proxy-server=127.0.0.1:9",
            &format!("--user-data-dir={}", dir.join("profile").display()),
            &format!("--window-size={width},{height}"),
            &format!("--screenshot={}", png.display()),
        ])
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", browser.display()));
    assert!(
        png.is_file(),
        "chromium wrote no screenshot of {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shot = decode(&png);
    if let Some(keep) = std::env::var_os("WEIR_REPORT_SCREENSHOTS") {
        let _ = std::fs::create_dir_all(&keep);
        let _ = std::fs::copy(&png, Path::new(&keep).join(format!("{name}.png")));
    }
    shot
}

fn hex(color: &str) -> [u8; 3] {
    let v = u32::from_str_radix(color.trim_start_matches('#'), 16).unwrap_or(0);
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// Every chart, stacked at known offsets in one page: non-blank inside its plot area, and
/// each of its series' colours visible there.
fn check_charts(browser: &Path, dir: &Path, charts: &[Chart]) {
    let mut html = String::from("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>body{margin:0}figure{margin:0;height:520px}</style></head><body>\n");
    for chart in charts {
        html.push_str(&chart_html(chart));
    }
    html.push_str("</body></html>\n");
    let shot = screenshot(
        browser,
        dir,
        "charts",
        &html,
        CHART_W,
        CHART_H * charts.len() as u32,
    );
    for (i, chart) in charts.iter().enumerate() {
        let top = CHART_H * i as u32;
        let plot = (PLOT.0, top + PLOT.1, PLOT.2, top + PLOT.3);
        let variance = shot.variance(plot);
        // Grid lines alone give a little variance; the colour check below is what proves
        // the data was drawn.
        assert!(
            variance > 3.0,
            "chart {} is blank in the browser (luminance variance {variance:.1})",
            chart.id
        );
        let colors: Vec<&str> = match &chart.body {
            ChartBody::Xy { series, .. } => series
                .iter()
                .filter(|s| !s.points.is_empty())
                .map(|s| s.color.as_str())
                .collect(),
            // Cells carry the colour scale's shades, not palette colours: the variance
            // check above covers them.
            ChartBody::Heatmap { .. } => Vec::new(),
            ChartBody::Grouped { series, .. } => series
                .iter()
                .filter(|s| s.values.iter().any(|v| *v > 0.5))
                .map(|s| s.color.as_str())
                .collect(),
        };
        for c in colors {
            assert!(PALETTE.contains(&c));
            let n = shot.count_color(hex(c), plot);
            assert!(
                n >= 10,
                "chart {}: series colour {c} not visible in the plot ({n} px)",
                chart.id
            );
        }
    }
}

#[test]
fn page_renders_with_every_section_and_chart_visible() {
    let Some(browser) = chromium() else {
        assert!(
            !is_root(),
            "chromium is missing: run scripts/install-deps.sh (root can always install it)"
        );
        eprintln!("SKIP page_renders_with_every_section_and_chart_visible: no chromium in PATH (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let doc = fixture();
    let charts: Vec<Chart> = doc.sections.iter().flat_map(section_charts).collect();
    check_charts(&browser, dir.path(), &charts);

    // Each section alone (same styles as the page): its heading and status are drawn.
    let page = render(&doc);
    let head = &page[..page.find("<body>").unwrap_or(0) + "<body>".len()];
    for section in &doc.sections {
        let html = format!("{head}\n{}</body></html>\n", section_html(section));
        let name = format!("section-{}", section.kind.id());
        let shot = screenshot(&browser, dir.path(), &name, &html, 1200, 400);
        let variance = shot.variance((0, 0, 1200, 120));
        assert!(
            variance > 50.0,
            "section {} renders blank ({variance:.1})",
            section.kind.id()
        );
    }

    // The whole page: non-blank from top to the end of its first screens.
    let shot = screenshot(&browser, dir.path(), "page", &page, 1200, 3000);
    for band in 0..5 {
        let rect = (0, band * 600, 1200, band * 600 + 600);
        let variance = shot.variance(rect);
        assert!(variance > 50.0, "page band {band} is blank ({variance:.1})");
    }
}
