//! The io_uring backend: one ring per shard.
//!
//! Submission and completion queues are shared memory, so `push` and `reap` never enter the
//! kernel; `submit_and_wait` is one `io_uring_enter` that both submits and waits.
//!
//! The ring is set up as fio sets up its own (`SINGLE_ISSUER` + `DEFER_TASKRUN` +
//! `COOP_TASKRUN`, falling back to fewer flags on older kernels): with `DEFER_TASKRUN` a
//! completion finished by an io-wq worker (every request on a device without `nowait`
//! support, e.g. zram) is queued on the ring's own list and posted when the shard next waits,
//! instead of going through `task_work_add` and a notify-signal on the shard thread.
//!
//! A wait with a deadline does not pass the deadline as an EXT_ARG timeout on every
//! `io_uring_enter`, which arms and cancels a kernel hrtimer per wait (one per I/O at QD1):
//! the ring keeps one absolute `IORING_OP_TIMEOUT` armed at the deadline and moves it only when
//! the deadline changes (see `DeadlineTimer`). Its completions carry reserved `user_data`
//! values and never reach the caller. The completion queue is twice the submission queue, the
//! submission queue has a spare entry for the timer, and the in-flight count is capped at the
//! requested depth, so completions can never overflow.
//!
//! A registered file that refuses non-blocking requests (zram) gets its requests sent with
//! `IOSQE_ASYNC`, straight to io-wq and run there concurrently: see [`crate::iowq`].
//!
//! Registered ("fixed") buffers are used when the caller registers a [`DmaBufferPool`]: an
//! op whose buffer lies inside a registered buffer becomes READ_FIXED/WRITE_FIXED, which saves
//! the kernel pinning pages on every request.

use std::os::fd::{AsRawFd, RawFd};

use io_uring::{squeue, types, IoUring};
use weir_model::device::{Device, DeviceError, IoCompletion, IoOp};

use crate::buffers::DmaBufferPool;
use crate::clock::{monotonic_ns, sleep_until, until};
use crate::iowq::{file_punts, PuntPolicy};
use crate::uring_ring_fd::{enter_registered, register_ring_fd};
use crate::uring_wait::{setup_with_fallback, PuntedWait, SpinSlot, WaitPolicy};

mod entry;
mod knobs;
mod timer;

use entry::{FixedRegion, RegisteredFile};
use knobs::Knobs;
use timer::{DeadlineTimer, TIMER_UPDATE_TAG};

/// An io_uring ring implementing [`Device`].
pub struct UringDevice {
    ring: IoUring<squeue::Entry>,
    capacity: u32,
    /// Pushed and not yet reaped.
    in_flight: u32,
    /// The registered buffer regions, one per registered pool (empty: none).
    fixed: Vec<FixedRegion>,
    /// Registered files, in the order of the ring's file table.
    files: Vec<RegisteredFile>,
    /// What to do for files that refuse non-blocking requests.
    punt: PuntPolicy,
    /// Whether the ring defers completions until a GETEVENTS enter (`DEFER_TASKRUN`).
    defer_taskrun: bool,
    /// How a wait submits and waits (one enter, or fio's two, with a spin between).
    wait: WaitPolicy,
    /// The ring's index in this thread's registered ring table (`IORING_REGISTER_RING_FDS`:
    /// no file lookup per enter), once registered; None: enter by file descriptor.
    ring_index: Option<u32>,
    /// The A/B switches of the environment; each is taken when applied.
    knobs: Knobs,
    /// What [`PuntedWait::for_depth`] chose when files that punt were registered.
    punted: Option<PuntedWait>,
    /// Completions a wait for one waits for while more are in flight (see
    /// [`WaitPolicy::min_batch`]); 1 unless chosen or fixed.
    batch: u32,
    /// Leave a submit alone for the next wait while a batch is at the kernel
    /// ([`PuntedWait::defers_submit`], when [`WaitPolicy::deferred_submit`] asks).
    defer_submit: bool,
    /// A chosen spin's claim on two CPUs, held while the files are registered.
    spin_slot: Option<SpinSlot>,
    spins: SpinCounts,
    timer: DeadlineTimer,
}

/// How the spins of [`WaitPolicy::spin_ns`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpinCounts {
    /// The completions arrived while spinning: no blocking wait.
    pub satisfied: u64,
    /// The budget ran out and the wait blocked.
    pub gave_up: u64,
}

/// `IORING_ENTER_GETEVENTS`: with `DEFER_TASKRUN` only such an enter posts completions.
const ENTER_GETEVENTS: u32 = 1;

impl UringDevice {
    /// A ring for up to `depth` requests in flight. Errors are errnos of `io_uring_setup`
    /// (EPERM when `kernel.io_uring_disabled` forbids it, ENOMEM for the locked-memory limit)
    /// or ENOSYS when the kernel lacks the EXT_ARG wait (Linux < 5.11).
    pub fn new(depth: u32) -> Result<Self, i32> {
        Self::with_wait(depth, crate::options::engine_options().wait)
    }

    /// As [`Self::new`], waiting as `wait` says (see [`crate::uring_wait`]).
    pub fn with_wait(depth: u32, wait: WaitPolicy) -> Result<Self, i32> {
        let depth = depth.clamp(1, 32768);
        // One spare submission entry for the deadline timer.
        let sq_entries = (depth + 1).next_power_of_two();
        let knobs = Knobs::configured();
        let (ring, defer_taskrun) = setup_with_fallback(wait.defer_taskrun, |flags| {
            let mut builder = IoUring::builder();
            builder.setup_cqsize(sq_entries * 2);
            if flags.coop {
                builder.setup_single_issuer().setup_coop_taskrun();
            }
            if flags.defer_taskrun {
                builder.setup_defer_taskrun();
            }
            if knobs.no_sqarray {
                // Linux < 6.6 refuses the flag with EINVAL: then without it, same flags.
                let with = builder.clone().setup_no_sqarray().build(sq_entries);
                if !matches!(&with, Err(e) if e.raw_os_error() == Some(libc::EINVAL)) {
                    return with;
                }
            }
            builder.build(sq_entries)
        })?;
        if !ring.params().is_feature_ext_arg() {
            return Err(libc::ENOSYS);
        }
        let timer = DeadlineTimer::new(ring.params().is_feature_skip_cqe_on_success());
        Ok(UringDevice {
            ring,
            capacity: depth,
            in_flight: 0,
            fixed: Vec::new(),
            files: Vec::new(),
            punt: PuntPolicy::configured(),
            defer_taskrun,
            wait,
            ring_index: None,
            knobs,
            punted: None,
            batch: wait.min_batch.max(1),
            defer_submit: false,
            spin_slot: None,
            spins: SpinCounts::default(),
            timer,
        })
    }

    /// Submits what is queued and waits for `want` completions. With `DEFER_TASKRUN` every
    /// enter carries GETEVENTS, so completions are posted even when not waiting (the eager
    /// submissions between waits, busy polling), as they are without the flag.
    fn enter(&mut self, want: usize) -> std::io::Result<usize> {
        if !self.defer_taskrun {
            return self.ring.submitter().submit_and_wait(want);
        }
        let to_submit = self.ring.submission().len() as u32;
        let entered = if let Some(index) = self.registered_ring() {
            enter_registered(index, to_submit, want as u32, ENTER_GETEVENTS)
        } else {
            // SAFETY: no argument pointer; the count is what the queue holds.
            unsafe {
                self.ring.submitter().enter::<libc::sigset_t>(
                    to_submit,
                    want as u32,
                    ENTER_GETEVENTS,
                    None,
                )
            }
        };
        entered
    }

    /// The ring's registered index, registering it at the first enter (from the shard's own
    /// thread: the table is per thread) when asked to; None when not asked or refused.
    fn registered_ring(&mut self) -> Option<u32> {
        self.apply_iowq_max();
        if self.knobs.ring_fd && self.ring_index.is_none() {
            self.knobs.ring_fd = false;
            self.ring_index = register_ring_fd(self.ring.as_raw_fd());
        }
        self.ring_index
    }

    /// Watches the completion queue until it holds `want` completions or the spin budget is
    /// spent; true when they arrived. With `DEFER_TASKRUN` each look is a non-blocking enter
    /// (completions are posted only inside one).
    fn spin(&mut self, want: usize) -> bool {
        if self.wait.spin_ns == 0 {
            return false;
        }
        let t0 = monotonic_ns();
        loop {
            if self.defer_taskrun {
                let _ = self.enter(0);
            }
            if self.ring.completion().len() >= want {
                self.spins.satisfied += 1;
                return true;
            }
            if monotonic_ns().saturating_sub(t0) > self.wait.spin_ns {
                self.spins.gave_up += 1;
                return false;
            }
            std::hint::spin_loop();
        }
    }

    /// How the spins ended so far (all zero unless the policy spins).
    pub fn spin_counts(&self) -> SpinCounts {
        self.spins
    }

    /// Whether completions wait for the shard's next GETEVENTS enter (`DEFER_TASKRUN`).
    pub fn defers_task_work(&self) -> bool {
        self.defer_taskrun
    }

    /// Has the kernel signal the eventfd `fd` when completions are ready, so an event loop
    /// (epoll, a runtime's reactor) can watch the ring: on a `DEFER_TASKRUN` ring the signal
    /// comes when completion work is queued, which the next GETEVENTS enter posts. Errors
    /// are errnos of `io_uring_register` (EBUSY: one is already registered).
    pub fn register_eventfd(&mut self, fd: RawFd) -> Result<(), i32> {
        self.ring
            .submitter()
            .register_eventfd(fd)
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
    }

    /// Stops signalling the eventfd given to [`Self::register_eventfd`].
    pub fn unregister_eventfd(&mut self) -> Result<(), i32> {
        self.ring
            .submitter()
            .unregister_eventfd()
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
    }

    /// Registers every buffer of `pool` with the ring so requests using them skip per-request
    /// page pinning. Returns false (and leaves the ring unchanged) when the kernel refuses,
    /// e.g. under a low RLIMIT_MEMLOCK on old kernels.
    ///
    /// # Safety
    /// The pool must outlive this device (or [`Self::unregister_buffers`] must be called
    /// before the pool is dropped).
    pub unsafe fn register_buffers(&mut self, pool: &DmaBufferPool) -> bool {
        // SAFETY: forwarded contract.
        unsafe { self.register_pools(std::slice::from_ref(pool)) }
    }

    /// Registers every buffer of every pool, in order, as one table.
    ///
    /// # Safety
    /// As [`Self::register_buffers`], for every pool.
    pub unsafe fn register_pools(&mut self, pools: &[DmaBufferPool]) -> bool {
        self.unregister_buffers();
        let iovecs: Vec<libc::iovec> = pools
            .iter()
            .flat_map(|pool| {
                (0..pool.count()).map(|i| libc::iovec {
                    iov_base: pool.ptr(i).cast(),
                    iov_len: pool.buffer_bytes(),
                })
            })
            .collect();
        if iovecs.is_empty() || iovecs.len() > usize::from(u16::MAX) {
            return false;
        }
        // SAFETY: the iovecs describe live memory owned by the pools; the caller keeps it alive.
        let ok = unsafe { self.ring.submitter().register_buffers(&iovecs) }.is_ok();
        if ok {
            let mut first_index = 0;
            for pool in pools {
                self.fixed.push(FixedRegion {
                    base: pool.ptr(0) as usize,
                    buffer_bytes: pool.buffer_bytes(),
                    count: pool.count(),
                    first_index,
                });
                first_index += pool.count();
            }
        }
        ok
    }

    /// Drops the buffer registration.
    pub fn unregister_buffers(&mut self) {
        if !self.fixed.is_empty() {
            self.fixed.clear();
            let _ = self.ring.submitter().unregister_buffers();
        }
    }

    /// Whether a buffer pool is registered.
    pub fn has_fixed_buffers(&self) -> bool {
        !self.fixed.is_empty()
    }

    /// Registers open files so requests on them skip the per-request file lookup and
    /// reference count (IOSQE_FIXED_FILE). False when the kernel refuses. Each file is probed
    /// with one non-blocking read; when one refuses (it punts to io-wq), the ring's wait and
    /// IOSQE_ASYNC are chosen from its depth ([`crate::uring_wait`]) unless the environment
    /// fixed them.
    pub fn register_files(&mut self, fds: &[RawFd]) -> bool {
        self.unregister_files();
        if fds.is_empty() {
            return false;
        }
        let ok = self.ring.submitter().register_files(fds).is_ok();
        if ok {
            let punts: Vec<bool> = fds.iter().map(|&fd| file_punts(fd)).collect();
            let force_async = if punts.contains(&true) && self.wait.by_depth {
                self.choose_punted_wait().force_async()
            } else {
                self.punt.force_async
            };
            self.files = fds
                .iter()
                .zip(punts)
                .enumerate()
                .map(|(i, (&fd, punts))| RegisteredFile {
                    fd,
                    index: i as u32,
                    force_async: force_async && punts,
                })
                .collect();
        }
        ok
    }

    /// Chooses how this ring waits for its punted requests, from its depth (and takes a
    /// [`SpinSlot`] when it spins).
    fn choose_punted_wait(&mut self) -> PuntedWait {
        // The calling thread is the shard's (SINGLE_ISSUER): a pinned shard sees one CPU.
        let cpus = crate::shards::available_cores();
        let slot = (self.capacity <= crate::uring_wait::SPIN_MAX_DEPTH && self.defer_taskrun)
            .then(|| SpinSlot::take(cpus))
            .flatten();
        let chosen = PuntedWait::for_depth(
            self.capacity,
            self.defer_taskrun,
            slot.is_some(),
            cpus,
            self.wait.deep_inline,
        );
        self.spin_slot = slot.filter(|_| chosen == PuntedWait::Spin);
        if let Some(n) = chosen.io_wq_workers() {
            // Per thread: the bound holds for every ring of the shard, and the kernel keeps it
            // on the ring until the thread's io-wq exists (its first submit).
            let mut max = [n, n];
            if self
                .ring
                .submitter()
                .register_iowq_max_workers(&mut max)
                .is_err()
            {
                // Unbounded, IOSQE_ASYNC would start up to four workers per CPU: inline then
                // (`punted_wait` reports the choice).
                return self.set_punted(PuntedWait::Inline);
            }
        }
        self.set_punted(chosen)
    }

    /// Takes `chosen` as the wait for files that punt.
    fn set_punted(&mut self, chosen: PuntedWait) -> PuntedWait {
        self.wait = chosen.wait(self.wait);
        if self.wait.min_batch == 0 {
            self.batch = chosen.min_batch(self.capacity);
        }
        self.defer_submit = chosen.defers_submit() && self.wait.deferred_submit;
        self.punted = Some(chosen);
        chosen
    }

    /// What the ring chose for files that punt (None: none registered, or the environment
    /// fixed the policy).
    pub fn punted_wait(&self) -> Option<PuntedWait> {
        self.punted
    }

    /// How many completions a wait for one waits for while more are in flight.
    pub fn wait_batch(&self) -> u32 {
        self.batch
    }

    /// Whether requests on the registered `fd` go out with IOSQE_ASYNC.
    pub fn sends_async(&self, fd: RawFd) -> bool {
        self.files.iter().any(|f| f.fd == fd && f.force_async)
    }

    /// Drops the file registration (and a chosen policy with it).
    pub fn unregister_files(&mut self) {
        if self.punted.take().is_some() {
            self.wait = PuntedWait::Inline.wait(self.wait);
            self.batch = self.wait.min_batch.max(1);
            self.defer_submit = false;
            self.spin_slot = None;
        }
        if !self.files.is_empty() {
            self.files.clear();
            let _ = self.ring.submitter().unregister_files();
        }
    }
}

impl Device for UringDevice {
    fn now_ns(&self) -> u64 {
        monotonic_ns()
    }

    fn capacity(&self) -> u32 {
        self.capacity
    }

    unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError> {
        assert!(
            op.user_data < TIMER_UPDATE_TAG,
            "user_data {:#x} is reserved for the ring's deadline timer",
            op.user_data
        );
        if self.in_flight >= self.capacity {
            return Err(DeviceError::QueueFull);
        }
        let entry = self.entry(&op);
        // SAFETY: the device contract makes the caller keep `op.buf` alive and untouched until
        // the completion is reaped.
        unsafe { self.ring.submission().push(&entry) }.map_err(|_| DeviceError::QueueFull)?;
        self.in_flight += 1;
        Ok(())
    }

    fn submit_and_wait(
        &mut self,
        min_complete: u32,
        deadline_ns: Option<u64>,
    ) -> Result<u32, DeviceError> {
        let queued = self.ring.submission().len() as u32;
        let mut want = min_complete.min(self.in_flight) as usize;
        if want > 0 && self.in_flight > self.batch {
            want = want.max(self.batch as usize);
        }
        // Nothing to submit and the completions asked for are already in the ring (the
        // kernel posts them without being entered): entering would only cost a system call.
        // At 128 KiB QD8 weir entered the kernel 1.13 times per write against fio's 1.05.
        if queued == 0 && want > 0 && self.ring.completion().len() >= want {
            return Ok(0);
        }
        // A submit alone on a deep ring that punts, with a batch already at the kernel: the
        // ops go out with the turn's wait, in its one enter.
        if self.defer_submit
            && min_complete == 0
            && deadline_ns.is_none()
            && self.in_flight.saturating_sub(queued) >= self.batch
        {
            return Ok(0);
        }
        // The split policy submits first and waits in a second enter (after a spin, if any);
        // a failed submit leaves the entries queued for the wait's enter to report.
        let mut early = 0;
        let mut queued = queued;
        if self.wait.split && want > 0 {
            if queued > 0 {
                early = self.enter(0).map_or(0, |n| (n as u32).min(queued));
            }
            if self.spin(want) {
                return Ok(early);
            }
            queued = self.ring.submission().len() as u32;
        }
        let sq_before = self.ring.submission().len();
        let result = match deadline_ns {
            None => self.enter(want),
            Some(deadline) => {
                if want == 0 && min_complete > 0 {
                    // Nothing in flight to wait for: an idle shard sleeps until its deadline.
                    let submitted = self.enter(0);
                    sleep_until(deadline);
                    submitted
                } else if want == 0 || self.arm_timer(deadline) {
                    self.enter(want)
                } else {
                    let ts = types::Timespec::from(until(deadline));
                    let args = types::SubmitArgs::new().timespec(&ts);
                    self.ring.submitter().submit_with_args(want, &args)
                }
            }
        };
        // Entries leave the queue in order and the timer's (if one was pushed) is last: the
        // caller's ops submitted are the first `min(submitted, queued)`.
        let pushed = self.ring.submission().len().saturating_sub(sq_before) as u32;
        let ops = |submitted: u32| submitted.min(queued) + early;
        match result {
            Ok(n) => Ok(ops(n as u32)),
            Err(e) => match e.raw_os_error().unwrap_or(libc::EIO) {
                // ETIME: the deadline passed; EINTR: a signal (the caller polls for SIGINT);
                // EBUSY/EAGAIN: completions must be reaped first. None is a failure: the
                // requests were submitted (or stay queued for the next call).
                libc::ETIME | libc::EINTR | libc::EBUSY | libc::EAGAIN => {
                    let left = self.ring.submission().len() as u32;
                    Ok(ops((queued + pushed).saturating_sub(left)))
                }
                errno => Err(DeviceError::Os {
                    call: "io_uring_enter",
                    errno,
                }),
            },
        }
    }

    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        let now = monotonic_ns();
        let mut n = 0;
        for cqe in self.ring.completion() {
            if self.timer.on_completion(cqe.user_data(), cqe.result()) {
                continue;
            }
            out.push(IoCompletion {
                user_data: cqe.user_data(),
                result: cqe.result(),
                completed_at_ns: now,
            });
            n += 1;
        }
        self.in_flight -= n as u32;
        n
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use weir_model::device::{Direction, IoFlags};

    /// A read of an empty pipe: in flight until something is written.
    pub(super) fn pipe_read(user_data: u64, fd: RawFd, buf: &mut [u8; 8]) -> IoOp {
        IoOp {
            user_data,
            direction: Direction::Read,
            fd,
            offset_bytes: 0,
            len_bytes: 8,
            buf: buf.as_mut_ptr(),
            flags: IoFlags {
                nowait: false,
                dsync: false,
            },
            vectored: None,
        }
    }

    pub(super) fn pipe() -> [RawFd; 2] {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
        fds
    }

    /// A ring registered in the thread's ring table enters by index and still completes;
    /// a batch wait asks for more completions only while more are in flight.
    #[test]
    fn registered_ring_and_batch_wait_complete_reads() {
        let mut dev = UringDevice::new(4).expect("io_uring");
        dev.knobs.ring_fd = true;
        dev.batch = 2;
        let fds = pipe();
        let mut bufs = [[0u8; 8]; 3];
        // SAFETY: writing 9 bytes from a live buffer to an open pipe.
        assert_eq!(
            unsafe { libc::write(fds[1], b"abcdefghi".as_ptr().cast(), 9) },
            9
        );
        for (i, buf) in bufs.iter_mut().enumerate() {
            // SAFETY: every op is reaped below, before `bufs` goes out of scope.
            unsafe { dev.push(pipe_read(i as u64, fds[0], buf)) }.expect("push");
        }
        let mut out = Vec::new();
        while out.len() < 2 {
            dev.submit_and_wait(1, None).expect("wait");
            dev.reap(&mut out);
        }
        // SAFETY: as above; the third read gets these bytes.
        assert_eq!(unsafe { libc::write(fds[1], b"z".as_ptr().cast(), 1) }, 1);
        while out.len() < 3 {
            dev.submit_and_wait(1, None).expect("wait");
            dev.reap(&mut out);
        }
        let mut got: Vec<i32> = out.iter().map(|c| c.result).collect();
        got.sort();
        assert_eq!(got, vec![1, 1, 8]);
        if dev.defers_task_work() {
            assert!(dev.ring_index.is_some(), "Linux 5.18+ registers ring fds");
        }
        drop(dev);
        for fd in fds {
            // SAFETY: closing descriptors this test opened.
            unsafe { libc::close(fd) };
        }
    }

    /// A spinning wait whose completion is already there (the pipe holds data, so the read
    /// completes inside the submitting enter) returns without blocking; one whose completion
    /// comes only later (a writer thread 50 ms on) gives up its spin and blocks until it does.
    #[test]
    fn spin_is_satisfied_or_gives_up_and_blocks() {
        for defer_taskrun in [false, true] {
            let policy = WaitPolicy {
                split: true,
                spin_ns: 200_000,
                defer_taskrun,
                by_depth: false,
                min_batch: 0,
                deep_inline: false,
                deferred_submit: false,
            };
            let mut dev = UringDevice::with_wait(1, policy).expect("io_uring");
            let fds = pipe();
            let mut buf = [0u8; 8];
            // SAFETY: writing 3 bytes from a live buffer to an open pipe.
            assert_eq!(unsafe { libc::write(fds[1], b"now".as_ptr().cast(), 3) }, 3);
            // SAFETY: the op is reaped below, before `buf` goes out of scope.
            unsafe { dev.push(pipe_read(7, fds[0], &mut buf)) }.expect("push");
            assert_eq!(dev.submit_and_wait(1, None).expect("wait"), 1);
            let mut out = Vec::new();
            assert_eq!(dev.reap(&mut out), 1);
            assert_eq!((out[0].user_data, out[0].result), (7, 3));
            assert_eq!(dev.spin_counts().satisfied, 1, "defer {defer_taskrun}");

            let writer_fd = fds[1];
            let writer = std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(50));
                // SAFETY: as above; the descriptor stays open until the thread is joined.
                unsafe { libc::write(writer_fd, b"later".as_ptr().cast(), 5) }
            });
            // SAFETY: as above.
            unsafe { dev.push(pipe_read(8, fds[0], &mut buf)) }.expect("push");
            out.clear();
            while out.is_empty() {
                dev.submit_and_wait(1, None).expect("wait");
                dev.reap(&mut out);
            }
            assert_eq!(writer.join().expect("writer"), 5);
            assert_eq!((out[0].user_data, out[0].result), (8, 5));
            let spins = dev.spin_counts();
            assert_eq!(
                (spins.satisfied, spins.gave_up),
                (1, 1),
                "defer {defer_taskrun}"
            );
            assert_eq!(dev.defers_task_work(), defer_taskrun);
            drop(dev);
            for fd in fds {
                // SAFETY: closing descriptors this test opened.
                unsafe { libc::close(fd) };
            }
        }
    }
}
