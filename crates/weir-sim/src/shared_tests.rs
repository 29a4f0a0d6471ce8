// SAFETY (every `unsafe` push below): the ops carry no buffer (null) and the simulated disk
// never touches memory, so the buffer-lifetime contract of `Device::push` holds trivially.
use super::*;
use weir_model::device::Direction;

fn write(user_data: u64, offset_bytes: u64, len_bytes: u32) -> IoOp {
    crate::tests::op(user_data, Direction::Write, offset_bytes, len_bytes)
}

/// Each of `shards` threads keeps `depth` 128 KiB writes in flight from its own 16 MiB
/// region until `until_ns`; returns the disk's load, the elapsed time and the completions.
fn run_shards(config: SimConfig, shards: usize, depth: u64, until_ns: u64) -> (DiskLoad, u64, u64) {
    let sim = SharedSim::new(config, shards);
    let done: u64 = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..shards)
            .map(|shard| {
                let mut dev = sim.open(shard, 0).expect("open");
                scope.spawn(move || {
                    let base = shard as u64 * (16 << 20);
                    let mut next = 0u64;
                    let mut completions = Vec::new();
                    let mut completed = 0;
                    for _ in 0..depth {
                        unsafe {
                            dev.push(write(
                                next,
                                base + (next * (128 << 10)) % (16 << 20),
                                128 << 10,
                            ))
                        }
                        .expect("room");
                        next += 1;
                    }
                    while dev.now_ns() < until_ns {
                        dev.submit_and_wait(1, Some(until_ns)).expect("wait");
                        completions.clear();
                        for _ in 0..dev.reap(&mut completions) {
                            completed += 1;
                            let offset = base + (next * (128 << 10)) % (16 << 20);
                            unsafe { dev.push(write(next, offset, 128 << 10)) }.expect("room");
                            next += 1;
                        }
                    }
                    completed
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("shard")).sum()
    });
    let (load, elapsed) = sim.load();
    (load, elapsed, done)
}

#[test]
fn shards_in_lockstep_are_deterministic() {
    let config = SimConfig {
        raid0_members: 4,
        raid0_chunk_bytes: 1 << 20,
        ..SimConfig::nvme_like(5)
    };
    let a = run_shards(config.clone(), 4, 8, 20_000_000);
    let b = run_shards(config, 4, 8, 20_000_000);
    assert_eq!(a, b, "seed 5");
    assert!(a.2 > 100, "{a:?}");
}

#[test]
fn one_disk_is_shared_not_one_per_shard() {
    // Four shards on one disk complete what one disk can, not four disks' worth.
    let one = run_shards(SimConfig::nvme_like(3), 1, 32, 50_000_000).2;
    let four = run_shards(SimConfig::nvme_like(3), 4, 8, 50_000_000).2;
    let ratio = four as f64 / one as f64;
    assert!(
        (0.85..1.15).contains(&ratio),
        "seed 3: 4 shards x 8 vs 1 x 32: {ratio:.3}"
    );
}

#[test]
fn raid0_member_load_and_splits_are_counted() {
    let config = SimConfig {
        raid0_members: 4,
        raid0_chunk_bytes: 1 << 20,
        jitter: 0.0,
        ..SimConfig::nvme_like(1)
    };
    let mut disk = SimDisk::new(config);
    // One write inside chunk 0 (member 0), one across chunks 1 and 2 (members 1 and 2).
    unsafe { disk.push(write(1, 0, 128 << 10)) }.expect("room");
    unsafe { disk.push(write(2, (2 << 20) - (64 << 10), 128 << 10)) }.expect("room");
    disk.submit_and_wait(2, None).expect("wait");
    let load = disk.load();
    assert_eq!((load.split_requests, load.whole_requests), (1, 1));
    let ops: Vec<u64> = load.members.iter().map(|m| m.ops).collect();
    assert_eq!(ops, [1, 1, 1, 0]);
    let bytes: Vec<u64> = load.members.iter().map(|m| m.bytes).collect();
    assert_eq!(bytes, [128 << 10, 64 << 10, 64 << 10, 0]);
    assert!(load.members[0].channel_busy_ns > 0);
}

#[test]
fn a_dropped_handle_lets_the_others_run_and_misuse_is_refused() {
    let sim = SharedSim::new(SimConfig::nvme_like(1), 2);
    let mut a = sim.open(0, 0).expect("open");
    let b = sim.open(1, 0).expect("open");
    assert!(sim.open(1, 0).is_err());
    assert!(sim.open(2, 0).is_err());
    drop(b);
    unsafe { a.push(write(1, 0, 4096)) }.expect("room");
    a.submit_and_wait(1, None).expect("wait");
    let mut out = Vec::new();
    assert_eq!(a.reap(&mut out), 1);
    assert!(a.now_ns() > 0);
}
