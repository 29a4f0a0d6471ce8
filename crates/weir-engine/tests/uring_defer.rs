//! A deep io_uring ring on a device that punts every request (zram) submits each op as it
//! is pushed by default; asked for deferred submits (`WaitPolicy::deferred_submit`,
//! `WEIR_URING_SUBMIT=deferred`) it leaves a submit alone for the turn's wait while a batch
//! is at the kernel (`PuntedWait::defers_submit`); a shallow ring submits at once either
//! way. Root tier: the test makes its own zram device.

use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

use weir_engine::{dio_alignment_fd, DmaBufferPool, PuntedWait, UringDevice, WaitPolicy};
use weir_model::device::{Device, Direction, IoCompletion, IoFlags, IoOp};

fn read_op(fd: i32, pool: &DmaBufferPool, i: usize) -> IoOp {
    IoOp {
        user_data: i as u64,
        direction: Direction::Read,
        fd,
        offset_bytes: (i * 4096) as u64,
        len_bytes: 4096,
        buf: pool.ptr(i),
        flags: IoFlags {
            nowait: false,
            dsync: false,
        },
        vectored: None,
    }
}

/// Pushes `first` reads and submits them alone, then one more and submits it alone; returns
/// what each submit handed to the kernel, after reaping every read.
fn submits(dev: &mut UringDevice, fd: i32, first: usize) -> (u32, u32) {
    let pool = DmaBufferPool::new(first + 1, 4096, &dio_alignment_fd(fd)).expect("pool");
    let push = |dev: &mut UringDevice, i| {
        // SAFETY: every read is reaped below, before the pool is dropped.
        unsafe { dev.push(read_op(fd, &pool, i)) }.expect("push")
    };
    (0..first).for_each(|i| push(dev, i));
    let a = dev.submit_and_wait(0, None).expect("submit");
    push(dev, first);
    let b = dev.submit_and_wait(0, None).expect("submit");
    let mut out: Vec<IoCompletion> = Vec::new();
    while out.len() < first + 1 {
        dev.submit_and_wait(1, None).expect("wait");
        dev.reap(&mut out);
    }
    assert!(out.iter().all(|c| c.result == 4096), "{out:?}");
    (a, b)
}

#[test]
fn a_deep_punting_ring_submits_with_the_wait() {
    let test = "a_deep_punting_ring_submits_with_the_wait";
    let Some(root) = weir_testfs::require_root(test) else {
        return;
    };
    let Some(zram) = weir_testfs::Zram::create(&root, test, "16M") else {
        return;
    };
    if ["WEIR_URING_WAIT", "WEIR_URING_PUNT"]
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|v| !v.is_empty() && v != "auto"))
    {
        println!("skipped {test}: the environment fixes the ring's policy");
        return;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(zram.path())
        .expect("open the zram device");
    let fd = file.as_raw_fd();
    // The default: a deep ring submits the next op at once, a batch at the kernel or not.
    let mut eager = UringDevice::with_wait(16, WaitPolicy::default()).expect("io_uring");
    assert!(eager.register_files(&[fd]), "register the zram device");
    let chosen = eager.punted_wait().expect("zram punts");
    assert!(chosen.defers_submit(), "{chosen:?}");
    let batch = eager.wait_batch() as usize;
    assert!((2..16).contains(&batch), "batch {batch}");
    assert_eq!(submits(&mut eager, fd, batch), (batch as u32, 1), "eager");
    // Asked for deferred submits, with a batch at the kernel the next op waits for the wait.
    let deferred_policy = WaitPolicy {
        deferred_submit: true,
        ..WaitPolicy::default()
    };
    let mut deep = UringDevice::with_wait(16, deferred_policy).expect("io_uring");
    assert!(deep.register_files(&[fd]), "register the zram device");
    assert_eq!(deep.wait_batch() as usize, batch);
    assert_eq!(
        submits(&mut deep, fd, batch),
        (batch as u32, 0),
        "deep ring"
    );
    // Fewer than a batch at the kernel: the submit goes out at once.
    let under = batch - 1;
    assert_eq!(
        submits(&mut deep, fd, under),
        (under as u32, 1),
        "under a batch"
    );
    // Depth 2 (spin or one async enter): never left for the wait.
    let mut shallow = UringDevice::with_wait(2, deferred_policy).expect("io_uring");
    assert!(shallow.register_files(&[fd]), "register the zram device");
    let chosen = shallow.punted_wait().expect("zram punts");
    assert!(
        !chosen.defers_submit() && chosen != PuntedWait::Inline,
        "{chosen:?}"
    );
    assert_eq!(submits(&mut shallow, fd, 1), (1, 1), "shallow ring");
}
