//! weir-sim: a seeded, deterministic simulated disk behind `weir_model::device::Device`.
//!
//! Time is virtual: it moves only inside `submit_and_wait`, straight to the next completion or
//! the caller's deadline, so a ten-minute run takes as long as its events do to compute, and the
//! same seed always gives the same completions at the same nanoseconds.
//!
//! # The disk model
//!
//! Each member disk (one, or several in RAID0) has `channels` internal channels fed from one
//! FIFO. A request occupies `k = clamp(len / channel_stripe_bytes, 1, channels)` channels for
//! its *service time* and completes `fixed_latency` after leaving them (controller and bus
//! latency that overlaps with other requests):
//!
//! ```text
//! unit    = p-norm(1/iops, len/bandwidth) = ((1/iops)^p + (len/bw)^p)^(1/p)   (per direction)
//! service = channels / k * unit * jitter * slowdown(t) * interference
//! ```
//!
//! With all channels busy the disk therefore does `1/unit` requests per second — the rates in
//! the config — and an idle disk answers in `fixed_latency + channels * unit`. The p-norm
//! (`shape_p`, default 4) makes the knee between the IOPS-bound and the bandwidth-bound regime
//! round, as real disks do, instead of the sharp `max()` the scheduler's model assumes.
//!
//! - *Read/write interference*: a read that starts while any channel serves a write takes
//!   `read_write_interference` times longer (flash reads stuck behind programs).
//! - *Physical sector*: a write whose offset or length is not a multiple of the true
//!   `physical_sector_bytes` pays a read-modify-write: one extra read unit per partial sector at
//!   each end, and its length is rounded out to whole sectors. The disk may *report* a different
//!   (wrong) size, as some NVMe firmware does; `reported_physical_sector_bytes` is what a
//!   prober reads, the penalty always follows the truth.
//! - *Slow-downs*: scripted windows during which service times are multiplied (garbage
//!   collection, a noisy neighbour).
//! - *RAID0*: `raid0_members` disks striped in `raid0_chunk_bytes` chunks; a request spanning
//!   chunks is served by each member in part and completes when the last part does.
//!
//! Requests must be aligned to the logical sector (512 B by default) in offset and length, as
//! with O_DIRECT; others complete with `-EINVAL`. Buffers are never touched.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use weir_model::device::{Device, DeviceError, Direction, IoCompletion, IoOp};

use events::Event;

mod disk_file;
mod events;
pub mod mixed;
mod shared;
mod stall;

pub use disk_file::{DiskFileError, SimDiskFile};
pub use shared::{SharedSim, SharedSimHandle, SimOpenError};

const EINVAL: i32 = 22;

/// Virtual time one empty poll takes. A poll is `submit_and_wait(0, None)` that submits
/// nothing (a busy-polling loop, io_tester's `sleep_type: busyloop`); if it took no time, a
/// loop polling until a timer would never reach the timer, since virtual time only moves
/// inside `submit_and_wait`.
pub const POLL_NS: u64 = 1_000;

/// Where an empty poll at `now_ns` leaves the clock: one poll later, or at the next
/// completion if that comes first (it is then ready).
pub(crate) fn poll_until(now_ns: u64, next_event_ns: Option<u64>) -> u64 {
    let poll_end = now_ns.saturating_add(POLL_NS);
    next_event_ns.map_or(poll_end, |at| at.clamp(now_ns, poll_end))
}

/// One direction's capability.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimRates {
    pub iops: f64,
    pub bytes_per_sec: f64,
}

/// A scripted slow-down: from `at_ns` for `duration_ns`, service times are multiplied by `factor`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slowdown {
    pub at_ns: u64,
    pub duration_ns: u64,
    pub factor: f64,
}

/// Everything about a simulated disk. Start from a preset and change what a test needs.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    pub seed: u64,
    /// Internal parallelism of each member disk.
    pub channels: u32,
    /// A request spreads over one channel per this many bytes (up to all channels), so large
    /// requests use the disk's parallelism by themselves, as on real flash.
    pub channel_stripe_bytes: u64,
    /// Latency added after service, overlapping with other requests.
    pub fixed_latency_ns: u64,
    /// Filesystem work per write that adds latency without occupying the disk, varying
    /// uniformly within +-50% (allocating a sparse file's blocks, converting unwritten
    /// extents on completion: ~200-300 us per 128 KiB write on this project's XFS). It makes
    /// a write's latency a poor measure of how long it held the disk. 0 in the presets.
    pub write_overhead_ns: u64,
    pub read: SimRates,
    pub write: SimRates,
    /// Roundness of the knee between IOPS- and bandwidth-bound (see the crate docs).
    pub shape_p: f64,
    /// Service time varies uniformly within +- this fraction.
    pub jitter: f64,
    /// Reads starting while a write is in service take this many times longer.
    pub read_write_interference: f64,
    pub logical_sector_bytes: u32,
    /// The true physical sector: misaligned writes below it pay read-modify-write.
    pub physical_sector_bytes: u32,
    /// What the disk claims its physical sector is (may lie).
    pub reported_physical_sector_bytes: u32,
    /// Requests that may be in flight (`Device::capacity`).
    pub queue_depth: u32,
    pub slowdowns: Vec<Slowdown>,
    /// RAID0 members (1 = a single disk); each member has the rates above.
    pub raid0_members: u32,
    pub raid0_chunk_bytes: u64,
    /// Completion inside submission, as zram under io_uring: the submitting thread does each
    /// request's work itself (service time on `channels` CPUs), so `submit_and_wait` returns
    /// only when its whole batch is served and every request of the batch completes at that
    /// moment. A lone request's latency is its own CPU time, but the first request of a
    /// batch of 100 reads as 100 requests' worth: a latency that holds the batch. Throughput
    /// is flat above `channels` requests in flight. false in the presets.
    pub inline_completion: bool,
}

impl SimConfig {
    /// Roughly this project's virtio NVMe-backed disk: ~85K 4 KiB random-read IOPS at QD32,
    /// ~41K at QD4, ~88 us at QD1, ~1.75 GB/s of 128 KiB writes.
    pub fn nvme_like(seed: u64) -> Self {
        SimConfig {
            seed,
            channels: 4,
            channel_stripe_bytes: 32 << 10,
            fixed_latency_ns: 40_000,
            write_overhead_ns: 0,
            read: SimRates {
                iops: 85_000.0,
                bytes_per_sec: 1.9e9,
            },
            write: SimRates {
                iops: 60_000.0,
                bytes_per_sec: 1.75e9,
            },
            shape_p: 4.0,
            jitter: 0.1,
            read_write_interference: 1.5,
            logical_sector_bytes: 512,
            physical_sector_bytes: 4096,
            reported_physical_sector_bytes: 4096,
            queue_depth: 1024,
            slowdowns: Vec::new(),
            raid0_members: 1,
            raid0_chunk_bytes: 512 << 10,
            inline_completion: false,
        }
    }

    /// A SATA SSD: one channel path, ~50K read IOPS, ~500 MB/s, NCQ depth 32.
    pub fn slow_sata(seed: u64) -> Self {
        SimConfig {
            channels: 2,
            fixed_latency_ns: 60_000,
            read: SimRates {
                iops: 50_000.0,
                bytes_per_sec: 5.2e8,
            },
            write: SimRates {
                iops: 35_000.0,
                bytes_per_sec: 4.6e8,
            },
            read_write_interference: 2.0,
            queue_depth: 32,
            ..Self::nvme_like(seed)
        }
    }

    /// This project's virtio disk under writes to a fresh sparse file on XFS: each 128 KiB
    /// write holds the disk ~60 us (a per-request cost: the disk does ~17K such writes, ~2.1
    /// GB/s, while 1 MiB writes reach ~3 GB/s) and waits ~250 us more for filesystem work
    /// that delays no one else (`write_overhead_ns`). A model measured with 4 KiB and 1 MiB
    /// requests (as `weir tune` does) therefore prices these writes ~20% too cheap, and their
    /// latency overstates how long they held the disk.
    pub fn virtio_sparse_writes(seed: u64) -> Self {
        SimConfig {
            write: SimRates {
                iops: 17_000.0,
                bytes_per_sec: 3.0e9,
            },
            write_overhead_ns: 250_000,
            ..Self::nvme_like(seed)
        }
    }

    /// A CPU-bound device that completes inline (`inline_completion`), as zram does: two
    /// CPUs, ~500 K 4 KiB reads and ~300 K writes a second (the p-norm of the IOPS and the
    /// bandwidth), no fixed latency. A lone 4 KiB read takes ~4 us; a batch of 128 completes
    /// together after ~256 us.
    pub fn cpu_inline(seed: u64) -> Self {
        SimConfig {
            channels: 2,
            channel_stripe_bytes: 1 << 30,
            fixed_latency_ns: 0,
            read: SimRates {
                iops: 600_000.0,
                bytes_per_sec: 2.4e9,
            },
            write: SimRates {
                iops: 350_000.0,
                bytes_per_sec: 1.4e9,
            },
            read_write_interference: 1.0,
            inline_completion: true,
            ..Self::nvme_like(seed)
        }
    }

    /// Adds a slow-down window.
    pub fn with_slowdown(mut self, at_ns: u64, duration_ns: u64, factor: f64) -> Self {
        self.slowdowns.push(Slowdown {
            at_ns,
            duration_ns,
            factor,
        });
        self
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Channel {
    busy_until_ns: u64,
    serving_write: bool,
}

/// What the disk needs of a request: an `IoOp` without its buffer pointers, which the
/// simulated disk never touches (so the disk is `Send` and may be shared between threads).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PendingOp {
    user_data: u64,
    direction: Direction,
    offset_bytes: u64,
    len_bytes: u32,
}

impl From<&IoOp> for PendingOp {
    fn from(op: &IoOp) -> Self {
        PendingOp {
            user_data: op.user_data,
            direction: op.direction,
            offset_bytes: op.offset_bytes,
            len_bytes: op.len_bytes,
        }
    }
}

/// What one member disk of the array (the only one, without RAID0) served.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MemberLoad {
    /// Request parts served (a request split at chunk boundaries counts on each member).
    pub ops: u64,
    pub bytes: u64,
    /// Channel time used, summed over the member's channels, in nanoseconds: divided by
    /// `channels x elapsed` it is the member's busy share.
    pub channel_busy_ns: u64,
}

/// The load the disk saw, per member, for layout questions (does a striped array spread it?).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskLoad {
    pub members: Vec<MemberLoad>,
    /// Requests that crossed a RAID0 chunk boundary and were served in parts.
    pub split_requests: u64,
    /// Requests served in one piece.
    pub whole_requests: u64,
    /// Writes not aligned to the true physical sector, which paid a read-modify-write
    /// (whatever sector the disk reports).
    pub rmw_writes: u64,
}

/// The simulated disk. See the crate documentation.
#[derive(Debug)]
pub struct SimDisk {
    config: SimConfig,
    rng: SmallRng,
    now_ns: u64,
    members: Vec<Vec<Channel>>,
    submitted: Vec<PendingOp>,
    events: BinaryHeap<Event>,
    sequence: u64,
    in_flight: u32,
    completed_ops: u64,
    scratch: Vec<u64>,
    load: DiskLoad,
}

impl SimDisk {
    /// A disk from a config (see the presets on `SimConfig`).
    pub fn new(config: SimConfig) -> Self {
        let load = DiskLoad {
            members: vec![MemberLoad::default(); config.raid0_members.max(1) as usize],
            ..DiskLoad::default()
        };
        let members = (0..config.raid0_members.max(1))
            .map(|_| vec![Channel::default(); config.channels.max(1) as usize])
            .collect();
        SimDisk {
            rng: SmallRng::seed_from_u64(config.seed),
            config,
            now_ns: 0,
            members,
            submitted: Vec::new(),
            events: BinaryHeap::new(),
            sequence: 0,
            in_flight: 0,
            completed_ops: 0,
            scratch: Vec::new(),
            load,
        }
    }

    /// `SimDisk::new(SimConfig::nvme_like(seed))`.
    pub fn nvme_like(seed: u64) -> Self {
        Self::new(SimConfig::nvme_like(seed))
    }

    /// `SimDisk::new(SimConfig::slow_sata(seed))`.
    pub fn slow_sata(seed: u64) -> Self {
        Self::new(SimConfig::slow_sata(seed))
    }

    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// The physical sector size the disk claims (what a sysfs prober would read).
    pub fn reported_physical_sector_bytes(&self) -> u32 {
        self.config.reported_physical_sector_bytes
    }

    pub fn logical_sector_bytes(&self) -> u32 {
        self.config.logical_sector_bytes
    }

    /// Requests completed since the disk was built.
    pub fn completed_ops(&self) -> u64 {
        self.completed_ops
    }

    /// The load served so far, per member.
    pub fn load(&self) -> &DiskLoad {
        &self.load
    }

    /// Requests in flight (submitted, not yet reaped).
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Moves the clock forward without I/O (a test's think time).
    pub fn advance_to(&mut self, at_ns: u64) {
        self.now_ns = self.now_ns.max(at_ns);
    }

    fn slowdown_at(&self, t_ns: u64) -> f64 {
        self.config
            .slowdowns
            .iter()
            .filter(|s| t_ns >= s.at_ns && t_ns - s.at_ns < s.duration_ns)
            .map(|s| s.factor)
            .product()
    }

    /// Time one channel-free request of `len` occupies the disk per unit of parallelism.
    fn unit_ns(&self, direction: Direction, len_bytes: u64) -> f64 {
        let rates = match direction {
            Direction::Read => self.config.read,
            Direction::Write => self.config.write,
        };
        let op = 1e9 / rates.iops;
        let bytes = len_bytes as f64 * 1e9 / rates.bytes_per_sec;
        let p = self.config.shape_p;
        if p.is_finite() {
            (op.powf(p) + bytes.powf(p)).powf(1.0 / p)
        } else {
            op.max(bytes)
        }
    }

    /// Serves `len` bytes of `direction` on one member, starting no earlier than now; returns
    /// the completion time.
    fn serve(
        &mut self,
        member: usize,
        direction: Direction,
        len_bytes: u64,
        rmw_reads: u32,
    ) -> u64 {
        let channels = self.config.channels.max(1) as f64;
        let mut unit = self.unit_ns(direction, len_bytes);
        if rmw_reads > 0 {
            let sector = u64::from(self.config.physical_sector_bytes);
            unit += f64::from(rmw_reads) * self.unit_ns(Direction::Read, sector);
        }
        let jitter = if self.config.jitter > 0.0 {
            1.0 + self.rng.gen_range(-self.config.jitter..=self.config.jitter)
        } else {
            1.0
        };
        let stripes = len_bytes.div_ceil(self.config.channel_stripe_bytes.max(1));
        let k = stripes.clamp(1, u64::from(self.config.channels.max(1))) as usize;
        // The k channels that free up first (FIFO: the request starts when all k are free).
        let lane = &mut self.members[member];
        lane.sort_unstable_by_key(|c| c.busy_until_ns);
        let start = lane[k - 1].busy_until_ns.max(self.now_ns);
        let writes_busy = lane
            .iter()
            .any(|c| c.serving_write && c.busy_until_ns > start);
        let interference = if direction == Direction::Read && writes_busy {
            self.config.read_write_interference
        } else {
            1.0
        };
        let slowdown = self.slowdown_at(start);
        let service = channels / k as f64 * unit * jitter * interference * slowdown;
        let finish = start + service.max(1.0) as u64;
        let load = &mut self.load.members[member];
        load.ops += 1;
        load.bytes += len_bytes;
        load.channel_busy_ns += (service.max(1.0) as u64) * k as u64;
        for channel in &mut self.members[member][..k] {
            *channel = Channel {
                busy_until_ns: finish,
                serving_write: direction == Direction::Write,
            };
        }
        let overhead = if direction == Direction::Write && self.config.write_overhead_ns > 0 {
            let spread = self.rng.gen_range(0.5..=1.5);
            (self.config.write_overhead_ns as f64 * spread) as u64
        } else {
            0
        };
        finish + (self.config.fixed_latency_ns as f64 * self.slowdown_at(start)) as u64 + overhead
    }

    /// Number of partial physical sectors a write touches (0, 1 or 2).
    fn rmw_sectors(&self, op: &PendingOp) -> u32 {
        let sector = u64::from(self.config.physical_sector_bytes.max(1));
        let start = op.offset_bytes;
        let end = op.offset_bytes + u64::from(op.len_bytes);
        let head = start % sector != 0;
        let tail = end % sector != 0 && (end / sector != start / sector || !head);
        u32::from(head) + u32::from(tail)
    }

    fn start(&mut self, op: PendingOp) {
        let result_and_time = self.serve_op(&op);
        self.sequence += 1;
        self.events.push(Reverse((
            result_and_time.1,
            self.sequence,
            op.user_data,
            result_and_time.0,
        )));
        self.in_flight += 1;
    }

    /// Serves a whole batch inside the submission (`inline_completion`): the clock moves to
    /// the moment the last request of the batch is served, and every request of the batch
    /// completes then.
    fn serve_inline(&mut self, ops: Vec<PendingOp>) {
        // (completion time, result) of each request as its CPU time is served.
        let served: Vec<(u64, i32)> = ops
            .iter()
            .map(|op| {
                let (result, at_ns) = self.serve_op(op);
                (at_ns, result)
            })
            .collect();
        let batch_end_ns = served.iter().map(|s| s.0).max().unwrap_or(self.now_ns);
        for (op, (_, result)) in ops.iter().zip(served) {
            self.sequence += 1;
            self.events
                .push(Reverse((batch_end_ns, self.sequence, op.user_data, result)));
            self.in_flight += 1;
        }
        self.advance_to(batch_end_ns);
    }

    /// Serves one request starting now: (result, completion time).
    pub(crate) fn serve_op(&mut self, op: &PendingOp) -> (i32, u64) {
        let logical = u64::from(self.config.logical_sector_bytes.max(1));
        let len = u64::from(op.len_bytes);
        if len == 0 || op.offset_bytes % logical != 0 || len % logical != 0 {
            (-EINVAL, self.now_ns + 1_000)
        } else {
            let rmw = if op.direction == Direction::Write {
                self.rmw_sectors(op)
            } else {
                0
            };
            if rmw > 0 {
                self.load.rmw_writes += 1;
            }
            let sector = u64::from(self.config.physical_sector_bytes.max(1));
            let served_len = if rmw > 0 {
                let first = op.offset_bytes / sector * sector;
                (op.offset_bytes + len).div_ceil(sector) * sector - first
            } else {
                len
            };
            (op.len_bytes as i32, self.serve_striped(op, served_len, rmw))
        }
    }

    fn serve_striped(&mut self, op: &PendingOp, len_bytes: u64, rmw: u32) -> u64 {
        let members = self.members.len() as u64;
        if members == 1 {
            self.load.whole_requests += 1;
            return self.serve(0, op.direction, len_bytes, rmw);
        }
        let chunk = self.config.raid0_chunk_bytes.max(1);
        let mut offset = op.offset_bytes;
        let end = op.offset_bytes.saturating_add(len_bytes);
        let mut done = 0;
        let mut first = true;
        while offset < end {
            let piece_end = ((offset / chunk) + 1) * chunk;
            let piece = piece_end.min(end) - offset;
            let member = ((offset / chunk) % members) as usize;
            let extra = if first { rmw } else { 0 };
            done = done.max(self.serve(member, op.direction, piece, extra));
            first = false;
            offset += piece;
        }
        if (end - 1) / chunk != op.offset_bytes / chunk {
            self.load.split_requests += 1;
        } else {
            self.load.whole_requests += 1;
        }
        done
    }
}

impl Device for SimDisk {
    fn now_ns(&self) -> u64 {
        self.now_ns
    }

    fn capacity(&self) -> u32 {
        self.config.queue_depth
    }

    unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError> {
        if self.in_flight + self.submitted.len() as u32 >= self.config.queue_depth {
            return Err(DeviceError::QueueFull);
        }
        self.submitted.push(PendingOp::from(&op));
        Ok(())
    }

    fn submit_and_wait(
        &mut self,
        min_complete: u32,
        deadline_ns: Option<u64>,
    ) -> Result<u32, DeviceError> {
        let ops: Vec<PendingOp> = std::mem::take(&mut self.submitted);
        let submitted = ops.len() as u32;
        if self.config.inline_completion {
            self.serve_inline(ops);
        } else {
            for op in ops {
                self.start(op);
            }
        }
        let wanted = min_complete.min(self.in_flight);
        if wanted == 0 {
            if min_complete > 0 {
                if let Some(deadline) = deadline_ns {
                    self.advance_to(deadline);
                }
            } else if submitted == 0 && deadline_ns.is_none() {
                let next_event = self.events.peek().map(|e| e.0 .0);
                self.advance_to(poll_until(self.now_ns, next_event));
            }
            return Ok(submitted);
        }
        // The time by which `wanted` requests will have completed.
        let needed_at = events::nth_due_ns(&self.events, wanted as usize, &mut self.scratch);
        match deadline_ns {
            Some(deadline) if deadline < needed_at => self.advance_to(deadline),
            _ => self.advance_to(needed_at),
        }
        Ok(submitted)
    }

    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        let moved = events::reap_due(&mut self.events, self.now_ns, out);
        self.in_flight -= moved as u32;
        self.completed_ops += moved as u64;
        moved
    }
}

#[cfg(test)]
mod tests;
