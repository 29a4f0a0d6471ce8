//! The ring's deadline timer: one absolute `IORING_OP_TIMEOUT` kept armed at the caller's
//! deadline, so a wait with a deadline needs no EXT_ARG timeout (a kernel hrtimer armed and
//! cancelled per `io_uring_enter`, i.e. per I/O at QD1). Its completions carry reserved
//! `user_data` values and never reach the caller.

use io_uring::{opcode, squeue, types};

use super::UringDevice;

/// `user_data` of the ring's deadline timer and of its updates; no op may use them.
pub(super) const TIMER_TAG: u64 = u64::MAX;
pub(super) const TIMER_UPDATE_TAG: u64 = u64::MAX - 1;

/// One absolute timeout request kept armed at the caller's deadline, so a wait needs no
/// per-call timer: a full-speed `weir run` arms it once per deadline (the end of the run, the
/// next progress sample), not once per wait.
pub(super) struct DeadlineTimer {
    /// Whether the kernel has what this needs (`IOSQE_CQE_SKIP_SUCCESS`, Linux 5.17+, so a
    /// successful update posts nothing that would end the wait early).
    usable: bool,
    /// The deadline the armed request fires at; None when none is armed (or it fired).
    armed_ns: Option<u64>,
    /// Read by the kernel when the request is submitted, in the same enter that pushed it.
    ts: types::Timespec,
}

impl DeadlineTimer {
    /// A timer with none armed; `usable`: the kernel has `IOSQE_CQE_SKIP_SUCCESS`.
    pub(super) fn new(usable: bool) -> Self {
        DeadlineTimer {
            usable,
            armed_ns: None,
            ts: types::Timespec::new(),
        }
    }

    /// Whether a completion with this `user_data` is the timer's (and so not the caller's);
    /// a fired or refused timer is noted.
    pub(super) fn on_completion(&mut self, user_data: u64, result: i32) -> bool {
        match user_data {
            // The deadline timer fired (ETIME) or was cancelled: none is armed now.
            TIMER_TAG => {
                self.armed_ns = None;
                if !matches!(-result, libc::ETIME | libc::ECANCELED) {
                    // The kernel refused the timer itself: wait with EXT_ARG from now on.
                    self.usable = false;
                }
                true
            }
            TIMER_UPDATE_TAG => true,
            _ => false,
        }
    }
}

impl UringDevice {
    /// Arms (or moves) the deadline timer to `deadline_ns`; false when it cannot (old kernel,
    /// no room in the submission queue), and the caller falls back to an EXT_ARG timeout.
    pub(super) fn arm_timer(&mut self, deadline_ns: u64) -> bool {
        if !self.timer.usable {
            return false;
        }
        if self.timer.armed_ns == Some(deadline_ns) {
            return true;
        }
        self.timer.ts = types::Timespec::new()
            .sec(deadline_ns / 1_000_000_000)
            .nsec((deadline_ns % 1_000_000_000) as u32);
        let ts: *const types::Timespec = &self.timer.ts;
        let flags = types::TimeoutFlags::ABS;
        let entry = match self.timer.armed_ns {
            // A failed update (ENOENT: it fired meanwhile) still posts its completion, which
            // ends the wait; the fired timer's own completion then clears `armed_ns`.
            Some(_) => opcode::TimeoutUpdate::new(TIMER_TAG, ts)
                .flags(flags)
                .build()
                .user_data(TIMER_UPDATE_TAG)
                .flags(squeue::Flags::SKIP_SUCCESS),
            // count 0: a pure timer, not "after N completions".
            None => opcode::Timeout::new(ts)
                .count(0)
                .flags(flags)
                .build()
                .user_data(TIMER_TAG),
        };
        // SAFETY: `ts` lives in `self`, and the kernel copies it when the entry is submitted,
        // which the caller's enter does before `self` can change.
        if unsafe { self.ring.submission().push(&entry) }.is_err() {
            return false;
        }
        self.timer.armed_ns = Some(deadline_ns);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{pipe, pipe_read};
    use super::*;
    use crate::clock::monotonic_ns;
    use weir_model::device::Device;

    /// The deadline timer ends a wait nothing completes, moves when the deadline moves, and
    /// its completions never reach the caller.
    #[test]
    fn deadline_timer_ends_waits_and_stays_hidden() {
        let mut dev = UringDevice::new(2).expect("io_uring");
        let (never, soon) = (pipe(), pipe());
        let (mut buf_a, mut buf_b) = ([0u8; 8], [0u8; 8]);
        // SAFETY: both ops are reaped below, before the buffers go out of scope.
        unsafe {
            dev.push(pipe_read(1, never[0], &mut buf_a)).expect("push");
            dev.push(pipe_read(2, soon[0], &mut buf_b)).expect("push");
        }
        // SAFETY: writing 5 bytes from a live buffer to an open pipe.
        assert_eq!(
            unsafe { libc::write(soon[1], b"hello".as_ptr().cast(), 5) },
            5
        );
        let mut out = Vec::new();
        // A far deadline: the written pipe completes first; the timer stays armed.
        let submitted = dev
            .submit_and_wait(1, Some(monotonic_ns() + 5_000_000_000))
            .expect("wait");
        assert_eq!(submitted, 2, "the caller's two ops, not the timer");
        while out.is_empty() {
            dev.submit_and_wait(1, Some(monotonic_ns() + 5_000_000_000))
                .expect("wait");
            dev.reap(&mut out);
        }
        assert_eq!((out[0].user_data, out[0].result), (2, 5));
        assert!(dev.timer.armed_ns.is_some() || !dev.timer.usable);
        // A near deadline moves the armed timer; nothing completes, the wait ends on time.
        for wait_ms in [20, 10] {
            let t0 = monotonic_ns();
            dev.submit_and_wait(1, Some(t0 + wait_ms * 1_000_000))
                .expect("wait");
            let waited_ms = (monotonic_ns() - t0) / 1_000_000;
            assert!(
                (wait_ms..2_000).contains(&waited_ms),
                "waited {waited_ms} ms for a {wait_ms} ms deadline"
            );
            out.clear();
            assert_eq!(dev.reap(&mut out), 0, "the timer surfaced: {:?}", out.len());
        }
        // SAFETY: as above.
        assert_eq!(
            unsafe { libc::write(never[1], b"late".as_ptr().cast(), 4) },
            4
        );
        out.clear();
        while out.is_empty() {
            dev.submit_and_wait(1, None).expect("wait");
            dev.reap(&mut out);
        }
        assert_eq!((out[0].user_data, out[0].result), (1, 4));
        drop(dev);
        for fd in never.into_iter().chain(soon) {
            // SAFETY: closing descriptors this test opened.
            unsafe { libc::close(fd) };
        }
    }
}
