//! Owned, aligned buffers: what direct I/O needs, and what an operation in flight owns so the
//! kernel never writes memory the caller could still touch.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use crate::Error;

/// Every buffer starts on a 4 KiB boundary and its capacity is a multiple of 4 KiB: enough
/// for direct I/O on every filesystem and block device Linux has.
pub const IO_BUF_ALIGN_BYTES: usize = 4096;

/// An owned, 4 KiB-aligned, zero-initialised byte buffer. An I/O takes it by value and gives it
/// back with the result, so it is never shared with the kernel and the caller at once.
///
/// Its *length* is what an I/O moves: a read fills `len()` bytes (and shortens the length to
/// what it read), a write writes `len()` bytes. The capacity is the length rounded up to 4 KiB.
///
/// ```
/// use weir_io::IoBuf;
///
/// let mut buf = IoBuf::zeroed(4096);
/// buf[..5].copy_from_slice(b"hello");
/// assert_eq!(buf.len(), 4096);
/// assert_eq!(buf.as_ptr() as usize % 4096, 0);
/// let copy = IoBuf::from_slice(&buf[..5]);
/// assert_eq!(&copy[..], b"hello");
/// ```
pub struct IoBuf {
    ptr: NonNull<u8>,
    len: usize,
    capacity: usize,
}

// SAFETY: IoBuf owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for IoBuf {}
// SAFETY: shared references only read.
unsafe impl Sync for IoBuf {}

impl IoBuf {
    /// A buffer of `len` zero bytes. Aborts like `Vec` if memory is exhausted; see
    /// [`Self::try_zeroed`] to get an error instead.
    pub fn zeroed(len: usize) -> IoBuf {
        match IoBuf::try_zeroed(len) {
            Ok(b) => b,
            Err(_) => std::alloc::handle_alloc_error(layout(len.max(1))),
        }
    }

    /// A buffer of `len` zero bytes, or [`Error::Alloc`].
    pub fn try_zeroed(len: usize) -> Result<IoBuf, Error> {
        let capacity = len
            .max(1)
            .checked_next_multiple_of(IO_BUF_ALIGN_BYTES)
            .ok_or(Error::Alloc { bytes: len })?;
        let layout = Layout::from_size_align(capacity, IO_BUF_ALIGN_BYTES)
            .map_err(|_| Error::Alloc { bytes: len })?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).ok_or(Error::Alloc { bytes: len })?;
        Ok(IoBuf { ptr, len, capacity })
    }

    /// A buffer holding a copy of `data`.
    pub fn from_slice(data: &[u8]) -> IoBuf {
        let mut buf = IoBuf::zeroed(data.len());
        buf.copy_from_slice(data);
        buf
    }

    /// The bytes an I/O moves.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the length is 0.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The allocation's size (the length rounded up to 4 KiB when created).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Sets the length, up to the capacity; bytes past the old length keep what they held
    /// (zero, or what an earlier I/O left). Lengths past the capacity are clamped to it.
    pub fn set_len(&mut self, len: usize) {
        self.len = len.min(self.capacity);
    }

    pub(crate) fn as_mut_ptr_raw(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

fn layout(capacity: usize) -> Layout {
    Layout::from_size_align(capacity, IO_BUF_ALIGN_BYTES).unwrap_or(Layout::new::<u8>())
}

impl Drop for IoBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in try_zeroed with this exact layout.
        unsafe { dealloc(self.ptr.as_ptr(), layout(self.capacity)) };
    }
}

impl Deref for IoBuf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: len <= capacity bytes, all initialised (zeroed at allocation).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for IoBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as for deref; the buffer is borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl std::fmt::Debug for IoBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IoBuf")
            .field("len", &self.len)
            .field("capacity", &self.capacity)
            .finish()
    }
}
