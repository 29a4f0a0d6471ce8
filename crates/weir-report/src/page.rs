//! The HTML page: one self-contained file (inline CSS and SVG, no scripts, nothing fetched),
//! a pure function of a [`ReportDoc`]. Each chart is followed by its data as a JSON block
//! (`<script type="application/json" id="data-<chart id>">`, inert: browsers never run it),
//! and the whole document is embedded once more at the end (`id="weir-report"`).

use serde_json::Value;

use crate::chart::Chart;
use crate::doc::{ReportDoc, Section, SectionKind, Status};
pub use crate::escape::esc;
use crate::figures;
use crate::tables;

const STYLE: &str = "body{font-family:sans-serif;max-width:1180px;margin:0 auto;padding:16px;color:#222}\
h1{margin-bottom:4px}h2{border-bottom:2px solid #ccc;padding-bottom:4px;margin-top:36px}\
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top;font-size:13px}\
th{background:#f2f2f2}.PASS,.GOOD,.done{background:#d7f5d7}.WARN,.partial{background:#fff1c2}\
.FAIL,.BAD,.ERROR,.failed{background:#ffd3d3}.not-run{background:#e6e6e6}\
code,pre{font-size:12px;background:#f6f6f6}pre{padding:6px;overflow-x:auto;white-space:pre-wrap}\
figure.chart{margin:12px 0}.status{padding:4px 8px;display:inline-block;border-radius:3px}\
.num{text-align:right;font-variant-numeric:tabular-nums}";

/// JSON for a `<script type="application/json">` block: `</` would end the element early.
fn script_json(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v)
        .unwrap_or_else(|e| format!("{{\"error\":\"cannot encode: {e}\"}}"))
        .replace("</", "<\\/")
}

/// The charts of one section, built from its JSON alone.
pub fn section_charts(section: &Section) -> Vec<Chart> {
    let json = &section.json;
    match section.kind {
        SectionKind::Tune => figures::tune::charts(json),
        SectionKind::Qos => figures::qos::charts(json),
        SectionKind::Align => figures::align::chart(json).into_iter().collect(),
        // Explore's heatmaps are kept as chart data by its phase (drawn by explore's own
        // figure builder from the map).
        SectionKind::Explore => json
            .get("charts")
            .and_then(|c| serde_json::from_value(c.clone()).ok())
            .unwrap_or_default(),
        SectionKind::Doctor | SectionKind::Qualify => Vec::new(),
    }
}

/// A chart and its data block.
pub fn chart_html(chart: &Chart) -> String {
    format!(
        "<figure class=\"chart\" id=\"chart-{id}\">\n{svg}<script type=\"application/json\" id=\"data-{id}\">{data}</script>\n</figure>\n",
        id = esc(&chart.id),
        svg = chart.to_svg(),
        data = script_json(chart)
    )
}

fn status_class(status: &Status) -> &'static str {
    match status {
        Status::Done => "done",
        Status::Partial(_) => "partial",
        Status::Failed(_) => "failed",
        Status::NotRun(_) => "not-run",
    }
}

/// One section: heading, status, tables, charts, commands and its JSON.
pub fn section_html(section: &Section) -> String {
    let kind = section.kind;
    let mut s = format!(
        "<section id=\"section-{}\">\n<h2>{}</h2>\n<p><span class=\"status {}\">{}</span> in {:.1} s",
        kind.id(),
        esc(kind.title()),
        status_class(&section.status),
        section.status.label(),
        section.elapsed_s
    );
    if let Some(reason) = section.status.reason() {
        s.push_str(&format!(": {}", esc(reason)));
    }
    s.push_str("</p>\n");
    s.push_str(&tables::section_tables(kind, &section.json));
    for chart in section_charts(section) {
        s.push_str(&chart_html(&chart));
    }
    if !section.commands.is_empty() {
        s.push_str("<p>To reproduce:</p>\n<pre>");
        s.push_str(&esc(&section.commands.join("\n")));
        s.push_str("</pre>\n");
    }
    if !section.json.is_null() {
        let pretty = serde_json::to_string_pretty(&section.json).unwrap_or_default();
        s.push_str(&format!(
            "<details><summary>raw JSON ({} bytes)</summary><pre>{}</pre></details>\n",
            pretty.len(),
            esc(&pretty)
        ));
    }
    s.push_str("</section>\n");
    s
}

fn meta_html(doc: &ReportDoc) -> String {
    let m = &doc.meta;
    let rows = [
        ("command", m.command.clone()),
        ("directory", m.dir.clone()),
        ("mode", m.mode.clone()),
        ("weir", m.weir_version.clone()),
        ("host", m.hostname.clone()),
        ("kernel", m.kernel.clone()),
        ("CPU", format!("{} x {}", m.cpus, m.cpu_model)),
        (
            "memory",
            format!("{:.1} GiB", m.memory_bytes as f64 / (1u64 << 30) as f64),
        ),
        ("started (Unix time)", m.started_unix_s.to_string()),
        ("took", format!("{:.1} s", m.elapsed_s)),
    ];
    let mut s = String::from("<table id=\"machine\">\n");
    for (k, v) in rows {
        s.push_str(&format!(
            "<tr><th>{}</th><td>{}</td></tr>\n",
            esc(k),
            esc(&v)
        ));
    }
    s.push_str("</table>\n");
    s
}

fn contents_html(doc: &ReportDoc) -> String {
    let mut s = String::from("<table id=\"contents\"><tr><th>section</th><th>status</th></tr>\n");
    for sec in &doc.sections {
        s.push_str(&format!(
            "<tr><td><a href=\"#section-{}\">{}</a></td><td class=\"{}\">{}{}</td></tr>\n",
            sec.kind.id(),
            esc(sec.kind.title()),
            status_class(&sec.status),
            sec.status.label(),
            sec.status
                .reason()
                .map_or_else(String::new, |r| format!(": {}", esc(r)))
        ));
    }
    s.push_str("</table>\n");
    s
}

/// The page.
pub fn render(doc: &ReportDoc) -> String {
    let mut s = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>weir report: {}</title>\n<style>{STYLE}</style></head>\n<body>\n<h1>weir report: {}</h1>\n",
        esc(&doc.meta.dir),
        esc(&doc.meta.dir)
    );
    if doc.meta.interrupted {
        s.push_str("<p class=\"partial\">Interrupted (Ctrl-C): the sections below keep what was measured; those marked partial or not run did not finish.</p>\n");
    }
    s.push_str(&meta_html(doc));
    s.push_str(&contents_html(doc));
    for section in &doc.sections {
        s.push_str(&section_html(section));
    }
    s.push_str(&format!(
        "<script type=\"application/json\" id=\"weir-report\">{}</script>\n</body></html>\n",
        script_json(doc)
    ));
    s
}

/// The document embedded in a page [`render`] wrote.
pub fn embedded_doc(html: &str) -> Option<ReportDoc> {
    let start = html.find("<script type=\"application/json\" id=\"weir-report\">")?;
    let body = &html[start..];
    let open = body.find('>')? + 1;
    let close = body.find("</script>")?;
    let json = body[open..close].replace("<\\/", "</");
    serde_json::from_str(&json).ok()
}

/// Every chart's embedded data block: (chart id, chart).
pub fn embedded_charts(html: &str) -> Vec<(String, Value)> {
    let marker = "<script type=\"application/json\" id=\"data-";
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(marker) {
        rest = &rest[i + marker.len()..];
        let Some(q) = rest.find('"') else { break };
        let id = rest[..q].to_string();
        let (Some(open), Some(close)) = (rest.find('>'), rest.find("</script>")) else {
            break;
        };
        let json = rest[open + 1..close].replace("<\\/", "</");
        if let Ok(v) = serde_json::from_str(&json) {
            out.push((id, v));
        }
        rest = &rest[close..];
    }
    out
}
