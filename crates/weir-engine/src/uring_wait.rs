//! How the io_uring backend waits for completions, and how its ring is set up for that.
//!
//! The default is one `io_uring_enter` per loop turn that submits and waits, on a ring with
//! `SINGLE_ISSUER` + `DEFER_TASKRUN` + `COOP_TASKRUN` (fio's own setup). Two alternatives
//! exist for A/B runs on devices whose every request is run by an io-wq worker (zram), where
//! at QD1 the shard sleeps in the wait and the worker's completion must wake it (on a VM an
//! idle vCPU's wake is an IPI and a halt exit):
//! - `split`: submit in one enter, wait in another (fio's two calls per I/O at QD1);
//! - `spin:<us>`: after the split submit, watch the completion queue in user space for up to
//!   that many microseconds before blocking (Seastar's reactor polls instead of sleeping).
//!   With `DEFER_TASKRUN` completions are posted only inside a GETEVENTS enter, so each look
//!   is a non-blocking enter. Without it (`WEIR_URING_DEFER=off`) the watch is pure user
//!   space, but on Linux 6.18 an io-wq worker's completion then reaches the ring as task work
//!   on the shard (`COOP_TASKRUN`: no IPI), run only when the shard enters the kernel, so a
//!   quiet machine's spin never sees it and each read takes the whole spin (docs/engine.md).
//!
//! `WEIR_URING_WAIT` (`enter`, `split`, `spin:<us>`) and `WEIR_URING_DEFER=off` select them.
//! The spin's time is the shard thread's own CPU time, so a benchmark that counts the
//! process's user+sys seconds counts it. Session 10's quiet runs on zram (docs/engine.md,
//! "The depth sweep"): `spin:20` with `DEFER_TASKRUN` leads fio at depths 1-4 (1.08x at QD1,
//! ~335 K IOPS at QD2-4) and loses from QD8, where more io-wq workers contend with the
//! spinning shard; so the default stays until the policy is chosen per shard from its depth.

use std::fmt;

/// How a wait for completions enters the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitPolicy {
    /// Submit in one enter without waiting, then wait in another (fio's way).
    pub split: bool,
    /// After the submit, watch the completion queue for this long before blocking (0: no
    /// spin). Implies `split`.
    pub spin_ns: u64,
    /// Ask for `DEFER_TASKRUN` (completions posted only when the shard enters to wait).
    pub defer_taskrun: bool,
}

impl Default for WaitPolicy {
    fn default() -> Self {
        WaitPolicy {
            split: false,
            spin_ns: 0,
            defer_taskrun: true,
        }
    }
}

/// A `WEIR_URING_WAIT` or `WEIR_URING_DEFER` value this does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WaitPolicyError {
    UnknownWait(String),
    UnknownDefer(String),
}

impl fmt::Display for WaitPolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitPolicyError::UnknownWait(v) => write!(
                f,
                "WEIR_URING_WAIT={v:?} is not a wait policy: use enter, split or spin:<microseconds> \
                 (e.g. spin:20)"
            ),
            WaitPolicyError::UnknownDefer(v) => {
                write!(f, "WEIR_URING_DEFER={v:?} is not known: use on or off")
            }
        }
    }
}

impl std::error::Error for WaitPolicyError {}

impl WaitPolicy {
    /// The policy the two variables name (None: unset).
    pub fn parse(wait: Option<&str>, defer: Option<&str>) -> Result<Self, WaitPolicyError> {
        let mut policy = WaitPolicy::default();
        match wait {
            None | Some("" | "enter") => {}
            Some("split") => policy.split = true,
            Some(v) => {
                let spin_us: u64 = v
                    .strip_prefix("spin:")
                    .and_then(|n| n.parse().ok())
                    .filter(|&us| (1..=1_000_000).contains(&us))
                    .ok_or_else(|| WaitPolicyError::UnknownWait(v.to_string()))?;
                policy.split = true;
                policy.spin_ns = spin_us * 1_000;
            }
        }
        match defer {
            None | Some("" | "on") => {}
            Some("off") => policy.defer_taskrun = false,
            Some(v) => return Err(WaitPolicyError::UnknownDefer(v.to_string())),
        }
        Ok(policy)
    }

    /// The policy of the environment, read once per process (every ring of every shard uses
    /// it); a value it does not know is reported on stderr once and the default used (an A/B
    /// switch must not stop a run).
    pub fn from_env() -> Self {
        static POLICY: std::sync::OnceLock<WaitPolicy> = std::sync::OnceLock::new();
        *POLICY.get_or_init(|| {
            let wait = std::env::var("WEIR_URING_WAIT").ok();
            let defer = std::env::var("WEIR_URING_DEFER").ok();
            WaitPolicy::parse(wait.as_deref(), defer.as_deref()).unwrap_or_else(|e| {
                eprintln!("weir: {e}; using the default (one enter, DEFER_TASKRUN)");
                WaitPolicy::default()
            })
        })
    }
}

/// The ring flags tried in order: the newer flags are refused with EINVAL by older kernels
/// (`DEFER_TASKRUN`: Linux 6.1; `SINGLE_ISSUER`: 6.0), and only EINVAL means "try fewer";
/// any other errno (EPERM: `kernel.io_uring_disabled`; ENOMEM: the locked-memory limit) is
/// the answer. Returns the ring and whether it defers task work.
pub(crate) fn setup_with_fallback<R>(
    want_defer: bool,
    mut build: impl FnMut(RingFlags) -> std::io::Result<R>,
) -> Result<(R, bool), i32> {
    let mut attempts = vec![];
    if want_defer {
        attempts.push(RingFlags {
            coop: true,
            defer_taskrun: true,
        });
    }
    attempts.push(RingFlags {
        coop: true,
        defer_taskrun: false,
    });
    attempts.push(RingFlags {
        coop: false,
        defer_taskrun: false,
    });
    let mut last = libc::EINVAL;
    for flags in attempts {
        match build(flags) {
            Ok(ring) => return Ok((ring, flags.defer_taskrun)),
            Err(e) => match e.raw_os_error().unwrap_or(libc::EIO) {
                libc::EINVAL => last = libc::EINVAL,
                errno => return Err(errno),
            },
        }
    }
    Err(last)
}

/// Which optional setup flags one attempt asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RingFlags {
    /// `SINGLE_ISSUER` + `COOP_TASKRUN`.
    pub coop: bool,
    pub defer_taskrun: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_policy_and_names_bad_values() {
        assert_eq!(WaitPolicy::parse(None, None), Ok(WaitPolicy::default()));
        let split = WaitPolicy::parse(Some("split"), Some("off")).expect("split");
        assert!(split.split && split.spin_ns == 0 && !split.defer_taskrun);
        let spin = WaitPolicy::parse(Some("spin:20"), None).expect("spin");
        assert!(spin.split && spin.spin_ns == 20_000 && spin.defer_taskrun);
        for bad in ["spin:", "spin:0", "spin:x", "poll"] {
            let e = WaitPolicy::parse(Some(bad), None).expect_err(bad);
            assert!(e.to_string().contains("spin:<microseconds>"), "{e}");
        }
        assert!(matches!(
            WaitPolicy::parse(None, Some("maybe")),
            Err(WaitPolicyError::UnknownDefer(_))
        ));
    }

    /// A kernel that refuses DEFER_TASKRUN (EINVAL) gets a ring without it; one that refuses
    /// io_uring itself (EPERM) is answered at once, not retried with fewer flags.
    #[test]
    fn einval_falls_back_and_other_errnos_do_not() {
        let mut tried = vec![];
        let got = setup_with_fallback(true, |f| {
            tried.push(f);
            if f.defer_taskrun {
                Err(std::io::Error::from_raw_os_error(libc::EINVAL))
            } else {
                Ok("ring")
            }
        });
        assert_eq!(got, Ok(("ring", false)));
        assert_eq!(tried.len(), 2);
        let mut calls = 0;
        let refused: Result<((), bool), i32> = setup_with_fallback(true, |_| {
            calls += 1;
            Err(std::io::Error::from_raw_os_error(libc::EPERM))
        });
        assert_eq!((refused, calls), (Err(libc::EPERM), 1));
        let old: Result<((), bool), i32> = setup_with_fallback(false, |_| {
            Err(std::io::Error::from_raw_os_error(libc::EINVAL))
        });
        assert_eq!(old, Err(libc::EINVAL));
        let mut first = None;
        let _ = setup_with_fallback(false, |f| {
            first.get_or_insert(f);
            Ok(())
        });
        assert_eq!(first.map(|f| f.defer_taskrun), Some(false), "not asked for");
    }
}
