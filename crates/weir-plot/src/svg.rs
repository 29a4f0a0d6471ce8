//! Small SVG text helpers.

/// Escapes text for SVG content and attribute values.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A `<text>` element.
pub fn text(x: f64, y: f64, anchor: &str, extra: &str, content: &str) -> String {
    format!(
        "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\"{extra}>{}</text>\n",
        escape(content)
    )
}

/// A `<line>` element.
pub fn line(x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str) -> String {
    format!(
        "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke=\"{stroke}\"/>\n"
    )
}

/// A filled `<rect>`; `title` becomes a tooltip when given.
pub fn rect(x: f64, y: f64, w: f64, h: f64, fill: &str, title: Option<&str>) -> String {
    match title {
        Some(t) => format!(
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" fill=\"{fill}\"><title>{}</title></rect>\n",
            escape(t)
        ),
        None => format!(
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" fill=\"{fill}\"/>\n"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
        assert!(text(1.0, 2.0, "start", "", "<x>").contains("&lt;x&gt;"));
    }
}
