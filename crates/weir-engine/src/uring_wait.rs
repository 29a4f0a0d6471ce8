//! How the io_uring backend waits for completions, and how its ring is set up for that.
//!
//! The ring is set up as fio sets up its own (`SINGLE_ISSUER` + `DEFER_TASKRUN` +
//! `COOP_TASKRUN`). How it waits depends on whether its files punt every request to io-wq
//! (zram and other bio-based drivers without `REQ_NOWAIT`: the engine knows from the one
//! `RWF_NOWAIT` probe read of each registered file answering EOPNOTSUPP, see [`crate::iowq`]).
//! On files that do not punt (vda, NVMe, files on ext4/XFS) the kernel completes by interrupt
//! and the ring always waits in one blocking enter that also submits: nothing spins there.
//! On files that punt, the policy is chosen per ring from its depth ([`PuntedWait::for_depth`]),
//! from a depth sweep and a crossover sweep on zram (docs/engine.md):
//! - depth <= [`SPIN_MAX_DEPTH`]: `Spin` (IOSQE_ASYNC, submit, then up to [`AUTO_SPIN_NS`] of
//!   non-blocking GETEVENTS enters before blocking). The shard never sleeps and one io-wq
//!   worker never runs dry: ~335 K IOPS at QD2-4 against fio's best 52-130 K; 1.08-1.14x fio
//!   at QD1. It needs `DEFER_TASKRUN` (without it the completion is task work the shard runs
//!   only on entering the kernel, so a user-space watch never sees it) and a CPU of its own
//!   beside one for the worker ([`SpinSlot`]); without either it is `AsyncEnter`.
//! - deeper: `Inline` (no IOSQE_ASYNC, one enter): the kernel's one bounded worker per ring
//!   runs the reads back to back while the shard sleeps.
//! - deeper, asked for with `WEIR_URING_DEEP=async` and two or more CPUs for the shard:
//!   `AsyncBounded` (IOSQE_ASYNC, the shard's io-wq bounded to [`DEEP_WORKERS`] workers, one
//!   enter): two workers run the reads side by side. Beside other load it measured 1.3-2.0x the
//!   inline wait at QD8 and QD32; on an idle machine (5 rounds) 0.92x inline at QD32 (423 K
//!   against 461 K IOPS), so it is opt-in: under load the second worker wins a larger share
//!   of busy CPUs, on an idle machine the two workers' hand-offs cost more than they add
//!   (docs/engine.md).
//!
//! Both deep choices wait for a quarter of the depth when asked for one completion
//! ([`PuntedWait::min_batch`]): the workers keep the rest queued while the shard sleeps
//! through the batch. Against half the depth with each turn's ops left for its one wait
//! ([`PuntedWait::defers_submit`]), two A/Bs on an idle machine (5 and 9 rotated rounds) had
//! the quarter with eager submits ahead (1.06x / 1.13x the IOPS, paired; CPU per
//! I/O within 1-4%), so that is the default and the other is opt-in
//! (`WEIR_URING_SUBMIT=deferred` with `WEIR_URING_BATCH=<half>`).
//!
//! `WEIR_URING_WAIT` (`auto`, `enter`, `split`, `spin:<us>`) or `WEIR_URING_PUNT` (`async`,
//! `inline`) set to anything but `auto` turns the choice off: the ring then waits as the
//! variables say (an unset one keeps its old default: one enter, IOSQE_ASYNC), for A/B runs.
//! `WEIR_URING_DEFER=off` asks for a ring without `DEFER_TASKRUN` in both cases.
//! The spin's time is the shard thread's own CPU time, so a benchmark that counts the
//! process's user+sys seconds counts it.

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
    /// Replace `split` and `spin_ns` (and IOSQE_ASYNC) by [`PuntedWait::for_depth`] when the
    /// ring's files punt; false when the environment fixed them.
    pub by_depth: bool,
    /// A wait for one completion waits for this many when more than this many are in
    /// flight: fewer wake-ups of the shard per I/O, at the price of completions found up to a
    /// batch late (their latency is read when they are reaped). 0: chosen with the wait
    /// ([`PuntedWait::min_batch`]; 1 where nothing is chosen); `WEIR_URING_BATCH=<n>` fixes it.
    pub min_batch: u32,
    /// A deep ring chooses `Inline` even with CPUs for `AsyncBounded` (the default;
    /// `WEIR_URING_DEEP=async` asks for `AsyncBounded`, for the A/B).
    pub deep_inline: bool,
    /// A deep ring on files that punt leaves a lone submit for the turn's wait
    /// ([`PuntedWait::defers_submit`]); off by default, `WEIR_URING_SUBMIT=deferred` for
    /// the A/B (`eager`, the default, submits each op as the shard loop pushes it).
    pub deferred_submit: bool,
}

impl Default for WaitPolicy {
    fn default() -> Self {
        WaitPolicy {
            split: false,
            spin_ns: 0,
            defer_taskrun: true,
            by_depth: true,
            min_batch: 0,
            deep_inline: true,
            deferred_submit: false,
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
                "WEIR_URING_WAIT={v:?} is not a wait policy: use auto, enter, split or \
                 spin:<microseconds> (e.g. spin:20)"
            ),
            WaitPolicyError::UnknownDefer(v) => {
                write!(f, "WEIR_URING_DEFER={v:?} is not known: use on or off")
            }
        }
    }
}

impl std::error::Error for WaitPolicyError {}

impl WaitPolicy {
    /// The policy the two variables name (None: unset). Any `wait` but `auto` fixes it.
    pub fn parse(wait: Option<&str>, defer: Option<&str>) -> Result<Self, WaitPolicyError> {
        let mut policy = WaitPolicy::default();
        match wait {
            None | Some("" | "auto") => {}
            Some("enter") => policy.by_depth = false,
            Some("split") => (policy.split, policy.by_depth) = (true, false),
            Some(v) => {
                let spin_us: u64 = v
                    .strip_prefix("spin:")
                    .and_then(|n| n.parse().ok())
                    .filter(|&us| (1..=1_000_000).contains(&us))
                    .ok_or_else(|| WaitPolicyError::UnknownWait(v.to_string()))?;
                policy.split = true;
                policy.spin_ns = spin_us * 1_000;
                policy.by_depth = false;
            }
        }
        match defer {
            None | Some("" | "on") => {}
            Some("off") => policy.defer_taskrun = false,
            Some(v) => return Err(WaitPolicyError::UnknownDefer(v.to_string())),
        }
        Ok(policy)
    }
}

/// The deepest ring that spins on files that punt: the crossover of the sweeps (spin
/// leads at QD2-4 with one worker busy and none asleep; from QD8 the concurrent workers
/// IOSQE_ASYNC adds take the CPU the spinning shard holds).
/// See docs/engine.md.
pub const SPIN_MAX_DEPTH: u32 = 4;

/// How long a chosen spin polls before it blocks: 20 us (a 5 us spin mostly
/// gave up and then paid the blocking wake as well; 100 us gained nothing more).
pub const AUTO_SPIN_NS: u64 = 20_000;

/// The io-wq workers of an `AsyncBounded` ring's shard: two ran side by side best in a
/// sweep on two CPUs (three: 0.91x two; one: as inline); see docs/engine.md.
pub const DEEP_WORKERS: u32 = 2;

/// How a ring whose files punt every request to io-wq waits, chosen from its depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PuntedWait {
    /// IOSQE_ASYNC, submit, then poll the ring for [`AUTO_SPIN_NS`] before blocking.
    Spin,
    /// IOSQE_ASYNC and one blocking enter (a shallow ring that cannot spin: no
    /// `DEFER_TASKRUN`, or no CPU to spare for it).
    AsyncEnter,
    /// No IOSQE_ASYNC (the kernel's one bounded worker) and one blocking enter.
    Inline,
    /// IOSQE_ASYNC with the shard's io-wq bounded to [`DEEP_WORKERS`], one blocking enter.
    AsyncBounded,
}

impl PuntedWait {
    /// The choice for a ring of `depth` requests; `defer_taskrun`: the ring got it (an old
    /// kernel's EINVAL falls back to a ring without); `spare_cpu`: a [`SpinSlot`] was free;
    /// `cpus`: the CPUs the shard may run on; `deep_inline`: [`WaitPolicy::deep_inline`].
    pub fn for_depth(
        depth: u32,
        defer_taskrun: bool,
        spare_cpu: bool,
        cpus: usize,
        deep_inline: bool,
    ) -> Self {
        if depth > SPIN_MAX_DEPTH {
            if cpus >= 2 && !deep_inline {
                PuntedWait::AsyncBounded
            } else {
                PuntedWait::Inline
            }
        } else if defer_taskrun && spare_cpu {
            PuntedWait::Spin
        } else {
            PuntedWait::AsyncEnter
        }
    }

    /// Whether requests on the punting files go out with IOSQE_ASYNC.
    pub fn force_async(self) -> bool {
        !matches!(self, PuntedWait::Inline)
    }

    /// The completions a wait of this choice waits for on a ring of `depth`: a quarter of
    /// the depth when deep, else 1. Why: the one io-wq worker is the limit at depth, and
    /// waking the shard is the costliest thing it does besides the read (profiled:
    /// 0.45-0.63 us of its ~2.5 us per read), so a wait for several completions
    /// wakes it less often, while three quarters of the depth stay queued for the workers
    /// as the shard reaps and refills. Half the depth, with deferred submits, lost both A/Bs
    /// to this (docs/engine.md).
    pub fn min_batch(self, depth: u32) -> u32 {
        match self {
            PuntedWait::Inline | PuntedWait::AsyncBounded => (depth / 4).max(1),
            _ => 1,
        }
    }

    /// Whether a submit alone (no wait: the shard loop's eager submission of each op) may
    /// be left for the next wait's enter while a batch is already at the kernel, when
    /// [`WaitPolicy::deferred_submit`] asks for it. True for the deep choices: the workers
    /// have a batch or more queued, so an op a few microseconds later costs no I/O, and the
    /// turn's ops go out in one enter instead of one each. Opt-in: on an idle machine the
    /// eager submits kept the one worker fed better than the saved enters
    /// paid for. A shallow ring submits at once either way.
    pub fn defers_submit(self) -> bool {
        matches!(self, PuntedWait::Inline | PuntedWait::AsyncBounded)
    }

    /// The bound this choice puts on the shard's io-wq workers (None: the kernel's own).
    pub fn io_wq_workers(self) -> Option<u32> {
        (self == PuntedWait::AsyncBounded).then_some(DEEP_WORKERS)
    }

    /// The wait this choice makes of `base` (which keeps its `defer_taskrun`).
    pub fn wait(self, base: WaitPolicy) -> WaitPolicy {
        let spin_ns = if self == PuntedWait::Spin {
            AUTO_SPIN_NS
        } else {
            0
        };
        WaitPolicy {
            split: spin_ns > 0,
            spin_ns,
            ..base
        }
    }
}

/// Rings of this process spinning now: each holds its shard's CPU and keeps one io-wq worker
/// busy on another, so a ring may spin only while two CPUs per spinning ring are allowed.
static SPINNING_RINGS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A spinning ring's claim on two CPUs (its shard's and its worker's), given back on drop.
/// A `weir tune`/`explore` run with one shard per CPU pins every shard, so its shards see one
/// allowed CPU each and none spins; `weir run --shards 1` on two CPUs spins.
#[derive(Debug)]
pub struct SpinSlot(());

impl SpinSlot {
    /// A slot when `(spinning + 1) * 2 <= allowed_cpus`.
    pub fn take(allowed_cpus: usize) -> Option<SpinSlot> {
        use std::sync::atomic::Ordering;
        SPINNING_RINGS
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                ((n + 1) * 2 <= allowed_cpus).then_some(n + 1)
            })
            .ok()
            .map(|_| SpinSlot(()))
    }
}

impl Drop for SpinSlot {
    fn drop(&mut self) {
        SPINNING_RINGS.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
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

    /// Shallow rings spin when they can, deep ones stay inline; an environment value but
    /// `auto` turns the choice off.
    #[test]
    fn depth_chooses_the_wait_and_the_environment_overrides_it() {
        for depth in 1..=SPIN_MAX_DEPTH {
            assert_eq!(
                PuntedWait::for_depth(depth, true, true, 2, false),
                PuntedWait::Spin
            );
            assert_eq!(
                PuntedWait::for_depth(depth, true, false, 2, false),
                PuntedWait::AsyncEnter
            );
        }
        for depth in [SPIN_MAX_DEPTH + 1, 8, 32, 1024] {
            let deep = |cpus, inline| PuntedWait::for_depth(depth, true, true, cpus, inline);
            assert_eq!(deep(2, false), PuntedWait::AsyncBounded, "depth {depth}");
            assert_eq!(deep(1, false), PuntedWait::Inline, "pinned, depth {depth}");
            assert_eq!(deep(8, true), PuntedWait::Inline, "asked, depth {depth}");
        }
        let base = WaitPolicy::default();
        let spin = PuntedWait::Spin.wait(base);
        assert!(spin.split && spin.spin_ns == AUTO_SPIN_NS && spin.by_depth);
        assert_eq!(PuntedWait::Inline.wait(spin), base);
        assert_eq!(PuntedWait::Inline.min_batch(32), 8);
        assert_eq!(PuntedWait::AsyncBounded.min_batch(32), 8);
        assert_eq!(PuntedWait::Inline.min_batch(5), 1);
        assert_eq!(PuntedWait::Inline.min_batch(16), 4);
        assert_eq!(PuntedWait::Inline.min_batch(1), 1);
        assert_eq!(PuntedWait::Spin.min_batch(4), 1);
        assert!(PuntedWait::Inline.defers_submit() && PuntedWait::AsyncBounded.defers_submit());
        assert!(!PuntedWait::Spin.defers_submit() && !PuntedWait::AsyncEnter.defers_submit());
        assert!(PuntedWait::AsyncEnter.force_async() && !PuntedWait::Inline.force_async());
        assert!(PuntedWait::AsyncBounded.force_async());
        assert_eq!(PuntedWait::AsyncBounded.io_wq_workers(), Some(DEEP_WORKERS));
        assert_eq!(PuntedWait::Inline.io_wq_workers(), None);
        assert_eq!(PuntedWait::Spin.io_wq_workers(), None);
        for auto in [None, Some(""), Some("auto")] {
            assert!(
                WaitPolicy::parse(auto, None).expect("auto").by_depth,
                "{auto:?}"
            );
        }
        for fixed in ["enter", "split", "spin:20"] {
            assert!(!WaitPolicy::parse(Some(fixed), None).expect(fixed).by_depth);
        }
    }

    /// An old kernel answers DEFER_TASKRUN with EINVAL; the ring built without it must not
    /// spin (its completions would reach the shard only when it enters the kernel).
    #[test]
    fn a_ring_refused_defer_taskrun_with_einval_does_not_spin() {
        let (ring, defers) = setup_with_fallback(true, |f| {
            if f.defer_taskrun {
                Err(std::io::Error::from_raw_os_error(libc::EINVAL))
            } else {
                Ok("ring")
            }
        })
        .expect("fallback");
        assert_eq!((ring, defers), ("ring", false));
        assert_eq!(
            PuntedWait::for_depth(1, defers, true, 2, false),
            PuntedWait::AsyncEnter
        );
    }

    /// Two CPUs per spinning ring: one CPU never spins, four hold two spinning rings, and a
    /// dropped slot is free again. (No other unit test takes slots: only rings on files that
    /// punt do, and the unit tests' rings read pipes.)
    #[test]
    fn spin_slots_hold_two_cpus_each() {
        assert!(SpinSlot::take(1).is_none());
        let a = SpinSlot::take(4).expect("first");
        let b = SpinSlot::take(4).expect("second");
        assert!(SpinSlot::take(4).is_none(), "a third needs six CPUs");
        drop(a);
        let c = SpinSlot::take(4).expect("freed");
        drop((b, c));
        assert!(SpinSlot::take(2).is_some());
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
