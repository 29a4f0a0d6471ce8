//! Plain-text tables for terminals, shared by the run report and the scheduler's class report.

use std::fmt::Write as _;

/// Microseconds for a table cell: whole above 100, one decimal below.
pub(crate) fn fmt_us(us: f64) -> String {
    if us >= 100.0 {
        format!("{us:.0}")
    } else {
        format!("{us:.1}")
    }
}

/// Writes `rows` as aligned columns: the first two (names) to the left, numbers to the right.
pub(crate) fn write_table(out: &mut String, rows: &[Vec<String>]) {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            // Names left-aligned, numbers right-aligned.
            if c < 2 {
                let _ = write!(line, "{cell:<w$}  ", w = widths[c]);
            } else {
                let _ = write!(line, "{cell:>w$}  ", w = widths[c]);
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}
