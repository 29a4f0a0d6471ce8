//! `weir run --simulate DISK.yaml`: the job file on weir-sim's simulated disk, shared by every
//! shard on one virtual clock, and the load each RAID0 member saw.

use std::path::Path;
use std::sync::Arc;
use weir_workload::DeviceOpenError;

use weir_sim::{SharedSim, SharedSimHandle, SimDiskFile};
use weir_workload::DeviceFactory;

use crate::error::{CliError, InputError, InputFile};

/// Every shard's handle onto the one simulated disk.
pub struct SimFactory {
    pub sim: Arc<SharedSim>,
}

impl DeviceFactory for SimFactory {
    type Device = SharedSimHandle;

    fn name(&self) -> String {
        "sim".into()
    }

    fn open(&self, shard: usize, depth: u32) -> Result<SharedSimHandle, DeviceOpenError> {
        self.sim.open(shard, depth).map_err(DeviceOpenError::other)
    }
}

/// Reads the disk file and makes the disk for `shards` shards.
pub fn load(path: &Path, shards: usize) -> Result<SimFactory, CliError> {
    let text = std::fs::read_to_string(path).map_err(|error| InputError::Read {
        file: InputFile::SimDisk,
        path: path.to_path_buf(),
        error,
    })?;
    let file = SimDiskFile::parse(&text).map_err(|error| InputError::SimDisk {
        path: path.to_path_buf(),
        error,
    })?;
    Ok(SimFactory {
        sim: SharedSim::new(file.config, shards),
    })
}

/// The disk's side of the report: per member ops, bytes and busy share, and the requests
/// split at chunk boundaries, over the whole simulated run.
pub struct SimSummary {
    pub members: Vec<MemberSummary>,
    pub split_requests: u64,
    pub whole_requests: u64,
    pub chunk_bytes: u64,
    pub elapsed_s: f64,
    pub rmw_writes: u64,
    pub physical_sector_bytes: u32,
    pub reported_physical_sector_bytes: u32,
}

pub struct MemberSummary {
    pub ops: u64,
    pub bytes: u64,
    /// Channel time used / (channels x elapsed).
    pub busy_share: f64,
}

impl SimFactory {
    pub fn summary(&self) -> SimSummary {
        let (load, elapsed_ns) = self.sim.load();
        let config = self.sim.config();
        let capacity_ns = elapsed_ns as f64 * f64::from(config.channels.max(1));
        SimSummary {
            members: load
                .members
                .iter()
                .map(|m| MemberSummary {
                    ops: m.ops,
                    bytes: m.bytes,
                    busy_share: if capacity_ns > 0.0 {
                        m.channel_busy_ns as f64 / capacity_ns
                    } else {
                        0.0
                    },
                })
                .collect(),
            split_requests: load.split_requests,
            whole_requests: load.whole_requests,
            chunk_bytes: config.raid0_chunk_bytes,
            elapsed_s: elapsed_ns as f64 / 1e9,
            rmw_writes: load.rmw_writes,
            physical_sector_bytes: config.physical_sector_bytes,
            reported_physical_sector_bytes: config.reported_physical_sector_bytes,
        }
    }
}

impl SimSummary {
    pub fn to_text(&self) -> String {
        let total_ops: u64 = self.members.iter().map(|m| m.ops).sum::<u64>().max(1);
        let layout = if self.members.len() > 1 {
            format!(
                "RAID0 of {} members, {} byte chunks",
                self.members.len(),
                self.chunk_bytes
            )
        } else {
            "one disk".to_string()
        };
        let mut out = format!(
            "\nsimulated disk ({:.3} s of virtual time, {layout})\n\
             {:<8} {:>12} {:>10} {:>14} {:>10}\n",
            self.elapsed_s, "member", "ops", "ops share", "MB", "busy"
        );
        for (i, m) in self.members.iter().enumerate() {
            out.push_str(&format!(
                "{:<8} {:>12} {:>9.1}% {:>14.1} {:>9.1}%\n",
                i,
                m.ops,
                100.0 * m.ops as f64 / total_ops as f64,
                m.bytes as f64 / 1e6,
                100.0 * m.busy_share
            ));
        }
        let requests = (self.split_requests + self.whole_requests).max(1);
        out.push_str(&format!(
            "requests split at chunk boundaries: {} of {} ({:.1}%)\n",
            self.split_requests,
            self.split_requests + self.whole_requests,
            100.0 * self.split_requests as f64 / requests as f64
        ));
        out.push_str(&format!(
            "writes not aligned to the {} B sector it has (it reports {} B), paying \
             read-modify-write: {}\n",
            self.physical_sector_bytes, self.reported_physical_sector_bytes, self.rmw_writes
        ));
        out
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "elapsed_s": self.elapsed_s,
            "chunk_bytes": self.chunk_bytes,
            "split_requests": self.split_requests,
            "whole_requests": self.whole_requests,
            "rmw_writes": self.rmw_writes,
            "physical_sector_bytes": self.physical_sector_bytes,
            "reported_physical_sector_bytes": self.reported_physical_sector_bytes,
            "members": self.members.iter().enumerate().map(|(i, m)| serde_json::json!({
                "member": i,
                "ops": m.ops,
                "bytes": m.bytes,
                "busy_share": m.busy_share,
            })).collect::<Vec<_>>(),
        })
    }

    /// YAML comments, so io_tester's document stays as it is.
    pub fn to_yaml_comments(&self) -> String {
        self.to_text()
            .lines()
            .filter(|l| !l.is_empty())
            .map(|l| format!("# {l}\n"))
            .collect()
    }
}
