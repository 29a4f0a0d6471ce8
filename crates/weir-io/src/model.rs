//! The disk model: what one request costs the disk, from `weir tune`'s io-properties file or
//! from rates given in code.

use std::path::Path;
use std::time::Duration;

use weir_model::cost::CostModel;
use weir_model::io_properties::{DiskProperties, IoProperties};

use crate::Error;

/// A disk's capacity as the scheduler prices it: `max(1 / iops, bytes / bandwidth)` of disk
/// time per request, per direction. Load it from the io-properties file `weir tune` writes
/// (the same format Seastar reads), or build it from rates you measured.
///
/// ```
/// use weir_io::DiskModel;
///
/// let model = DiskModel::builder()
///     .read_iops(50_000)
///     .read_bytes_per_sec(1_600_000_000)
///     .write_iops(25_000)
///     .write_bytes_per_sec(1_000_000_000)
///     .build()?;
/// assert_eq!(model.read_iops(), 50_000);
/// # Ok::<(), weir_io::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct DiskModel {
    disk: DiskProperties,
    cost: CostModel,
}

impl DiskModel {
    /// The model of the disk that holds `data_dir`, from an io-properties file: the entry
    /// whose mount point is the filesystem of `data_dir` (matched by device number, as
    /// Seastar does). A file with one entry applies to any directory.
    pub fn from_io_properties(file: &Path, data_dir: &Path) -> Result<DiskModel, Error> {
        let props = IoProperties::load(file).map_err(|e| Error::Model {
            source: file.display().to_string(),
            message: e.to_string(),
        })?;
        let disk = match props.disk_for_path(data_dir) {
            Some(d) => d.clone(),
            None if props.disks.len() == 1 => props.disks[0].clone(),
            None => {
                return Err(Error::NoDiskForPath {
                    file: file.to_path_buf(),
                    path: data_dir.to_path_buf(),
                })
            }
        };
        DiskModel::from_properties(disk, &file.display().to_string())
    }

    /// The model from io-properties text (the first disk entry), for a model kept inline.
    pub fn from_io_properties_str(text: &str) -> Result<DiskModel, Error> {
        let props = IoProperties::parse(text, "<inline>").map_err(|e| Error::Model {
            source: "<inline>".into(),
            message: e.to_string(),
        })?;
        let disk = props.disks.into_iter().next().ok_or_else(|| Error::Model {
            source: "<inline>".into(),
            message: "no disk entry under `disks:`".into(),
        })?;
        DiskModel::from_properties(disk, "<inline>")
    }

    /// A builder for a model given in code.
    pub fn builder() -> DiskModelBuilder {
        DiskModelBuilder {
            disk: DiskProperties::new("/", 0, 0, 0, 0),
        }
    }

    fn from_properties(disk: DiskProperties, source: &str) -> Result<DiskModel, Error> {
        let cost = disk.cost_model().map_err(|e| Error::Model {
            source: source.to_string(),
            message: e.to_string(),
        })?;
        Ok(DiskModel { disk, cost })
    }

    /// Random read operations per second the disk sustains.
    pub fn read_iops(&self) -> u64 {
        self.disk.read_iops
    }

    /// Sequential read bandwidth, in bytes per second.
    pub fn read_bytes_per_sec(&self) -> u64 {
        self.disk.read_bytes_per_sec
    }

    /// Random write operations per second the disk sustains.
    pub fn write_iops(&self) -> u64 {
        self.disk.write_iops
    }

    /// Sequential write bandwidth, in bytes per second.
    pub fn write_bytes_per_sec(&self) -> u64 {
        self.disk.write_bytes_per_sec
    }

    /// The latency goal the file recommends (`weir_latency_goal_us`, written by
    /// `weir explore`), if it has one.
    pub fn recommended_latency_goal(&self) -> Option<Duration> {
        self.disk.latency_goal_us.map(Duration::from_micros)
    }

    /// Whether reads and writes have a budget each (`duplex: true`) or share one.
    pub fn duplex(&self) -> bool {
        self.cost.duplex()
    }

    /// The same rates with reads and writes on a budget each (`true`) or on one shared budget:
    /// for a model file that does not say, as `weir tune` and iotune write them (neither
    /// measures it), on a disk known to serve reads beside writes.
    pub fn with_duplex(self, duplex: bool) -> Result<DiskModel, Error> {
        let mut disk = self.disk;
        disk.duplex = duplex;
        DiskModel::from_properties(disk, "with_duplex")
    }

    pub(crate) fn cost(&self) -> &CostModel {
        &self.cost
    }
}

/// Builds a [`DiskModel`] from rates; every rate must be given and positive.
#[derive(Debug, Clone)]
pub struct DiskModelBuilder {
    disk: DiskProperties,
}

impl DiskModelBuilder {
    /// Random read operations per second.
    pub fn read_iops(mut self, iops: u64) -> Self {
        self.disk.read_iops = iops;
        self
    }

    /// Sequential read bandwidth, bytes per second.
    pub fn read_bytes_per_sec(mut self, bytes_per_sec: u64) -> Self {
        self.disk.read_bytes_per_sec = bytes_per_sec;
        self
    }

    /// Random write operations per second.
    pub fn write_iops(mut self, iops: u64) -> Self {
        self.disk.write_iops = iops;
        self
    }

    /// Sequential write bandwidth, bytes per second.
    pub fn write_bytes_per_sec(mut self, bytes_per_sec: u64) -> Self {
        self.disk.write_bytes_per_sec = bytes_per_sec;
        self
    }

    /// Reads and writes do not slow each other (separate budgets); off by default.
    pub fn duplex(mut self, duplex: bool) -> Self {
        self.disk.duplex = duplex;
        self
    }

    /// The model. Errors name the rate that is zero.
    pub fn build(self) -> Result<DiskModel, Error> {
        DiskModel::from_properties(self.disk, "code")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_duplex_changes_the_lanes_and_keeps_the_rates() {
        let text =
            "disks:\n  - mountpoint: /\n    read_iops: 1000\n    read_bandwidth: 2000000\n    \
                    write_iops: 500\n    write_bandwidth: 1000000\n";
        let half = DiskModel::from_io_properties_str(text).expect("model");
        assert!(!half.duplex());
        let duplex = half.clone().with_duplex(true).expect("duplex model");
        assert!(duplex.duplex());
        assert_eq!(
            (duplex.read_iops(), duplex.read_bytes_per_sec()),
            (half.read_iops(), half.read_bytes_per_sec())
        );
        assert_eq!(
            (duplex.write_iops(), duplex.write_bytes_per_sec()),
            (half.write_iops(), half.write_bytes_per_sec())
        );
        assert!(!duplex.with_duplex(false).expect("back").duplex());
    }
}
