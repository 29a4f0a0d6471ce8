//! The closed loop of one shard over any [`Device`]: keep `depth` requests in flight, re-issue
//! each one as it completes, count what finished. The real meter runs one of these per shard
//! thread over an io_uring ring; the simulated meter runs one over the simulated disk.

use crate::error::TuneError;
use crate::meter::{Control, Load};
pub use crate::target::ShardTarget;
use weir_engine::buffers::DmaBufferPool;
use weir_engine::payload::{fill_pool_incompressible, stamp_blocks};
use weir_engine::{AlignmentSource, DioAlignment};
use weir_model::device::{Device, DeviceError, Direction, IoCompletion, IoFlags, IoOp};

/// Direct I/O buffers are aligned to 4 KiB (a multiple of every logical sector in use).
const BUFFER_ALIGNMENT: DioAlignment = DioAlignment {
    mem_align_bytes: 4096,
    offset_align_bytes: 4096,
    source: AlignmentSource::Default,
};

/// Completed work so far on one shard.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counters {
    pub ops: u64,
    pub bytes: u64,
    pub latency_ns_sum: u64,
}

/// `count` direct-I/O buffers of `len` bytes, filled with incompressible bytes, so a device
/// that compresses cannot flatter the write figures (each write also stamps its blocks with
/// its offset and a sequence number in `push`, so no two written blocks are alike and a
/// deduplicating host cannot either: fio measured 0.79x with duplicate buffers on this
/// project's VM, see `weir_engine::payload`).
/// Reads get their buffers unfilled: the disk overwrites them, and filling 1 MiB x 128 per
/// shard would only delay the first requests of a read measurement.
fn buffers(
    count: u32,
    len: u32,
    direction: Direction,
    seed: u64,
) -> Result<DmaBufferPool, TuneError> {
    let mut pool = DmaBufferPool::new(count as usize, len as usize, &BUFFER_ALIGNMENT)
        .map_err(|e| TuneError::Runtime(format!("I/O buffers: {e}; lower the queue depth")))?;
    if direction == Direction::Write {
        fill_pool_incompressible(&mut pool, seed);
    }
    Ok(pool)
}

/// Runs `load` at `depth` requests in flight on one shard until `tick` says stop, then drains.
/// `tick` sees the device clock and the counters after every batch of completions.
pub fn drive<D: Device>(
    dev: &mut D,
    load: &Load,
    depth: u32,
    target: &mut ShardTarget,
    tick: &mut dyn FnMut(u64, &Counters) -> Result<Control, TuneError>,
) -> Result<Counters, TuneError> {
    let depth = depth.min(dev.capacity()).max(1);
    target.begin_load(load, depth);
    let req = load.request_bytes;
    let mut buffers = buffers(depth, req, load.direction, u64::from(depth) ^ 0x5eed)?;
    let mut submitted_ns = vec![0u64; depth as usize];
    let mut counters = Counters::default();
    let mut in_flight: u32 = 0;
    for slot in 0..depth {
        if let Err(e) = push(dev, load, target, &mut buffers, slot, &mut submitted_ns) {
            // Requests already queued may still reach the kernel: never free their memory.
            std::mem::forget(buffers);
            return Err(e);
        }
        in_flight += 1;
    }
    let mut stopping = false;
    let mut done: Vec<IoCompletion> = Vec::with_capacity(depth as usize);
    let mut failure: Option<TuneError> = None;
    while in_flight > 0 {
        if let Err(e) = dev.submit_and_wait(1, None) {
            // The kernel may still own in-flight buffers: leak them rather than free them.
            std::mem::forget(buffers);
            return Err(device_error(e));
        }
        done.clear();
        dev.reap(&mut done);
        for c in &done {
            in_flight -= 1;
            let slot = c.user_data as u32;
            if let Err(e) = check_completion(c, load) {
                failure.get_or_insert(e);
                stopping = true;
            }
            if !stopping {
                counters.ops += 1;
                counters.bytes += u64::from(req);
                counters.latency_ns_sum += c
                    .completed_at_ns
                    .saturating_sub(submitted_ns[slot as usize]);
                if let Err(e) = push(dev, load, target, &mut buffers, slot, &mut submitted_ns) {
                    failure.get_or_insert(e);
                    stopping = true;
                } else {
                    in_flight += 1;
                }
            }
        }
        if !stopping {
            match tick(dev.now_ns(), &counters) {
                Ok(Control::Continue) => {}
                Ok(Control::Stop) => stopping = true,
                Err(e) => {
                    failure.get_or_insert(e);
                    stopping = true;
                }
            }
        }
    }
    drop(buffers);
    match failure {
        Some(e) => Err(e),
        None => Ok(counters),
    }
}

fn push<D: Device>(
    dev: &mut D,
    load: &Load,
    target: &mut ShardTarget,
    buffers: &mut DmaBufferPool,
    slot: u32,
    submitted_ns: &mut [u64],
) -> Result<(), TuneError> {
    let offset = target.next_offset(load);
    if load.direction == Direction::Write {
        let sequence = target.count_write();
        let bytes = &mut buffers.slice_mut(slot as usize)[..load.request_bytes as usize];
        stamp_blocks(bytes, offset, sequence);
    }
    let buf = buffers.ptr(slot as usize);
    // Both ends of the request are aligned before it leaves: the offset to the request size
    // (a multiple of the logical sector), the buffer to 4 KiB.
    debug_assert_eq!(offset % u64::from(load.request_bytes), 0);
    debug_assert_eq!(buf as usize % buffers.align_bytes(), 0);
    submitted_ns[slot as usize] = dev.now_ns();
    dev.push(IoOp {
        user_data: u64::from(slot),
        direction: load.direction,
        fd: target.fd,
        offset_bytes: offset,
        len_bytes: load.request_bytes,
        buf,
        flags: IoFlags::default(),
        vectored: None,
    })
    .map_err(device_error)
}

fn device_error(e: DeviceError) -> TuneError {
    TuneError::Runtime(format!("the I/O ring failed: {e}"))
}

/// A completion must carry exactly the requested length; anything else is named.
fn check_completion(c: &IoCompletion, load: &Load) -> Result<(), TuneError> {
    let what = crate::meter::direction_name(load.direction);
    if c.result == load.request_bytes as i32 {
        return Ok(());
    }
    if c.result < 0 {
        let errno = -c.result;
        let hint = match errno {
            libc::ENOSPC => "the filesystem is full: free space or use a smaller --size",
            libc::EINVAL => "the filesystem refused this direct I/O size or alignment",
            libc::EIO => "the device reported an I/O error: check dmesg",
            libc::EAGAIN => "the kernel could not take the request without blocking",
            libc::EROFS => "the filesystem is read-only",
            _ => "unexpected error from the kernel",
        };
        return Err(TuneError::Runtime(format!(
            "{what} of {} bytes failed: {} ({hint})",
            load.request_bytes,
            std::io::Error::from_raw_os_error(errno)
        )));
    }
    Err(TuneError::Runtime(format!(
        "short {what}: {} of {} bytes (the test file shrank or the device is at its end)",
        c.result, load.request_bytes
    )))
}
