//! The engine's clock: `CLOCK_MONOTONIC` in nanoseconds, as the device contract requires.

use std::time::Duration;

/// Now on `CLOCK_MONOTONIC`, in nanoseconds (vDSO: no syscall).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}

/// The time left until `deadline_ns`, zero when it has passed.
pub fn until(deadline_ns: u64) -> Duration {
    Duration::from_nanos(deadline_ns.saturating_sub(monotonic_ns()))
}

/// Sleeps until `deadline_ns` on `CLOCK_MONOTONIC` (absolute, so drift does not accumulate).
/// Returns early on a signal, which lets interrupt-aware loops notice SIGINT.
pub fn sleep_until(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `ts` is valid; the remaining-time pointer may be null for TIMER_ABSTIME.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_advances_and_sleeps() {
        let t0 = monotonic_ns();
        sleep_until(t0 + 2_000_000);
        let t1 = monotonic_ns();
        assert!(t1 >= t0 + 2_000_000, "slept {} ns", t1 - t0);
        assert_eq!(until(t0), Duration::ZERO);
    }
}
