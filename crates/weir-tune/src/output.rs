//! What a tune prints and writes: io-properties.yaml in iotune's exact shape, iotune's option
//! lines (`--format seastar|envfile`), and a human summary with each number's spread.

use crate::plan::{Figure, TuneReport};
use std::fmt::Write as _;

/// The four rates and optional lengths, rounded the way Seastar reads them (integers).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DiskProperties {
    pub mountpoint: String,
    pub read_iops: u64,
    pub read_bandwidth: u64,
    pub write_iops: u64,
    pub write_bandwidth: u64,
    pub read_saturation_length: Option<u64>,
    pub write_saturation_length: Option<u64>,
    pub physical_block_size: Option<u64>,
}

impl DiskProperties {
    pub fn from_report(mountpoint: &str, r: &TuneReport) -> DiskProperties {
        DiskProperties {
            mountpoint: mountpoint.to_string(),
            read_iops: r.read_iops.value.round() as u64,
            read_bandwidth: r.read_bandwidth.value.round() as u64,
            write_iops: r.write_iops.value.round() as u64,
            write_bandwidth: r.write_bandwidth.value.round() as u64,
            read_saturation_length: Some(u64::from(r.read_saturation_bytes)),
            write_saturation_length: Some(u64::from(r.write_saturation_bytes)),
            physical_block_size: (r.physical_sector_bytes > 0)
                .then_some(u64::from(r.physical_sector_bytes)),
        }
    }
}

/// io-properties.yaml with keys in iotune's order (mountpoint, read_iops, read_bandwidth,
/// write_iops, write_bandwidth, then the optional lengths) and integer values.
///
/// Minimal emitter kept inside weir-tune: `weir_model` had no io-properties writer when this
/// was written. The layout is fixed and tiny, so it is formatted by hand rather than through a
/// YAML library whose key order and quoting we would not control.
pub fn io_properties_yaml(disks: &[DiskProperties]) -> String {
    let mut out = String::from("disks:\n");
    for d in disks {
        let _ = writeln!(out, "  - mountpoint: {}", yaml_scalar(&d.mountpoint));
        let _ = writeln!(out, "    read_iops: {}", d.read_iops);
        let _ = writeln!(out, "    read_bandwidth: {}", d.read_bandwidth);
        let _ = writeln!(out, "    write_iops: {}", d.write_iops);
        let _ = writeln!(out, "    write_bandwidth: {}", d.write_bandwidth);
        let optional = [
            ("read_saturation_length", d.read_saturation_length),
            ("write_saturation_length", d.write_saturation_length),
            ("physical_block_size", d.physical_block_size),
        ];
        for (key, value) in optional {
            if let Some(v) = value {
                let _ = writeln!(out, "    {key}: {v}");
            }
        }
    }
    out
}

/// A plain scalar when it is unambiguous, else a double-quoted one (JSON string syntax is a
/// subset of YAML's double-quoted style).
fn yaml_scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/_.-+".contains(c))
        && !s.starts_with(['-', '.']);
    if plain {
        s.to_string()
    } else {
        serde_json::Value::String(s.to_string()).to_string()
    }
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
    let _ = writeln!(
        out,
        "  {name:<16} {:>12}  ±{:>4.1}% ({} .. {})  knee depth {:>3} (best {:>3}, {:>4} B)  {:>7.0} us at knee{sustained}",
        fmt(f.value),
        f.spread.cv_percent(),
        fmt(f.spread.min),
        fmt(f.spread.max),
        f.depth_knee,
        f.depth_best,
        f.request_bytes,
        f.latency_us_mean_at_knee,
    );
}

/// The summary printed after a default run.
pub fn human_summary(r: &TuneReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "measured (± is the spread of 100 ms samples in the steady window):"
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
    let _ = writeln!(
        out,
        "  physical sector: {} B measured ({reported}); random-write IOPS: {}",
        r.physical_sector_bytes,
        points.join(", ")
    );
    for f in &r.findings {
        let _ = writeln!(out, "finding: {}\n  fix: {}", f.what, f.fix);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_keeps_iotune_key_order_and_integers() {
        let d = DiskProperties {
            mountpoint: "/var/lib/scylla".into(),
            read_iops: 85000,
            read_bandwidth: 1_800_000_000,
            write_iops: 60000,
            write_bandwidth: 1_700_000_000,
            read_saturation_length: Some(131072),
            write_saturation_length: None,
            physical_block_size: Some(4096),
        };
        let y = io_properties_yaml(&[d]);
        assert_eq!(
            y,
            "disks:\n  - mountpoint: /var/lib/scylla\n    read_iops: 85000\n    read_bandwidth: 1800000000\n    write_iops: 60000\n    write_bandwidth: 1700000000\n    read_saturation_length: 131072\n    physical_block_size: 4096\n"
        );
    }

    #[test]
    fn odd_mountpoints_are_quoted() {
        assert_eq!(yaml_scalar("/mnt/a b"), "\"/mnt/a b\"");
        assert_eq!(yaml_scalar("/mnt/data-1"), "/mnt/data-1");
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
