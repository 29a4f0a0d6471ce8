//! Aligned buffers for direct I/O, allocated once at start.
//!
//! A pool is one allocation cut into `count` buffers of `buffer_bytes` each; the hot path only
//! hands out indices, so no request allocates. The alignment is the larger of the filesystem's
//! DIO memory alignment and a page (see [`DioAlignment::buffer_align_bytes`]), and the buffer
//! size is rounded up to it so every buffer in the pool is aligned, not only the first.

use std::alloc::{alloc_zeroed, dealloc, Layout};

use crate::align::DioAlignment;

/// A fixed set of aligned, equally sized buffers. Not `Sync`: one shard owns it.
pub struct DmaBufferPool {
    base: *mut u8,
    layout: Layout,
    buffer_bytes: usize,
    count: usize,
    /// Indices of buffers not handed out; sized once, never grows.
    free: Vec<u32>,
}

// SAFETY: the pool owns its allocation exclusively; moving it to another thread (a shard that
// builds its pool before starting) moves that ownership with it.
unsafe impl Send for DmaBufferPool {}

/// Why a pool could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BufferError {
    /// `count * buffer_bytes` overflows or is zero.
    BadSize { count: usize, buffer_bytes: usize },
    /// The allocator refused (out of memory).
    OutOfMemory { total_bytes: usize },
}

impl std::fmt::Display for BufferError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BufferError::BadSize {
                count,
                buffer_bytes,
            } => write!(
                f,
                "cannot make {count} I/O buffers of {buffer_bytes} bytes: the size must be \
                 positive and the total must fit in memory; lower the request size or parallelism"
            ),
            BufferError::OutOfMemory { total_bytes } => write!(
                f,
                "out of memory allocating {total_bytes} bytes of I/O buffers; lower the request \
                 size or parallelism"
            ),
        }
    }
}

impl std::error::Error for BufferError {}

impl DmaBufferPool {
    /// `count` buffers of at least `buffer_bytes` each, aligned for `alignment`, zero-filled.
    pub fn new(
        count: usize,
        buffer_bytes: usize,
        alignment: &DioAlignment,
    ) -> Result<Self, BufferError> {
        let align = alignment.buffer_align_bytes();
        let bad = BufferError::BadSize {
            count,
            buffer_bytes,
        };
        if count == 0 || buffer_bytes == 0 || count > u32::MAX as usize {
            return Err(bad);
        }
        let rounded = buffer_bytes
            .div_ceil(align)
            .checked_mul(align)
            .ok_or(bad.clone())?;
        let total = rounded.checked_mul(count).ok_or(bad.clone())?;
        let layout = Layout::from_size_align(total, align).map_err(|_| bad)?;
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { alloc_zeroed(layout) };
        if base.is_null() {
            return Err(BufferError::OutOfMemory { total_bytes: total });
        }
        Ok(DmaBufferPool {
            base,
            layout,
            buffer_bytes: rounded,
            count,
            free: (0..count as u32).rev().collect(),
        })
    }

    /// The number of buffers.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Each buffer's size (the requested size rounded up to the alignment).
    pub fn buffer_bytes(&self) -> usize {
        self.buffer_bytes
    }

    /// The alignment every buffer start satisfies.
    pub fn align_bytes(&self) -> usize {
        self.layout.align()
    }

    /// The address of buffer `index`. Panics on an index out of range (a caller bug).
    pub fn ptr(&self, index: usize) -> *mut u8 {
        assert!(index < self.count, "buffer {index} of {}", self.count);
        // SAFETY: in bounds of the single allocation.
        unsafe { self.base.add(index * self.buffer_bytes) }
    }

    /// Buffer `index` as a slice. The caller must not hold it while an I/O on it is in flight.
    pub fn slice(&self, index: usize) -> &[u8] {
        // SAFETY: in bounds, initialised (zeroed at allocation), borrowed from &self.
        unsafe { std::slice::from_raw_parts(self.ptr(index), self.buffer_bytes) }
    }

    /// Buffer `index` as a mutable slice. The caller must not hold it while an I/O on it is in
    /// flight.
    pub fn slice_mut(&mut self, index: usize) -> &mut [u8] {
        // SAFETY: in bounds, initialised, uniquely borrowed through &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(index), self.buffer_bytes) }
    }

    /// Takes a free buffer's index, or None when all are in use.
    pub fn acquire(&mut self) -> Option<usize> {
        self.free.pop().map(|i| i as usize)
    }

    /// Returns a buffer taken with [`Self::acquire`].
    pub fn release(&mut self, index: usize) {
        debug_assert!(index < self.count && !self.free.contains(&(index as u32)));
        self.free.push(index as u32);
    }

    /// How many buffers are free.
    pub fn free_count(&self) -> usize {
        self.free.len()
    }
}

impl Drop for DmaBufferPool {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { dealloc(self.base, self.layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::align::AlignmentSource;

    fn align(bytes: u32) -> DioAlignment {
        DioAlignment {
            mem_align_bytes: bytes,
            offset_align_bytes: bytes,
            source: AlignmentSource::Default,
        }
    }

    #[test]
    fn every_buffer_is_aligned_and_distinct() {
        let mut pool = DmaBufferPool::new(5, 5000, &align(512)).expect("pool");
        assert_eq!(pool.buffer_bytes(), 8192);
        for i in 0..5 {
            assert_eq!(pool.ptr(i) as usize % 4096, 0);
        }
        pool.slice_mut(3).fill(0xab);
        assert!(pool.slice(2).iter().all(|&b| b == 0));
        assert!(pool.slice(3).iter().all(|&b| b == 0xab));
    }

    #[test]
    fn large_alignment_is_honoured() {
        let pool = DmaBufferPool::new(3, 4096, &align(65536)).expect("pool");
        assert_eq!(pool.align_bytes(), 65536);
        assert_eq!(pool.ptr(1) as usize % 65536, 0);
    }

    #[test]
    fn acquire_release_is_bounded() {
        let mut pool = DmaBufferPool::new(2, 4096, &align(512)).expect("pool");
        let a = pool.acquire().expect("a");
        let b = pool.acquire().expect("b");
        assert_ne!(a, b);
        assert_eq!(pool.acquire(), None);
        pool.release(a);
        assert_eq!(pool.acquire(), Some(a));
    }

    #[test]
    fn zero_sizes_are_errors() {
        assert!(DmaBufferPool::new(0, 4096, &align(512)).is_err());
        assert!(DmaBufferPool::new(1, 0, &align(512)).is_err());
        assert!(DmaBufferPool::new(usize::MAX / 2, 1 << 20, &align(512)).is_err());
    }
}
