//! What a tune prints and writes: io-properties.yaml in iotune's exact shape, iotune's option
//! lines (`--format seastar|envfile`), and a human summary with each number's spread.

use crate::crosscheck::check_line;
use crate::plan::{Figure, TuneReport};
use std::fmt::Write as _;
use weir_model::io_properties::{DiskProperties, IoProperties};

/// One disk entry of io-properties.yaml from a report: the four rates rounded to integers (as
/// iotune writes them), both saturation lengths and the measured physical sector.
pub fn disk_properties(mountpoint: &str, r: &TuneReport) -> DiskProperties {
    let mut d = DiskProperties::new(
        mountpoint,
        r.read_iops.value.round() as u64,
        r.read_bandwidth.value.round() as u64,
        r.write_iops.value.round() as u64,
        r.write_bandwidth.value.round() as u64,
    );
    d.read_saturation_length_bytes = Some(u64::from(r.read_saturation_bytes));
    d.write_saturation_length_bytes = Some(u64::from(r.write_saturation_bytes));
    d.physical_block_size_bytes =
        (r.physical_sector_bytes > 0).then_some(u64::from(r.physical_sector_bytes));
    d
}

/// io-properties.yaml in iotune's layout (weir-model's writer: key order, integers).
pub fn io_properties_yaml(disks: Vec<DiskProperties>) -> String {
    IoProperties { disks }.to_yaml_string()
}

/// iotune's option line for the written properties file: `seastar` gives a line for a Seastar
/// options file, `envfile` the `SEASTAR_IO=` line ScyllaDB's io.conf holds.
pub fn option_line(format_envfile: bool, properties_path: &str) -> String {
    if format_envfile {
        format!("SEASTAR_IO=\"--io-properties-file={properties_path}\"\n")
    } else {
        format!("io-properties-file={properties_path}\n")
    }
}

fn fmt_iops(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2} M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} K", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

fn fmt_bw(v: f64) -> String {
    format!("{:.0} MB/s", v / 1e6)
}

fn row(out: &mut String, name: &str, f: &Figure, fmt: fn(f64) -> String) {
    let sustained = match f.sustained {
        Some(s) => format!("  sustained {} (peak {})", fmt(s), fmt(f.peak)),
        None => String::new(),
    };
    let unconfirmed = if f.confirmed {
        ""
    } else {
        "  (unconfirmed: the sweep's best step)"
    };
    let _ = writeln!(
        out,
        "  {name:<16} {:>12}  ±{:>4.1}% ({} .. {})  knee depth {:>3} (best {:>3}, {:>4} B, {})  {:>7.0} us at knee{sustained}{unconfirmed}",
        fmt(f.value),
        f.spread.cv_percent(),
        fmt(f.spread.min),
        fmt(f.spread.max),
        f.depth_knee,
        f.depth_best,
        f.request_bytes,
        f.regime.short(),
        f.latency_us_mean_at_knee,
    );
}

/// The summary printed after a default run.
pub fn human_summary(r: &TuneReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "measured (each figure re-measured at its best depth after its sweep; ± is the spread of its 100 ms samples):"
    );
    row(&mut out, "read IOPS", &r.read_iops, fmt_iops);
    row(&mut out, "write IOPS", &r.write_iops, fmt_iops);
    row(&mut out, "read bandwidth", &r.read_bandwidth, fmt_bw);
    row(&mut out, "write bandwidth", &r.write_bandwidth, fmt_bw);
    let _ = writeln!(
        out,
        "  saturation length: read {}, write {} (smallest request reaching the best bandwidth)",
        weir_model::units::format_bytes(u64::from(r.read_saturation_bytes)),
        weir_model::units::format_bytes(u64::from(r.write_saturation_bytes)),
    );
    if let (Some(min), Some(max)) = (
        r.random_write_bytes.iter().min(),
        r.random_write_bytes.iter().max(),
    ) {
        let per_shard = if min == max {
            weir_model::units::format_bytes(*min)
        } else {
            format!(
                "{} .. {}",
                weir_model::units::format_bytes(*min),
                weir_model::units::format_bytes(*max)
            )
        };
        let _ = writeln!(
            out,
            "  random writes: overwrites of data this run wrote, {per_shard} per shard (outside the data the reads read)"
        );
    }
    let points: Vec<String> = r
        .sector
        .points
        .iter()
        .map(|(size, iops)| format!("{size} B {}", fmt_iops(*iops)))
        .collect();
    let reported = match r.reported_physical_sector_bytes {
        Some(b) => format!("kernel reports {b} B"),
        None => "kernel value unknown".to_string(),
    };
    let curve = if r.sector.measured_bytes == r.physical_sector_bytes {
        "measured".to_string()
    } else if r.sector.measured_bytes < r.physical_sector_bytes {
        format!(
            "writes down to {} B showed no read-modify-write penalty, which does not contradict the kernel",
            r.sector.measured_bytes
        )
    } else {
        format!(
            "the IOPS curve alone points at {} B, but not by more than the noise",
            r.sector.measured_bytes
        )
    };
    let _ = writeln!(
        out,
        "  physical sector: {} B ({curve}; {reported}); random-write IOPS: {}",
        r.physical_sector_bytes,
        points.join(", ")
    );
    for f in &r.findings {
        let _ = writeln!(out, "finding: {}\n  fix: {}", f.what, f.fix);
    }
    if let Some(c) = &r.cross_check {
        let _ = writeln!(
            out,
            "cross-check against {} ({} pairs per figure, weir's engine and fio alternately, {:.1} s counted after {:.1} s ramp each):",
            c.fio_version, c.pairs, c.run_s, c.ramp_s
        );
        for f in &c.figures {
            let _ = writeln!(out, "  {}", check_line(f));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_keeps_iotune_key_order_and_integers_and_round_trips() {
        let mut d = DiskProperties::new(
            "/var/lib/scylla",
            85000,
            1_800_000_000,
            60000,
            1_700_000_000,
        );
        d.read_saturation_length_bytes = Some(131072);
        d.physical_block_size_bytes = Some(4096);
        let y = io_properties_yaml(vec![d.clone()]);
        assert_eq!(
            y,
            "disks:\n  - mountpoint: /var/lib/scylla\n    read_iops: 85000\n    read_bandwidth: 1800000000\n    write_iops: 60000\n    write_bandwidth: 1700000000\n    read_saturation_length: 131072\n    physical_block_size: 4096\n"
        );
        let back = IoProperties::parse(&y, "test");
        assert!(matches!(back, Ok(ref p) if p.disks == vec![d]), "{back:?}");
    }

    #[test]
    fn option_lines_match_iotune() {
        assert_eq!(
            option_line(true, "/etc/x.yaml"),
            "SEASTAR_IO=\"--io-properties-file=/etc/x.yaml\"\n"
        );
        assert_eq!(
            option_line(false, "/etc/x.yaml"),
            "io-properties-file=/etc/x.yaml\n"
        );
    }
}
