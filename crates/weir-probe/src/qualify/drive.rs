//! Qualify's requests on the engine's shard loop. The loop owns the ring or AIO context, the
//! buffers and everything in flight (it drains before anything is freed, on an error too); a
//! test says which requests to send and reads back what the loop measured: each submitting
//! call's voluntary context switches and time ([`SubmitFacts`]) and each completion's named
//! outcome, from which the EAGAIN count under RWF_NOWAIT comes.

use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;

use weir_engine::shard_loop::{
    Done, Flow, LoopBuffers, LoopOptions, Next, Op, OpSource, Outcome, RunError, ShardLoop,
    SubmitFacts, SubmitPolicy,
};
use weir_engine::{dio_alignment_fd, Backend, DmaBufferPool, EngineDevice};
use weir_model::device::{Direction, IoFlags};

use super::file::scratch_file;
use super::{QualifyError, QualifyOptions, Workload};

/// What the buffers hold: a recognisable pattern rather than zeros, so no layer can shortcut
/// zero writes.
const PATTERN: u8 = 0x5a;

/// The requests of one test: `ios` requests of `request_bytes`, front to back from offset 0,
/// in batches of `depth` — the batch goes to the kernel in one submitting call, and the next
/// batch only once every request of this one completed (fsqual's pattern).
pub(super) struct Plan {
    pub backend: Backend,
    pub direction: Direction,
    pub fd: RawFd,
    pub request_bytes: u32,
    pub ios: u64,
    pub depth: u32,
    /// Send with RWF_NOWAIT; a request refused with EAGAIN is sent again without the flag
    /// (so the file keeps the shape the next request expects) and counted.
    pub nowait: bool,
}

/// One test's requests, before its scratch file exists.
#[derive(Debug, Clone, Copy)]
pub(super) struct Spec {
    pub backend: Backend,
    /// Picks the file's layout, and reads for [`Workload::Read`] (writes otherwise).
    pub workload: Workload,
    /// Requests to send; rounded up to whole batches of `depth`.
    pub ios: u64,
    pub depth: u32,
    /// Open the file with O_DSYNC.
    pub dsync: bool,
    pub nowait: bool,
}

/// Prepares `spec`'s scratch file in `dir` and runs its requests on a shard loop.
pub(super) fn measure(
    dir: &Path,
    opts: &QualifyOptions,
    spec: Spec,
    after_batch: &mut dyn FnMut(u64),
) -> Result<Measured, QualifyError> {
    let ios = spec.ios.div_ceil(u64::from(spec.depth)) * u64::from(spec.depth);
    let total_bytes = ios * u64::from(opts.request_bytes);
    let file = scratch_file(dir, spec.workload.layout(), total_bytes, spec.dsync)?;
    let plan = Plan {
        backend: spec.backend,
        direction: match spec.workload {
            Workload::Read => Direction::Read,
            _ => Direction::Write,
        },
        fd: file.as_raw_fd(),
        request_bytes: opts.request_bytes,
        ios,
        depth: spec.depth,
        nowait: spec.nowait,
    };
    // `file` lives until here: the loop has drained every request by the time `run` returns.
    run(&plan, after_batch)
}

/// A RWF_NOWAIT test on either backend: `opts.nowait_ios` depth-1 writes; returns (ios,
/// EAGAIN refusals).
pub(super) fn nowait_counts(
    dir: &Path,
    opts: &QualifyOptions,
    backend: Backend,
    workload: Workload,
) -> Result<(u64, u64), QualifyError> {
    let spec = Spec {
        backend,
        workload,
        ios: opts.nowait_ios,
        depth: 1,
        dsync: false,
        nowait: true,
    };
    let m = measure(dir, opts, spec, &mut |_| {})?;
    Ok((m.ios, m.eagain))
}

/// What the loop measured for a plan.
pub(super) struct Measured {
    /// Requests sent (retries not counted).
    pub ios: u64,
    /// RWF_NOWAIT requests refused with EAGAIN.
    pub eagain: u64,
    /// Every submitting call, in order: one per batch (and one per EAGAIN retry).
    pub submits: Vec<SubmitFacts>,
}

impl Measured {
    /// Voluntary context switches of the submitting thread inside its submitting calls.
    pub fn submitter_switches(&self) -> u64 {
        self.submits.iter().map(|s| s.voluntary_switches).sum()
    }

    /// Each submitting call's time, in microseconds.
    pub fn submit_us(&self) -> Vec<f64> {
        self.submits
            .iter()
            .map(|s| s.elapsed_ns as f64 / 1e3)
            .collect()
    }
}

/// Runs `plan` on a shard loop of its own; `after_batch(batch)` runs once each batch has
/// completed (the io_uring tests sample the io-wq workers there).
pub(super) fn run(plan: &Plan, after_batch: &mut dyn FnMut(u64)) -> Result<Measured, QualifyError> {
    let device = EngineDevice::open(plan.backend, plan.depth).map_err(QualifyError::from)?;
    let alignment = dio_alignment_fd(plan.fd);
    let mut pool = DmaBufferPool::new(plan.depth as usize, plan.request_bytes as usize, &alignment)
        .map_err(QualifyError::Buffers)?;
    for b in 0..pool.count() {
        pool.slice_mut(b).fill(PATTERN);
    }
    let options = LoopOptions {
        // One submitting call per batch, as io_submit / io_uring_enter saw it before.
        submit: SubmitPolicy::Batched,
        offset_align_bytes: op_align_bytes(plan.request_bytes),
        probe_submits: true,
        ..LoopOptions::default()
    };
    let mut shard = ShardLoop::new(device, vec![pool], options);
    let mut source = Batches {
        plan,
        after_batch,
        next: 0,
        batch_end: 0,
        batch: 0,
        outstanding: 0,
        retry: None,
        eagain: 0,
    };
    let ran = shard.run(&mut source);
    let submits = shard.submit_facts().to_vec();
    match ran {
        Ok(()) => Ok(Measured {
            ios: plan.ios,
            eagain: source.eagain,
            submits,
        }),
        Err(RunError::Source(e)) => Err(e),
        Err(RunError::Loop(e)) => Err(QualifyError::from(e)),
        // The only other way a run ends early: SIGINT or SIGTERM.
        Err(_) => Err(QualifyError::Interrupted),
    }
}

/// The loop's offset rule for these requests: every offset is a multiple of the request
/// size, so its largest power-of-two factor (at most 4 KiB) always holds, and a size the
/// filesystem cannot take reaches the kernel, whose EINVAL the test reports by name.
fn op_align_bytes(request_bytes: u32) -> u32 {
    1 << request_bytes.trailing_zeros().min(12)
}

/// The plan as an op source.
struct Batches<'a> {
    plan: &'a Plan,
    after_batch: &'a mut dyn FnMut(u64),
    /// The next request's index, and the index where the current batch ends.
    next: u64,
    batch_end: u64,
    batch: u64,
    /// Requests of the current batch not yet completed (retries included).
    outstanding: u32,
    /// A request refused with EAGAIN, to send again without RWF_NOWAIT.
    retry: Option<u64>,
    eagain: u64,
}

/// Marks a tag as the plain retry of an EAGAIN-refused request.
const RETRY_TAG: u64 = 1 << 63;

impl Batches<'_> {
    fn op(&self, index: u64, buf: weir_engine::shard_loop::BufId, nowait: bool) -> Op {
        let tag = if nowait { index } else { index | RETRY_TAG };
        let offset_bytes = index * u64::from(self.plan.request_bytes);
        let op = Op::new(
            tag,
            self.plan.direction,
            self.plan.fd,
            offset_bytes,
            buf,
            self.plan.request_bytes,
        );
        op.with_flags(IoFlags {
            nowait,
            dsync: false,
        })
    }
}

impl OpSource for Batches<'_> {
    type Error = QualifyError;

    fn next_op(&mut self, _now_ns: u64, buffers: &mut LoopBuffers) -> Result<Next, QualifyError> {
        if self.next == self.batch_end && self.outstanding == 0 && self.retry.is_none() {
            if self.next >= self.plan.ios {
                return Ok(Next::Finished);
            }
            self.batch_end = (self.next + u64::from(self.plan.depth)).min(self.plan.ios);
        }
        let (index, nowait) = match self.retry {
            Some(index) => (index, false),
            None if self.next < self.batch_end => (self.next, self.plan.nowait),
            None => return Ok(Next::WaitForCompletion),
        };
        let Some(buf) = buffers.acquire(0) else {
            return Ok(Next::WaitForCompletion);
        };
        if self.retry.take().is_none() {
            self.next += 1;
        }
        self.outstanding += 1;
        Ok(Next::Op(self.op(index, buf, nowait)))
    }

    fn on_done(&mut self, done: Done, buffers: &mut LoopBuffers) -> Result<Flow, QualifyError> {
        buffers.release(done.buf);
        self.outstanding -= 1;
        let sent_nowait = self.plan.nowait && done.tag & RETRY_TAG == 0;
        let index = done.tag & !RETRY_TAG;
        let request_bytes = self.plan.request_bytes;
        match done.outcome {
            Outcome::Full => {}
            Outcome::Failed {
                errno: libc::EAGAIN,
            } if sent_nowait => {
                self.eagain += 1;
                self.retry = Some(index);
            }
            // EOPNOTSUPP, or EINVAL on the very first request: the flag itself is refused.
            Outcome::Failed { errno }
                if sent_nowait
                    && (errno == libc::EOPNOTSUPP || (errno == libc::EINVAL && index == 0)) =>
            {
                return Err(QualifyError::NowaitRefused { errno });
            }
            Outcome::Failed { errno } => {
                return Err(QualifyError::Request {
                    errno,
                    request_bytes,
                })
            }
            Outcome::Short { .. } | Outcome::EndOfFile => {
                return Err(QualifyError::Short {
                    moved_bytes: done.moved_bytes(),
                    request_bytes: u64::from(request_bytes),
                })
            }
        }
        if self.outstanding == 0 && self.retry.is_none() && self.next == self.batch_end {
            (self.after_batch)(self.batch);
            self.batch += 1;
        }
        Ok(Flow::Continue)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::FileExt;

    use super::super::file::{scratch_file, Layout};
    use super::*;

    fn tempdir() -> tempfile::TempDir {
        tempfile::tempdir().expect("tempdir")
    }

    /// Every byte of the first `len` of `file` is the buffers' pattern (read through the page
    /// cache: the scratch file itself is O_DIRECT).
    fn holds_pattern(file: &std::fs::File, len: usize) -> bool {
        let plain = std::fs::File::open(format!("/proc/self/fd/{}", file.as_raw_fd()))
            .expect("reopen without O_DIRECT");
        let mut back = vec![0u8; len];
        plain.read_exact_at(&mut back, 0).expect("read back");
        back.iter().all(|&b| b == PATTERN)
    }

    #[test]
    fn every_batch_is_one_measured_submit_and_every_byte_lands() {
        let dir = tempdir();
        for backend in Backend::ALL {
            let file = scratch_file(dir.path(), Layout::Append, 0, false).expect("scratch");
            let plan = Plan {
                backend,
                direction: Direction::Write,
                fd: file.as_raw_fd(),
                request_bytes: 4096,
                ios: 10,
                depth: 3,
                nowait: false,
            };
            let mut batches = Vec::new();
            let m = run(&plan, &mut |b| batches.push(b)).expect("run");
            // 10 requests at depth 3: batches of 3, 3, 3 and 1, each one submitting call.
            let ops: Vec<u32> = m.submits.iter().map(|s| s.ops).collect();
            assert_eq!(ops, [3, 3, 3, 1], "{backend}");
            assert_eq!(batches, [0, 1, 2, 3], "{backend}");
            assert_eq!(m.eagain, 0);
            assert_eq!(m.submit_us().len(), 4);
            assert!(holds_pattern(&file, 40960), "{backend}");
        }
    }

    #[test]
    fn nowait_eagain_is_counted_and_retried_without_the_flag() {
        // Writes into a pre-truncated (sparse) file must allocate: on Linux 6.x ext4 and XFS
        // answer EAGAIN under RWF_NOWAIT (docs/design/engine.md). However many were refused, each
        // was sent again without the flag: one more submitting call each, every byte written.
        let dir = tempdir();
        for backend in Backend::ALL {
            let ios = 16u64;
            let file =
                scratch_file(dir.path(), Layout::Pretruncate, ios * 4096, false).expect("scratch");
            let plan = Plan {
                backend,
                direction: Direction::Write,
                fd: file.as_raw_fd(),
                request_bytes: 4096,
                ios,
                depth: 1,
                nowait: true,
            };
            let m = run(&plan, &mut |_| {}).expect("run");
            assert!(m.eagain <= ios, "{backend}: {}", m.eagain);
            assert_eq!(m.submits.len() as u64, ios + m.eagain, "{backend}");
            assert!(holds_pattern(&file, (ios * 4096) as usize), "{backend}");
        }
    }

    #[test]
    fn a_refused_request_size_is_a_named_error_not_a_panic() {
        // 1000 bytes is no multiple of any direct-I/O alignment: the kernel refuses it with
        // EINVAL, which the test reports as unsupported, after draining the loop.
        let dir = tempdir();
        let file = scratch_file(dir.path(), Layout::Append, 0, false).expect("scratch");
        let plan = Plan {
            backend: Backend::Aio,
            direction: Direction::Write,
            fd: file.as_raw_fd(),
            request_bytes: 1000,
            ios: 4,
            depth: 2,
            nowait: false,
        };
        let e = run(&plan, &mut |_| {}).err().expect("refused");
        assert!(
            e.to_string()
                .contains("1000 B direct request was refused (EINVAL)"),
            "{e}"
        );
    }

    #[test]
    fn offsets_rule_is_the_request_sizes_power_of_two() {
        assert_eq!(op_align_bytes(4096), 4096);
        assert_eq!(op_align_bytes(128 << 10), 4096);
        assert_eq!(op_align_bytes(1536), 512);
        assert_eq!(op_align_bytes(1000), 8);
    }
}
