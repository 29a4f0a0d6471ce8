//! The two [`Meter`]s: [`DeviceMeter`] drives one device on the caller's thread and samples on
//! the device's own clock (the simulated disk, where time is virtual), and [`ShardedMeter`]
//! runs one thread per shard, each with its own device from a factory, sampled on the wall
//! clock by the calling thread (the real disk: all shards load it at once).

use crate::drive::{drive, Counters, Register, ShardTarget};
use crate::error::TuneError;
use crate::meter::{Control, Load, Meter, Sample};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use weir_model::device::Device;

/// One device, one shard, the device's clock. Deterministic over the simulated disk.
pub struct DeviceMeter<D: Device> {
    device: D,
    target: ShardTarget,
    request_bytes_min: u32,
    /// Device-clock time of the last run, its drain included.
    last_wall_ns: Option<u64>,
}

impl<D: Device> DeviceMeter<D> {
    pub fn new(device: D, target: ShardTarget, request_bytes_min: u32) -> Self {
        DeviceMeter {
            device,
            target,
            request_bytes_min,
            last_wall_ns: None,
        }
    }

    pub fn target(&self) -> &ShardTarget {
        &self.target
    }
}

impl<D: Device> Meter for DeviceMeter<D> {
    fn shards(&self) -> u32 {
        1
    }

    fn depth_max(&self) -> u32 {
        self.device.capacity()
    }

    fn request_bytes_min(&self) -> u32 {
        self.request_bytes_min
    }

    fn run(
        &mut self,
        load: &Load,
        sample_interval_ns: u64,
        on_sample: &mut dyn FnMut(&Sample) -> Control,
    ) -> Result<(), TuneError> {
        let start_ns = self.device.now_ns();
        let mut next_ns = start_ns + sample_interval_ns;
        let mut tick = |now_ns: u64, c: &Counters| -> Result<Control, TuneError> {
            if now_ns < next_ns {
                return Ok(Control::Continue);
            }
            while next_ns <= now_ns {
                next_ns += sample_interval_ns;
            }
            Ok(on_sample(&Sample {
                elapsed_ns: now_ns - start_ns,
                ops: c.ops,
                bytes: c.bytes,
                latency_ns_sum: c.latency_ns_sum,
            }))
        };
        let result = drive(
            &mut self.device,
            load,
            load.depth,
            &mut self.target,
            None,
            &mut tick,
        );
        // The drain takes the device's time too: 128 requests of 1 MiB in flight on a
        // 300 MB/s disk take 0.43 s to complete after the last sample.
        self.last_wall_ns = Some(self.device.now_ns().saturating_sub(start_ns));
        result.map(|_| ())
    }

    fn last_run_wall_ns(&self) -> Option<u64> {
        self.last_wall_ns
    }
}

/// Makes shard `shard`'s device with room for `depth` requests in flight. Called on the shard's
/// own thread, so the device need not be `Send`.
pub type DeviceFactory<D> = dyn Fn(u32, u32) -> Result<D, TuneError> + Sync;

/// All shards at once, one thread and one device each, sampled on the wall clock.
pub struct ShardedMeter<'f, D: Device> {
    factory: &'f DeviceFactory<D>,
    targets: Vec<ShardTarget>,
    depth_max: u32,
    request_bytes_min: u32,
    interrupted: &'f (dyn Fn() -> bool + Sync),
    register: Option<Register<D>>,
    /// Wall time of the last run, threads started and joined.
    last_wall_ns: Option<u64>,
}

impl<'f, D: Device> ShardedMeter<'f, D> {
    /// `targets` holds one prepared file per shard; `interrupted` is polled by every shard
    /// (Ctrl-C must stop the load so the caller can remove the files).
    pub fn new(
        factory: &'f DeviceFactory<D>,
        targets: Vec<ShardTarget>,
        depth_max: u32,
        request_bytes_min: u32,
        interrupted: &'f (dyn Fn() -> bool + Sync),
    ) -> Self {
        ShardedMeter {
            factory,
            targets,
            depth_max,
            request_bytes_min,
            interrupted,
            register: None,
            last_wall_ns: None,
        }
    }

    /// Every shard registers its loop's buffers and file with `register` before each load
    /// (the real meter: [`crate::drive::register_engine`], as `weir run` does).
    pub fn with_registration(mut self, register: Register<D>) -> Self {
        self.register = Some(register);
        self
    }

    pub fn targets(&self) -> &[ShardTarget] {
        &self.targets
    }
}

/// Per-shard counters published by shard threads and summed by the sampler.
#[derive(Default)]
struct Published {
    ops: AtomicU64,
    bytes: AtomicU64,
    latency_ns_sum: AtomicU64,
}

/// `depth` requests spread as evenly as possible over `shards`.
pub fn split_depth(depth: u32, shards: u32) -> Vec<u32> {
    let shards = shards.max(1);
    (0..shards)
        .map(|i| depth / shards + u32::from(i < depth % shards))
        .collect()
}

impl<D: Device> Meter for ShardedMeter<'_, D> {
    fn shards(&self) -> u32 {
        self.targets.len() as u32
    }

    fn depth_max(&self) -> u32 {
        self.depth_max
    }

    fn request_bytes_min(&self) -> u32 {
        self.request_bytes_min
    }

    fn last_run_wall_ns(&self) -> Option<u64> {
        self.last_wall_ns
    }

    fn run(
        &mut self,
        load: &Load,
        sample_interval_ns: u64,
        on_sample: &mut dyn FnMut(&Sample) -> Control,
    ) -> Result<(), TuneError> {
        let started = Instant::now();
        let result = self.run_shards(load, sample_interval_ns, on_sample);
        self.last_wall_ns = Some(started.elapsed().as_nanos() as u64);
        result
    }
}

impl<D: Device> ShardedMeter<'_, D> {
    fn run_shards(
        &mut self,
        load: &Load,
        sample_interval_ns: u64,
        on_sample: &mut dyn FnMut(&Sample) -> Control,
    ) -> Result<(), TuneError> {
        let depths = split_depth(load.depth, self.shards());
        let published: Vec<Published> = depths.iter().map(|_| Published::default()).collect();
        let stop = AtomicBool::new(false);
        let factory = self.factory;
        let interrupted = self.interrupted;
        let register = self.register;
        std::thread::scope(|scope| {
            let mut handles = Vec::new();
            let shards = self.targets.iter_mut().zip(&depths).zip(&published);
            for (shard, ((target, depth), slot)) in shards.enumerate() {
                if *depth == 0 {
                    continue;
                }
                let (stop, depth) = (&stop, *depth);
                let shard = Shard {
                    index: shard as u32,
                    depth,
                    slot,
                    stop,
                    interrupted,
                    register,
                };
                handles.push(scope.spawn(move || -> Result<(), TuneError> {
                    let result = shard_thread(factory, target, load, &shard);
                    // A failed shard stops the others rather than leaving them loading the disk.
                    if result.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    result
                }));
            }
            sample_loop(
                &published,
                &stop,
                interrupted,
                sample_interval_ns,
                on_sample,
            );
            let mut first_error = None;
            for h in handles {
                let outcome = h.join().unwrap_or(Err(TuneError::ShardPanicked));
                if let Err(e) = outcome {
                    first_error.get_or_insert(e);
                }
            }
            match first_error {
                Some(e) => Err(e),
                None if interrupted() => Err(TuneError::Interrupted),
                None => Ok(()),
            }
        })
    }
}

/// What one shard thread shares with the sampler.
struct Shard<'a, D: Device> {
    index: u32,
    depth: u32,
    slot: &'a Published,
    stop: &'a AtomicBool,
    interrupted: &'a (dyn Fn() -> bool + Sync),
    register: Option<Register<D>>,
}

fn shard_thread<D: Device>(
    factory: &DeviceFactory<D>,
    target: &mut ShardTarget,
    load: &Load,
    shard: &Shard<'_, D>,
) -> Result<(), TuneError> {
    let (slot, stop, interrupted, depth) = (shard.slot, shard.stop, shard.interrupted, shard.depth);
    let mut device = factory(shard.index, depth)?;
    let mut tick = |_now_ns: u64, c: &Counters| -> Result<Control, TuneError> {
        slot.ops.store(c.ops, Ordering::Relaxed);
        slot.bytes.store(c.bytes, Ordering::Relaxed);
        slot.latency_ns_sum
            .store(c.latency_ns_sum, Ordering::Relaxed);
        if stop.load(Ordering::Relaxed) || interrupted() {
            return Ok(Control::Stop);
        }
        Ok(Control::Continue)
    };
    drive(&mut device, load, depth, target, shard.register, &mut tick)?;
    Ok(())
}

/// Sums the shards' counters every interval until `on_sample` says stop (or a shard failed).
fn sample_loop(
    published: &[Published],
    stop: &AtomicBool,
    interrupted: &(dyn Fn() -> bool + Sync),
    sample_interval_ns: u64,
    on_sample: &mut dyn FnMut(&Sample) -> Control,
) {
    let start = Instant::now();
    let mut next = Duration::from_nanos(sample_interval_ns);
    while !stop.load(Ordering::Relaxed) {
        if interrupted() {
            stop.store(true, Ordering::Relaxed);
            break;
        }
        let elapsed = start.elapsed();
        if elapsed < next {
            std::thread::sleep(next - elapsed);
            continue;
        }
        next += Duration::from_nanos(sample_interval_ns);
        let mut s = Sample {
            elapsed_ns: start.elapsed().as_nanos() as u64,
            ..Sample::default()
        };
        for p in published {
            s.ops += p.ops.load(Ordering::Relaxed);
            s.bytes += p.bytes.load(Ordering::Relaxed);
            s.latency_ns_sum += p.latency_ns_sum.load(Ordering::Relaxed);
        }
        if on_sample(&s) == Control::Stop {
            stop.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::split_depth;

    #[test]
    fn depth_splits_evenly_with_the_remainder_first() {
        assert_eq!(split_depth(5, 2), vec![3, 2]);
        assert_eq!(split_depth(1, 2), vec![1, 0]);
        assert_eq!(split_depth(8, 1), vec![8]);
    }
}
