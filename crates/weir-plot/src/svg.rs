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

/// The opening of a standalone chart document: the `<svg>` element, a white background, and
/// the title and a grey subtitle at `left`, so every chart kind is headed alike.
pub fn document_start(width: f64, height: f64, left: f64, title: &str, subtitle: &str) -> String {
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"12\">\n"
    );
    s.push_str(&rect(0.0, 0.0, width, height, "white", None));
    s.push_str(&text(left, 22.0, "start", " font-size=\"16\"", title));
    s.push_str(&text(left, 40.0, "start", " fill=\"#555\"", subtitle));
    s
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
