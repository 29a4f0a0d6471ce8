use super::*;

/// A request with no buffer (null): the simulated disks never touch memory. Shared by the
/// other simulated devices' tests.
pub(crate) fn op(user_data: u64, direction: Direction, offset_bytes: u64, len_bytes: u32) -> IoOp {
    IoOp {
        user_data,
        direction,
        fd: -1,
        offset_bytes,
        len_bytes,
        buf: std::ptr::null_mut(),
        flags: Default::default(),
        vectored: None,
    }
}

/// Keeps `depth` requests in flight for `duration_ns`; returns (ops per second, mean latency ns).
fn closed_loop(
    disk: &mut SimDisk,
    depth: u32,
    direction: Direction,
    len: u32,
    aligned_to: u64,
    duration_ns: u64,
) -> (f64, f64) {
    let start = disk.now_ns();
    let mut next = 0u64;
    let mut issued_at = std::collections::HashMap::new();
    let mut done = Vec::new();
    let mut ops = 0u64;
    let mut latency_sum = 0u64;
    let mut state = 12345u64;
    let mut push =
        |disk: &mut SimDisk, next: &mut u64, map: &mut std::collections::HashMap<u64, u64>| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let offset = (state >> 20) % (1 << 20) * aligned_to;
            *next += 1;
            map.insert(*next, disk.now_ns());
            push(disk, op(*next, direction, offset, len)).expect("room");
        };
    for _ in 0..depth {
        push(disk, &mut next, &mut issued_at);
    }
    while disk.now_ns() - start < duration_ns {
        disk.submit_and_wait(1, None).expect("wait");
        done.clear();
        disk.reap(&mut done);
        for c in &done {
            assert_eq!(c.result, len as i32);
            latency_sum += c.completed_at_ns - issued_at.remove(&c.user_data).expect("issued");
            ops += 1;
            push(disk, &mut next, &mut issued_at);
        }
    }
    let secs = (disk.now_ns() - start) as f64 / 1e9;
    // Drain, so the next measurement on this disk starts empty.
    disk.submit_and_wait(u32::MAX, None).expect("drain");
    disk.reap(&mut done);
    (ops as f64 / secs, latency_sum as f64 / ops.max(1) as f64)
}

#[test]
fn nvme_preset_matches_the_machine() {
    let mut disk = SimDisk::nvme_like(1);
    let (iops_qd1, lat_qd1) = closed_loop(&mut disk, 1, Direction::Read, 4096, 4096, 100_000_000);
    assert!(
        (70_000.0..110_000.0).contains(&lat_qd1),
        "QD1 latency {lat_qd1} ns ({iops_qd1})"
    );
    let (iops_qd4, _) = closed_loop(&mut disk, 4, Direction::Read, 4096, 4096, 100_000_000);
    assert!(
        (35_000.0..50_000.0).contains(&iops_qd4),
        "QD4 {iops_qd4} IOPS"
    );
    let (iops_qd32, _) = closed_loop(&mut disk, 32, Direction::Read, 4096, 4096, 100_000_000);
    assert!(
        (80_000.0..88_000.0).contains(&iops_qd32),
        "QD32 {iops_qd32} IOPS"
    );
    let (writes, _) = closed_loop(
        &mut disk,
        8,
        Direction::Write,
        128 << 10,
        128 << 10,
        100_000_000,
    );
    let bw = writes * 131072.0;
    assert!((1.6e9..1.8e9).contains(&bw), "QD8 128 KiB writes {bw} B/s");
}

#[test]
fn same_seed_same_completions() {
    let run = |seed| {
        let mut disk = SimDisk::nvme_like(seed);
        for i in 0..100 {
            push(&mut disk, op(i, Direction::Read, i * 4096, 4096)).expect("room");
        }
        disk.submit_and_wait(100, None).expect("wait");
        let mut out = Vec::new();
        disk.reap(&mut out);
        out
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7), run(8));
}

#[test]
fn misaligned_writes_pay_read_modify_write_and_the_disk_can_lie() {
    let mut config = SimConfig::nvme_like(3);
    config.reported_physical_sector_bytes = 512;
    let mut disk = SimDisk::new(config);
    assert_eq!(disk.reported_physical_sector_bytes(), 512);
    let (small, _) = closed_loop(&mut disk, 32, Direction::Write, 512, 512, 50_000_000);
    let (two_k, _) = closed_loop(&mut disk, 32, Direction::Write, 2048, 2048, 50_000_000);
    let (full, _) = closed_loop(&mut disk, 32, Direction::Write, 4096, 4096, 50_000_000);
    let (eight_k, _) = closed_loop(&mut disk, 32, Direction::Write, 8192, 8192, 50_000_000);
    assert!(full > 1.3 * small, "4 KiB {full} vs 512 B {small} IOPS");
    assert!(full > 1.3 * two_k, "4 KiB {full} vs 2 KiB {two_k} IOPS");
    assert!(eight_k > 0.9 * full, "8 KiB {eight_k} vs 4 KiB {full} IOPS");
}

#[test]
fn slowdown_multiplies_latency_inside_its_window() {
    let config = SimConfig::nvme_like(4).with_slowdown(50_000_000, 50_000_000, 3.0);
    let mut disk = SimDisk::new(config);
    let (_, before) = closed_loop(&mut disk, 1, Direction::Read, 4096, 4096, 40_000_000);
    disk.advance_to(60_000_000);
    let (_, during) = closed_loop(&mut disk, 1, Direction::Read, 4096, 4096, 30_000_000);
    disk.advance_to(100_000_000);
    let (_, after) = closed_loop(&mut disk, 1, Direction::Read, 4096, 4096, 30_000_000);
    assert!(during > 2.5 * before, "{during} vs {before}");
    assert!(after < 1.2 * before, "{after} vs {before}");
}

#[test]
fn raid0_members_add_up() {
    let mut single = SimDisk::nvme_like(5);
    let mut config = SimConfig::nvme_like(5);
    config.raid0_members = 2;
    config.raid0_chunk_bytes = 4096;
    let mut pair = SimDisk::new(config);
    let (one, _) = closed_loop(&mut single, 64, Direction::Read, 4096, 4096, 50_000_000);
    let (two, _) = closed_loop(&mut pair, 64, Direction::Read, 4096, 4096, 50_000_000);
    assert!(two > 1.7 * one, "{two} vs {one}");
}

#[test]
fn misaligned_requests_fail_and_the_queue_has_a_depth() {
    let mut disk = SimDisk::slow_sata(6);
    push(&mut disk, op(1, Direction::Read, 100, 4096)).expect("room");
    disk.submit_and_wait(1, None).expect("wait");
    let mut out = Vec::new();
    disk.reap(&mut out);
    assert_eq!(out[0].result, -EINVAL);
    for i in 0..32 {
        push(&mut disk, op(i, Direction::Read, 0, 4096)).expect("room");
    }
    assert!(matches!(
        push(&mut disk, op(99, Direction::Read, 0, 4096)),
        Err(DeviceError::QueueFull)
    ));
    // A deadline before the first completion stops the clock there.
    let now = disk.now_ns();
    disk.submit_and_wait(1, Some(now + 10)).expect("wait");
    assert_eq!(disk.now_ns(), now + 10);
    // Idle with a deadline sleeps until it.
    let mut idle = SimDisk::slow_sata(6);
    idle.submit_and_wait(1, Some(5_000)).expect("wait");
    assert_eq!(idle.now_ns(), 5_000);
}

#[test]
fn an_empty_poll_lets_virtual_time_pass() {
    // A busy-polling loop (submit_and_wait(0, None), nothing submitted) must reach its timer.
    let mut disk = SimDisk::nvme_like(1);
    let mut polls = 0;
    while disk.now_ns() < 50_000 {
        disk.submit_and_wait(0, None).expect("poll");
        polls += 1;
        assert!(
            polls <= 50,
            "virtual time did not move: {} ns",
            disk.now_ns()
        );
    }
    // A poll that submits does not take the poll's time.
    let before = disk.now_ns();
    push(
        &mut disk,
        IoOp {
            user_data: 1,
            direction: Direction::Read,
            fd: -1,
            offset_bytes: 0,
            len_bytes: 4096,
            buf: std::ptr::null_mut(),
            flags: Default::default(),
            vectored: None,
        },
    )
    .expect("room");
    disk.submit_and_wait(0, None).expect("submit");
    assert_eq!(disk.now_ns(), before);
}

/// Pushes one op. The tests keep every buffer alive until its completion is reaped (the
/// simulated disk never touches them at all), which is the contract of `Device::push`.
fn push<D: weir_model::device::Device>(
    device: &mut D,
    op: weir_model::device::IoOp,
) -> Result<(), weir_model::device::DeviceError> {
    // SAFETY: see above.
    unsafe { device.push(op) }
}

/// The inline device: a batch completes together when its last request is served, and the
/// rate is flat above the CPU count.
#[test]
fn an_inline_device_completes_a_batch_together_and_is_flat_above_its_cpus() {
    fn batches(depth: u32, rounds: u32) -> (u64, Vec<u64>) {
        let mut disk = SimDisk::new(SimConfig::cpu_inline(7));
        let mut latencies = Vec::new();
        let mut out = Vec::new();
        for round in 0..rounds {
            let start = disk.now_ns();
            for i in 0..depth {
                let op = op(
                    u64::from(round * depth + i),
                    Direction::Read,
                    u64::from(i) * 4096,
                    4096,
                );
                unsafe { disk.push(op) }.expect("room");
            }
            disk.submit_and_wait(depth, None).expect("wait");
            out.clear();
            disk.reap(&mut out);
            assert_eq!(out.len(), depth as usize);
            latencies.extend(out.iter().map(|c| c.completed_at_ns - start));
        }
        (disk.now_ns(), latencies)
    }
    let (lone_ns, lone) = batches(1, 100);
    let (two_ns, _) = batches(2, 50);
    let (deep_ns, deep) = batches(128, 100);
    // A lone read is its own CPU time: the p-norm of 1.67 us (IOPS) and 1.71 us (bytes) is
    // ~2.0 us, on one of two channels ~4.0 us (+-10% jitter).
    assert!(
        lone.iter().all(|&l| (3_400..=4_600).contains(&l)),
        "{lone:?}"
    );
    // Every read of a batch of 128 completes with the batch (64 x ~4.0 us on each CPU).
    assert!(
        deep.iter().all(|&l| (230_000..=285_000).contains(&l)),
        "{:?}",
        &deep[..4]
    );
    // Flat above the CPUs: 100 reads take half as long at depth 2 as at depth 1, and 12,800
    // at depth 128 as long as 128 x 100 at depth 2 would.
    let per_read = |ns: u64, reads: u64| ns as f64 / reads as f64;
    assert!(per_read(two_ns, 100) < 0.6 * per_read(lone_ns, 100));
    let flat = per_read(deep_ns, 12_800) / per_read(two_ns, 100);
    assert!((0.95..=1.05).contains(&flat), "{flat}");
}
