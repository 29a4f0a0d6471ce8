//! One simulated disk shared by several shards, each on its own thread, in lockstep on one
//! virtual clock.
//!
//! A [`SimDisk`] belongs to one thread, so shards that each open one see a disk each. To ask
//! what several shards do to *one* disk (do they pile onto one RAID0 member?), every shard
//! gets a [`SharedSimHandle`] onto one [`SharedSim`]. Time is still virtual and moves only
//! when every shard that holds a handle waits in `submit_and_wait`: then the requests each
//! shard queued are started in shard order, the clock jumps to the earliest time a waiting
//! shard asked for (its completions or its deadline), and those shards run again. Which
//! requests start when therefore does not depend on how the threads were scheduled, and
//! the same seed gives the same run (as long as the shards share no other state whose
//! order matters: with the scheduler's shared budget, shards released at the same instant
//! reach it in thread order).
//!
//! The clock stands still until every one of the `shards` the disk was made for has opened
//! its handle and waits (so no shard's first requests can come late because its thread
//! started late); a shard that stops using the disk must drop its handle, or the others wait
//! for it. [`SharedSim::close_unopened`] releases a shard that will never open.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use weir_model::device::{Device, DeviceError, IoCompletion, IoOp};

use crate::events::{self, Event};
use crate::{DiskLoad, PendingOp, SimConfig, SimDisk};

/// The shared disk. Make one per run and a handle per shard.
#[derive(Debug)]
pub struct SharedSim {
    state: Mutex<State>,
    /// One per shard, so a step wakes only the shards it releases.
    wakeups: Vec<Condvar>,
}

#[derive(Debug)]
struct State {
    disk: SimDisk,
    shards: Vec<ShardState>,
    /// Shards not waiting (those that have not opened yet included): the clock stands still
    /// until this is 0.
    running: usize,
    /// Every request started, for deterministic completion order among equal times.
    sequence: u64,
}

#[derive(Debug, Default)]
struct ShardState {
    open: bool,
    /// The handle was dropped, or will never be opened.
    closed: bool,
    queued: Vec<PendingOp>,
    events: BinaryHeap<Event>,
    /// Some while the shard waits in `submit_and_wait`: (min_complete, deadline).
    waiting: Option<(u32, Option<u64>)>,
    submitted: u32,
}

impl SharedSim {
    /// A disk for up to `shards` handles.
    pub fn new(config: SimConfig, shards: usize) -> Arc<SharedSim> {
        Arc::new(SharedSim {
            state: Mutex::new(State {
                disk: SimDisk::new(config),
                shards: (0..shards).map(|_| ShardState::default()).collect(),
                running: shards,
                sequence: 0,
            }),
            wakeups: (0..shards).map(|_| Condvar::new()).collect(),
        })
    }

    /// Shard `shard`'s handle, taking at least `depth` requests in flight (the shard's ring
    /// is sized to what it needs, as a real one is; the disk's `queue_depth` only raises it).
    /// Errors: a shard out of range, or one already open.
    pub fn open(
        self: &Arc<Self>,
        shard: usize,
        depth: u32,
    ) -> Result<SharedSimHandle, SimOpenError> {
        let mut state = self.lock();
        let shards = state.shards.len();
        let Some(s) = state.shards.get_mut(shard) else {
            return Err(SimOpenError::NoSuchShard { shard, shards });
        };
        if s.open || s.closed {
            return Err(SimOpenError::AlreadyOpen { shard });
        }
        s.open = true;
        Ok(SharedSimHandle {
            sim: Arc::clone(self),
            shard,
            capacity: state.disk.config().queue_depth.max(depth),
        })
    }

    /// Shard `shard` will not open its handle (its setup failed): the others need not wait
    /// for it.
    pub fn close_unopened(&self, shard: usize) {
        let mut state = self.lock();
        let Some(s) = state.shards.get_mut(shard) else {
            return;
        };
        if s.open || s.closed {
            return;
        }
        s.closed = true;
        state.running -= 1;
        if state.running == 0 {
            state.step(&self.wakeups);
        }
    }

    /// The load served so far and the virtual time elapsed (ns).
    pub fn load(&self) -> (DiskLoad, u64) {
        let state = self.lock();
        (state.disk.load().clone(), state.disk.now_ns())
    }

    pub fn config(&self) -> SimConfig {
        self.lock().disk.config().clone()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A shard that panicked holding the lock leaves consistent data (every update is
        // complete before the guard drops), so carry on rather than cascade the panic.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl State {
    /// Everyone waits: start what was queued (in shard order), move the clock to the
    /// earliest wake-up asked for, and release the shards whose wait is over.
    fn step(&mut self, wakeups: &[Condvar]) {
        for shard in 0..self.shards.len() {
            if self.shards[shard].waiting.is_none() {
                continue;
            }
            let queued = std::mem::take(&mut self.shards[shard].queued);
            self.shards[shard].submitted = queued.len() as u32;
            for op in queued {
                let (result, at) = self.disk.serve_op(&op);
                self.sequence += 1;
                self.shards[shard]
                    .events
                    .push(Reverse((at, self.sequence, op.user_data, result)));
            }
        }
        let now = self.disk.now_ns();
        let targets: Vec<Option<u64>> = self.shards.iter().map(|s| s.wake_at(now)).collect();
        let Some(next) = targets.iter().flatten().min().copied() else {
            return;
        };
        self.disk.advance_to(next);
        for (shard, target) in targets.iter().enumerate() {
            if target.is_some_and(|t| t <= next) {
                self.shards[shard].waiting = None;
                self.running += 1;
                wakeups[shard].notify_one();
            }
        }
    }
}

impl ShardState {
    /// When this waiting shard's `submit_and_wait` returns, by the `Device` contract: once
    /// `min_complete` (capped at what is in flight) have completed or at the deadline; at
    /// once when there is nothing to wait for.
    fn wake_at(&self, now_ns: u64) -> Option<u64> {
        let (min_complete, deadline) = self.waiting?;
        let wanted = (min_complete as usize).min(self.events.len());
        if wanted == 0 {
            let next_event = self.events.peek().map(|e| e.0 .0);
            return Some(match deadline {
                Some(d) if min_complete > 0 => d.max(now_ns),
                // An empty poll takes a poll's time (see `POLL_NS`).
                None if min_complete == 0 && self.submitted == 0 => {
                    crate::poll_until(now_ns, next_event)
                }
                _ => now_ns,
            });
        }
        let done = events::nth_due_ns(&self.events, wanted, &mut Vec::new()).max(now_ns);
        Some(deadline.map_or(done, |d| d.max(now_ns).min(done)))
    }
}

/// One shard's view of the shared disk. Dropping it lets the others run on without it.
#[derive(Debug)]
pub struct SharedSimHandle {
    sim: Arc<SharedSim>,
    shard: usize,
    capacity: u32,
}

impl Device for SharedSimHandle {
    fn now_ns(&self) -> u64 {
        self.sim.lock().disk.now_ns()
    }

    fn capacity(&self) -> u32 {
        self.capacity
    }

    unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError> {
        let mut state = self.sim.lock();
        let s = &mut state.shards[self.shard];
        if s.events.len() + s.queued.len() >= self.capacity as usize {
            return Err(DeviceError::QueueFull);
        }
        s.queued.push(PendingOp::from(&op));
        Ok(())
    }

    fn submit_and_wait(
        &mut self,
        min_complete: u32,
        deadline_ns: Option<u64>,
    ) -> Result<u32, DeviceError> {
        let mut state = self.sim.lock();
        state.shards[self.shard].waiting = Some((min_complete, deadline_ns));
        state.running -= 1;
        if state.running == 0 {
            state.step(&self.sim.wakeups);
        }
        while state.shards[self.shard].waiting.is_some() {
            state = self.sim.wakeups[self.shard]
                .wait(state)
                .unwrap_or_else(|p| p.into_inner());
        }
        Ok(state.shards[self.shard].submitted)
    }

    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        let mut state = self.sim.lock();
        let now = state.disk.now_ns();
        events::reap_due(&mut state.shards[self.shard].events, now, out)
    }
}

impl Drop for SharedSimHandle {
    fn drop(&mut self) {
        let mut state = self.sim.lock();
        let s = &mut state.shards[self.shard];
        s.open = false;
        s.closed = true;
        s.queued.clear();
        s.events.clear();
        let was_waiting = s.waiting.take().is_some();
        if !was_waiting {
            state.running -= 1;
        }
        if state.running == 0 {
            state.step(&self.sim.wakeups);
        }
    }
}

/// Why [`SharedSim::open`] gave no handle.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SimOpenError {
    /// The disk was made for `shards` shards and `shard` is not one of them.
    NoSuchShard { shard: usize, shards: usize },
    /// The shard already opened its handle (or gave it up with `close_unopened`).
    AlreadyOpen { shard: usize },
}

impl std::fmt::Display for SimOpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimOpenError::NoSuchShard { shard, shards } => write!(
                f,
                "the simulated disk was made for {shards} shard(s); shard {shard} is not one"
            ),
            SimOpenError::AlreadyOpen { shard } => {
                write!(f, "shard {shard} already had the simulated disk open")
            }
        }
    }
}

impl std::error::Error for SimOpenError {}

#[cfg(test)]
#[path = "shared_tests.rs"]
mod tests;
