//! Which slice of the load space a map draws: Diskplorer's read IOPS x write bandwidth (4 KiB
//! reads beside 128 KiB writes: queries beside compaction), or read bandwidth x write IOPS
//! (large reads beside small writes: scans beside a commit log).
//!
//! The search, the points and the fits do not depend on the slice: a point offers a read rate
//! and a write rate, and a rate in requests is a rate in bytes times the request size. So a map
//! keeps its points in the fields (`read_iops`, `write_bytes_per_s`) whatever the slice,
//! and the fits, normalised by the map's own axes, are the same numbers in either unit. The
//! slice decides the request sizes' defaults and how the map is shown: the axes' names and
//! units in explore.json (`axes`, `frontier_in_axes`), the CSV's two axis columns, the
//! heatmaps' axes and the summary's frontier.

use serde::Serialize;

/// A slice of the load space (`--slice`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Slice {
    /// Read IOPS x write bandwidth, 4 KiB reads and 128 KiB writes (Diskplorer's).
    #[default]
    ReadIopsWriteBw,
    /// Read bandwidth x write IOPS, 128 KiB reads and 4 KiB writes.
    ReadBwWriteIops,
}

/// One axis of a slice: what it is called, its unit and the explore.json/CSV field carrying it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AxisName {
    pub name: &'static str,
    pub unit: &'static str,
    pub field: &'static str,
}

/// Both axes of a map's slice (explore.json `axes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SliceAxes {
    pub read: AxisName,
    pub write: AxisName,
}

/// A frontier entry in the slice's own units (explore.json `frontier_in_axes`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AxisPoint {
    pub read: f64,
    pub write: f64,
}

const READ_IOPS: AxisName = AxisName {
    name: "read rate",
    unit: "IOPS",
    field: "read_iops",
};
const READ_BW: AxisName = AxisName {
    name: "read bandwidth",
    unit: "B/s",
    field: "read_bytes_per_s",
};
const WRITE_BW: AxisName = AxisName {
    name: "write bandwidth",
    unit: "B/s",
    field: "write_bytes_per_s",
};
const WRITE_IOPS: AxisName = AxisName {
    name: "write rate",
    unit: "IOPS",
    field: "write_iops",
};

impl Slice {
    /// Every slice, for flag help and errors.
    pub const NAMES: &'static str =
        "write read-iops-write-bw (Diskplorer's slice) or read-bw-write-iops";

    pub fn from_name(name: &str) -> Option<Slice> {
        match name {
            "read-iops-write-bw" => Some(Slice::ReadIopsWriteBw),
            "read-bw-write-iops" => Some(Slice::ReadBwWriteIops),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Slice::ReadIopsWriteBw => "read-iops-write-bw",
            Slice::ReadBwWriteIops => "read-bw-write-iops",
        }
    }

    /// The request sizes a map of this slice uses unless told: (read bytes, write bytes).
    pub fn default_sizes_bytes(self) -> (u32, u32) {
        match self {
            Slice::ReadIopsWriteBw => (4096, 128 * 1024),
            Slice::ReadBwWriteIops => (128 * 1024, 4096),
        }
    }

    pub fn axes(self) -> SliceAxes {
        match self {
            Slice::ReadIopsWriteBw => SliceAxes {
                read: READ_IOPS,
                write: WRITE_BW,
            },
            Slice::ReadBwWriteIops => SliceAxes {
                read: READ_BW,
                write: WRITE_IOPS,
            },
        }
    }

    /// The read axis's value of a load of `read_iops` requests of `read_bytes` each.
    pub fn read_value(self, read_iops: f64, read_bytes: u32) -> f64 {
        match self {
            Slice::ReadIopsWriteBw => read_iops,
            Slice::ReadBwWriteIops => read_iops * f64::from(read_bytes),
        }
    }

    /// The write axis's value of `write_bytes_per_s` in requests of `write_bytes` each.
    pub fn write_value(self, write_bytes_per_s: f64, write_bytes: u32) -> f64 {
        match self {
            Slice::ReadIopsWriteBw => write_bytes_per_s,
            Slice::ReadBwWriteIops => write_bytes_per_s / f64::from(write_bytes.max(1)),
        }
    }

    /// What the frontier holds, in words: "for each read rate the highest write bandwidth".
    pub fn frontier_words(self) -> String {
        let a = self.axes();
        format!("for each {} the highest {}", a.read.name, a.write.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_refused() {
        for s in [Slice::ReadIopsWriteBw, Slice::ReadBwWriteIops] {
            assert_eq!(Slice::from_name(s.as_str()), Some(s));
            assert!(Slice::NAMES.contains(s.as_str()));
        }
        assert_eq!(Slice::from_name("read-bw"), None);
        assert_eq!(Slice::default(), Slice::ReadIopsWriteBw);
    }

    #[test]
    fn the_seeds_slice_shows_the_fields_as_they_are() {
        let s = Slice::ReadIopsWriteBw;
        assert_eq!(s.default_sizes_bytes(), (4096, 131_072));
        assert_eq!(s.read_value(20_000.0, 4096), 20_000.0);
        assert_eq!(s.write_value(1e9, 131_072), 1e9);
        assert_eq!(s.axes().read.unit, "IOPS");
        assert_eq!(s.axes().write.field, "write_bytes_per_s");
    }

    #[test]
    fn the_other_slice_shows_read_bytes_and_write_requests() {
        let s = Slice::ReadBwWriteIops;
        assert_eq!(s.default_sizes_bytes(), (131_072, 4096));
        // 10k reads/s of 128 KiB are 1.31 GB/s; 400 MB/s of 4 KiB writes are 97.7k IOPS.
        assert_eq!(s.read_value(10_000.0, 131_072), 1_310_720_000.0);
        assert_eq!(s.write_value(409_600_000.0, 4096), 100_000.0);
        assert_eq!(
            (s.axes().read.name, s.axes().read.unit),
            ("read bandwidth", "B/s")
        );
        assert_eq!(
            (s.axes().write.name, s.axes().write.unit),
            ("write rate", "IOPS")
        );
        assert_eq!(
            s.frontier_words(),
            "for each read bandwidth the highest write rate"
        );
    }
}
