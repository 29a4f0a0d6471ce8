//! weir-report: one command, one page that shows a disk, its filesystem and the scheduler at
//! work.
//!
//! # Design
//!
//! The report only renders. [`phases::run_report`] calls each command's library function
//! (`weir-probe`'s doctor, qualify and align, `weir-tune`'s preflight and measurement,
//! `weir-workload`'s run for the QoS demo) and keeps the JSON each command prints with its
//! `--json` flag, in a [`doc::ReportDoc`]. [`page::render`] is a pure function of that
//! document: tables and charts are read from the JSON ([`figures`], [`tables`]), never from the
//! typed results, so a page can be re-rendered from the JSON it embeds and a picture cannot
//! show a number its JSON lacks. Each chart is a [`chart::Chart`] — data that serializes next
//! to its picture — drawn by `weir-plot`, weir's only SVG writer; the single-command pictures
//! (`weir align --plot`, `weir run --plot`, `weir tune --plot`) use the same builders.
//!
//! The page is one file: inline CSS and SVG, no scripts that run, nothing fetched.
//!
//! Ctrl-C raises the engine's interrupt flag: the phase that runs stops as the commands do
//! (keeping what it measured where the command does), later phases are marked not run, and
//! the page is still written.

pub mod chart;
pub mod doc;
mod escape;
pub mod figures;
pub mod page;
pub mod phases;
pub mod progress;
pub mod samples;
pub mod tables;

pub use chart::Chart;
pub use doc::{ReportDoc, Section, SectionKind, Status};
pub use phases::{run_report, Mode, ReportOptions};
pub use progress::Progress;

/// Several charts as one SVG document (the `--plot` files of single commands).
pub fn charts_svg(charts: &[Chart]) -> String {
    weir_plot::stack(&charts.iter().map(Chart::to_svg).collect::<Vec<_>>())
}
