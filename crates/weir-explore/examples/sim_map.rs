//! Maps a simulated disk with the real explore pipeline and writes the usual outputs, so the
//! method can be seen (and its pictures made) without a disk:
//!
//! ```sh
//! cargo run --release -p weir-explore --example sim_map -- nvme /tmp/map-nvme
//! cargo run --release -p weir-explore --example sim_map -- concave /tmp/map-concave
//! ```
//!
//! Disks: `nvme` (weir-sim's `nvme_like`: channels, a rounded knee, reads slowed 1.5x beside
//! writes; goal 1 ms), `virtio` (`virtio_sparse_writes`: nvme_like whose writes wait 250 us
//! for the filesystem, which holds no one else — this VM's disk under `fresh` writes; goal
//! 1 ms), and the known-boundary `MixedDisk`s `half`, `duplex`, `concave`, `cliff`
//! (5K reads/s, 250 MB/s; goal 50 ms, as in the truth tests).

use std::time::Duration;
use weir_workload::DeviceOpenError;

use weir_explore::meter::{WorkloadMeter, WriteRegime};
use weir_explore::{output, search, Map, SearchSettings, Slice, SteadyRule};
use weir_model::device::Device;
use weir_sim::mixed::{Boundary, MixedConfig, MixedDisk};
use weir_sim::{SimConfig, SimDisk};
use weir_workload::{DeviceFactory, RunOptions};

struct Factory<D, F: Fn() -> D + Sync>(F);

impl<D: Device, F: Fn() -> D + Sync> DeviceFactory for Factory<D, F> {
    type Device = D;

    fn name(&self) -> String {
        "sim".into()
    }

    fn open(&self, _shard: usize, _depth: u32) -> Result<D, DeviceOpenError> {
        Ok((self.0)())
    }

    /// A disk per shard, each on its own virtual clock.
    fn simulated_clock(&self) -> bool {
        true
    }
}

fn map_with<D: Device, F: Fn() -> D + Sync>(make: F, goal_us: f64, slice: Slice) -> Map {
    let factory = Factory(make);
    let (read_bytes, write_bytes) = slice.default_sizes_bytes();
    let rule = SteadyRule {
        warmup: Duration::from_millis(500),
        window: Duration::from_millis(500),
        ..SteadyRule::full()
    };
    let mut meter = WorkloadMeter {
        factory: &factory,
        options: RunOptions {
            dir: None,
            shards: 1,
            ..RunOptions::default()
        },
        read_bytes,
        write_bytes,
        regime: WriteRegime::Overwrite,
        read_region_bytes: 1 << 30,
        overwrite_region_bytes: 1 << 30,
        fresh_file_cap_bytes: 1 << 30,
        rule,
        goal_us,
    };
    let settings = SearchSettings::full(goal_us, WriteRegime::Overwrite, Duration::from_secs(3600));
    let outcome = search(&mut meter, &settings, &mut |p| {
        eprintln!(
            "point {}: {:.0} reads/s + {:.0} MB/s -> read p99 {:.0} us{}",
            p.done,
            p.point.read_iops,
            p.point.write_bytes_per_s / 1e6,
            p.point.read_latency_us.p99,
            if p.point.within_goal {
                ""
            } else {
                " (outside)"
            }
        )
    })
    .unwrap_or_else(|e| {
        eprintln!("sim_map: {e}");
        std::process::exit(1)
    });
    let mut map = Map::from_search(
        outcome,
        WriteRegime::Overwrite,
        goal_us,
        read_bytes,
        write_bytes,
    );
    map.set_slice(slice);
    map.source = "weir explore (simulated disk)".into();
    map
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(disk), Some(out)) = (args.first(), args.get(1)) else {
        eprintln!("usage: sim_map nvme|virtio|half|duplex|concave|cliff OUTDIR [SLICE]");
        std::process::exit(2)
    };
    let slice_name = args.get(2).map_or("read-iops-write-bw", String::as_str);
    let Some(slice) = Slice::from_name(slice_name) else {
        eprintln!("sim_map: unknown slice `{slice_name}`: {}", Slice::NAMES);
        std::process::exit(2)
    };
    let mixed = |boundary| {
        let config = MixedConfig {
            read_iops: 5_000.0,
            write_bytes_per_s: 250e6,
            ..MixedConfig::new(7, boundary)
        };
        move || MixedDisk::new(config.clone())
    };
    let map = match disk.as_str() {
        "nvme" => map_with(|| SimDisk::new(SimConfig::nvme_like(7)), 1000.0, slice),
        "virtio" => map_with(
            || SimDisk::new(SimConfig::virtio_sparse_writes(7)),
            1000.0,
            slice,
        ),
        "half" => map_with(mixed(Boundary::HalfDuplex), 50_000.0, slice),
        "duplex" => map_with(mixed(Boundary::FullDuplex), 50_000.0, slice),
        "concave" => map_with(mixed(Boundary::Concave { exponent: 0.6 }), 50_000.0, slice),
        "cliff" => map_with(
            mixed(Boundary::WriteCliff {
                mixed_write_limit_bytes_per_s: 100e6,
                read_slowdown: 200.0,
            }),
            50_000.0,
            slice,
        ),
        other => {
            eprintln!(
                "sim_map: unknown disk `{other}`: write nvme, virtio, half, duplex, concave or cliff"
            );
            std::process::exit(2)
        }
    };
    match output::write_all(&map, std::path::Path::new(out), "/") {
        Ok(files) => {
            print!("{}", output::summary(&map));
            for f in files {
                println!("wrote {}", f.display());
            }
        }
        Err(e) => {
            eprintln!("sim_map: {e}");
            std::process::exit(1)
        }
    }
}
