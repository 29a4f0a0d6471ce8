//! Test support shared by the integration tests of this crate.

use weir_sim::{SimConfig, SimDisk};
use weir_workload::DeviceFactory;
use weir_workload::DeviceOpenError;

/// One simulated disk per shard: `config`, its seed offset by the shard index.
pub struct Sim {
    pub config: SimConfig,
}

impl DeviceFactory for Sim {
    type Device = SimDisk;

    fn name(&self) -> String {
        "sim".into()
    }

    fn open(&self, shard: usize, _depth: u32) -> Result<SimDisk, DeviceOpenError> {
        let seed = self.config.seed + shard as u64;
        Ok(SimDisk::new(SimConfig {
            seed,
            ..self.config.clone()
        }))
    }

    /// A disk per shard, each on its own virtual clock.
    fn simulated_clock(&self) -> bool {
        true
    }
}
