//! io_tester's `vectorized: true` with `iov_count: N`: every request of the job goes to the
//! kernel as one readv/writev-style request of N equal segments (io_uring READV/WRITEV,
//! AIO PREADV/PWRITEV) instead of one buffer.
//!
//! The segments of a request are consecutive slices of the request's own pool buffer, so
//! writes still carry the stamped payload and reads land where verification looks. The
//! table of segments is built once per job and shard and never moves, since the kernel reads
//! it after submission.

use weir_engine::buffers::DmaBufferPool;
use weir_model::device::{IoVec, IoVecs};

/// The segments of every buffer of one job's pool, `per_request` per buffer.
pub(crate) struct SegmentTable {
    iovecs: Box<[IoVec]>,
    per_request: u32,
}

impl SegmentTable {
    /// Splits each of `pool`'s buffers' first `request_bytes` into `iov_count` equal
    /// segments. The job was validated: `iov_count` divides `request_bytes`.
    pub(crate) fn new(pool: &DmaBufferPool, request_bytes: u32, iov_count: u32) -> SegmentTable {
        let segment_bytes = (request_bytes / iov_count) as usize;
        let iovecs = (0..pool.count())
            .flat_map(|buf| {
                let base = pool.ptr(buf);
                (0..iov_count as usize).map(move |i| IoVec {
                    base: base.wrapping_add(i * segment_bytes),
                    len: segment_bytes,
                })
            })
            .collect();
        SegmentTable {
            iovecs,
            per_request: iov_count,
        }
    }

    /// The segments of buffer `buf`, for [`weir_model::device::IoOp::vectored`].
    pub(crate) fn for_buffer(&self, buf: usize) -> IoVecs {
        let start = buf * self.per_request as usize;
        IoVecs {
            ptr: self.iovecs[start..].as_ptr(),
            count: self.per_request,
        }
    }
}

/// io_tester's alignment rule for a segment: 4096 bytes when the request is at least 4096
/// bytes, 512 otherwise; a segment must be a multiple of it and no smaller.
pub fn segment_alignment_bytes(request_bytes: u32) -> u32 {
    if request_bytes >= 4096 {
        4096
    } else {
        512
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_tile_each_buffer_in_order() {
        let alignment = weir_engine::DioAlignment {
            mem_align_bytes: 4096,
            offset_align_bytes: 4096,
            source: weir_engine::align::AlignmentSource::Default,
        };
        let pool = DmaBufferPool::new(3, 64 << 10, &alignment).expect("pool");
        let table = SegmentTable::new(&pool, 64 << 10, 4);
        for buf in 0..3 {
            let v = table.for_buffer(buf);
            assert_eq!(v.count, 4);
            // SAFETY: for_buffer points at `count` entries of the table, alive while it is.
            let segments = unsafe { std::slice::from_raw_parts(v.ptr, v.count as usize) };
            for (i, s) in segments.iter().enumerate() {
                assert_eq!(s.len, 16 << 10);
                assert_eq!(s.base, pool.ptr(buf).wrapping_add(i * (16 << 10)));
            }
        }
        assert_eq!(segment_alignment_bytes(4096), 4096);
        assert_eq!(segment_alignment_bytes(2048), 512);
    }
}
