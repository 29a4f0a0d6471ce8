//! [`Cancel`]: a token that asks long loops to stop.
//!
//! Libraries do not install signal handlers: the program that owns the process decides what
//! stops a run (the `weir` binary turns SIGINT and SIGTERM into [`Cancel::cancel`]; an
//! embedding engine may use its own shutdown path). Loops that take a token check it between
//! requests and wind down cleanly: in-flight I/O drains, files are removed and what was
//! measured so far is returned.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A shared stop request. Clones share one flag; cancelling any clone cancels them all.
///
/// ```
/// use weir_engine::Cancel;
///
/// let cancel = Cancel::new();
/// let watcher = cancel.clone();
/// assert!(!watcher.is_cancelled());
/// assert!(!cancel.cancel(), "the first cancel reports it was not cancelled before");
/// assert!(watcher.is_cancelled());
/// ```
#[derive(Clone, Debug, Default)]
pub struct Cancel {
    flag: Arc<AtomicBool>,
}

impl Cancel {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Cancel::default()
    }

    /// Asks every holder to stop. Returns whether it had already been cancelled, so a caller
    /// (a signal handler) can escalate on the second request. Only an atomic swap: safe to
    /// call from a signal handler.
    pub fn cancel(&self) -> bool {
        self.flag.swap(true, Ordering::SeqCst)
    }

    /// Whether [`Cancel::cancel`] was called on this token or any clone of it.
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_reaches_every_clone_and_reports_the_second_call() {
        let a = Cancel::new();
        let b = a.clone();
        let unrelated = Cancel::new();
        assert!(!b.cancel());
        assert!(a.is_cancelled() && b.is_cancelled());
        assert!(
            a.cancel(),
            "the second cancel says it was already cancelled"
        );
        assert!(!unrelated.is_cancelled());
    }
}
