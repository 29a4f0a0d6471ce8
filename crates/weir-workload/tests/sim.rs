//! The workload driver on the seeded simulated disk (`weir-sim`) through the public API, as
//! `weir tune` would use it. Each test prints its seed on failure so it replays exactly.

use std::time::Duration;

use weir_sim::{SimConfig, SimDisk};
use weir_workload::{run_with, Control, DeviceFactory, Job, JobType, Plan, RunOptions};

struct Sim {
    seed: u64,
}

impl DeviceFactory for Sim {
    type Device = SimDisk;

    fn name(&self) -> String {
        "sim".into()
    }

    fn open(&self, shard: usize, _depth: u32) -> Result<SimDisk, String> {
        Ok(SimDisk::new(SimConfig::nvme_like(self.seed + shard as u64)))
    }
}

fn run_once(seed: u64, parallelism: u32) -> weir_workload::Report {
    let mut job = Job::new("reads", JobType::RandRead);
    job.parallelism = parallelism;
    job.data_size_bytes = Some(1 << 30);
    let options = RunOptions {
        dir: None,
        duration: Duration::from_secs(1),
        shards: 1,
        seed,
        ..RunOptions::default()
    };
    run_with(&Plan::new(vec![job]), &options, &Sim { seed }, &mut |_| {
        Control::Continue
    })
    .unwrap_or_else(|e| panic!("seed {seed}: {e}"))
}

#[test]
fn queue_depth_raises_iops_on_the_simulated_nvme() {
    let seed = 7;
    let qd1 = run_once(seed, 1).jobs[0].iops;
    let qd32 = run_once(seed, 32).jobs[0].iops;
    // The preset: ~88 us at QD1 (~11K IOPS), ~85K IOPS at QD32.
    assert!((8_000.0..14_000.0).contains(&qd1), "seed {seed}: QD1 {qd1}");
    assert!(
        (60_000.0..100_000.0).contains(&qd32),
        "seed {seed}: QD32 {qd32}"
    );
}

#[test]
fn same_seed_same_report() {
    let seed = 11;
    let a = run_once(seed, 8);
    let b = run_once(seed, 8);
    assert_eq!(a.jobs[0].ops, b.jobs[0].ops, "seed {seed}");
    assert_eq!(a.jobs[0].latency_us, b.jobs[0].latency_us, "seed {seed}");
}
