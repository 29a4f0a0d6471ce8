//! What written blocks contain when nobody checks them.
//!
//! Write benchmarks must not write data the layers below can shrink. On the development VM the
//! host under the virtual disk is content-sensitive: fio writing zero buffers ran ~1.15x its
//! default speed and fio with every buffer a duplicate (`dedupe_percentage=100`) ~0.8x, on the
//! same file in the same minutes. An earlier weir wrote one fixed pattern whose 4 KiB blocks
//! were all alike and re-sent the same few buffers for the whole run, so its writes were not
//! comparable with fio's (random buffers, scrambled per request).
//!
//! [`fill_incompressible`] fills a buffer once, at start, with pseudo-random bytes (xorshift:
//! no allocation, ~GB/s); [`stamp_blocks`] then writes the request's file offset and a sequence
//! number into the first 16 bytes of every 4 KiB block just before each write, so no two
//! blocks ever written are alike. That costs 32 stores per 128 KiB request, not a pass over
//! the data.

/// The granularity at which [`stamp_blocks`] makes written blocks unique (the usual
/// deduplication and filesystem block size).
pub const STAMP_BLOCK_BYTES: usize = 4096;

/// Fills `buf` with pseudo-random bytes from `seed` (xorshift64*; never all zero).
pub fn fill_incompressible(buf: &mut [u8], seed: u64) {
    // A zero state would stay zero; mix the seed so nearby seeds give unrelated streams.
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for chunk in buf.chunks_mut(8) {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let word = state.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
}

/// Fills every buffer of `pool` with incompressible bytes, each from its own stream (`seed`
/// mixed with the buffer's index), so no two buffers start alike.
pub fn fill_pool_incompressible(pool: &mut crate::buffers::DmaBufferPool, seed: u64) {
    for i in 0..pool.count() {
        fill_incompressible(pool.slice_mut(i), seed ^ i as u64);
    }
}

/// Stamps `offset_bytes + i * 4096` and `sequence` into the first 16 bytes of each 4 KiB
/// block `i` of `buf` (a shorter tail block gets what fits).
pub fn stamp_blocks(buf: &mut [u8], offset_bytes: u64, sequence: u64) {
    for (i, block) in buf.chunks_mut(STAMP_BLOCK_BYTES).enumerate() {
        let offset = offset_bytes.wrapping_add((i * STAMP_BLOCK_BYTES) as u64);
        let mut head = [0u8; 16];
        head[..8].copy_from_slice(&offset.to_le_bytes());
        head[8..].copy_from_slice(&sequence.to_le_bytes());
        let n = block.len().min(16);
        block[..n].copy_from_slice(&head[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn bytes_are_spread_evenly() {
        let mut buf = vec![0u8; 1 << 20];
        fill_incompressible(&mut buf, 7);
        let mut counts = [0u32; 256];
        for &b in &buf {
            counts[usize::from(b)] += 1;
        }
        // 4096 expected per value; a fixed or repeating pattern would be far off for some.
        let (min, max) = (counts.iter().min(), counts.iter().max());
        assert!(min >= Some(&3700) && max <= Some(&4500), "{min:?}..{max:?}");
    }

    #[test]
    fn seeds_give_different_streams() {
        let (mut a, mut b) = (vec![0u8; 4096], vec![0u8; 4096]);
        fill_incompressible(&mut a, 1);
        fill_incompressible(&mut b, 2);
        assert_ne!(a, b);
        fill_incompressible(&mut b, 1);
        assert_eq!(a, b, "a seed must reproduce its stream");
    }

    #[test]
    fn no_two_written_blocks_are_alike() {
        // Two buffers reused for eight requests, as the driver does: every block differs.
        let mut bufs = [vec![0u8; 16384], vec![0u8; 16384]];
        for (i, b) in bufs.iter_mut().enumerate() {
            fill_incompressible(b, i as u64);
        }
        let mut seen = HashSet::new();
        for request in 0..8u64 {
            let buf = &mut bufs[(request % 2) as usize];
            stamp_blocks(buf, request * 16384, request);
            for block in buf.chunks(STAMP_BLOCK_BYTES) {
                assert!(
                    seen.insert(block.to_vec()),
                    "request {request}: duplicate block"
                );
            }
        }
    }

    #[test]
    fn short_tail_blocks_are_stamped_without_overrun() {
        let mut buf = vec![0xffu8; 4096 + 10];
        stamp_blocks(&mut buf, 8192, 3);
        assert_eq!(&buf[..8], &8192u64.to_le_bytes());
        assert_eq!(&buf[8..16], &3u64.to_le_bytes());
        assert_eq!(&buf[4096..4104], &12288u64.to_le_bytes());
        assert_eq!(&buf[4104..4106], &[3, 0]);
    }
}
