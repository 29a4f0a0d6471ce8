//! `--backend auto` on real storage (root tier): a zram device refuses RWF_NOWAIT reads and
//! gets AIO; a file on ext4 (on a loop device) takes them and keeps io_uring. On io_uring, a
//! ring on a registered zram device chooses its wait from its depth (weir_engine::uring_wait:
//! a shallow one spins and sends IOSQE_ASYNC, a deep one sends it to two io-wq workers), a file that takes
//! non-blocking requests keeps the inline path and chooses nothing, and data round-trips.

mod common;

use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

use weir_engine::auto::{choose_for_dir, choose_for_path, probe_fd, NowaitSupport};
use weir_engine::{dio_alignment_fd, Backend, DmaBufferPool, PuntedWait, UringDevice, WaitPolicy};
use weir_model::device::{Device, Direction, IoCompletion, IoFlags, IoOp};

/// A 64 MiB zram device of the test's own (root only; skips with a reason otherwise).
fn zram(test: &str) -> Option<weir_testfs::Zram> {
    let root = weir_testfs::require_root(test)?;
    weir_testfs::Zram::create(&root, test, "64M")
}

#[test]
fn zram_device_refuses_nowait_and_gets_aio() {
    let Some(zram) = zram("zram_device_refuses_nowait_and_gets_aio") else {
        return;
    };
    let file = std::fs::File::open(zram.path()).expect("open the zram device");
    assert_eq!(probe_fd(&file), NowaitSupport::Unsupported);
    let chosen = choose_for_path(zram.path()).expect("probe the zram device");
    println!(
        "{}: {:?} ({})",
        zram.path().display(),
        chosen.backend,
        chosen.reason
    );
    assert_eq!(chosen.backend, Backend::Aio, "{}", chosen.reason);
    assert!(chosen.reason.contains("EOPNOTSUPP"), "{}", chosen.reason);
}

#[test]
fn file_on_ext4_takes_nowait_and_keeps_io_uring() {
    let name = "file_on_ext4_takes_nowait_and_keeps_io_uring";
    let Some(mount) = common::root_mount(name, |root, what| common::Mount::ext4(root, what, 64))
    else {
        return;
    };
    let chosen = choose_for_dir(&mount.dir).expect("probe the ext4 directory");
    println!(
        "{}: {:?} ({})",
        mount.dir.display(),
        chosen.backend,
        chosen.reason
    );
    assert_eq!(chosen.backend, Backend::Uring, "{}", chosen.reason);
    // The scratch file is gone.
    let left: Vec<_> = std::fs::read_dir(&mount.dir)
        .expect("list the mount")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains("backend-probe"))
        .collect();
    assert!(left.is_empty(), "probe file left behind: {left:?}");
}

#[test]
fn missing_target_is_a_clear_error() {
    let dir = common::test_dir();
    let missing = dir.path().join("absent");
    let e = choose_for_path(&missing).expect_err("no such file");
    let msg = e.to_string();
    assert!(msg.contains("absent") && msg.contains("ENOENT"), "{msg}");
    assert!(msg.contains("--backend uring or aio"), "{msg}");
}

/// Writes `blocks` 4 KiB blocks of a pattern through `dev` (registered buffers and file), reads
/// them back into other buffers, and says whether every byte matches.
fn round_trip(dev: &mut UringDevice, fd: i32, blocks: usize) -> bool {
    let align = dio_alignment_fd(fd);
    let mut pool = DmaBufferPool::new(2 * blocks, 4096, &align).expect("pool");
    for i in 0..blocks {
        common::fill_pattern(pool.slice_mut(i), 3, (i * 4096) as u64);
    }
    // SAFETY: the pool outlives the device's use of it (unregistered below).
    assert!(unsafe { dev.register_buffers(&pool) }, "register buffers");
    for (direction, first) in [(Direction::Write, 0), (Direction::Read, blocks)] {
        for i in 0..blocks {
            let op = IoOp {
                user_data: i as u64,
                direction,
                fd,
                offset_bytes: (i * 4096) as u64,
                len_bytes: 4096,
                buf: pool.ptr(first + i),
                flags: IoFlags {
                    nowait: false,
                    dsync: false,
                },
                vectored: None,
            };
            // SAFETY: every op is reaped below, before the pool is touched or dropped.
            unsafe { dev.push(op) }.expect("push");
        }
        let mut out: Vec<IoCompletion> = Vec::new();
        while out.len() < blocks {
            dev.submit_and_wait(1, None).expect("wait");
            dev.reap(&mut out);
        }
        assert!(
            out.iter().all(|c| c.result == 4096),
            "{direction:?}: {out:?}"
        );
    }
    dev.unregister_buffers();
    (0..blocks).all(|i| pool.slice(i) == pool.slice(blocks + i))
}

#[test]
fn zram_ring_policy_follows_depth_and_reads_back() {
    let Some(zram) = zram("zram_ring_policy_follows_depth_and_reads_back") else {
        return;
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(zram.path())
        .expect("open the zram device");
    let fd = file.as_raw_fd();
    // An A/B run's WEIR_URING_WAIT/WEIR_URING_PUNT/WEIR_URING_DEEP fix the policy on purpose.
    let fixed = ["WEIR_URING_WAIT", "WEIR_URING_PUNT", "WEIR_URING_DEEP"]
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|v| !v.is_empty() && v != "auto"));
    // A shallow ring spins (DEFER_TASKRUN and two CPUs for it here) and sends async; a deep
    // one stays inline, or sends async to two bounded io-wq workers when asked (the policy
    // WEIR_URING_DEEP=async makes) and two CPUs are there. All read back what they wrote.
    let env_policy = weir_engine::engine_options().wait;
    let deep_async = WaitPolicy {
        deep_inline: false,
        ..env_policy
    };
    let two_cpus = weir_engine::shards::available_cores() >= 2;
    for (depth, policy, want) in [
        (2, env_policy, PuntedWait::Spin),
        (16, env_policy, PuntedWait::Inline),
        (16, deep_async, PuntedWait::AsyncBounded),
    ] {
        let mut dev = UringDevice::with_wait(depth, policy).expect("io_uring");
        assert!(!dev.sends_async(fd), "nothing registered yet");
        assert!(dev.register_files(&[fd]), "register the zram device");
        println!("depth {depth}: {:?}", dev.punted_wait());
        if !fixed {
            let can_spin = dev.defers_task_work() && weir_engine::shards::available_cores() >= 2;
            let want = match want {
                PuntedWait::Spin if !can_spin => PuntedWait::AsyncEnter,
                PuntedWait::AsyncBounded if !two_cpus => PuntedWait::Inline,
                w => w,
            };
            assert_eq!(dev.punted_wait(), Some(want), "depth {depth}");
            assert_eq!(dev.sends_async(fd), want.force_async(), "depth {depth}");
            assert_eq!(dev.wait_batch(), want.min_batch(depth), "depth {depth}");
        }
        assert!(
            round_trip(&mut dev, fd, depth as usize),
            "zram data differs after the round trip at depth {depth}"
        );
    }
}

#[test]
fn file_taking_nowait_stays_inline_and_reads_back() {
    let dir = common::test_dir();
    let file = common::direct_file(dir.path(), 16 * 4096);
    let fd = file.as_raw_fd();
    let support = probe_fd(&file);
    let mut dev = UringDevice::new(16).expect("io_uring");
    assert!(dev.register_files(&[fd]), "register the file");
    println!("{}: probe {support:?}", dir.path().display());
    assert_eq!(
        dev.sends_async(fd),
        support == NowaitSupport::Unsupported,
        "only a file that refuses RWF_NOWAIT goes async"
    );
    if support != NowaitSupport::Unsupported {
        // The kernel completes these by interrupt: nothing is chosen, nothing spins.
        assert_eq!(dev.punted_wait(), None);
    }
    assert!(
        round_trip(&mut dev, fd, 16),
        "file data differs after the round trip"
    );
}
