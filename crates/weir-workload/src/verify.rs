//! Data verification: every written block says where it belongs and which write put it there.
//!
//! With `--verify`, each 512-byte block of every write carries a 32-byte header (magic, file
//! offset, write sequence, checksum) followed by filler derived from the offset and sequence.
//! The checksum covers the whole block with the checksum field zeroed. A read, and the final
//! pass over each file, decodes every block: a wrong magic or checksum is a torn or foreign
//! block, a wrong offset is a misdirected write, and a sequence older than the last completed
//! write of that block is a lost write. All-zero blocks are legal only where nothing was
//! written yet (a hole or an unwritten extent).

use std::fmt;

/// The unit of verification. Every request size is a multiple of it (DIO alignment is at least
/// 512 bytes, and `--verify` requires it in buffered mode too).
pub const VERIFY_BLOCK_BYTES: usize = 512;
const MAGIC: u64 = 0x5745_4952_5645_5246; // "WEIRVERF"
const HEADER_BYTES: usize = 32;

/// What a block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockState {
    /// Never written (all zeros).
    Zero,
    /// Written by write number `sequence`.
    Written { sequence: u64 },
}

/// A block that is not what weir wrote there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corruption {
    /// The block's offset in its file.
    pub offset_bytes: u64,
    pub expected: String,
    pub found: String,
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "block at offset {} (0x{:x}): expected {}, found {}",
            self.offset_bytes, self.offset_bytes, self.expected, self.found
        )
    }
}

/// Fills `buf` (a whole number of blocks) as write `sequence` at file offset `offset_bytes`.
pub fn encode(buf: &mut [u8], offset_bytes: u64, sequence: u64) {
    debug_assert_eq!(buf.len() % VERIFY_BLOCK_BYTES, 0);
    for (i, block) in buf.chunks_exact_mut(VERIFY_BLOCK_BYTES).enumerate() {
        let block_offset = offset_bytes + (i * VERIFY_BLOCK_BYTES) as u64;
        encode_block(block, block_offset, sequence);
    }
}

fn encode_block(block: &mut [u8], offset_bytes: u64, sequence: u64) {
    block[0..8].copy_from_slice(&MAGIC.to_le_bytes());
    block[8..16].copy_from_slice(&offset_bytes.to_le_bytes());
    block[16..24].copy_from_slice(&sequence.to_le_bytes());
    block[24..32].fill(0);
    let mut state = offset_bytes ^ sequence.rotate_left(32) ^ MAGIC;
    for word in block[HEADER_BYTES..].chunks_exact_mut(8) {
        word.copy_from_slice(&splitmix64(&mut state).to_le_bytes());
    }
    let sum = checksum(block);
    block[24..32].copy_from_slice(&sum.to_le_bytes());
}

/// Decodes the block at `offset_bytes` (its expected file offset).
pub fn decode_block(block: &[u8], offset_bytes: u64) -> Result<BlockState, Corruption> {
    let word = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&block[i * 8..i * 8 + 8]);
        u64::from_le_bytes(b)
    };
    let corrupt = |expected: &str, found: String| Corruption {
        offset_bytes,
        expected: expected.to_string(),
        found,
    };
    if word(0) != MAGIC {
        if block.iter().all(|b| *b == 0) {
            return Ok(BlockState::Zero);
        }
        return Err(corrupt(
            "a weir verify header",
            format!("magic 0x{:016x}", word(0)),
        ));
    }
    let stored_sum = word(3);
    let mut copy = [0u8; VERIFY_BLOCK_BYTES];
    copy.copy_from_slice(block);
    copy[24..32].fill(0);
    let sum = checksum(&copy);
    if sum != stored_sum {
        return Err(corrupt(
            &format!("checksum 0x{stored_sum:016x} (stored in the header)"),
            format!("checksum 0x{sum:016x} over the block's contents"),
        ));
    }
    if word(1) != offset_bytes {
        return Err(corrupt(
            &format!("header offset {offset_bytes}"),
            format!("header offset {} (a misdirected write)", word(1)),
        ));
    }
    Ok(BlockState::Written { sequence: word(2) })
}

/// A fast 64-bit checksum over 8-byte words (not cryptographic: it catches torn, stale and
/// misdirected blocks, not an adversary).
fn checksum(block: &[u8]) -> u64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
    for word in block.chunks_exact(8) {
        let mut b = [0u8; 8];
        b.copy_from_slice(word);
        h = (h ^ u64::from_le_bytes(b))
            .wrapping_mul(0xff51_afd7_ed55_8ccd)
            .rotate_left(29);
    }
    h ^ (h >> 32)
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The last completed write sequence of every block of one file (0: none known), used to
/// detect lost writes.
#[derive(Debug, Clone, Default)]
pub struct BlockLedger {
    sequences: Vec<u64>,
}

impl BlockLedger {
    pub fn new() -> Self {
        BlockLedger::default()
    }

    /// Records that write `sequence` covering `[offset, offset + len)` completed.
    pub fn record(&mut self, offset_bytes: u64, len_bytes: u64, sequence: u64) {
        let first = (offset_bytes / VERIFY_BLOCK_BYTES as u64) as usize;
        let count = (len_bytes / VERIFY_BLOCK_BYTES as u64) as usize;
        if self.sequences.len() < first + count {
            self.sequences.resize(first + count, 0);
        }
        for s in &mut self.sequences[first..first + count] {
            *s = (*s).max(sequence);
        }
    }

    /// The last completed write sequence of the block at `offset_bytes` (0: none).
    pub fn expected_sequence(&self, offset_bytes: u64) -> u64 {
        let index = (offset_bytes / VERIFY_BLOCK_BYTES as u64) as usize;
        self.sequences.get(index).copied().unwrap_or(0)
    }

    /// The bytes covered by blocks the ledger knows about.
    pub fn extent_bytes(&self) -> u64 {
        (self.sequences.len() * VERIFY_BLOCK_BYTES) as u64
    }

    /// Checks a buffer read from `offset_bytes` against what was written.
    pub fn check(&self, buf: &[u8], offset_bytes: u64) -> Result<(), Corruption> {
        for (i, block) in buf.chunks_exact(VERIFY_BLOCK_BYTES).enumerate() {
            let block_offset = offset_bytes + (i * VERIFY_BLOCK_BYTES) as u64;
            let state = decode_block(block, block_offset)?;
            let index = (block_offset / VERIFY_BLOCK_BYTES as u64) as usize;
            let expected = self.sequences.get(index).copied().unwrap_or(0);
            let found = match state {
                BlockState::Zero => 0,
                BlockState::Written { sequence } => sequence,
            };
            if found < expected {
                return Err(Corruption {
                    offset_bytes: block_offset,
                    expected: format!("write sequence {expected} or later"),
                    found: if found == 0 {
                        "zeros (the write was lost)".into()
                    } else {
                        format!("write sequence {found} (an older write: the newer one was lost)")
                    },
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut buf = vec![0u8; 4096];
        encode(&mut buf, 8192, 7);
        let ledger = {
            let mut l = BlockLedger::new();
            l.record(8192, 4096, 7);
            l
        };
        ledger.check(&buf, 8192).expect("intact");
        for (i, block) in buf.chunks_exact(VERIFY_BLOCK_BYTES).enumerate() {
            let state = decode_block(block, 8192 + (i * 512) as u64).expect("intact");
            assert_eq!(state, BlockState::Written { sequence: 7 });
        }
    }

    #[test]
    fn a_flipped_bit_is_reported_with_its_block_offset() {
        let mut buf = vec![0u8; 4096];
        encode(&mut buf, 0, 1);
        buf[1024 + 100] ^= 1;
        let e = BlockLedger::new().check(&buf, 0).expect_err("corrupt");
        assert_eq!(e.offset_bytes, 1024);
        assert!(e.expected.contains("checksum"), "{e}");
    }

    #[test]
    fn misdirected_and_lost_writes_are_caught() {
        let mut buf = vec![0u8; 512];
        encode(&mut buf, 4096, 3);
        let e = decode_block(&buf, 8192).expect_err("misdirected");
        assert!(e.found.contains("misdirected"), "{e}");

        let mut ledger = BlockLedger::new();
        ledger.record(0, 512, 5);
        let e = ledger.check(&[0u8; 512], 0).expect_err("lost");
        assert!(e.found.contains("lost"), "{e}");
        let mut old = vec![0u8; 512];
        encode(&mut old, 0, 4);
        assert!(ledger.check(&old, 0).is_err());
        let mut newer = vec![0u8; 512];
        encode(&mut newer, 0, 6);
        ledger
            .check(&newer, 0)
            .expect("a newer write is fine (still in flight when recorded)");
    }

    #[test]
    fn zeros_are_fine_where_nothing_was_written_and_garbage_is_not() {
        BlockLedger::new().check(&[0u8; 1024], 0).expect("holes");
        let e = BlockLedger::new()
            .check(&[0xabu8; 512], 0)
            .expect_err("garbage");
        assert!(e.expected.contains("header"), "{e}");
    }
}
