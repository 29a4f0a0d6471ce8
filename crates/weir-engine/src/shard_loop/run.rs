//! Driving the loop from a source of ops: "next op" while there is room, "on completion" for
//! each one, until the source is finished or asks to stop; then everything is drained.

use std::fmt;

use weir_model::device::Device;

use super::{Done, LoopBuffers, LoopError, Op, ShardLoop};

/// What the source wants to do now.
#[derive(Debug)]
pub enum Next {
    /// Push this op.
    Op(Op),
    /// Nothing now; ask again after a completion or at this device time (an open-loop arrival,
    /// a think time, a sampling tick).
    WaitUntil(u64),
    /// Nothing until a completion frees something (a closed loop at its depth).
    WaitForCompletion,
    /// Nothing more, ever: the loop waits for what is in flight and returns.
    Finished,
}

/// After a completion: go on, or stop issuing (the loop drains and returns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// Whatever decides the loop's ops: a workload, a tune measurement step, align's writes, the
/// prefill, the verify pass.
pub trait OpSource {
    type Error;

    /// The next op at device time `now_ns`. Buffers for it come from `buffers.acquire`.
    fn next_op(&mut self, now_ns: u64, buffers: &mut LoopBuffers) -> Result<Next, Self::Error>;

    /// One completion, checked and named; its buffers are held by the source again (release
    /// them or reuse them).
    fn on_done(&mut self, done: Done, buffers: &mut LoopBuffers) -> Result<Flow, Self::Error>;
}

/// Why [`ShardLoop::run`] ended early. Everything in flight was drained first (or, for a
/// device failure, the buffers were leaked because it could not be).
#[derive(Debug)]
#[non_exhaustive]
pub enum RunError<E> {
    /// The source failed (it saw a failed op, or its own bookkeeping did).
    Source(E),
    /// The device failed.
    Loop(LoopError),
    /// The loop's token was cancelled ([`super::LoopOptions::cancel`]).
    Interrupted,
}

impl<E: fmt::Display> fmt::Display for RunError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Source(e) => e.fmt(f),
            RunError::Loop(e) => e.fmt(f),
            RunError::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for RunError<E> {}

/// What the filling step learned from the source.
enum Fill {
    /// Ops are in flight or the slots are full: wait for a completion.
    Completion,
    Until(u64),
    Finished,
}

impl<D: Device> ShardLoop<D> {
    /// Runs `source` until it is finished or asks to stop, keeping as many ops in flight as
    /// it gives and the device holds, then waits for everything in flight. A source error,
    /// a device failure or an interrupt stops issuing at once; the first is returned after
    /// the drain.
    pub fn run<S: OpSource>(&mut self, source: &mut S) -> Result<(), RunError<S::Error>> {
        let mut failure: Option<RunError<S::Error>> = None;
        let mut finished = false;
        loop {
            if failure.is_none()
                && !finished
                && self
                    .options
                    .cancel
                    .as_ref()
                    .is_some_and(crate::Cancel::is_cancelled)
            {
                failure = Some(RunError::Interrupted);
            }
            let mut deadline = None;
            if failure.is_none() && !finished {
                let now = self.now_ns();
                match self.fill(source, now) {
                    Ok(Fill::Completion) => {}
                    Ok(Fill::Until(t)) => deadline = Some(t),
                    Ok(Fill::Finished) => finished = true,
                    Err(e) => failure = Some(e),
                }
            }
            if self.in_flight == 0 && (failure.is_some() || finished || deadline.is_none()) {
                // Nothing at the device and nothing to wait for: a source that waits for a
                // completion with none in flight would never be asked again.
                break;
            }
            if let Err(e) = self.wait(1, deadline) {
                failure.get_or_insert(RunError::Loop(e));
                break;
            }
            while let Some(done) = self.next_done() {
                match source.on_done(done, &mut self.buffers) {
                    Ok(Flow::Continue) => {}
                    Ok(Flow::Stop) => finished = true,
                    Err(e) => {
                        failure.get_or_insert(RunError::Source(e));
                    }
                }
                // Refill the freed slot at once rather than after every completion of this
                // wake-up: a wake-up often brings the whole depth, and the device would sit
                // idle while the rest are handled (~15% of 4 KiB QD32 IOPS on virtio).
                if failure.is_none() && !finished && self.room() > 0 {
                    let now = self.now_ns();
                    match self.fill(source, now) {
                        Ok(Fill::Finished) => finished = true,
                        Ok(_) => {}
                        Err(e) => failure = Some(e),
                    }
                }
            }
        }
        if let Err(e) = self.drain() {
            failure.get_or_insert(RunError::Loop(e));
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Pushes ops while there is room and the source has some.
    fn fill<S: OpSource>(
        &mut self,
        source: &mut S,
        now_ns: u64,
    ) -> Result<Fill, RunError<S::Error>> {
        while self.room() > 0 {
            match source
                .next_op(now_ns, &mut self.buffers)
                .map_err(RunError::Source)?
            {
                Next::Op(op) => self.push(op).map_err(RunError::Loop)?,
                Next::WaitUntil(t) => return Ok(Fill::Until(t)),
                Next::WaitForCompletion => return Ok(Fill::Completion),
                Next::Finished => return Ok(Fill::Finished),
            }
        }
        Ok(Fill::Completion)
    }
}
