//! PNG copies of the SVGs, rasterised in pure Rust (resvg), for places that show images but not
//! SVG (ticket attachments, chat). Text uses the system's fonts: `sans-serif` is mapped to the
//! first of DejaVu Sans, Liberation Sans or Noto Sans found, else to any installed family; on
//! a machine with no fonts at all the picture is drawn without its text rather than failing.

use std::fmt;

use resvg::{tiny_skia, usvg};

/// Why a PNG could not be made.
#[derive(Debug)]
pub struct PngError(String);

impl fmt::Display for PngError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PngError {}

const SANS: [&str; 3] = ["DejaVu Sans", "Liberation Sans", "Noto Sans"];

/// Renders an SVG document to PNG bytes at its own size times `scale`.
pub fn svg_to_png(svg: &str, scale: f32) -> Result<Vec<u8>, PngError> {
    let mut opt = usvg::Options::default();
    {
        let db = opt.fontdb_mut();
        db.load_system_fonts();
        let families: Vec<String> = db
            .faces()
            .flat_map(|face| face.families.iter().map(|(name, _)| name.clone()))
            .collect();
        let sans = SANS
            .iter()
            .find(|want| families.iter().any(|f| f == *want))
            .map(|s| s.to_string())
            .or_else(|| families.first().cloned());
        if let Some(family) = sans {
            db.set_sans_serif_family(family);
        }
    }
    let tree = usvg::Tree::from_str(svg, &opt)
        .map_err(|e| PngError(format!("the SVG does not parse: {e}")))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or_else(|| PngError(format!("cannot scale the picture by {scale}")))?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or_else(|| {
        PngError(format!(
            "cannot allocate {}x{} pixels",
            size.width(),
            size.height()
        ))
    })?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| PngError(format!("PNG encoding failed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_rasterises_with_its_colours() {
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"20\" height=\"10\">\
                   <rect width=\"10\" height=\"10\" fill=\"#ff0000\"/>\
                   <rect x=\"10\" width=\"10\" height=\"10\" fill=\"#0000ff\"/></svg>";
        let png = svg_to_png(svg, 1.0).expect("png");
        assert_eq!(&png[1..4], b"PNG");
        let pixmap = tiny_skia::Pixmap::decode_png(&png).expect("decodes");
        assert_eq!((pixmap.width(), pixmap.height()), (20, 10));
        let left = pixmap.pixel(2, 5).expect("pixel");
        let right = pixmap.pixel(17, 5).expect("pixel");
        assert_eq!((left.red(), left.blue()), (255, 0));
        assert_eq!((right.red(), right.blue()), (0, 255));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let e = svg_to_png("not svg", 1.0)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("does not parse"), "{e}");
    }
}
