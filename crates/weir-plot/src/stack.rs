//! Several finished charts in one SVG document, one under the other (`weir tune --plot` writes
//! its sweeps as one file).

/// `(width, height)` from a chart's root `<svg ... width="W" height="H"`.
fn size(svg: &str) -> (f64, f64) {
    let root = svg.split('>').next().unwrap_or("");
    let get = |name: &str| {
        let key = format!(" {name}=\"");
        root.find(&key)
            .and_then(|i| {
                let rest = &root[i + key.len()..];
                rest[..rest.find('"')?].parse::<f64>().ok()
            })
            .unwrap_or(0.0)
    };
    (get("width"), get("height"))
}

/// The charts stacked vertically in one document; each keeps its own coordinates as a
/// nested `<svg>` placed at its offset.
pub fn stack(charts: &[String]) -> String {
    let sizes: Vec<(f64, f64)> = charts.iter().map(|c| size(c)).collect();
    let width = sizes.iter().map(|s| s.0).fold(0.0, f64::max);
    let height: f64 = sizes.iter().map(|s| s.1).sum();
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">\n"
    );
    let mut y = 0.0;
    for (chart, (_, h)) in charts.iter().zip(&sizes) {
        out.push_str(&chart.replacen("<svg ", &format!("<svg y=\"{y}\" "), 1));
        y += h;
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_placed_one_under_the_other() {
        let a =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"50\"><rect/></svg>\n";
        let b = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"80\" height=\"30\"><circle/></svg>\n";
        let s = stack(&[a.to_string(), b.to_string()]);
        assert!(
            s.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"80\"")
        );
        assert!(s.contains("<svg y=\"0\" xmlns") && s.contains("<svg y=\"50\" xmlns"));
        assert_eq!(s.matches("<svg").count(), 3);
    }
}
