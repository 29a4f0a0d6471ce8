//! Checking data under `--verify`: block by block during the run, and a final pass over each
//! file after it.

use weir_engine::shard_loop::{Done, LoopError, Op, Outcome, ShardLoop};
use weir_model::device::{Device, Direction};

use crate::job_run::JobRun;
use crate::request::Failure;
use crate::verify::{decode_block, BlockLedger, BlockState, Corruption, VERIFY_BLOCK_BYTES};

/// Checks read data block by block; the first bad block, if any.
pub fn check_blocks(
    ledger: Option<&BlockLedger>,
    prefilled: bool,
    data: &[u8],
    offset_bytes: u64,
) -> Option<Corruption> {
    let empty = BlockLedger::new();
    let ledger = ledger.unwrap_or(&empty);
    let mut prefill = PrefillPage::default();
    for (i, block) in data.chunks_exact(VERIFY_BLOCK_BYTES).enumerate() {
        let block_offset = offset_bytes + (i * VERIFY_BLOCK_BYTES) as u64;
        let expected = ledger.expected_sequence(block_offset);
        match decode_block(block, block_offset) {
            Ok(BlockState::Written { sequence }) if sequence >= expected => {}
            Ok(BlockState::Zero) if expected == 0 => {}
            Err(_) if expected == 0 && prefilled && prefill.matches(block, block_offset) => {}
            Ok(_) => {
                if let Err(e) = ledger.check(block, block_offset) {
                    return Some(e);
                }
            }
            Err(e) => return Some(e),
        }
    }
    None
}

/// The engine's prefill data for one 4 KiB page, computed once per page rather than per block.
#[derive(Default)]
struct PrefillPage {
    base: Option<u64>,
    bytes: Vec<u8>,
}

impl PrefillPage {
    /// Whether a 512-byte block holds the engine's prefill data for its offset.
    fn matches(&mut self, block: &[u8], offset_bytes: u64) -> bool {
        let page = weir_engine::prepare::PREFILL_BLOCK_BYTES as u64;
        let base = offset_bytes / page * page;
        if self.base != Some(base) {
            self.bytes.resize(page as usize, 0);
            weir_engine::prefill_pattern(&mut self.bytes, base);
            self.base = Some(base);
        }
        let start = (offset_bytes - base) as usize;
        self.bytes
            .get(start..start + block.len())
            .is_some_and(|e| e == block)
    }
}

/// After the run: reads each verified file end to end, through the shard loop, and checks
/// every block.
pub fn final_verify_pass<D: Device>(
    lp: &mut ShardLoop<D>,
    job: &mut JobRun,
) -> Result<(), Failure> {
    if job.target.fd < 0 {
        return Ok(());
    }
    let extent = match &job.target.file {
        Some(file) => file.high_water_bytes().max(file.size_bytes()),
        None => job.target.data_bytes.unwrap_or(0),
    }
    .max(job.ledger.as_ref().map_or(0, BlockLedger::extent_bytes));
    let chunk = lp.buffers().pools()[job.pool_index].buffer_bytes() as u64;
    // The last read is rounded up to the loop's alignment: past the end it comes back short.
    let align = u64::from(lp.options().offset_align_bytes);
    let Some(buf) = lp.buffers_mut().acquire(job.pool_index) else {
        return Ok(());
    };
    let mut offset = 0;
    let result = loop {
        if offset >= extent {
            break Ok(());
        }
        let len = chunk.min((extent - offset).next_multiple_of(align)) as u32;
        let op = Op::new(0, Direction::Read, job.target.fd, offset, buf, len);
        let done = match read_one(lp, op) {
            Ok(done) => done,
            Err(detail) => break Err(Failure::Device { detail }),
        };
        if let Outcome::Failed { errno } = done.outcome {
            break Err(Failure::Io {
                job: job.job.name.clone(),
                detail: format!(
                    "verify read at offset {offset} in {}: {}",
                    job.target.file_name,
                    weir_engine::describe_errno(errno)
                ),
            });
        }
        let got = done.moved_bytes() as usize / VERIFY_BLOCK_BYTES * VERIFY_BLOCK_BYTES;
        let data = &lp.buffers().bytes(buf)[..got];
        job.blocks_checked += (got / VERIFY_BLOCK_BYTES) as u64;
        // Keep scanning after a bad block, within the data already read (the next read
        // stays aligned): report every corrupted block.
        let mut at = 0;
        while let Some(corruption) = check_blocks(
            job.ledger.as_ref(),
            job.target.prefilled,
            &data[at..],
            offset + at as u64,
        ) {
            at = (corruption.offset_bytes - offset) as usize + VERIFY_BLOCK_BYTES;
            job.record_corruption(corruption);
        }
        if got == 0 {
            break Ok(());
        }
        offset += got as u64;
    };
    // A read the device failed on stays in flight (the loop keeps its buffer).
    if lp.buffers().is_held(buf) {
        lp.buffers_mut().release(buf);
    }
    result
}

fn read_one<D: Device>(lp: &mut ShardLoop<D>, op: Op) -> Result<Done, String> {
    lp.push(op).map_err(|e| match e {
        LoopError::Device(e) => format!("verify pass: the I/O backend refused a read: {e}"),
        other => format!("verify pass: {other}"),
    })?;
    loop {
        lp.wait(1, None).map_err(|e| format!("verify pass: {e}"))?;
        if let Some(done) = lp.next_done() {
            return Ok(done);
        }
    }
}
