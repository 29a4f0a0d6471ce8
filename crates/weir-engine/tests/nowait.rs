//! RWF_NOWAIT on real files: EAGAIN completions are retried once and counted, for both
//! backends, and the data still lands.

mod common;

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

use common::{fill_pattern, for_each_backend, test_dir};
use weir_engine::{dio_alignment_fd, DmaBufferPool, EngineDevice, NowaitRetry};
use weir_model::device::{Device, Direction, IoCompletion, IoFlags, IoOp};

#[test]
fn sparse_writes_with_nowait_are_retried_and_land() {
    for_each_backend(|backend| {
        let dir = test_dir();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_DIRECT)
            .open(dir.path().join("sparse"))
            .expect("open");
        let blocks = 32u64;
        // A sparse file: every write must allocate, which RWF_NOWAIT refuses on ext4/XFS.
        file.set_len(blocks * 65536).expect("set_len");
        let fd = file.as_raw_fd();
        let align = dio_alignment_fd(fd);
        let mut pool = DmaBufferPool::new(blocks as usize, 4096, &align).expect("pool");
        let inner = EngineDevice::open(backend, 8).expect("open backend");
        let mut dev = NowaitRetry::new(inner, true);
        // SAFETY: the buffer lives until probe returns.
        unsafe { dev.probe(fd, pool.ptr(0), 4096) }.expect("probe");
        assert!(dev.nowait_enabled(), "{:?}", dev.nowait_disabled_reason());
        for i in 0..blocks {
            fill_pattern(pool.slice_mut(i as usize), 3, i * 65536);
        }
        let mut done: Vec<IoCompletion> = Vec::new();
        let mut next = 0u64;
        while (done.len() as u64) < blocks {
            // SAFETY: the pool outlives every request, all reaped below before it is dropped.
            while next < blocks
                && unsafe { dev.push(write_op(fd, next, pool.ptr(next as usize))) }.is_ok()
            {
                next += 1;
            }
            dev.submit_and_wait(1, None).expect("wait");
            dev.reap(&mut done);
        }
        assert!(done.iter().all(|c| c.result == 4096), "{done:?}");
        let mut ids: Vec<u64> = done.iter().map(|c| c.user_data).collect();
        ids.sort_unstable();
        assert_eq!(
            ids,
            (0..blocks).collect::<Vec<_>>(),
            "one completion per request"
        );
        eprintln!(
            "{backend}: {} of {} RWF_NOWAIT writes got EAGAIN",
            dev.eagain_retries(),
            dev.nowait_ops()
        );
        assert_eq!(dev.nowait_ops(), blocks);
        assert!(
            dev.eagain_retries() > 0,
            "allocating writes should hit EAGAIN"
        );
        // Read back through the page cache-free path and compare.
        let mut expect = vec![0u8; 4096];
        let mut got = vec![0u8; 4096];
        for i in 0..blocks {
            fill_pattern(&mut expect, 3, i * 65536);
            read_block(&file, i * 65536, &mut got);
            assert!(got == expect, "block {i}");
        }
    });
}

fn write_op(fd: i32, i: u64, buf: *mut u8) -> IoOp {
    IoOp {
        user_data: i,
        direction: Direction::Write,
        fd,
        offset_bytes: i * 65536,
        len_bytes: 4096,
        buf,
        flags: IoFlags {
            nowait: true,
            dsync: false,
        },
        vectored: None,
    }
}

fn read_block(file: &std::fs::File, offset: u64, out: &mut [u8]) {
    // A buffered descriptor for verification; O_DIRECT writes are visible to it.
    let path = format!("/proc/self/fd/{}", file.as_raw_fd());
    let data = std::fs::read(path).expect("read back");
    let start = offset as usize;
    out.copy_from_slice(&data[start..start + out.len()]);
}
