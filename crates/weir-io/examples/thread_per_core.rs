//! Thread-per-core: one `LocalShard` per core thread, each with its own ring and scheduler
//! queue, sharing one disk budget so the classes' shares hold across the cores. No runtime
//! and no loop threads: each core thread drives its own ring while it waits.
//!
//! `cargo run -p weir-io --example thread_per_core [DIR] [SECONDS]`

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use weir_io::{ClassSpec, Disk, DiskModel, FileOptions, IoBuf, Policy};

const DATA_BYTES: u64 = 64 << 20;
const IN_FLIGHT: usize = 16;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let base = args.next().unwrap_or_else(|| "/var/tmp".into());
    let seconds: u64 = args.next().map_or(Ok(1), |s| s.parse())?;
    let dir = tempfile::tempdir_in(base)?;
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());

    let model = DiskModel::builder()
        .read_iops(50_000)
        .read_bytes_per_sec(1 << 30)
        .write_iops(25_000)
        .write_bytes_per_sec(1 << 30)
        .build()?;
    let mut policy = Policy::builder(model);
    let reads = policy.class(ClassSpec::new("reads", 1000))?;
    let writes = policy.class(ClassSpec::new("writes", 250))?;
    let disk = Disk::builder(&policy.build()?)
        .loops(0)
        .local_shards(cores)
        .build()?;
    let file = disk.open(dir.path().join("data"), FileOptions::new().create(true))?;
    file.set_len(DATA_BYTES)?;
    let end = Instant::now() + Duration::from_secs(seconds);

    let per_core = std::thread::scope(|s| {
        let workers: Vec<_> = (0..cores as u64)
            .map(|core| {
                let (disk, file) = (disk.clone(), file.clone());
                s.spawn(move || -> Result<_, weir_io::Error> {
                    let shard = disk.local_shard()?;
                    // Keep IN_FLIGHT requests queued on this core's shard: a request is
                    // submitted when its future is made, so waiting on the oldest drives all.
                    let mut in_flight = VecDeque::new();
                    let mut n = 0u64;
                    while Instant::now() < end {
                        while in_flight.len() < IN_FLIGHT {
                            n += 1;
                            let i = n * cores as u64 + core;
                            // One request in eight is a 1 MiB write, the rest 4 KiB reads.
                            in_flight.push_back(if n % 8 == 0 {
                                let at = (i * 1_048_576) % DATA_BYTES;
                                shard.write_at(&file, writes, IoBuf::zeroed(1 << 20), at)
                            } else {
                                let at = (i * 7919 % (DATA_BYTES / 4096)) * 4096;
                                shard.read_at(&file, reads, IoBuf::zeroed(4096), at)
                            });
                        }
                        if let Some(oldest) = in_flight.pop_front() {
                            shard.block_on(oldest).0?;
                        }
                    }
                    for f in in_flight {
                        shard.block_on(f).0?;
                    }
                    Ok(shard.metrics())
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("core thread"))
            .collect::<Result<Vec<_>, _>>()
    })?;
    for (core, classes) in per_core.iter().enumerate() {
        for m in classes {
            println!(
                "core {core} {:>6}: {:>6} pieces, {:>5} MiB, device p99 {:>6} us",
                m.name,
                m.read_ops + m.write_ops,
                (m.read_bytes + m.write_bytes) >> 20,
                m.disk_latency.percentile_ns(99.0) / 1000
            );
        }
    }
    Ok(())
}
