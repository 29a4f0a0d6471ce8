//! A minimal closed-loop driver straight on the engine, to see its own cost without the
//! workload layer: `cargo bench -p weir-engine --bench engine_loop -- FILE [QD] [BYTES]
//! [SECONDS] [randread|write] [uring|aio] [fixed|plain] [deadline|none] [eager|batch]`.
//!
//! Prints IOPS, MB/s and CPU microseconds per I/O (getrusage of the process). Compare with
//! fio on the same file (bench/engine-vs-fio.sh does it for the full `weir run` path).

use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

use weir_engine::{dio_alignment_fd, Backend, DmaBufferPool, EngineDevice};
use weir_model::device::{Device, Direction, IoCompletion, IoFlags, IoOp};

fn cpu_seconds() -> f64 {
    // SAFETY: rusage is plain data; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let path = args.first().ok_or(
        "usage: engine_loop FILE [QD] [BYTES] [SECONDS] [randread|write] [uring|aio] [fixed] \
         [deadline] [eager|batch]",
    )?;
    let qd: u32 = args
        .get(1)
        .map_or(Ok(32), |s| s.parse())
        .map_err(|e| format!("{e}"))?;
    let bytes: u32 = args
        .get(2)
        .map_or(Ok(4096), |s| s.parse())
        .map_err(|e| format!("{e}"))?;
    let seconds: u64 = args
        .get(3)
        .map_or(Ok(5), |s| s.parse())
        .map_err(|e| format!("{e}"))?;
    let direction = match args.get(4).map(String::as_str) {
        Some("write") => Direction::Write,
        _ => Direction::Read,
    };
    let backend: Backend = args.get(5).map_or(Ok(Backend::Uring), |s| s.parse())?;
    let fixed = args.get(6).is_some_and(|s| s == "fixed");
    // "deadline": wait with a deadline (the run's end) as the workload driver does.
    let with_deadline = args.get(7).is_some_and(|s| s == "deadline");
    // "batch": submit the requests freed by one wake-up together, not each as it is pushed.
    let eager = !args.get(8).is_some_and(|s| s == "batch");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(|e| format!("{path}: {e}"))?;
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    let blocks = size / u64::from(bytes);
    let fd = file.as_raw_fd();
    let align = dio_alignment_fd(fd);
    let pool =
        DmaBufferPool::new(qd as usize, bytes as usize, &align).map_err(|e| e.to_string())?;
    let mut dev = EngineDevice::open(backend, qd).map_err(|e| e.to_string())?;
    if fixed {
        // SAFETY: the pool outlives the device (dropped after it at the end of main).
        let ok = unsafe { dev.register_buffers(&pool) };
        eprintln!("registered buffers: {ok}");
    }
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |i: u64| -> u64 {
        if direction == Direction::Write {
            return (i % blocks) * u64::from(bytes);
        }
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % blocks) * u64::from(bytes)
    };
    let op = |slot: u64, offset: u64| IoOp {
        user_data: slot,
        direction,
        fd,
        offset_bytes: offset,
        len_bytes: bytes,
        buf: pool.ptr(slot as usize),
        flags: IoFlags::default(),
        vectored: None,
    };
    let cpu0 = cpu_seconds();
    let t0 = dev.now_ns();
    let end = t0 + seconds * 1_000_000_000;
    let mut seq = 0u64;
    for slot in 0..u64::from(qd) {
        push(&mut dev, op(slot, next(seq))).map_err(|e| e.to_string())?;
        seq += 1;
    }
    let mut done: Vec<IoCompletion> = Vec::with_capacity(qd as usize);
    let mut ios = 0u64;
    let mut now = t0;
    let mut waits = 0u64;
    while now < end {
        waits += 1;
        dev.submit_and_wait(1, with_deadline.then_some(end))
            .map_err(|e| e.to_string())?;
        done.clear();
        dev.reap(&mut done);
        for c in &done {
            if c.result != bytes as i32 {
                return Err(format!("I/O failed: {}", c.result));
            }
            ios += 1;
            now = c.completed_at_ns;
            push(&mut dev, op(c.user_data, next(seq))).map_err(|e| e.to_string())?;
            seq += 1;
            if eager {
                // Submit at once while others are in flight, as the workload driver does.
                dev.submit_and_wait(0, None).map_err(|e| e.to_string())?;
            }
        }
    }
    let elapsed = (dev.now_ns() - t0) as f64 / 1e9;
    let cpu = cpu_seconds() - cpu0;
    println!(
        "{backend} qd={qd} bytes={bytes} fixed={fixed} eager={eager}: {:.0} IOPS, {:.1} MB/s, \
         {:.2} us CPU/IO, {:.1} completions per wait",
        ios as f64 / elapsed,
        ios as f64 * f64::from(bytes) / elapsed / 1e6,
        cpu / ios as f64 * 1e6,
        ios as f64 / waits.max(1) as f64
    );
    Ok(())
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
