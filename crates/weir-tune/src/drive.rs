//! The closed loop of one shard over any [`Device`]: keep `depth` requests in flight, re-issue
//! each one as it completes, count what finished. It is a source of ops for the engine's
//! [`ShardLoop`], which owns the buffers and everything in flight. The real meter runs one of these per shard
//! thread over an io_uring ring; the simulated meter runs one over the simulated disk.

use crate::error::TuneError;
use crate::meter::{Control, Load};
pub use crate::target::ShardTarget;
use std::os::fd::RawFd;
use weir_engine::backend::EngineDevice;
use weir_engine::buffers::DmaBufferPool;
use weir_engine::payload::{fill_pool_incompressible, stamp_blocks};
use weir_engine::shard_loop::{
    Done, Flow, LoopBuffers, LoopOptions, Next, Op, OpSource, Outcome, RunError, ShardLoop,
};
use weir_engine::{AlignmentSource, DioAlignment};
use weir_model::device::{Device, Direction};

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
        .map_err(TuneError::Buffers)?;
    if direction == Direction::Write {
        fill_pool_incompressible(&mut pool, seed);
    }
    Ok(pool)
}

/// Registers a shard loop's buffers and its file with the device before the load starts;
/// true when anything was registered.
pub type Register<D> = fn(&mut ShardLoop<&mut D>, RawFd) -> bool;

/// The engine's registration, as `weir run`'s loop does it: io_uring fixed buffers and files,
/// so no request pays for pinning its pages or looking up its file (1 MiB requests pin 256
/// pages each), and files that refuse non-blocking requests go straight to io-wq. Without it
/// the meter would measure the disk through a costlier path than the scheduler drives it on: on
/// zram, where the CPU is the limit, fio's 1 MiB reads ran ~1.3x faster with `--fixedbufs
/// --registerfiles`. A refused registration (the locked-memory limit, Linux AIO) leaves the
/// plain path.
pub fn register_engine(lp: &mut ShardLoop<&mut EngineDevice>, fd: RawFd) -> bool {
    let registered = lp.register(&[fd]);
    registered.buffers || registered.files
}

/// Runs `load` at `depth` requests in flight on one shard until `tick` says stop, then drains.
/// `tick` sees the device clock and the counters after every completion. `register`, when
/// given, registers the loop's buffers and the target's file first.
pub fn drive<D: Device>(
    dev: &mut D,
    load: &Load,
    depth: u32,
    target: &mut ShardTarget,
    register: Option<Register<D>>,
    tick: &mut dyn FnMut(u64, &Counters) -> Result<Control, TuneError>,
) -> Result<Counters, TuneError> {
    let depth = depth.min(dev.capacity()).max(1);
    target.begin_load(load, depth);
    let pool = buffers(
        depth,
        load.request_bytes,
        load.direction,
        u64::from(depth) ^ 0x5eed,
    )?;
    let options = LoopOptions {
        // Request offsets are multiples of the request size, itself a multiple of the
        // logical sector (512 bytes at least).
        offset_align_bytes: 512,
        // No cancel token: the meters poll theirs and stop through `tick`.
        ..LoopOptions::default()
    };
    let mut shard = ShardLoop::new(dev, vec![pool], options);
    if let Some(register) = register {
        register(&mut shard, target.fd);
    }
    let mut source = ClosedLoad {
        load,
        target,
        tick,
        counters: Counters::default(),
        stopping: false,
    };
    match shard.run(&mut source) {
        Ok(()) => Ok(source.counters),
        Err(RunError::Source(e)) => Err(e),
        Err(RunError::Loop(e)) => Err(TuneError::Ring(e)),
        // Not asked for (no token in the options), but a cancelled loop is an interrupt.
        Err(RunError::Interrupted) => Err(TuneError::Interrupted),
        // The engine's error is non-exhaustive: a cause added there keeps its own words.
        Err(other) => Err(TuneError::LoopStopped(Box::new(other))),
    }
}

/// A closed loop as a source of ops: every completion is counted and re-issued (through the
/// freed buffer) until `tick` says stop.
struct ClosedLoad<'a> {
    load: &'a Load,
    target: &'a mut ShardTarget,
    tick: &'a mut dyn FnMut(u64, &Counters) -> Result<Control, TuneError>,
    counters: Counters,
    /// Set once `tick` said stop or a request failed: what still completes is not counted.
    stopping: bool,
}

impl OpSource for ClosedLoad<'_> {
    type Error = TuneError;

    fn next_op(&mut self, _now_ns: u64, buffers: &mut LoopBuffers) -> Result<Next, TuneError> {
        if self.stopping {
            return Ok(Next::Finished);
        }
        let Some(buf) = buffers.acquire(0) else {
            return Ok(Next::WaitForCompletion);
        };
        let load = self.load;
        let offset = self.target.next_offset(load);
        if load.direction == Direction::Write {
            let sequence = self.target.count_write();
            let bytes = &mut buffers.bytes_mut(buf)[..load.request_bytes as usize];
            stamp_blocks(bytes, offset, sequence);
        }
        let op = Op::new(
            0,
            load.direction,
            self.target.fd,
            offset,
            buf,
            load.request_bytes,
        );
        Ok(Next::Op(op))
    }

    fn on_done(&mut self, done: Done, buffers: &mut LoopBuffers) -> Result<Flow, TuneError> {
        buffers.release(done.buf);
        check_completion(&done, self.load)?;
        if self.stopping {
            return Ok(Flow::Stop);
        }
        self.counters.ops += 1;
        self.counters.bytes += done.len_bytes;
        self.counters.latency_ns_sum += done.latency_ns();
        match (self.tick)(done.completed_at_ns, &self.counters)? {
            Control::Continue => Ok(Flow::Continue),
            Control::Stop => {
                self.stopping = true;
                Ok(Flow::Stop)
            }
        }
    }
}

/// A completion must carry exactly the requested length; anything else is named.
fn check_completion(done: &Done, load: &Load) -> Result<(), TuneError> {
    match done.outcome {
        Outcome::Full => Ok(()),
        Outcome::Failed { errno } => Err(TuneError::Io {
            direction: load.direction,
            request_bytes: load.request_bytes,
            errno,
        }),
        Outcome::Short { .. } | Outcome::EndOfFile => Err(TuneError::Short {
            direction: load.direction,
            request_bytes: load.request_bytes,
            moved_bytes: done.moved_bytes(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use weir_engine::backend::Backend;

    /// The real meter's loops register their pool and file with an io_uring ring, so tune
    /// measures the path `weir run` drives (fixed buffers and files).
    #[test]
    fn the_engine_registers_a_loops_buffers_and_file() {
        let Ok(mut device) = EngineDevice::open(Backend::Uring, 4) else {
            eprintln!("SKIP the_engine_registers_a_loops_buffers_and_file: no io_uring here");
            return;
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let file = std::fs::File::create(dir.path().join("data")).expect("create");
        let pool = buffers(4, 4096, Direction::Write, 1).expect("buffers");
        let mut shard = ShardLoop::new(&mut device, vec![pool], LoopOptions::default());
        assert!(register_engine(&mut shard, file.as_raw_fd()));
    }
}
