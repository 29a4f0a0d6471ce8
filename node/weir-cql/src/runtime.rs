//! Where the sessions' tokio tasks run: `WEIR_CQL_RUNTIME`.
//!
//! - `js` (the default on Linux): a current_thread runtime driven by the JS
//!   thread itself. libuv watches the runtime's epoll descriptor (readable when a socket or a
//!   cross-thread wake has an event), and its callback runs the runtime until it has nothing
//!   left to do; a `submit` runs it once right away, so a request is written to its socket
//!   before `submit` returns (a `submit` from a completion callback run inside a pump, see
//!   src/direct.rs, adds its task to that pump). No second thread takes part in a request. Paired runs against
//!   `worker` on an idle machine: 6-12% less time and 6-8% less client CPU per sequential
//!   request; concurrent runs are server-bound either way.
//! - `worker` (the default elsewhere, and the fallback when `js` cannot start; the
//!   multi-thread runtime with `WEIR_CQL_WORKER_THREADS` workers, 1 by default): every request
//!   wakes the worker (JS -> worker), and every answer wakes the JS thread (worker -> JS). On a
//!   client pinned to one CPU each wake-up is a context switch.
//! - `thread`: the same current_thread runtime on one dedicated thread (the A/B control for
//!   `js`: the same scheduler, but two wake-ups per request again).
//!
//! Running "until idle" needs to know when tokio is about to block: tokio calls the
//! `on_thread_park` hook only when its run queue is empty. The hook ends the pump by waking
//! the `block_on` future; tokio then polls its driver once without blocking
//! (<https://github.com/tokio-rs/tokio/issues/8212>), and the future returns only if that
//! poll dispatched no I/O event and queued no task (tokio's event count and queue depths,
//! tokio_unstable metrics enabled by .cargo/config.toml); otherwise the pump runs on. An event left on the epoll descriptor
//! keeps it readable for libuv; an event that poll took would not be reported again, which
//! is why the pump may not end before its task ran (else the answer is never delivered).
//! The hook does not ask the kernel first (a `poll` of the descriptor per park) and
//! `submit`'s task is spawned inside the pump, not from outside it (which would write
//! tokio's eventfd): 8.9 system calls per sequential select instead of 13.6. A build without the
//! metrics keeps the `poll` and leaves a taken event to the timer. Timers (request
//! timeouts, speculative executions, heartbeats) fire when the runtime runs: an unref'd
//! libuv timer, re-armed after every pump, runs it 1 ms later while a caller waits on a
//! task, 10 ms later otherwise, so a timer fires at most that late. [`stats`] counts pumps and deliveries per [`Cause`], so a test
//! and the benchmarks can see that no answer waits for the timer.

use std::future::Future;
#[cfg(unix)]
use std::os::fd::RawFd;
/// A descriptor number; `js` mode, the only user, runs on Linux alone.
#[cfg(not(unix))]
type RawFd = i32;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::task::{Context, Poll, Waker};

/// The JS-thread runtime, when `js` mode is on.
static JS_RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
/// Its epoll descriptor (what libuv watches), -1 before it is known.
static EPOLL_FD: AtomicI32 = AtomicI32::new(-1);
/// Set by the park hook when the runtime has nothing to do: the pump may return.
static IDLE: AtomicBool = AtomicBool::new(false);
/// The waker of the running pump's `block_on` future.
static PUMP_WAKER: Mutex<Option<Waker>> = Mutex::new(None);
/// tokio's count of I/O events dispatched when the park hook last ended a pump (built with
/// `--cfg tokio_unstable` only; see [`pump`]).
static EVENTS_AT_IDLE: AtomicU64 = AtomicU64::new(0);
/// Whether a pump is running: a pump is never re-entered (a JS callback that submits while
/// the runtime runs only queues its task; the running pump picks it up).
static PUMPING: AtomicBool = AtomicBool::new(false);

/// Which runtime the sessions use, chosen once at module load.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Worker,
    Js,
    Thread,
}

static MODE: OnceLock<Mode> = OnceLock::new();

pub fn mode() -> Mode {
    *MODE.get().unwrap_or(&Mode::Worker)
}

/// The descriptors of this process that are epoll instances.
fn epoll_fds() -> Vec<RawFd> {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let fd: RawFd = e.file_name().to_str()?.parse().ok()?;
            let target = std::fs::read_link(e.path()).ok()?;
            (target.to_str()? == "anon_inode:[eventpoll]").then_some(fd)
        })
        .collect()
}

/// Builds the runtimes at module load. napi-rs keeps a multi-thread runtime for the calls
/// that return promises (connect, prepare, metadata): rare, so their hop does not matter.
pub fn init() {
    let workers = std::env::var("WEIR_CQL_WORKER_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(1);
    let policy = crate::worker_policy::from_env();
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name("weir-cql")
        .on_thread_start(move || crate::worker_policy::apply(policy))
        .enable_all()
        .build()
    {
        Ok(rt) => napi::bindgen_prelude::create_custom_tokio_runtime(rt),
        // Without a custom runtime napi-rs builds its default one on first use.
        Err(e) => eprintln!(
            "weir-cql: cannot build a {workers}-thread tokio runtime ({e}); using the default"
        ),
    }
    let wanted = std::env::var("WEIR_CQL_RUNTIME").unwrap_or_else(|_| "js".into());
    let mode = match wanted.as_str() {
        "worker" => Mode::Worker,
        "thread" => Mode::Thread,
        "js" => Mode::Js,
        other => {
            eprintln!(
                "weir-cql: WEIR_CQL_RUNTIME={other:?} is not a runtime; use js (the default), worker or thread; using js"
            );
            Mode::Js
        }
    };
    // The JS-thread runtime watches an epoll descriptor: Linux only (`thread` runs anywhere).
    let mode = if mode == Mode::Js && !cfg!(target_os = "linux") {
        Mode::Worker
    } else {
        mode
    };
    let mode = match mode {
        Mode::Worker => Mode::Worker,
        Mode::Js => {
            match build_js_runtime() {
                Ok(()) => Mode::Js,
                Err(why) => {
                    eprintln!("weir-cql: WEIR_CQL_RUNTIME=js unavailable ({why}); using the worker runtime");
                    Mode::Worker
                }
            }
        }
        Mode::Thread => match build_js_runtime().and_then(|()| drive_on_thread()) {
            Ok(()) => Mode::Thread,
            Err(why) => {
                eprintln!("weir-cql: WEIR_CQL_RUNTIME=thread unavailable ({why}); using the worker runtime");
                Mode::Worker
            }
        },
    };
    let _ = MODE.set(mode);
}

/// `thread` mode: one thread runs the current_thread runtime for ever (it blocks in tokio's
/// park when idle). PUMPING stays set, so `pump` on the JS thread does nothing.
fn drive_on_thread() -> Result<(), String> {
    PUMPING.store(true, Ordering::Release);
    std::thread::Builder::new()
        .name("weir-cql-rt".into())
        .spawn(|| {
            if let Some(rt) = JS_RUNTIME.get() {
                rt.block_on(std::future::pending::<()>());
            }
        })
        .map(|_| ())
        .map_err(|e| format!("cannot start the runtime thread: {e}"))
}

fn build_js_runtime() -> Result<(), String> {
    // The runtime's epoll descriptor is the one that appears while it is built.
    let before = epoll_fds();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .on_thread_park(before_park)
        .build()
        .map_err(|e| format!("cannot build a current_thread runtime: {e}"))?;
    let new: Vec<RawFd> = epoll_fds()
        .into_iter()
        .filter(|fd| !before.contains(fd))
        .collect();
    // mio keeps a duplicate of its epoll descriptor (the driver's registry), so two new
    // descriptors may name one epoll instance: the same watched descriptors in fdinfo.
    let watched = |fd: RawFd| {
        std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}"))
            .map(|t| {
                t.lines()
                    .filter(|l| l.starts_with("tfd:"))
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    let Some(&fd) = new.first() else {
        return Err("no new epoll descriptor appeared while the runtime was built".into());
    };
    if new.iter().any(|&other| watched(other) != watched(fd)) {
        return Err(format!(
            "{} new epoll descriptors with different contents while the runtime was built",
            new.len()
        ));
    }
    EPOLL_FD.store(fd, Ordering::Relaxed);
    JS_RUNTIME
        .set(rt)
        .map_err(|_| "the runtime was already built".to_string())
}

pub fn epoll_fd() -> RawFd {
    EPOLL_FD.load(Ordering::Relaxed)
}

/// Whether the epoll descriptor has an event waiting (does not consume it).
#[cfg(unix)]
fn epoll_has_event() -> bool {
    let mut p = libc::pollfd {
        fd: epoll_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, timeout 0: poll only writes p.revents.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n > 0 && (p.revents & libc::POLLIN) != 0
}

/// Without `poll` there is no `js` mode (see [`init`]), so nothing asks.
#[cfg(not(unix))]
fn epoll_has_event() -> bool {
    false
}

/// tokio's park hook (JS thread, run queue empty): end the pump. tokio then polls its
/// driver once without blocking (`epoll_wait` with timeout 0), and [`UntilIdle`] ends the
/// pump only if that poll found nothing: asking the kernel first (a `poll` of the epoll
/// descriptor per park, 3.5 per request) cost more than it saved. Without tokio's event
/// count (no `tokio_unstable`) an event taken there would go unseen, so that build still
/// asks first.
fn before_park() {
    if mode() == Mode::Thread || !PUMPING.load(Ordering::Relaxed) {
        return;
    }
    if io_events().is_none() && epoll_has_event() {
        // An event is waiting: tokio's park returns at once and handles it.
        return;
    }
    IDLE.store(true, Ordering::Relaxed);
    if let Some(n) = io_events() {
        EVENTS_AT_IDLE.store(n, Ordering::Relaxed);
    }
    widen_race_window();
    if let Ok(mut w) = PUMP_WAKER.lock() {
        if let Some(w) = w.take() {
            w.wake();
        }
    }
}

/// Test hook: `WEIR_CQL_TEST_PARK_DELAY_US=N` sleeps N us between the park hook's check and
/// tokio's last driver poll while a caller waits on a task, so that a reply almost surely
/// lands in the window where that poll takes it off the epoll descriptor (the lost pump the
/// repump in [`pump`] exists for; test/integration/runtime.test.js). Unset: no cost but one
/// load of a cached value.
fn widen_race_window() {
    static DELAY_US: OnceLock<u64> = OnceLock::new();
    let us = *DELAY_US.get_or_init(|| {
        std::env::var("WEIR_CQL_TEST_PARK_DELAY_US")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    });
    // Not in a timer pump: sleeping there lets it take replies libuv was about to report,
    // which the test would count as replies that waited for the timer.
    if us > 0 && IN_FLIGHT.load(Ordering::Relaxed) > 0 && !TIMER_PUMP.load(Ordering::Relaxed) {
        std::thread::sleep(std::time::Duration::from_micros(us));
    }
}

/// The `block_on` future of a pump: ready once the park hook found nothing left to do
/// and the driver poll after it neither dispatched an event nor queued a task (a timer).
/// Its first poll spawns the tasks `submit` left in [`PENDING`].
struct UntilIdle;

/// Driver polls one pump may run through before it ends with work left, so that a client
/// whose answers keep coming (completion callbacks submit inside the pump, src/direct.rs)
/// still gives libuv's other callbacks and timers their turn; the timer runs the next pump
/// in the following loop turn.
const PUMP_BUDGET: u32 = 256;
/// The running pump's driver polls so far.
static PUMP_POLLS: AtomicU32 = AtomicU32::new(0);
/// Set when a pump ended on its budget with work left: the next pump is due at once.
static OVER_BUDGET: AtomicBool = AtomicBool::new(false);

impl Future for UntilIdle {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        spawn_pending();
        if PUMP_POLLS.fetch_add(1, Ordering::Relaxed) >= PUMP_BUDGET {
            OVER_BUDGET.store(true, Ordering::Relaxed);
            return Poll::Ready(());
        }
        if IDLE.swap(false, Ordering::Relaxed) {
            if !work_since_idle() {
                return Poll::Ready(());
            }
            // The driver poll after the hook took an event (which libuv will never report)
            // or a timer queued a task: run it in this pump.
            REPUMPS.fetch_add(1, Ordering::Relaxed);
        }
        if let Ok(mut w) = PUMP_WAKER.lock() {
            *w = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// What started a pump: a native call (`submit`, `pump`, `shutdown`), libuv seeing the
/// epoll descriptor readable, the timer, or the timer run at once after a pump that ended on
/// its budget with work left (its answers are not replies that waited for the timer).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Cause {
    Call = 0,
    Readable = 1,
    Timer = 2,
    Continue = 3,
}

/// Per [`Cause`]: pumps run, and answers delivered to JS right after them. Answers after a
/// timer pump are replies that waited for the timer (a lost wake-up); `runtimeStats()`
/// shows them to tests and benchmarks.
static PUMPS: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
static ANSWERS: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
/// Whether the running pump is a timer pump (for the test hook [`widen_race_window`]).
static TIMER_PUMP: AtomicBool = AtomicBool::new(false);
/// Times a pump went on after the park hook had ended it, because tokio's last driver poll
/// took an event or a task was queued (see [`UntilIdle`] and [`pump`]).
static REPUMPS: AtomicU64 = AtomicU64::new(0);

/// The counters above, as `(pumps per cause, answers per cause, repumps)`.
pub fn stats() -> ([u64; 4], [u64; 4], u64) {
    let read = |a: &[AtomicU64; 4]| [0, 1, 2, 3].map(|i| a[i].load(Ordering::Relaxed));
    (
        read(&PUMPS),
        read(&ANSWERS),
        REPUMPS.load(Ordering::Relaxed),
    )
}

/// Runs the JS-thread runtime until it has nothing to do. Must be called on the JS thread;
/// a call while a pump runs (re-entry from a callback) returns at once.
pub fn pump(cause: Cause) {
    let Some(rt) = JS_RUNTIME.get() else { return };
    if PUMPING.swap(true, Ordering::Acquire) {
        return;
    }
    PUMPS[cause as usize].fetch_add(1, Ordering::Relaxed);
    CAUSE.store(cause as u8, Ordering::Relaxed);
    TIMER_PUMP.store(cause == Cause::Timer, Ordering::Relaxed);
    PUMP_POLLS.store(0, Ordering::Relaxed);
    OVER_BUDGET.store(false, Ordering::Relaxed);
    loop {
        IDLE.store(false, Ordering::Relaxed);
        rt.block_on(UntilIdle);
        if OVER_BUDGET.load(Ordering::Relaxed) {
            break;
        }
        // After the hook ended the pump, tokio polled its driver once more without blocking
        // (https://github.com/tokio-rs/tokio/issues/8212). An event it took there is off the
        // epoll descriptor, so libuv will not report it: its task waits in tokio's queue. Run
        // it now.
        if work_since_idle() {
            REPUMPS.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        break;
    }
    PUMPING.store(false, Ordering::Release);
    arm_timer();
    // Answers went to JS from their tasks (src/direct.rs); any left queued go now.
    let delivered = crate::direct::drain();
    ANSWERS[cause as usize].fetch_add(delivered, Ordering::Relaxed);
}

/// The [`Cause`] of the running (or last) pump.
static CAUSE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Whether the caller runs inside a pump of the `js` runtime (a task of it, on the JS
/// thread), where an answer can go to JS at once (src/direct.rs).
pub fn in_pump() -> bool {
    mode() == Mode::Js && PUMPING.load(Ordering::Relaxed)
}

/// Whether at most one awaited task is in flight (the one about to deliver its answer).
pub fn alone() -> bool {
    IN_FLIGHT.load(Ordering::Relaxed) <= 1
}

/// Counts an answer delivered inside the running pump, under its [`Cause`].
pub fn count_answer() {
    let cause = CAUSE.load(Ordering::Relaxed) as usize;
    ANSWERS[cause.min(3)].fetch_add(1, Ordering::Relaxed);
}

/// Whether the runtime got work after the park hook ended the pump: an I/O event its last
/// driver poll dispatched, or a task queued (a timer fired there, or another thread woke
/// one). `false` when tokio does not report its event count.
fn work_since_idle() -> bool {
    #[cfg(tokio_unstable)]
    {
        let Some(rt) = JS_RUNTIME.get() else {
            return false;
        };
        let m = rt.metrics();
        m.io_driver_ready_count() > EVENTS_AT_IDLE.load(Ordering::Relaxed)
            || m.worker_local_queue_depth(0) > 0
            || m.global_queue_depth() > 0
    }
    #[cfg(not(tokio_unstable))]
    {
        false
    }
}

/// The I/O events tokio's driver has dispatched so far, when tokio reports it (a build with
/// `--cfg tokio_unstable`, as node/weir-cql/.cargo/config.toml sets); otherwise `None` and a
/// reply taken by the last driver poll waits for the timer.
fn io_events() -> Option<u64> {
    #[cfg(tokio_unstable)]
    {
        JS_RUNTIME
            .get()
            .map(|rt| rt.metrics().io_driver_ready_count())
    }
    #[cfg(not(tokio_unstable))]
    {
        None
    }
}

/// Tasks of the sessions' runtime that a caller waits on (submitted runs, connect, prepare).
static IN_FLIGHT: AtomicI32 = AtomicI32::new(0);

/// Counts one awaited task for as long as it lives.
pub struct InFlight;
impl InFlight {
    fn new() -> Self {
        IN_FLIGHT.fetch_add(1, Ordering::Relaxed);
        InFlight
    }
}
impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Runs of at least this many requests are driven apart from the worker (see
/// [`drive_run_apart`]): executeConcurrent's, not a turn's few coalesced `execute()`s, which
/// would pay a thread hop each.
const RUN_APART_MIN_REQUESTS: usize = 64;

/// Whether a run of `requests` requests is driven from a blocking-pool thread instead of
/// the worker (worker mode only; opt-in with `WEIR_CQL_RUN_APART=1`, read once per process).
/// Off by default: on an idle machine it saves no time and costs ~28% more client CPU per
/// request (A/B without it, server CPU measured beside: time 0.94 / 0.87, server CPU
/// 0.93 / 0.97, client CPU 0.68 / 0.79 for concurrent select / insert). It only looks faster
/// on a busy machine, where a second thread gets the client a larger share of a CPU.
pub fn drive_run_apart(requests: usize) -> bool {
    static APART: OnceLock<bool> = OnceLock::new();
    let on = *APART.get_or_init(|| {
        mode() == Mode::Worker && std::env::var("WEIR_CQL_RUN_APART").is_ok_and(|v| v == "1")
    });
    on && requests >= RUN_APART_MIN_REQUESTS
}

/// Spawns a session task on the runtime of the mode.
pub fn spawn<F>(fut: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    match JS_RUNTIME.get() {
        Some(rt) if mode() != Mode::Worker => {
            let busy = InFlight::new();
            rt.spawn(async move {
                fut.await;
                drop(busy);
            });
        }
        _ => {
            napi::bindgen_prelude::spawn(fut);
        }
    }
}

/// A request run as `submit` makes it: boxed once, where it is made (the run's future is
/// ~5.3 KB, and every move of it by value on its way into the runtime is a memmove of that
/// size), then queued or spawned as that box.
pub type LocalTask = Pin<Box<dyn Future<Output = ()> + Send>>;

thread_local! {
    /// Tasks `submit` hands to the next pump of this (the JS) thread: spawned from inside
    /// `block_on` they go to the runtime's local queue, where a spawn from outside would
    /// push to its shared queue and write its eventfd (one system call per request).
    static PENDING: std::cell::RefCell<Vec<LocalTask>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn spawn_pending() {
    let tasks = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
    for task in tasks {
        tokio::spawn(task);
    }
}

/// The `js` runtime's in-flight count held up while its holder lives (the timer pumps run
/// while any request is in flight): `submit` moves it into the run's future.
pub type Busy = Option<InFlight>;

/// `submit`'s spawn: `make` builds the run's boxed future around the [`Busy`] guard it is
/// given. In `js` mode (on the JS thread, outside a pump) the task is spawned by the pump
/// run right after, which writes its requests before this returns; inside a pump (a
/// completion callback submitting the next request, src/direct.rs) and in the other modes,
/// [`spawn`]: the running pump runs it before it ends. Either way the future is boxed once (it was boxed twice in `js` mode: once by
/// `submit`, once more here to carry the guard).
pub fn spawn_and_pump(make: impl FnOnce(Busy) -> LocalTask) {
    if mode() == Mode::Js && JS_RUNTIME.get().is_some() && !PUMPING.load(Ordering::Relaxed) {
        let task = make(Some(InFlight::new()));
        PENDING.with(|p| p.borrow_mut().push(task));
    } else {
        spawn(make(None));
    }
    pump(Cause::Call);
}

/// Runs `fut` (which creates or uses a session) on the sessions' runtime and awaits its
/// output from another runtime (the promise-returning calls run on napi-rs's).
pub async fn on_session_runtime<F, T>(fut: F) -> T
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    match JS_RUNTIME.get() {
        Some(rt) if mode() != Mode::Worker => {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let busy = InFlight::new();
            rt.spawn(async move {
                let _ = tx.send(fut.await);
                drop(busy);
            });
            match rx.await {
                Ok(v) => v,
                // The task was dropped (runtime shut down with the process): never resolves.
                Err(_) => std::future::pending().await,
            }
        }
        _ => fut.await,
    }
}

// libuv, exported by the node binary that loads this addon.
extern "C" {
    fn uv_handle_size(kind: libc::c_int) -> libc::size_t;
    fn uv_poll_init(
        lp: *mut napi::sys::uv_loop_s,
        handle: *mut libc::c_void,
        fd: libc::c_int,
    ) -> libc::c_int;
    fn uv_poll_start(
        handle: *mut libc::c_void,
        events: libc::c_int,
        cb: extern "C" fn(*mut libc::c_void, libc::c_int, libc::c_int),
    ) -> libc::c_int;
    fn uv_unref(handle: *mut libc::c_void);
    fn uv_timer_init(lp: *mut napi::sys::uv_loop_s, handle: *mut libc::c_void) -> libc::c_int;
    fn uv_timer_start(
        handle: *mut libc::c_void,
        cb: extern "C" fn(*mut libc::c_void),
        timeout_ms: u64,
        repeat_ms: u64,
    ) -> libc::c_int;
}
const UV_POLL: libc::c_int = 8;
const UV_TIMER: libc::c_int = 13;

/// The libuv timer that runs the runtime when nothing else does (its timers, and the rare
/// task a socket event queued in the last instant of a pump, which no descriptor reports
/// again). Touched only on the JS thread.
static TIMER: std::sync::atomic::AtomicPtr<libc::c_void> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

/// While a caller waits on a task, the next pump is at most 1 ms away; otherwise 10 ms
/// (timers of idle connections: heartbeats, reconnection); at once (the next loop turn)
/// after a pump that ended on its budget with work left.
fn arm_timer() {
    let t = TIMER.load(Ordering::Relaxed);
    if t.is_null() {
        return;
    }
    let continues = OVER_BUDGET.load(Ordering::Relaxed);
    CONTINUE_DUE.store(continues, Ordering::Relaxed);
    let ms = if continues {
        0
    } else if IN_FLIGHT.load(Ordering::Relaxed) > 0 {
        1
    } else {
        10
    };
    // SAFETY: t is the initialised, leaked timer handle; we are on the loop's thread.
    unsafe { uv_timer_start(t, on_timer, ms, 0) };
}

/// Whether the armed timer continues a pump that ended on its budget.
static CONTINUE_DUE: AtomicBool = AtomicBool::new(false);

extern "C" fn on_timer(_handle: *mut libc::c_void) {
    if CONTINUE_DUE.load(Ordering::Relaxed) {
        pump(Cause::Continue);
    } else {
        pump(Cause::Timer);
    }
}

/// A zeroed, leaked, suitably aligned block for a libuv handle of `kind`.
///
/// # Safety
/// Calls libuv's uv_handle_size.
unsafe fn leak_handle(kind: libc::c_int) -> *mut libc::c_void {
    let size = uv_handle_size(kind);
    Box::leak(vec![0u64; size.div_ceil(8)].into_boxed_slice()).as_mut_ptr() as *mut libc::c_void
}
const UV_READABLE: libc::c_int = 1;

static WATCHING: AtomicBool = AtomicBool::new(false);

extern "C" fn on_epoll_readable(
    _handle: *mut libc::c_void,
    _status: libc::c_int,
    _events: libc::c_int,
) {
    pump(Cause::Readable);
}

/// Makes libuv watch the runtime's epoll descriptor (once per process), unref'd so it never
/// keeps the process alive. Called on the JS thread before any session exists.
pub fn watch(env: &napi::Env) -> Result<(), String> {
    if mode() != Mode::Js || WATCHING.swap(true, Ordering::AcqRel) {
        return Ok(());
    }
    let mut lp: *mut napi::sys::uv_loop_s = std::ptr::null_mut();
    // SAFETY: env is the live environment of this JS thread; lp receives its loop pointer.
    let status = unsafe { napi::sys::napi_get_uv_event_loop(env.raw(), &mut lp) };
    if status != napi::sys::Status::napi_ok || lp.is_null() {
        return Err(format!("napi_get_uv_event_loop failed (status {status})"));
    }
    // SAFETY: the handle memory is sized by libuv itself and leaked on purpose: libuv keeps
    // a pointer to it for the life of the loop (the process).
    unsafe {
        let handle = leak_handle(UV_POLL);
        let rc = uv_poll_init(lp, handle, epoll_fd());
        if rc != 0 {
            return Err(format!("uv_poll_init failed ({rc})"));
        }
        let rc = uv_poll_start(handle, UV_READABLE, on_epoll_readable);
        if rc != 0 {
            return Err(format!("uv_poll_start failed ({rc})"));
        }
        uv_unref(handle);
        let timer = leak_handle(UV_TIMER);
        let rc = uv_timer_init(lp, timer);
        if rc != 0 {
            return Err(format!("uv_timer_init failed ({rc})"));
        }
        uv_unref(timer);
        TIMER.store(timer, Ordering::Relaxed);
    }
    arm_timer();
    Ok(())
}
