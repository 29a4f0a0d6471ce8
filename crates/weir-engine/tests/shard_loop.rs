//! The shard loop on real files and devices, for io_uring and Linux AIO: data written through
//! it reads back through it, end of file and /dev/null are named, and a loop dropped with
//! requests in flight waits for them.

mod common;

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;

use common::{direct_file, fill_pattern, for_each_backend, pattern_byte, test_dir};
use weir_engine::{
    dio_alignment_fd, Backend, DmaBufferPool, Done, EngineDevice, Flow, LoopBuffers, LoopOptions,
    Next, Op, OpSource, Outcome, Registered, ShardLoop, SubmitPolicy,
};
use weir_model::device::Direction;

const BLOCK: u32 = 4096;

/// Writes (or reads and checks) `blocks` blocks front to back at the pool's depth.
struct Sequential {
    direction: Direction,
    fd: i32,
    blocks: u64,
    next: u64,
    done: u64,
    mismatches: u64,
}

impl OpSource for Sequential {
    type Error = String;

    fn next_op(&mut self, _now: u64, buffers: &mut LoopBuffers) -> Result<Next, String> {
        if self.next == self.blocks {
            return Ok(Next::Finished);
        }
        let Some(buf) = buffers.acquire(0) else {
            return Ok(Next::WaitForCompletion);
        };
        let offset = self.next * u64::from(BLOCK);
        if self.direction == Direction::Write {
            fill_pattern(&mut buffers.bytes_mut(buf)[..BLOCK as usize], 7, offset);
        }
        self.next += 1;
        Ok(Next::Op(Op::new(
            self.next,
            self.direction,
            self.fd,
            offset,
            buf,
            BLOCK,
        )))
    }

    fn on_done(&mut self, done: Done, buffers: &mut LoopBuffers) -> Result<Flow, String> {
        if done.outcome != Outcome::Full {
            return Err(format!("{done:?}"));
        }
        if self.direction == Direction::Read {
            let data = &buffers.bytes(done.buf)[..BLOCK as usize];
            let wrong = data
                .iter()
                .enumerate()
                .any(|(i, &b)| b != pattern_byte(7, done.offset_bytes + i as u64));
            self.mismatches += u64::from(wrong);
        }
        buffers.release(done.buf);
        self.done += 1;
        Ok(Flow::Continue)
    }
}

fn shard(backend: Backend, fd: i32, depth: usize, submit: SubmitPolicy) -> ShardLoop<EngineDevice> {
    let align = dio_alignment_fd(fd);
    let pool = DmaBufferPool::new(depth, BLOCK as usize, &align).expect("pool");
    let dev = EngineDevice::open(backend, depth as u32).expect("open backend");
    let options = LoopOptions {
        submit,
        offset_align_bytes: align.offset_align_bytes,
        ..LoopOptions::default()
    };
    ShardLoop::new(dev, vec![pool], options)
}

#[test]
fn what_the_loop_writes_it_reads_back() {
    for_each_backend(|backend| {
        let modes = [
            (SubmitPolicy::Eager, false),
            (SubmitPolicy::Batched, false),
            (SubmitPolicy::Batched, true),
        ];
        for (submit, register) in modes {
            let dir = test_dir();
            let blocks = 256;
            let file = direct_file(dir.path(), blocks * u64::from(BLOCK));
            let fd = file.as_raw_fd();
            let mut sl = shard(backend, fd, 16, submit);
            if register {
                // io_uring takes both; AIO has neither and says so.
                let registered = sl.register(&[fd]);
                let expected = backend == Backend::Uring;
                assert_eq!(
                    registered,
                    Registered {
                        buffers: expected,
                        files: expected
                    },
                    "{backend}"
                );
            }
            for direction in [Direction::Write, Direction::Read] {
                let mut source = Sequential {
                    direction,
                    fd,
                    blocks,
                    next: 0,
                    done: 0,
                    mismatches: 0,
                };
                sl.run(&mut source).expect("run");
                assert_eq!(source.done, blocks, "{backend} {submit:?} {direction:?}");
                assert_eq!(source.mismatches, 0, "{backend} {submit:?}");
            }
            assert_eq!(sl.buffers().free_count(0), 16);
        }
    });
}

/// One op, pushed and waited for by hand (the step API).
fn one(
    sl: &mut ShardLoop<EngineDevice>,
    direction: Direction,
    fd: i32,
    offset: u64,
    len: u32,
) -> Done {
    let buf = sl.buffers_mut().acquire(0).expect("a free buffer");
    sl.push(Op::new(1, direction, fd, offset, buf, len))
        .expect("push");
    loop {
        sl.wait(1, None).expect("wait");
        if let Some(done) = sl.next_done() {
            sl.buffers_mut().release(done.buf);
            return done;
        }
    }
}

#[test]
fn end_of_file_and_short_reads_are_named() {
    for_each_backend(|backend| {
        let dir = test_dir();
        // A 6,000-byte file read through the page cache: 8 KiB at 0 is short, 8 KiB at
        // 8 KiB is past the end.
        let path = dir.path().join("short");
        std::fs::write(&path, vec![1u8; 6000]).expect("write");
        let file = std::fs::File::open(&path).expect("open");
        let fd = file.as_raw_fd();
        let pool = DmaBufferPool::new(2, 8192, &dio_alignment_fd(fd)).expect("pool");
        let dev = EngineDevice::open(backend, 2).expect("open backend");
        let mut sl = ShardLoop::new(dev, vec![pool], LoopOptions::default());
        let short = one(&mut sl, Direction::Read, fd, 0, 8192);
        assert_eq!(
            short.outcome,
            Outcome::Short { moved_bytes: 6000 },
            "{backend}"
        );
        let eof = one(&mut sl, Direction::Read, fd, 8192, 8192);
        assert_eq!(eof.outcome, Outcome::EndOfFile, "{backend}");
    });
}

#[test]
fn dev_null_reads_nothing_and_takes_every_write() {
    for_each_backend(|backend| {
        let null = OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
            .expect("open /dev/null");
        let fd = null.as_raw_fd();
        let mut sl = shard(backend, fd, 2, SubmitPolicy::Eager);
        let read = one(&mut sl, Direction::Read, fd, 0, BLOCK);
        assert_eq!(read.outcome, Outcome::EndOfFile, "{backend}");
        let write = one(&mut sl, Direction::Write, fd, 0, BLOCK);
        assert_eq!(write.outcome, Outcome::Full, "{backend}");
    });
}

#[test]
fn a_loop_dropped_with_requests_in_flight_waits_for_them() {
    for_each_backend(|backend| {
        let dir = test_dir();
        let blocks = 32u64;
        let file = direct_file(dir.path(), blocks * u64::from(BLOCK));
        let fd = file.as_raw_fd();
        let mut sl = shard(backend, fd, blocks as usize, SubmitPolicy::Eager);
        for i in 0..blocks {
            let buf = sl.buffers_mut().acquire(0).expect("buffer");
            let offset = i * u64::from(BLOCK);
            fill_pattern(
                &mut sl.buffers_mut().bytes_mut(buf)[..BLOCK as usize],
                3,
                offset,
            );
            sl.push(Op::new(i, Direction::Write, fd, offset, buf, BLOCK))
                .expect("push");
        }
        sl.submit().expect("submit");
        assert_eq!(sl.in_flight(), blocks as u32);
        // The drop waits for all 32 writes before the pool's memory is freed; the file then
        // holds every one of them.
        drop(sl);
        let data = std::fs::read(dir.path().join("data")).expect("read back");
        let wrong = data
            .iter()
            .enumerate()
            .filter(|&(i, &b)| b != pattern_byte(3, i as u64))
            .count();
        assert_eq!(
            wrong, 0,
            "{backend}: the dropped loop's writes did not all land"
        );
    });
}

#[test]
fn a_borrowed_ring_forgets_the_loops_buffers_when_the_loop_goes() {
    let mut dev = EngineDevice::open(Backend::Uring, 4).expect("open io_uring");
    {
        let align = weir_engine::DioAlignment {
            mem_align_bytes: 512,
            offset_align_bytes: 512,
            source: weir_engine::AlignmentSource::Default,
        };
        let pool = DmaBufferPool::new(4, 4096, &align).expect("pool");
        let mut sl = ShardLoop::new(&mut dev, vec![pool], LoopOptions::default());
        assert!(sl.register(&[]).buffers);
    }
    // The ring lives on; the pool is gone, so its registration must be too.
    let EngineDevice::Uring(ring) = &dev else {
        panic!("asked for io_uring");
    };
    assert!(!ring.has_fixed_buffers());
}
