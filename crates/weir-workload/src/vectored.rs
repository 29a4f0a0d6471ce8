//! io_tester's `vectorized: true` with `iov_count: N`: every request of the job goes to the
//! kernel as one readv/writev-style request of N equal segments (io_uring READV/WRITEV,
//! AIO PREADV/PWRITEV) instead of one buffer.
//!
//! The segments of a request are consecutive slices of the request's own pool buffer, so
//! writes still carry the stamped payload and reads land where verification looks. The
//! table of segments is built once per job and shard and never moves, since the kernel reads
//! it after submission.

use weir_engine::shard_loop::{BufId, Segments, Span};

/// `iov_count` equal segments tiling the first `request_bytes` of `buf`, in order. The job
/// was validated: `iov_count` divides `request_bytes`. The shard loop keeps the segment
/// array the kernel reads until the request completes.
pub(crate) fn segments(buf: BufId, request_bytes: u32, iov_count: u32) -> Segments {
    let segment_bytes = request_bytes / iov_count;
    Segments::Many(
        (0..iov_count)
            .map(|i| Span {
                buf,
                offset_bytes: i * segment_bytes,
                len_bytes: segment_bytes,
            })
            .collect(),
    )
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
        let pool = weir_engine::DmaBufferPool::new(3, 64 << 10, &alignment).expect("pool");
        let mut buffers = weir_engine::LoopBuffers::new(vec![pool]);
        let buf = buffers.acquire(0).expect("buffer");
        let segments = segments(buf, 64 << 10, 4);
        assert_eq!(segments.len_bytes(), 64 << 10);
        for (i, s) in segments.spans().iter().enumerate() {
            assert_eq!(
                (s.buf, s.offset_bytes, s.len_bytes),
                (buf, i as u32 * (16 << 10), 16 << 10)
            );
        }
        assert_eq!(segment_alignment_bytes(4096), 4096);
        assert_eq!(segment_alignment_bytes(2048), 512);
    }
}
