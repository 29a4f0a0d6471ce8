//! SIGINT/SIGTERM as a flag that loops poll.
//!
//! The handler only stores to a static atomic, which is async-signal-safe; nothing else
//! happens in signal context. Long loops (the workload driver, the prefill) check
//! [`requested`] and wind down cleanly: files are removed and reports printed.
//! A second signal restores the default action, so a stuck run can still be killed with a
//! second Ctrl-C.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_signal: libc::c_int) {
    if REQUESTED.swap(true, Ordering::SeqCst) {
        // Second signal: fall back to the default action (terminate).
        // SAFETY: signal() and raise() are async-signal-safe.
        unsafe {
            libc::signal(_signal, libc::SIG_DFL);
            libc::raise(_signal);
        }
    }
}

/// Installs the handler for SIGINT and SIGTERM. Returns the errno if sigaction fails.
pub fn install() -> Result<(), i32> {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction is plain data; zero is a valid empty mask and flags.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
        // No SA_RESTART: blocking waits return EINTR so loops notice the flag promptly.
        action.sa_flags = 0;
        // SAFETY: the mask pointer is valid; the handler is async-signal-safe.
        let rc = unsafe {
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(crate::errno::last_errno());
        }
    }
    Ok(())
}

/// Whether SIGINT or SIGTERM arrived since start (or the last [`reset`]).
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Raises the flag as a signal would (tests, or a caller that wants to stop every shard).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Clears the flag.
pub fn reset() {
    REQUESTED.store(false, Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigint_sets_the_flag() {
        install().expect("sigaction");
        reset();
        assert!(!requested());
        // SAFETY: raise() delivers SIGINT to this thread; the handler only stores a flag.
        unsafe { libc::raise(libc::SIGINT) };
        assert!(requested());
        reset();
        request();
        assert!(requested());
        reset();
    }
}
