//! weir-plot: the one place weir draws pictures.
//!
//! A [`Figure`] is a plot area with two [`Axis`]es (linear or logarithmic) and a stack of
//! [`Layer`]s drawn in order:
//!
//! - `Layer::Cells`: coloured rectangles in data coordinates, the colour from a
//!   [`ColorScale`] (heatmaps: `weir explore`'s latency maps, Diskplorer's grid);
//! - `Layer::Line`: a polyline (a goal contour, a fitted boundary, a throughput-over-time
//!   curve, a CDF from [`cdf`]);
//! - `Layer::Points`: markers;
//! - `Layer::Bars`: bars from a baseline (histograms from [`histogram`]).
//!
//! Lines, points and bars with a label get a legend entry; a figure with cells gets a colour
//! bar. Output is a standalone SVG document ([`Figure::to_svg`]) with no scripts, fonts or
//! external references, so it can be inlined in an HTML page as is; [`svg_to_png`] rasterises
//! it (resvg, pure Rust) where a PNG is wanted. Every number is placed by
//! the same two scale functions, so a picture cannot disagree with the data it was given.
//!
//! ```
//! use weir_plot::{Axis, Figure, Layer, Stroke};
//! let mut fig = Figure::new("Read p99", Axis::linear("write", "B/s"), Axis::linear("read", "IOPS"));
//! fig.layers.push(Layer::Line {
//!     points: vec![(0.0, 100.0), (2e9, 0.0)],
//!     stroke: Stroke::solid("#000"),
//!     label: Some("fit".into()),
//! });
//! assert!(fig.to_svg().starts_with("<svg"));
//! ```

mod color;
mod data;
mod figure;
mod grouped;
mod png;
mod scale;
mod stack;
mod svg;

pub use color::ColorScale;
pub use data::{cdf, histogram};
pub use figure::{Bar, Cell, Figure, Layer, Stroke};
pub use grouped::{GroupSeries, GroupedBars};
pub use png::{svg_to_png, PngError};
pub use scale::{format_si, Axis, Scale};
pub use stack::stack;
