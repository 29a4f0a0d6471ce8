//! The ring's A/B switches, from [`crate::EngineOptions`] when a ring is made: each names one
//! idea measured against the default (docs/engine.md), none is on by default.
//! - `WEIR_URING_RINGFD=on`: enter by the ring's registered index (`IORING_REGISTER_RING_FDS`).
//! - `WEIR_URING_IOWQ_MAX=<n>`: bound this thread's io-wq workers (bounded and unbounded).
//! - `WEIR_URING_NOSQARRAY=on`: a ring without the submission index array
//!   (`IORING_SETUP_NO_SQARRAY`, Linux 6.6): the kernel reads each entry by its ring slot.
//!
//! `WEIR_URING_SUBMIT=deferred` (a deep ring on files that punt leaving lone submits for the
//! turn's wait) is part of the wait policy: [`crate::WaitPolicy::deferred_submit`].

use super::UringDevice;

/// What the engine options ask of one ring.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Knobs {
    pub(super) ring_fd: bool,
    pub(super) iowq_max: Option<u32>,
    pub(super) no_sqarray: bool,
}

impl Knobs {
    pub(super) fn configured() -> Self {
        let options = crate::options::engine_options();
        Knobs {
            ring_fd: options.ring_fd,
            iowq_max: options.iowq_max,
            no_sqarray: options.no_sqarray,
        }
    }
}

impl UringDevice {
    /// Bounds this thread's io-wq workers as asked, before its first enter (the kernel keeps
    /// the bound on the ring until the thread's io-wq exists).
    pub(super) fn apply_iowq_max(&mut self) {
        if let Some(n) = self.knobs.iowq_max.take() {
            // Bounded and unbounded workers alike (block-device reads are unbounded work).
            let mut max = [n, n];
            // Best effort: an A/B switch must not stop a run, and a kernel that refuses the
            // bound leaves io-wq as it was.
            let _ = self.ring.submitter().register_iowq_max_workers(&mut max);
        }
    }
}
