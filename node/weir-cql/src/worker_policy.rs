//! The tokio workers' Linux scheduling policy: `WEIR_CQL_WORKER_POLICY=normal|batch`.
//!
//! Why: in the `worker` runtime every `submit` wakes the worker. A woken SCHED_NORMAL task
//! may preempt the running one (EEVDF's wake-up preemption), so on a client whose threads
//! share a CPU the worker switches the JS thread out in the middle of its turn: ~0.9
//! involuntary context switches per sequential request and ~21 us of `finish_task_switch`
//! (perf). The kernel never lets a woken SCHED_BATCH task preempt a
//! SCHED_NORMAL one (`check_preempt_wakeup_fair` returns early for it), so a batch worker runs
//! when the JS thread next blocks, normally right after `submit`, when JS awaits the answer.
//! Batch tasks keep their fair share of CPU time; only wake-up preemption is given up.
//!
//! A policy that cannot be applied falls back to normal and says so once (stderr and
//! [`outcome`], which `runtimeStats()` reports); it is never dropped silently.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The policy asked for by the environment.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Policy {
    Normal,
    Batch,
}

impl Policy {
    fn name(self) -> &'static str {
        match self {
            Policy::Normal => "normal",
            Policy::Batch => "batch",
        }
    }
}

/// What applying the policy gave: the policy the workers run with, and why it differs from
/// the one asked for (empty when it does not).
static OUTCOME: Mutex<Option<(Policy, String)>> = Mutex::new(None);
/// Whether the fallback was reported already (one message per process, not per thread).
static REPORTED: AtomicBool = AtomicBool::new(false);

/// Reads `WEIR_CQL_WORKER_POLICY` (unset: normal). An unknown value falls back to normal
/// and is reported like a failed system call.
pub fn from_env() -> Policy {
    match std::env::var("WEIR_CQL_WORKER_POLICY").as_deref() {
        Err(_) | Ok("") | Ok("normal") => Policy::Normal,
        Ok("batch") => Policy::Batch,
        Ok(other) => {
            fall_back(format!(
                "WEIR_CQL_WORKER_POLICY={other:?} is not a policy; use batch or normal"
            ));
            Policy::Normal
        }
    }
}

/// Applies `policy` to the calling thread (a tokio worker's `on_thread_start`).
pub fn apply(policy: Policy) {
    if policy == Policy::Normal {
        record(Policy::Normal);
        return;
    }
    match set_batch() {
        Ok(()) => record(Policy::Batch),
        Err(errno) => fall_back(format!(
            "sched_setscheduler(SCHED_BATCH) on a tokio worker failed with {} ({errno}); \
             the workers stay SCHED_NORMAL, so each request's wake-up may preempt the JS thread; \
             unset WEIR_CQL_WORKER_POLICY or allow the call (seccomp, container policy)",
            errno_name(errno)
        )),
    }
}

/// The workers' policy and the reason for a fallback, for `runtimeStats()`.
pub fn outcome() -> (&'static str, String) {
    match OUTCOME.lock().ok().and_then(|g| g.clone()) {
        Some((p, why)) => (p.name(), why),
        None => ("normal", String::new()),
    }
}

fn record(policy: Policy) {
    if let Ok(mut g) = OUTCOME.lock() {
        // A fallback on any thread wins over another thread's success: mixed policies are
        // reported as the fallback.
        if g.as_ref().is_none_or(|(_, why)| why.is_empty()) {
            *g = Some((policy, String::new()));
        }
    }
}

fn fall_back(why: String) {
    if !REPORTED.swap(true, Ordering::Relaxed) {
        eprintln!("weir-cql: {why}");
    }
    if let Ok(mut g) = OUTCOME.lock() {
        *g = Some((Policy::Normal, why));
    }
}

#[cfg(target_os = "linux")]
fn set_batch() -> Result<(), i32> {
    // Priority 0 is the only one SCHED_BATCH takes; pid 0 is the calling thread.
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid sched_param that outlives the call.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    }
}

#[cfg(not(target_os = "linux"))]
fn set_batch() -> Result<(), i32> {
    Err(libc::ENOSYS)
}

/// The errno names sched_setscheduler(2) documents, then the number.
fn errno_name(errno: i32) -> String {
    match errno {
        libc::EPERM => "EPERM".into(),
        libc::EINVAL => "EINVAL".into(),
        libc::ESRCH => "ESRCH".into(),
        libc::ENOSYS => "ENOSYS".into(),
        n => format!("errno {n}"),
    }
}
