//! The engine's shard loop alone, closed loop, without the workload layer:
//! `cargo bench -p weir-engine --bench engine_loop -- FILE [QD] [BYTES] [SECONDS]
//! [randread|write] [uring|aio] [fixed|plain] [eager|batch]`.
//!
//! `fixed` registers the buffers and the file with io_uring; `batch` submits a loop turn's
//! requests together with its wait (one system call per turn) instead of each as it is
//! pushed. Prints IOPS, MB/s, CPU microseconds per I/O (getrusage of the whole process, its
//! io_uring worker threads included) and device calls per I/O. bench/engine-vs-fio.sh
//! compares the full `weir run` path with fio.

use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::time::Instant;

use weir_engine::{
    dio_alignment_fd, Backend, DmaBufferPool, Done, EngineDevice, Flow, LoopBuffers, LoopOptions,
    Next, Op, OpSource, ShardLoop, SubmitPolicy,
};
use weir_model::device::Direction;

fn cpu_seconds() -> f64 {
    // SAFETY: rusage is plain data; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

/// Random reads or sequential writes of `bytes` until `end`.
struct Closed {
    direction: Direction,
    fd: i32,
    bytes: u32,
    blocks: u64,
    rng: u64,
    seq: u64,
    end: Instant,
    ops: u64,
}

impl OpSource for Closed {
    type Error = String;

    fn next_op(&mut self, _now: u64, buffers: &mut LoopBuffers) -> Result<Next, String> {
        let Some(buf) = buffers.acquire(0) else {
            return Ok(Next::WaitForCompletion);
        };
        let block = if self.direction == Direction::Write {
            self.seq += 1;
            self.seq % self.blocks
        } else {
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            self.rng % self.blocks
        };
        let offset = block * u64::from(self.bytes);
        let op = Op::new(0, self.direction, self.fd, offset, buf, self.bytes);
        Ok(Next::Op(op))
    }

    fn on_done(&mut self, done: Done, buffers: &mut LoopBuffers) -> Result<Flow, String> {
        buffers.release(done.buf);
        if done.outcome != weir_engine::Outcome::Full {
            return Err(format!("{done:?}"));
        }
        self.ops += 1;
        // The clock is read every 1024 completions, not per I/O.
        if self.ops % 1024 == 0 && Instant::now() >= self.end {
            return Ok(Flow::Stop);
        }
        Ok(Flow::Continue)
    }
}

fn arg<T: std::str::FromStr>(args: &[String], i: usize, default: T) -> Result<T, String> {
    args.get(i)
        .map_or(Ok(default), |s| s.parse())
        .map_err(|_| format!("argument {}: cannot parse {:?}", i + 1, args[i]))
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let path = args.first().ok_or(
        "usage: engine_loop FILE [QD] [BYTES] [SECONDS] [randread|write] [uring|aio] \
         [fixed|plain] [eager|batch]",
    )?;
    let qd: u32 = arg(&args, 1, 32)?;
    let bytes: u32 = arg(&args, 2, 4096)?;
    let seconds: u64 = arg(&args, 3, 5)?;
    let direction = match args.get(4).map(String::as_str) {
        Some("write") => Direction::Write,
        _ => Direction::Read,
    };
    let backend: Backend = args
        .get(5)
        .map_or(Ok(Backend::Uring), |s| s.parse())
        .map_err(|e: weir_engine::UnknownBackend| e.to_string())?;
    let fixed = args.get(6).is_some_and(|s| s == "fixed");
    let submit = match args.get(7).map(String::as_str) {
        Some("batch") => SubmitPolicy::Batched,
        _ => SubmitPolicy::Eager,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(direction == Direction::Write)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(|e| format!("{path}: {e}"))?;
    let size = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    // A block device reports 0 bytes in its metadata: ask it.
    let size = if size == 0 {
        block_device_bytes(file.as_raw_fd())?
    } else {
        size
    };
    let fd = file.as_raw_fd();
    let align = dio_alignment_fd(fd);
    let pool =
        DmaBufferPool::new(qd as usize, bytes as usize, &align).map_err(|e| e.to_string())?;
    let dev = EngineDevice::open(backend, qd).map_err(|e| e.to_string())?;
    let options = LoopOptions {
        submit,
        offset_align_bytes: align.offset_align_bytes,
        ..LoopOptions::default()
    };
    let mut lp = ShardLoop::new(dev, vec![pool], options);
    if fixed {
        eprintln!("registered: {:?}", lp.register(&[fd]));
    }
    let mut source = Closed {
        direction,
        fd,
        bytes,
        blocks: size / u64::from(bytes),
        rng: 0x9e37_79b9_7f4a_7c15,
        seq: 0,
        end: Instant::now() + std::time::Duration::from_secs(seconds),
        ops: 0,
    };
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    lp.run(&mut source).map_err(|e| e.to_string())?;
    let elapsed = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let ops = source.ops as f64;
    println!(
        "{backend} qd{qd} {bytes}B {direction:?} fixed={fixed} {submit:?}: {:.0} IOPS, {:.1} MB/s, \
         {:.2} us CPU/IO, {:.2} device calls/IO",
        ops / elapsed,
        ops * f64::from(bytes) / elapsed / 1e6,
        cpu / ops * 1e6,
        lp.stats().device_calls as f64 / ops
    );
    Ok(())
}

fn block_device_bytes(fd: i32) -> Result<u64, String> {
    let mut bytes: u64 = 0;
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t)
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    // SAFETY: a valid out-pointer for the ioctl's u64.
    let rc = unsafe { libc::ioctl(fd, BLKGETSIZE64, &mut bytes) };
    if rc != 0 {
        return Err("BLKGETSIZE64 failed".into());
    }
    Ok(bytes)
}
