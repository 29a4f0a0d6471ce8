//! One load through `weir tune`'s own meter on files the caller prepared, for comparing the
//! meter with fio on exactly the same file state.
//!
//! ```sh
//! cargo run --release -p weir-tune --example meter_point -- \
//!     RW REQUEST_BYTES TOTAL_DEPTH SECONDS FILE...
//! ```
//!
//! RW is `write`, `read`, `randwrite` or `randread`; one shard (thread, ring, pinned CPU) per
//! FILE, the total depth split over them as tune splits it. The files are used as they are:
//! reads and random writes cover each file's current size; sequential writes start at offset
//! 0 and never pass `WRITE_LIMIT_BYTES` (default 16 GiB), so an empty file is extended, a
//! sparse file has its holes filled and a written file is overwritten. Prints the rate over
//! the whole run after a ramp of `RAMP_MS` (default 500 ms): `iops bytes_per_s`. Shards are pinned one per CPU, as
//! in `weir tune`; `UNPINNED=1` leaves them unpinned. Buffers and files are registered with
//! the ring, as in `weir tune` and `weir run`; `UNREGISTERED=1` does not register them, and
//! `BACKEND=aio` uses Linux AIO instead of io_uring. `SAMPLES=1` also prints every 100 ms
//! sample's rate to stderr (`t_ms bytes_per_s`, ramp included), to see how a load's rate moves
//! over its first seconds.

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::process::ExitCode;
use weir_engine::backend::{Backend, EngineDevice};
use weir_engine::shards;
use weir_model::device::Direction;
use weir_tune::drive::register_engine;
use weir_tune::meter::{Control, Load, Meter, Pattern, Sample};
use weir_tune::meters::ShardedMeter;
use weir_tune::target::ShardTarget;
use weir_tune::TuneError;

const RAMP_MS_DEFAULT: u64 = 500;
const SAMPLE_NS: u64 = 100_000_000;

fn usage(why: &str) -> ExitCode {
    eprintln!(
        "meter_point: {why}\nusage: meter_point write|read|randwrite|randread REQUEST_BYTES TOTAL_DEPTH SECONDS FILE..."
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 5 {
        return usage("too few arguments");
    }
    let (direction, pattern) = match args[0].as_str() {
        "write" => (Direction::Write, Pattern::Sequential),
        "read" => (Direction::Read, Pattern::Sequential),
        "randwrite" => (Direction::Write, Pattern::Random),
        "randread" => (Direction::Read, Pattern::Random),
        other => return usage(&format!("unknown RW '{other}'")),
    };
    let (Ok(request_bytes), Ok(depth), Ok(seconds)) = (
        args[1].parse::<u32>(),
        args[2].parse::<u32>(),
        args[3].parse::<f64>(),
    ) else {
        return usage("REQUEST_BYTES and TOTAL_DEPTH must be integers, SECONDS a number");
    };
    let limit_bytes: u64 = std::env::var("WRITE_LIMIT_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16 << 30);
    let mut files = Vec::new();
    let mut targets = Vec::new();
    for (i, path) in args[4..].iter().enumerate() {
        let file = match OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_DIRECT)
            .open(path)
        {
            Ok(f) => f,
            Err(e) => return usage(&format!("{path}: {e}")),
        };
        let size_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
        targets.push(ShardTarget::over_prepared(
            file.as_raw_fd(),
            limit_bytes,
            0x7e57 + i as u64,
            size_bytes,
        ));
        files.push(file);
    }
    let load = Load {
        direction,
        pattern,
        request_bytes,
        depth,
    };
    match run(load, targets, seconds) {
        Ok((iops, bytes_per_s)) => {
            println!("{} {}", iops as u64, bytes_per_s as u64);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("meter_point: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `load` for `seconds` after the ramp; returns (IOPS, bytes/s) over that window.
fn run(load: Load, targets: Vec<ShardTarget>, seconds: f64) -> Result<(f64, f64), TuneError> {
    let cores = shards::available_cores().max(1);
    // Tune pins each shard to a CPU; UNPINNED=1 leaves them free to move, as fio's jobs are.
    let pin = std::env::var_os("UNPINNED").is_none();
    // BACKEND=aio runs the same loads through Linux AIO (no registration there), for A/B runs.
    let backend = match std::env::var("BACKEND").as_deref() {
        Ok("aio") => Backend::Aio,
        _ => Backend::Uring,
    };
    let factory = move |shard: u32, depth: u32| -> Result<EngineDevice, TuneError> {
        if pin {
            let _ = shards::pin_current_thread(shard as usize % cores);
        }
        EngineDevice::open(backend, depth).map_err(TuneError::RingOpen)
    };
    let never = || false;
    let mut meter = ShardedMeter::new(&factory, targets, 1024, 512, &never);
    // Tune registers buffers and files as `weir run` does; UNREGISTERED=1 takes the plain
    // path, for A/B runs.
    if std::env::var_os("UNREGISTERED").is_none() {
        meter = meter.with_registration(register_engine);
    }
    // The cross-check gives the meter fio's ramp, so both windows start alike.
    let ramp_ns = std::env::var("RAMP_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(RAMP_MS_DEFAULT)
        * 1_000_000;
    let end_ns = ramp_ns + (seconds * 1e9) as u64;
    let trace = std::env::var_os("SAMPLES").is_some();
    let mut first: Option<Sample> = None;
    let mut last = Sample::default();
    meter.run(&load, SAMPLE_NS, &mut |s: &Sample| {
        if first.is_none() && s.elapsed_ns >= ramp_ns {
            first = Some(*s);
        }
        if trace {
            let secs = (s.elapsed_ns - last.elapsed_ns).max(1) as f64 / 1e9;
            eprintln!(
                "{} {}",
                s.elapsed_ns / 1_000_000,
                ((s.bytes - last.bytes) as f64 / secs) as u64
            );
        }
        last = *s;
        if s.elapsed_ns >= end_ns {
            Control::Stop
        } else {
            Control::Continue
        }
    })?;
    let first = first.unwrap_or_default();
    let secs = (last.elapsed_ns - first.elapsed_ns).max(1) as f64 / 1e9;
    Ok((
        (last.ops - first.ops) as f64 / secs,
        (last.bytes - first.bytes) as f64 / secs,
    ))
}
