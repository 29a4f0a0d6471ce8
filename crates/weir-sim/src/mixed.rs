//! A disk whose mixed read/write capacity has a boundary known in closed form, so a tool that
//! maps the disk (`weir explore`) can be checked against the truth.
//!
//! [`SimDisk`](crate::SimDisk) models channels, a rounded knee and read/write interference:
//! realistic, but its mixed boundary is only known by measuring it. [`MixedDisk`] is simpler on
//! purpose. Every request costs a share of one second of disk time,
//!
//! ```text
//! read  cost = 1 / read_iops            (x = read_iops_offered / read_iops)
//! write cost = len / write_bytes_per_s  (y = write_bytes_offered / write_bytes_per_s)
//! ```
//!
//! and is served FIFO by `channels` channels, holding one for `channels x cost`. The
//! [`Boundary`] decides how reads and writes share the channels, and so where the disk stops
//! keeping up:
//!
//! | boundary | capacity | Seastar's model |
//! |---|---|---|
//! | `HalfDuplex` | `x + y <= 1` (one pool) | `rate_factor` line |
//! | `FullDuplex` | `max(x, y) <= 1` (a pool per direction) | `duplex: true` |
//! | `Concave { exponent: a }` | `(x^a + y^a)^(1/a) <= 1`, `a < 1`: a mix costs more than its parts | none: weir's `concave` fit |
//! | `WriteCliff { .. }` | `x + y <= 1`, and with reads present `y <= limit / write_bytes_per_s` | none: weir's `capped` fit |
//!
//! The concave and cliff disks need to know the current mix: they keep an exponentially
//! weighted estimate of the offered read and write shares (time constant `averaging_ns`) and
//! scale each request's cost by it. Below the boundary latency stays near one service time;
//! above it the FIFO backlog grows without bound, so a latency goal far above the service time
//! puts the goal contour within a percent or two of the capacity boundary above.
//!
//! [`Stalls`] (optional) freeze the whole disk now and then, at a rate that rises as reads
//! approach the read limit: what a read meets on two vCPUs where the "disk" is the CPU (zram),
//! and its shard's thread is descheduled for milliseconds. The mean rates barely move, but a
//! window's p99 is 3-20x the usual whenever a stall falls in it (see `stall.rs`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use weir_model::device::{Device, DeviceError, Direction, IoCompletion, IoOp};

use crate::events::{self, Event};
use crate::stall::StallClock;
pub use crate::stall::Stalls;

/// How reads and writes share the disk (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Boundary {
    HalfDuplex,
    FullDuplex,
    /// `exponent` below 1 bends the boundary inwards (mixing costs extra).
    Concave {
        exponent: f64,
    },
    /// Half-duplex, but while reads are present and the write rate is above
    /// `mixed_write_limit_bytes_per_s`, reads take `read_slowdown` times longer: the disk
    /// survives pure writes and fails mixed loads above the limit (Diskplorer's HDD).
    WriteCliff {
        mixed_write_limit_bytes_per_s: f64,
        read_slowdown: f64,
    },
}

/// A [`MixedDisk`]'s parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct MixedConfig {
    pub seed: u64,
    /// Pure-read capacity, any read size (reads are IOPS-bound here).
    pub read_iops: f64,
    /// Pure-write capacity, any write size (writes are bandwidth-bound here).
    pub write_bytes_per_s: f64,
    pub channels: u32,
    pub boundary: Boundary,
    /// Service time varies uniformly within +- this fraction.
    pub jitter: f64,
    /// Time constant of the mix estimate (concave and cliff disks).
    pub averaging_ns: u64,
    pub queue_depth: u32,
    /// Freezes of the whole disk near the read limit (None: never).
    pub stalls: Option<Stalls>,
}

impl MixedConfig {
    /// 20K reads/s, 1 GB/s of writes, 4 channels: a 4 KiB read holds a channel 200 us, a
    /// 128 KiB write 524 us, so a goal of tens of milliseconds sits at the capacity boundary.
    pub fn new(seed: u64, boundary: Boundary) -> Self {
        MixedConfig {
            seed,
            read_iops: 20_000.0,
            write_bytes_per_s: 1e9,
            channels: 4,
            boundary,
            jitter: 0.1,
            averaging_ns: 50_000_000,
            queue_depth: 4096,
            stalls: None,
        }
    }

    /// Whether a load of `read_iops` reads and `write_bytes_per_s` of writes is inside the
    /// capacity boundary (the truth the tests compare a map with).
    pub fn holds(&self, read_iops: f64, write_bytes_per_s: f64) -> bool {
        read_iops <= self.read_iops && write_bytes_per_s <= self.max_write_bytes_per_s(read_iops)
    }

    /// The most write bandwidth the disk sustains beside `read_iops` reads.
    pub fn max_write_bytes_per_s(&self, read_iops: f64) -> f64 {
        let x = (read_iops / self.read_iops).max(0.0);
        if x > 1.0 {
            return 0.0;
        }
        let y = match self.boundary {
            Boundary::HalfDuplex => 1.0 - x,
            Boundary::FullDuplex => 1.0,
            Boundary::Concave { exponent } => {
                (1.0 - x.powf(exponent)).max(0.0).powf(1.0 / exponent)
            }
            Boundary::WriteCliff {
                mixed_write_limit_bytes_per_s,
                ..
            } => {
                let line = 1.0 - x;
                if read_iops > 0.0 {
                    line.min(mixed_write_limit_bytes_per_s / self.write_bytes_per_s)
                } else {
                    line
                }
            }
        };
        y * self.write_bytes_per_s
    }
}

/// The simulated disk; see the module documentation.
#[derive(Debug)]
pub struct MixedDisk {
    config: MixedConfig,
    rng: SmallRng,
    now_ns: u64,
    /// Busy-until time of each channel; `[reads, writes]` pools on a full-duplex disk,
    /// otherwise everything in pool 0.
    pools: [Vec<u64>; 2],
    /// Offered read and write shares of the disk (x and y), exponentially averaged.
    share_estimate: [f64; 2],
    estimate_at_ns: u64,
    submitted: Vec<IoOp>,
    events: BinaryHeap<Event>,
    sequence: u64,
    in_flight: u32,
    stall_clock: Option<StallClock>,
}

impl MixedDisk {
    pub fn new(config: MixedConfig) -> Self {
        let channels = config.channels.max(1) as usize;
        MixedDisk {
            rng: SmallRng::seed_from_u64(config.seed),
            stall_clock: config.stalls.map(|s| StallClock::new(s, config.seed)),
            pools: [vec![0; channels], vec![0; channels]],
            config,
            now_ns: 0,
            share_estimate: [0.0; 2],
            estimate_at_ns: 0,
            submitted: Vec::new(),
            events: BinaryHeap::new(),
            sequence: 0,
            in_flight: 0,
        }
    }

    pub fn config(&self) -> &MixedConfig {
        &self.config
    }

    /// Seconds of disk time one request costs before the mix is taken into account.
    fn base_cost_s(&self, direction: Direction, len_bytes: u64) -> f64 {
        match direction {
            Direction::Read => 1.0 / self.config.read_iops,
            Direction::Write => len_bytes as f64 / self.config.write_bytes_per_s,
        }
    }

    /// Adds a request to the mix estimate: each share is a rate of disk seconds per second,
    /// decayed with the configured time constant.
    fn note_offered(&mut self, direction: Direction, cost_s: f64) {
        let tau_s = self.config.averaging_ns.max(1) as f64 / 1e9;
        let dt_s = self.now_ns.saturating_sub(self.estimate_at_ns) as f64 / 1e9;
        let decay = (-dt_s / tau_s).exp();
        for share in &mut self.share_estimate {
            *share *= decay;
        }
        self.share_estimate[direction.index()] += cost_s / tau_s;
        self.estimate_at_ns = self.now_ns;
    }

    /// How much more a request costs in the current mix.
    fn mix_factor(&self, direction: Direction) -> f64 {
        let [x, y] = self.share_estimate;
        match self.config.boundary {
            Boundary::HalfDuplex | Boundary::FullDuplex => 1.0,
            Boundary::Concave { exponent } => {
                if x <= 0.0 || y <= 0.0 {
                    return 1.0;
                }
                // Scaling every cost by N_a(x, y) / (x + y) makes the busy share of the one
                // pool equal N_a(x, y): the disk saturates exactly on the concave boundary.
                let norm = (x.powf(exponent) + y.powf(exponent)).powf(1.0 / exponent);
                norm / (x + y)
            }
            Boundary::WriteCliff {
                mixed_write_limit_bytes_per_s,
                read_slowdown,
            } => {
                let write_bytes_per_s = y * self.config.write_bytes_per_s;
                if direction == Direction::Read
                    && x > 0.0
                    && write_bytes_per_s > mixed_write_limit_bytes_per_s
                {
                    read_slowdown
                } else {
                    1.0
                }
            }
        }
    }

    fn start(&mut self, op: IoOp) {
        let cost_s = self.base_cost_s(op.direction, u64::from(op.len_bytes));
        self.note_offered(op.direction, cost_s);
        let factor = self.mix_factor(op.direction);
        let jitter = if self.config.jitter > 0.0 {
            1.0 + self.rng.gen_range(-self.config.jitter..=self.config.jitter)
        } else {
            1.0
        };
        let channels = f64::from(self.config.channels.max(1));
        let service_ns = (channels * cost_s * factor * jitter * 1e9).max(1.0) as u64;
        let pool = match self.config.boundary {
            Boundary::FullDuplex => op.direction.index(),
            _ => 0,
        };
        // FIFO: the request takes the channel that frees first.
        let lane = &mut self.pools[pool];
        let (slot, free_at) = lane
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(_, t)| t)
            .unwrap_or((0, 0));
        let finish = free_at.max(self.now_ns) + service_ns;
        if let Some(channel) = lane.get_mut(slot) {
            *channel = finish;
        }
        self.sequence += 1;
        self.events.push(Reverse((
            finish,
            self.sequence,
            op.user_data,
            op.len_bytes as i32,
        )));
        self.in_flight += 1;
    }
    /// The read share of the mix estimate as it will have decayed by `at_ns`.
    fn read_share_at(&self, at_ns: u64) -> f64 {
        let tau_s = self.config.averaging_ns.max(1) as f64 / 1e9;
        let dt_s = at_ns.saturating_sub(self.estimate_at_ns) as f64 / 1e9;
        self.share_estimate[0] * (-dt_s / tau_s).exp()
    }

    fn next_stall_before(&mut self, until_ns: u64) -> Option<(u64, u64)> {
        let mut clock = self.stall_clock.take()?;
        let next = clock.next_before(until_ns, |at| self.read_share_at(at));
        self.stall_clock = Some(clock);
        next
    }

    /// Freezes the disk for `len_ns` from `at_ns`: every channel, and every request not yet
    /// complete, is `len_ns` later.
    fn stall(&mut self, at_ns: u64, len_ns: u64) {
        self.now_ns = self.now_ns.max(at_ns);
        for channel in self.pools.iter_mut().flatten() {
            *channel = (*channel).max(at_ns) + len_ns;
        }
        let events = std::mem::take(&mut self.events);
        self.events = events
            .into_iter()
            .map(|Reverse((finish, seq, user_data, result))| {
                let finish = if finish >= at_ns {
                    finish + len_ns
                } else {
                    finish
                };
                Reverse((finish, seq, user_data, result))
            })
            .collect();
    }
}

impl Device for MixedDisk {
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
        self.submitted.push(op);
        Ok(())
    }

    fn submit_and_wait(
        &mut self,
        min_complete: u32,
        deadline_ns: Option<u64>,
    ) -> Result<u32, DeviceError> {
        let ops = std::mem::take(&mut self.submitted);
        let submitted = ops.len() as u32;
        for op in ops {
            self.start(op);
        }
        let wanted = min_complete.min(self.in_flight) as usize;
        loop {
            let needed =
                (wanted > 0).then(|| events::nth_due_ns(&self.events, wanted, &mut Vec::new()));
            let until = match (needed, deadline_ns) {
                (Some(n), Some(d)) => n.min(d),
                (Some(n), None) => n,
                (None, Some(d)) if min_complete > 0 => d,
                _ => return Ok(submitted),
            };
            // A stall that starts before the wait ends delays what it waits for: apply it and
            // look again.
            match self.next_stall_before(until) {
                Some((at_ns, len_ns)) => self.stall(at_ns, len_ns),
                None => {
                    self.now_ns = self.now_ns.max(until);
                    return Ok(submitted);
                }
            }
        }
    }

    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        let moved = events::reap_due(&mut self.events, self.now_ns, out);
        self.in_flight -= moved as u32;
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truth_of_each_boundary() {
        let half = MixedConfig::new(1, Boundary::HalfDuplex);
        assert!((half.max_write_bytes_per_s(10_000.0) - 0.5e9).abs() < 1.0);
        let full = MixedConfig::new(1, Boundary::FullDuplex);
        assert!((full.max_write_bytes_per_s(19_000.0) - 1e9).abs() < 1.0);
        let concave = MixedConfig::new(1, Boundary::Concave { exponent: 0.5 });
        // (sqrt(x) + sqrt(y))^2 = 1 at x = 0.25 gives y = 0.25.
        assert!((concave.max_write_bytes_per_s(5_000.0) - 0.25e9).abs() < 1e3);
        let cliff = MixedConfig::new(
            1,
            Boundary::WriteCliff {
                mixed_write_limit_bytes_per_s: 3e8,
                read_slowdown: 50.0,
            },
        );
        assert_eq!(cliff.max_write_bytes_per_s(0.0), 1e9);
        assert!((cliff.max_write_bytes_per_s(1_000.0) - 3e8).abs() < 1.0);
        assert!((cliff.max_write_bytes_per_s(16_000.0) - 0.2e9).abs() < 1.0);
        assert!(cliff.holds(16_000.0, 1.9e8) && !cliff.holds(16_000.0, 2.1e8));
    }

    /// Drives the disk with evenly spaced reads and writes for one second and returns the
    /// completed (reads, write bytes).
    fn drive(config: MixedConfig, reads_per_s: f64, write_bytes_per_s: f64) -> (u64, u64) {
        let mut disk = MixedDisk::new(config);
        let write_len = 128 * 1024u32;
        let read_gap_ns = if reads_per_s > 0.0 {
            1e9 / reads_per_s
        } else {
            f64::INFINITY
        };
        let write_gap_ns = if write_bytes_per_s > 0.0 {
            f64::from(write_len) * 1e9 / write_bytes_per_s
        } else {
            f64::INFINITY
        };
        let (mut next_read, mut next_write) = (0.0f64, 0.0f64);
        let (mut reads, mut written) = (0u64, 0u64);
        let mut out = Vec::new();
        let end_ns = 1e9;
        while next_read.min(next_write) < end_ns {
            let (direction, len, at) = if next_read <= next_write {
                next_read += read_gap_ns;
                (Direction::Read, 4096, next_read - read_gap_ns)
            } else {
                next_write += write_gap_ns;
                (Direction::Write, write_len, next_write - write_gap_ns)
            };
            disk.submit_and_wait(1, Some(at as u64)).ok();
            disk.now_ns = disk.now_ns.max(at as u64);
            let op = crate::tests::op(u64::from(direction == Direction::Write), direction, 0, len);
            // SAFETY: the op carries no buffer (null), and the simulated disk never touches one.
            unsafe { disk.push(op) }.ok();
            out.clear();
            disk.reap(&mut out);
            for c in &out {
                if c.user_data == 1 {
                    written += c.result as u64;
                } else {
                    reads += 1;
                }
            }
        }
        disk.submit_and_wait(0, None).ok();
        // Count only what finished within the second.
        while let Some(Reverse((at, _, user_data, result))) = disk.events.pop() {
            if at <= end_ns as u64 {
                if user_data == 1 {
                    written += result as u64;
                } else {
                    reads += 1;
                }
            }
        }
        (reads, written)
    }

    #[test]
    fn concave_disk_keeps_up_inside_and_falls_behind_outside() {
        let config = MixedConfig::new(7, Boundary::Concave { exponent: 0.5 });
        // Inside: x = y = 0.2 (N = 0.8). Outside: x = y = 0.3 (N = 1.2).
        let (reads, written) = drive(config.clone(), 4_000.0, 2e8);
        assert!(reads as f64 >= 0.97 * 4_000.0, "{reads}");
        assert!(written as f64 >= 0.95 * 2e8, "{written}");
        let (reads, written) = drive(config, 6_000.0, 3e8);
        let done = reads as f64 / 6_000.0 * 0.5 + written as f64 / 3e8 * 0.5;
        assert!(
            done < 0.9,
            "kept up outside the boundary: {reads} reads, {written} bytes"
        );
    }
}
