//! The device contract on real files, run identically for io_uring and Linux AIO.

mod common;

use std::os::fd::AsRawFd;

use common::{direct_file, fill_pattern, for_each_backend, test_dir};
use weir_engine::{dio_alignment_fd, Backend, DmaBufferPool, EngineDevice};
use weir_model::device::{Device, DeviceError, Direction, IoCompletion, IoFlags, IoOp};

const BLOCK: u32 = 4096;

fn op(user_data: u64, direction: Direction, fd: i32, offset: u64, buf: *mut u8) -> IoOp {
    IoOp {
        user_data,
        direction,
        fd,
        offset_bytes: offset,
        len_bytes: BLOCK,
        buf,
        flags: IoFlags::default(),
        vectored: None,
    }
}

/// Drives every pushed op to completion and returns the completions.
fn drain(dev: &mut EngineDevice, expected: usize) -> Vec<IoCompletion> {
    let mut out = Vec::new();
    while out.len() < expected {
        dev.submit_and_wait(1, None).expect("submit_and_wait");
        dev.reap(&mut out);
    }
    out
}

fn write_then_read(backend: Backend, fixed: bool) {
    let dir = test_dir();
    let blocks = 64u64;
    let file = direct_file(dir.path(), blocks * u64::from(BLOCK));
    let fd = file.as_raw_fd();
    let align = dio_alignment_fd(fd);
    let mut pool = DmaBufferPool::new(blocks as usize, BLOCK as usize, &align).expect("pool");
    let mut dev = EngineDevice::open(backend, 16).expect("open backend");
    if fixed {
        // SAFETY: `pool` outlives `dev` (declared before it, dropped after).
        let registered = unsafe { dev.register_buffers(&pool) };
        assert_eq!(registered, backend == Backend::Uring);
    }
    for i in 0..blocks {
        fill_pattern(
            &mut pool.slice_mut(i as usize)[..BLOCK as usize],
            7,
            i * 4096,
        );
    }
    // Writes in batches of the device's capacity, out of order.
    let mut done = Vec::new();
    for chunk in (0..blocks).rev().collect::<Vec<_>>().chunks(16) {
        for &i in chunk {
            let o = op(i, Direction::Write, fd, i * 4096, pool.ptr(i as usize));
            push(&mut dev, o).expect("push");
        }
        done.extend(drain(&mut dev, chunk.len()));
    }
    assert_eq!(done.len(), blocks as usize);
    for c in &done {
        assert_eq!(c.result, BLOCK as i32, "write {} result", c.user_data);
    }
    for i in 0..blocks {
        pool.slice_mut(i as usize).fill(0);
    }
    for chunk in (0..blocks).collect::<Vec<_>>().chunks(16) {
        for &i in chunk {
            // Read block i into buffer (i + 1) % n to prove data lands where asked.
            let b = ((i + 1) % blocks) as usize;
            push(&mut dev, op(i, Direction::Read, fd, i * 4096, pool.ptr(b))).expect("push");
        }
        for c in drain(&mut dev, chunk.len()) {
            assert_eq!(c.result, BLOCK as i32);
        }
    }
    let mut expect = vec![0u8; BLOCK as usize];
    for i in 0..blocks {
        fill_pattern(&mut expect, 7, i * 4096);
        let b = ((i + 1) % blocks) as usize;
        assert!(pool.slice(b)[..BLOCK as usize] == expect[..], "block {i}");
    }
    drop(dev);
}

#[test]
fn write_then_read_back_both_backends() {
    for_each_backend(|b| write_then_read(b, false));
}

#[test]
fn write_then_read_back_with_registered_buffers() {
    for_each_backend(|b| write_then_read(b, true));
}

#[test]
fn queue_full_beyond_capacity() {
    for_each_backend(|backend| {
        let dir = test_dir();
        let file = direct_file(dir.path(), 1 << 20);
        let align = dio_alignment_fd(file.as_raw_fd());
        let pool = DmaBufferPool::new(5, 4096, &align).expect("pool");
        let mut dev = EngineDevice::open(backend, 4).expect("open");
        assert_eq!(dev.capacity(), 4);
        for i in 0..4 {
            push(
                &mut dev,
                op(
                    i,
                    Direction::Read,
                    file.as_raw_fd(),
                    i * 4096,
                    pool.ptr(i as usize),
                ),
            )
            .expect("push within capacity");
        }
        let extra = op(9, Direction::Read, file.as_raw_fd(), 0, pool.ptr(4));
        assert!(matches!(push(&mut dev, extra), Err(DeviceError::QueueFull)));
        let done = drain(&mut dev, 4);
        assert!(done.iter().all(|c| c.result == 4096), "{done:?}");
        // Capacity is free again once reaped.
        push(&mut dev, extra).expect("push after reap");
        drain(&mut dev, 1);
    });
}

#[test]
fn failures_arrive_as_negative_errno() {
    for_each_backend(|backend| {
        let dir = test_dir();
        let file = direct_file(dir.path(), 1 << 20);
        let align = dio_alignment_fd(file.as_raw_fd());
        let pool = DmaBufferPool::new(2, 8192, &align).expect("pool");
        let mut dev = EngineDevice::open(backend, 4).expect("open");
        // A descriptor that is not open, and a read past the end of the file (a short read
        // of zero bytes: the named short-I/O case callers must handle).
        push(&mut dev, op(1, Direction::Read, 1_000_000, 0, pool.ptr(0))).expect("push");
        push(
            &mut dev,
            op(2, Direction::Read, file.as_raw_fd(), 4 << 20, pool.ptr(1)),
        )
        .expect("push");
        let mut done = drain(&mut dev, 2);
        done.sort_by_key(|c| c.user_data);
        assert_eq!(done[0].result, -libc::EBADF, "{done:?}");
        assert_eq!(done[1].result, 0, "{done:?}");
    });
}

#[test]
fn idle_wait_sleeps_until_deadline() {
    for_each_backend(|backend| {
        let mut dev = EngineDevice::open(backend, 4).expect("open");
        let t0 = dev.now_ns();
        let deadline = t0 + 20_000_000;
        assert_eq!(dev.submit_and_wait(1, Some(deadline)).expect("wait"), 0);
        let t1 = dev.now_ns();
        assert!(t1 >= deadline, "woke {} ns early", deadline - t1);
        assert!(
            t1 < deadline + 200_000_000,
            "overslept by {} ns",
            t1 - deadline
        );
        // No deadline and nothing in flight: returns at once rather than hanging.
        assert_eq!(dev.submit_and_wait(1, None).expect("wait"), 0);
    });
}

#[test]
fn completions_carry_the_clock() {
    for_each_backend(|backend| {
        let dir = test_dir();
        let file = direct_file(dir.path(), 1 << 20);
        let align = dio_alignment_fd(file.as_raw_fd());
        let pool = DmaBufferPool::new(1, 4096, &align).expect("pool");
        let mut dev = EngineDevice::open(backend, 2).expect("open");
        let t0 = dev.now_ns();
        push(
            &mut dev,
            op(5, Direction::Read, file.as_raw_fd(), 0, pool.ptr(0)),
        )
        .expect("push");
        let done = drain(&mut dev, 1);
        assert!(done[0].completed_at_ns >= t0);
        assert!(done[0].completed_at_ns <= dev.now_ns());
    });
}

/// A vectored write gathers scattered buffers into one contiguous range of the file, and a
/// vectored read scatters it back: the file and the buffers must match byte for byte.
fn vectored_round_trip(backend: Backend, fixed: bool) {
    use weir_model::device::{IoVec, IoVecs};
    let dir = test_dir();
    let file = direct_file(dir.path(), 16 * u64::from(BLOCK));
    let fd = file.as_raw_fd();
    let align = dio_alignment_fd(fd);
    let mut pool = DmaBufferPool::new(8, 2 * BLOCK as usize, &align).expect("pool");
    let mut dev = EngineDevice::open(backend, 8).expect("open backend");
    if fixed {
        // SAFETY: `pool` outlives `dev` (declared before it, dropped after).
        unsafe { dev.register_buffers(&pool) };
    }
    // Buffers 5, 1 and 3, in that order, become blocks 2..8 of the file (two blocks each).
    let order = [5usize, 1, 3];
    for (k, &b) in order.iter().enumerate() {
        let offset = (2 + 2 * k as u64) * u64::from(BLOCK);
        fill_pattern(pool.slice_mut(b), 11, offset);
    }
    let segments = |pool: &DmaBufferPool, bufs: &[usize]| -> Vec<IoVec> {
        bufs.iter()
            .map(|&b| IoVec {
                base: pool.ptr(b),
                len: 2 * BLOCK as usize,
            })
            .collect()
    };
    let write_iov = segments(&pool, &order);
    let vectored = |direction, iov: &[IoVec], user_data| IoOp {
        user_data,
        direction,
        fd,
        offset_bytes: 2 * u64::from(BLOCK),
        len_bytes: 6 * BLOCK,
        buf: iov[0].base,
        flags: IoFlags::default(),
        vectored: Some(IoVecs {
            ptr: iov.as_ptr(),
            count: iov.len() as u32,
        }),
    };
    push(&mut dev, vectored(Direction::Write, &write_iov, 1)).expect("push");
    let done = drain(&mut dev, 1);
    assert_eq!(
        done[0].result,
        6 * BLOCK as i32,
        "{backend}: vectored write"
    );
    // Read through the page cache (a second, buffered descriptor): the O_DIRECT one would
    // need an aligned buffer.
    let whole = std::fs::read(dir.path().join("data")).expect("read back");
    let on_disk = &whole[2 * BLOCK as usize..8 * BLOCK as usize];
    let mut expect = vec![0u8; 2 * BLOCK as usize];
    for k in 0..3 {
        let offset = (2 + 2 * k as u64) * u64::from(BLOCK);
        fill_pattern(&mut expect, 11, offset);
        let got = &on_disk[k * 2 * BLOCK as usize..(k + 1) * 2 * BLOCK as usize];
        assert!(got == &expect[..], "{backend}: segment {k} landed wrong");
    }
    // Read the range back into three other buffers, scattered.
    let read_bufs = [0usize, 7, 2];
    for &b in &read_bufs {
        pool.slice_mut(b).fill(0);
    }
    let read_iov = segments(&pool, &read_bufs);
    push(&mut dev, vectored(Direction::Read, &read_iov, 2)).expect("push");
    let done = drain(&mut dev, 1);
    assert_eq!(done[0].result, 6 * BLOCK as i32, "{backend}: vectored read");
    for (k, &b) in read_bufs.iter().enumerate() {
        assert!(
            pool.slice(b) == pool.slice(order[k]),
            "{backend}: read segment {k} differs from what was written"
        );
    }
    drop(dev);
}

#[test]
fn vectored_requests_both_backends() {
    for_each_backend(|b| vectored_round_trip(b, false));
    for_each_backend(|b| vectored_round_trip(b, true));
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
