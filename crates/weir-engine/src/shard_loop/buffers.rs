//! The loop's buffers: pools whose every buffer has one owner at a time, named by handle.
//!
//! A [`BufId`] names one buffer of one pool; it carries no pointer, so holding one grants
//! nothing by itself. Each buffer is in one of three states, checked (in release builds too)
//! on every access:
//!
//! | state | who may touch the bytes | how it is entered |
//! |---|---|---|
//! | free | nobody | [`LoopBuffers::release`], or at start |
//! | held | the source, through [`LoopBuffers::bytes`] / [`LoopBuffers::bytes_mut`] | [`LoopBuffers::acquire`], or the last completion using it |
//! | in flight (n ops) | the kernel only | each op pushed on it; several pieces of one request may share a buffer |
//!
//! So a source cannot read or refill a buffer the kernel is still writing, nor return it to
//! the pool early: the mistakes `mem::forget` guarded against by hand before the loop existed.

use crate::buffers::DmaBufferPool;

/// A buffer of the loop's pools: `pool` is the index of the pool given to the loop, `index`
/// the buffer within it. Copyable because ownership is tracked by the pools, not the handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BufId {
    pool: u16,
    index: u32,
}

impl BufId {
    /// The pool this buffer belongs to (the order the pools were given in).
    pub fn pool(self) -> usize {
        usize::from(self.pool)
    }

    /// The buffer's index within its pool.
    pub fn index(self) -> usize {
        self.index as usize
    }
}

/// A buffer's state; `InFlight(n)` counts the ops at the device that use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Free,
    Held,
    InFlight(u32),
}

/// The pools a loop owns, and the state of every buffer in them.
pub struct LoopBuffers {
    pools: Vec<DmaBufferPool>,
    states: Vec<Vec<State>>,
}

impl LoopBuffers {
    /// Takes ownership of `pools` (at most 65,536). Buffers handed out by a pool before it
    /// came here are not tracked: give the loop pools with every buffer free.
    pub fn new(pools: Vec<DmaBufferPool>) -> LoopBuffers {
        assert!(pools.len() <= usize::from(u16::MAX) + 1, "too many pools");
        let states = pools.iter().map(|p| vec![State::Free; p.count()]).collect();
        LoopBuffers { pools, states }
    }

    /// The pools, in the order given (for sizes, alignment and buffer registration).
    pub fn pools(&self) -> &[DmaBufferPool] {
        &self.pools
    }

    /// Takes a free buffer of pool `pool`, or None when all its buffers are taken.
    pub fn acquire(&mut self, pool: usize) -> Option<BufId> {
        let index = self.pools.get_mut(pool)?.acquire()?;
        let state = &mut self.states[pool][index];
        assert_eq!(
            *state,
            State::Free,
            "pool {pool} buffer {index} handed out twice"
        );
        *state = State::Held;
        Some(BufId {
            pool: pool as u16,
            index: index as u32,
        })
    }

    /// Gives a held buffer back to its pool. Panics if an op still uses it: freeing memory the
    /// kernel writes into is the bug this type exists to stop.
    pub fn release(&mut self, buf: BufId) {
        let state = self.state_mut(buf);
        assert_eq!(*state, State::Held, "release of {buf:?} in state {state:?}");
        *state = State::Free;
        self.pools[buf.pool()].release(buf.index());
    }

    /// How many buffers of pool `pool` are free.
    pub fn free_count(&self, pool: usize) -> usize {
        self.pools.get(pool).map_or(0, DmaBufferPool::free_count)
    }

    /// The bytes of a held buffer. Panics if it is free or in flight.
    pub fn bytes(&self, buf: BufId) -> &[u8] {
        self.assert_held(buf);
        self.pools[buf.pool()].slice(buf.index())
    }

    /// The bytes of a held buffer, to fill before a write. Panics if it is free or in flight.
    pub fn bytes_mut(&mut self, buf: BufId) -> &mut [u8] {
        self.assert_held(buf);
        self.pools[buf.pool()].slice_mut(buf.index())
    }

    /// Whether `buf` is held by the source (not free, not in flight).
    pub fn is_held(&self, buf: BufId) -> bool {
        self.state(buf) == State::Held
    }

    /// Whether `buf` is in its pool (not acquired).
    pub fn is_free(&self, buf: BufId) -> bool {
        self.state(buf) == State::Free
    }

    /// Whether any buffer is at the device.
    pub(crate) fn any_in_flight(&self) -> bool {
        self.states
            .iter()
            .flatten()
            .any(|s| matches!(s, State::InFlight(_)))
    }

    /// The address of `len_bytes` at `offset_bytes` into `buf`, checked to lie inside it.
    pub(crate) fn span_ptr(&self, buf: BufId, offset_bytes: u32, len_bytes: u32) -> *mut u8 {
        let pool = &self.pools[buf.pool()];
        let end = u64::from(offset_bytes) + u64::from(len_bytes);
        assert!(
            end <= pool.buffer_bytes() as u64,
            "{len_bytes} bytes at {offset_bytes} overrun the {}-byte buffer {buf:?}",
            pool.buffer_bytes()
        );
        pool.ptr(buf.index()).wrapping_add(offset_bytes as usize)
    }

    /// The buffer's alignment (every buffer start in its pool satisfies it).
    pub(crate) fn align_bytes(&self, buf: BufId) -> usize {
        self.pools[buf.pool()].align_bytes()
    }

    /// One more op at the device uses `buf`.
    pub(crate) fn pin(&mut self, buf: BufId) {
        let state = self.state_mut(buf);
        *state = match *state {
            State::Held => State::InFlight(1),
            State::InFlight(n) => State::InFlight(n + 1),
            State::Free => panic!("op on {buf:?}, which was never acquired or was released"),
        };
    }

    /// An op using `buf` completed.
    pub(crate) fn unpin(&mut self, buf: BufId) {
        let state = self.state_mut(buf);
        *state = match *state {
            State::InFlight(1) => State::Held,
            State::InFlight(n) => State::InFlight(n - 1),
            other => panic!("completion on {buf:?} in state {other:?}"),
        };
    }

    /// Gives the pools back, every buffer free again. Only when nothing is in flight.
    pub(crate) fn into_pools(mut self) -> Vec<DmaBufferPool> {
        assert!(!self.any_in_flight(), "pools taken back with I/O in flight");
        for (p, states) in self.states.iter().enumerate() {
            for (i, s) in states.iter().enumerate() {
                if *s == State::Held {
                    self.pools[p].release(i);
                }
            }
        }
        std::mem::take(&mut self.pools)
    }

    /// Leaks the pools: the device failed with requests still in the kernel, which may yet
    /// write into them, so their memory must never be reused.
    pub(crate) fn leak(&mut self) {
        // The states stay: buffers in flight read as in flight forever, so nothing releases
        // or touches them.
        std::mem::forget(std::mem::take(&mut self.pools));
    }

    fn state(&self, buf: BufId) -> State {
        *self
            .states
            .get(buf.pool())
            .and_then(|s| s.get(buf.index()))
            .unwrap_or_else(|| panic!("{buf:?} is not a buffer of this loop"))
    }

    fn state_mut(&mut self, buf: BufId) -> &mut State {
        self.states
            .get_mut(buf.pool())
            .and_then(|s| s.get_mut(buf.index()))
            .unwrap_or_else(|| panic!("{buf:?} is not a buffer of this loop"))
    }

    fn assert_held(&self, buf: BufId) {
        let state = self.state(buf);
        assert_eq!(state, State::Held, "access to {buf:?} in state {state:?}");
    }
}
