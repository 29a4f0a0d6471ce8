//! SIGINT and SIGTERM cancel the run's [`Cancel`] token.
//!
//! The binary owns the process's signals; the libraries only see the token their options
//! carry. The handler does one atomic swap, which is async-signal-safe. A second signal
//! restores the default action and raises it again, so a stuck run still dies on a second
//! Ctrl-C.

use std::sync::OnceLock;
use weir_engine::Cancel;

/// The token every command's run watches. Set once, before the handler goes in.
static TOKEN: OnceLock<Cancel> = OnceLock::new();

extern "C" fn on_signal(signal: libc::c_int) {
    if let Some(token) = TOKEN.get() {
        if token.cancel() {
            // SAFETY: signal() and raise() are async-signal-safe.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
                libc::raise(signal);
            }
        }
    }
}

/// Installs the handler for SIGINT and SIGTERM (again, harmlessly, when already installed)
/// and returns the token it cancels. Err holds the errno of a failed `sigaction`.
pub fn install() -> Result<Cancel, i32> {
    let token = TOKEN.get_or_init(Cancel::new).clone();
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction is plain data; zero is a valid empty mask and flags.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
        // No SA_RESTART: blocking waits return EINTR so loops notice the token promptly.
        action.sa_flags = 0;
        // SAFETY: the mask pointer is valid; the handler is async-signal-safe.
        let rc = unsafe {
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
        }
    }
    Ok(token)
}

/// The token without installing anything: commands that make no files use it to stay
/// uniform, and it is the same token the handler cancels once installed.
pub fn token() -> Cancel {
    TOKEN.get_or_init(Cancel::new).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigint_cancels_the_token_the_commands_hold() {
        let token = install().expect("sigaction");
        assert!(!token.is_cancelled());
        // SAFETY: raise() delivers SIGINT to this thread; the handler only swaps a flag.
        unsafe { libc::raise(libc::SIGINT) };
        assert!(token.is_cancelled());
        assert!(super::token().is_cancelled(), "one token for the process");
    }
}
