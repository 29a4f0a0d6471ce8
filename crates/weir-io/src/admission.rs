//! Admission: the scheduler in front of I/O the engine performs itself.
//!
//! The engine asks before each I/O ([`Admission::acquire`]), performs it when the grant
//! arrives, and drops the [`Grant`] (or calls [`Grant::complete`]) when the I/O finished. The
//! time between grant and completion is the service time the scheduler's feedback learns the
//! disk's speed from, so release the grant as soon as the I/O completes, not later.
//!
//! All classes share one queue behind a mutex, so shares hold across every thread that asks.
//! A small timer thread calls the scheduler when its token bucket refills; everything else
//! (enqueue, dispatch after a completion) runs on the caller's thread.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::thread::JoinHandle;
use std::time::Duration;

use weir_engine::monotonic_ns;
use weir_sched::{ClassId, ClassMetrics, Dispatched, Request, ShardQueue};

use crate::{Error, IoClass, Op, Policy};

/// Admission control for I/O the caller performs: see the module documentation.
///
/// ```
/// use weir_io::{Admission, ClassSpec, DiskModel, Op, Policy};
///
/// let model = DiskModel::builder()
///     .read_iops(50_000).read_bytes_per_sec(1 << 30)
///     .write_iops(25_000).write_bytes_per_sec(1 << 30)
///     .build()?;
/// let mut policy = Policy::builder(model);
/// let query = policy.class(ClassSpec::new("query", 1000))?;
/// let admission = Admission::new(&policy.build()?)?;
///
/// let grant = admission.acquire_blocking(query, Op::Read, 4096)?;
/// // ... pread(fd, buf, 4096, offset) here ...
/// grant.complete();
/// assert_eq!(admission.metrics()[0].read_ops, 1);
/// # Ok::<(), weir_io::Error>(())
/// ```
#[derive(Clone)]
pub struct Admission {
    shared: Arc<Shared>,
    _timer: Arc<Timer>,
}

struct Shared {
    policy: Policy,
    state: Mutex<State>,
    /// The timer thread waits on this for an earlier wakeup or the end.
    timer_cond: Condvar,
}

struct State {
    queue: ShardQueue,
    tickets: Vec<Ticket>,
    free: Vec<u32>,
    dispatched: Vec<Dispatched>,
    /// When the timer thread will call `dispatch` next (None: it waits for a notify).
    timer_at_ns: Option<u64>,
    /// `try_acquire`'s queued requests, by class and direction (`class * 2 + direction`).
    reservations: Vec<Option<u64>>,
    /// How long a granted reservation waits to be taken.
    reservation_hold_ns: u64,
    stop: bool,
}

#[derive(Default)]
struct Ticket {
    generation: u32,
    live: bool,
    len_bytes: u64,
    granted_bytes: u64,
    tokens: Vec<u64>,
    waker: Option<Waker>,
    /// The asker is gone: pieces are handed straight back as they are dispatched.
    abandoned: bool,
    /// When the last piece was dispatched.
    ready_at_ns: u64,
}

impl Ticket {
    fn ready(&self) -> bool {
        self.granted_bytes >= self.len_bytes
    }
}

struct Timer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Timer {
    fn drop(&mut self) {
        lock(&self.shared.state).stop = true;
        self.shared.timer_cond.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    // A panic while holding the lock leaves the queue consistent at the granularity of a
    // call: every method either finished or did not change it.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `acquire` could not be granted without waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TryAcquireError {
    /// Ask again after about this long (the scheduler's next refill, or a fraction of the
    /// latency goal when only a completion can free capacity).
    WouldWait {
        /// How long to wait before retrying.
        retry_after: Duration,
    },
}

impl std::fmt::Display for TryAcquireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TryAcquireError::WouldWait { retry_after } => write!(
                f,
                "the disk's budget is spent; retry in {} us",
                retry_after.as_micros()
            ),
        }
    }
}

impl std::error::Error for TryAcquireError {}

impl Admission {
    /// Admission over `policy`, with its timer thread started.
    pub fn new(policy: &Policy) -> Result<Admission, Error> {
        let budget = policy.budget(1)?;
        let queue = policy.queue(budget, 0)?;
        let shared = Arc::new(Shared {
            policy: policy.clone(),
            state: Mutex::new(State {
                queue,
                tickets: Vec::new(),
                free: Vec::new(),
                dispatched: Vec::new(),
                timer_at_ns: None,
                reservations: vec![None; policy.classes().len() * 2],
                reservation_hold_ns: (4 * policy.latency_goal().as_nanos() as u64).max(1_000_000),
                stop: false,
            }),
            timer_cond: Condvar::new(),
        });
        let for_thread = shared.clone();
        let thread = std::thread::Builder::new()
            .name("weir-admission".into())
            .spawn(move || timer_main(&for_thread))
            .map_err(|e| Error::Device {
                message: format!("cannot start the admission timer thread: {e}"),
            })?;
        Ok(Admission {
            _timer: Arc::new(Timer {
                shared: shared.clone(),
                thread: Some(thread),
            }),
            shared,
        })
    }

    /// The policy this admission serves.
    pub fn policy(&self) -> &Policy {
        &self.shared.policy
    }

    /// Waits (asynchronously, in any runtime) until the scheduler admits `bytes` of `op` for
    /// `class` (or its piece size of them: see [`Grant::bytes`]). Dropping the future before
    /// it resolves withdraws the request.
    pub fn acquire(&self, class: IoClass, op: Op, bytes: u64) -> Acquire {
        let ticket = self.enqueue(class, op, bytes);
        Acquire {
            shared: self.shared.clone(),
            ticket: Some(ticket),
        }
    }

    /// [`Self::acquire`], blocking the calling thread.
    pub fn acquire_blocking(&self, class: IoClass, op: Op, bytes: u64) -> Result<Grant, Error> {
        crate::block_on(self.acquire(class, op, bytes))
    }

    /// A grant now, or how long to wait before asking again. A refused request keeps its
    /// place in the queue as the class's reservation (one per class and direction): the next
    /// `try_acquire` of that class and direction gets it once the scheduler grants it, whatever
    /// `bytes` it then asks (see [`Grant::bytes`]). A granted reservation nobody takes within
    /// four latency goals (at least 1 ms) is given back.
    pub fn try_acquire(
        &self,
        class: IoClass,
        op: Op,
        bytes: u64,
    ) -> Result<Result<Grant, TryAcquireError>, Error> {
        let shared = &self.shared;
        shared.policy.check(class)?;
        let key = class.index() * 2 + op.direction().index();
        let mut state = lock(&shared.state);
        let now = monotonic_ns();
        let (id, wake) = match state.reservations[key] {
            Some(id) => (id, Vec::new()),
            None => {
                let id = state.enqueue(&shared.policy, class, op, bytes, now)?;
                (id, state.dispatch(now))
            }
        };
        let (slot, _) = split_id(id);
        let result = if state.tickets[slot].ready() {
            state.reservations[key] = None;
            let (tokens, bytes) = state.take(slot);
            Ok(Grant::new(shared.clone(), tokens, bytes))
        } else {
            // The request stays queued as this class's reservation: the next try_acquire
            // for the class takes it once granted, so a caller that keeps trying is not
            // overtaken forever, and no budget is spent on requests nobody performs.
            state.reservations[key] = Some(id);
            shared.notify_timer(&mut state);
            let retry_after = match state.queue.next_wakeup_ns() {
                Some(at) => Duration::from_nanos(at.saturating_sub(now)),
                None => shared.policy.latency_goal() / 8,
            };
            Err(TryAcquireError::WouldWait { retry_after })
        };
        drop(state);
        wake_all(wake);
        Ok(result)
    }

    /// Changes `class`'s shares from its next request on.
    pub fn set_shares(&self, class: IoClass, shares: u32) -> Result<(), Error> {
        self.shared.policy.check(class)?;
        lock(&self.shared.state)
            .queue
            .set_shares(ClassId(class.0), shares)?;
        Ok(())
    }

    /// Per-class counters and histograms (queue wait, device service), in handle order.
    pub fn metrics(&self) -> Vec<ClassMetrics> {
        lock(&self.shared.state).queue.metrics().classes
    }

    /// The metrics as Prometheus text, labelled with `mountpoint`.
    pub fn prometheus(&self, mountpoint: &str) -> String {
        let metrics = lock(&self.shared.state).queue.metrics();
        weir_sched::render_prometheus(mountpoint, &[metrics])
    }

    fn enqueue(&self, class: IoClass, op: Op, bytes: u64) -> Result<u64, Error> {
        let shared = &self.shared;
        let mut state = lock(&shared.state);
        let now = monotonic_ns();
        let id = state.enqueue(&shared.policy, class, op, bytes, now)?;
        let wake = state.dispatch(now);
        shared.notify_timer(&mut state);
        drop(state);
        wake_all(wake);
        Ok(id)
    }
}

fn split_id(id: u64) -> (usize, u32) {
    ((id & 0xffff_ffff) as usize, (id >> 32) as u32)
}

fn wake_all(wakers: Vec<Waker>) {
    for w in wakers {
        w.wake();
    }
}

impl Shared {
    /// Wakes the timer thread when the queue needs a call earlier than it planned.
    fn notify_timer(&self, state: &mut State) {
        if let Some(at) = state.queue.next_wakeup_ns() {
            if match state.timer_at_ns {
                None => true,
                Some(t) => at < t,
            } {
                state.timer_at_ns = Some(at);
                self.timer_cond.notify_one();
            }
        }
    }
}

impl State {
    fn enqueue(
        &mut self,
        policy: &Policy,
        class: IoClass,
        op: Op,
        bytes: u64,
        now: u64,
    ) -> Result<u64, Error> {
        policy.check(class)?;
        if bytes == 0 {
            return Err(Error::EmptyRequest);
        }
        let slot = match self.free.pop() {
            Some(s) => s as usize,
            None => {
                self.tickets.push(Ticket::default());
                self.tickets.len() - 1
            }
        };
        // One piece at most: a request longer than the scheduler's piece size is granted in
        // parts (see `Grant::bytes`), as RocksDB's and TiKV's limiters grant less than asked.
        // Waiting for every piece of a long request at once could wait forever: the window
        // may hold fewer pieces than the request has.
        let bytes = bytes.min(self.queue.max_request_bytes(op.direction()));
        let t = &mut self.tickets[slot];
        t.generation = t.generation.wrapping_add(1) & (u32::MAX >> 1);
        t.live = true;
        t.len_bytes = bytes;
        t.granted_bytes = 0;
        t.tokens.clear();
        t.waker = None;
        t.abandoned = false;
        let id = (u64::from(t.generation) << 32) | slot as u64;
        let request = Request {
            direction: op.direction(),
            len_bytes: bytes,
            user_data: id,
        };
        if let Err(e) = self.queue.enqueue(ClassId(class.0), request, now) {
            self.tickets[slot].live = false;
            self.free.push(slot as u32);
            return Err(e.into());
        }
        Ok(id)
    }

    /// Dispatches what the budget allows; returns the wakers of tickets that became ready.
    fn dispatch(&mut self, now: u64) -> Vec<Waker> {
        let mut wake = Vec::new();
        let mut out = std::mem::take(&mut self.dispatched);
        // Pieces of abandoned requests are handed back at once, which frees capacity that
        // only another dispatch call can give out.
        let mut again = true;
        while again {
            again = false;
            self.queue.dispatch(now, &mut out);
            for d in out.drain(..) {
                again |= self.hand_out(d, now, &mut wake);
            }
        }
        self.dispatched = out;
        wake
    }

    /// Gives a dispatched piece to its ticket; true when the ticket was abandoned and the
    /// piece went straight back.
    fn hand_out(&mut self, d: Dispatched, now: u64, wake: &mut Vec<Waker>) -> bool {
        {
            let (slot, generation) = split_id(d.user_data);
            let t = &mut self.tickets[slot];
            debug_assert!(
                t.live && t.generation == generation,
                "a piece of a live ticket"
            );
            if t.abandoned {
                // Nobody will perform it: hand the capacity straight back.
                let _ = self.queue.complete(d.token, now);
                t.granted_bytes += d.len_bytes;
                if t.ready() {
                    t.live = false;
                    self.free.push(slot as u32);
                }
                return true;
            }
            t.granted_bytes += d.len_bytes;
            t.tokens.push(d.token);
            if t.ready() {
                t.ready_at_ns = now;
                if let Some(w) = t.waker.take() {
                    wake.push(w);
                }
            }
        }
        false
    }

    /// The ticket's tokens and bytes, its slot freed.
    fn take(&mut self, slot: usize) -> (Vec<u64>, u64) {
        let t = &mut self.tickets[slot];
        t.live = false;
        self.free.push(slot as u32);
        (std::mem::take(&mut t.tokens), t.len_bytes)
    }

    /// The asker is gone: give back what was granted, drop the rest as it is dispatched.
    fn abandon(&mut self, slot: usize, now: u64) {
        let tokens = std::mem::take(&mut self.tickets[slot].tokens);
        for token in tokens {
            let _ = self.queue.complete(token, now);
        }
        let t = &mut self.tickets[slot];
        t.waker = None;
        if t.ready() {
            t.live = false;
            self.free.push(slot as u32);
        } else {
            t.abandoned = true;
        }
    }
}

fn timer_main(shared: &Shared) {
    let mut state = lock(&shared.state);
    loop {
        if state.stop {
            return;
        }
        let now = monotonic_ns();
        let expiry = state.expire_reservations(now);
        if expiry.released {
            let wake = state.dispatch(now);
            drop(state);
            wake_all(wake);
            state = lock(&shared.state);
            continue;
        }
        let expiry = expiry.next_ns;
        match state.queue.next_wakeup_ns() {
            Some(at) if at <= now => {
                let wake = state.dispatch(now);
                state.timer_at_ns = None;
                if !wake.is_empty() {
                    drop(state);
                    wake_all(wake);
                    state = lock(&shared.state);
                }
            }
            next => {
                let at = match (next, expiry) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                state.timer_at_ns = at;
                state = match at {
                    Some(at) => {
                        let wait = Duration::from_nanos(at.saturating_sub(now));
                        shared
                            .timer_cond
                            .wait_timeout(state, wait)
                            .unwrap_or_else(|p| p.into_inner())
                            .0
                    }
                    None => shared
                        .timer_cond
                        .wait(state)
                        .unwrap_or_else(|p| p.into_inner()),
                };
            }
        }
    }
}

impl State {
    /// Gives back granted reservations nobody took in time.
    fn expire_reservations(&mut self, now: u64) -> Expiry {
        let mut next: Option<u64> = None;
        let mut released = false;
        for key in 0..self.reservations.len() {
            let Some(id) = self.reservations[key] else {
                continue;
            };
            let (slot, _) = split_id(id);
            let at = if self.tickets[slot].ready() {
                self.tickets[slot].ready_at_ns + self.reservation_hold_ns
            } else {
                now + self.reservation_hold_ns
            };
            if at <= now {
                self.reservations[key] = None;
                self.abandon(slot, now);
                released = true;
            } else {
                next = Some(next.map_or(at, |n| n.min(at)));
            }
        }
        Expiry {
            next_ns: next,
            released,
        }
    }
}

struct Expiry {
    /// When a reservation expires next.
    next_ns: Option<u64>,
    /// A reservation was given back: capacity to dispatch.
    released: bool,
}

/// The future of [`Admission::acquire`]: resolves to a [`Grant`]. `Send`; works in any
/// runtime. Dropping it withdraws the request.
#[must_use = "a request is admitted only while its future is polled"]
pub struct Acquire {
    shared: Arc<Shared>,
    ticket: Option<Result<u64, Error>>,
}

impl Future for Acquire {
    type Output = Result<Grant, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let id = match self.ticket.take() {
            None => return Poll::Ready(Err(Error::EmptyRequest)),
            Some(Err(e)) => return Poll::Ready(Err(e)),
            Some(Ok(id)) => id,
        };
        let (slot, _) = split_id(id);
        let mut state = lock(&self.shared.state);
        if state.tickets[slot].ready() {
            let (tokens, bytes) = state.take(slot);
            drop(state);
            return Poll::Ready(Ok(Grant::new(self.shared.clone(), tokens, bytes)));
        }
        state.tickets[slot].waker = Some(cx.waker().clone());
        drop(state);
        self.ticket = Some(Ok(id));
        Poll::Pending
    }
}

impl Drop for Acquire {
    fn drop(&mut self) {
        if let Some(Ok(id)) = self.ticket.take() {
            let (slot, _) = split_id(id);
            let mut state = lock(&self.shared.state);
            let now = monotonic_ns();
            state.abandon(slot, now);
            let wake = state.dispatch(now);
            self.shared.notify_timer(&mut state);
            drop(state);
            wake_all(wake);
        }
    }
}

/// Permission to perform one I/O. Call [`Grant::complete`] (or drop the grant) the moment
/// the I/O finishes: the scheduler measures the disk's service time from grant to release and
/// frees the capacity for the next request. Dropping a grant whose I/O never ran gives the
/// capacity back too.
#[must_use = "dropping a grant at once releases it before the I/O"]
pub struct Grant {
    shared: Arc<Shared>,
    tokens: Vec<u64>,
    bytes: u64,
}

impl std::fmt::Debug for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grant").field("bytes", &self.bytes).finish()
    }
}

impl Grant {
    fn new(shared: Arc<Shared>, tokens: Vec<u64>, bytes: u64) -> Grant {
        Grant {
            shared,
            tokens,
            bytes,
        }
    }

    /// The bytes this grant covers: all that was asked, or the scheduler's piece size
    /// (128 KiB to 16 MiB, from the model) if the request was longer. Perform that much,
    /// release the grant, and ask again for the rest.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Reports that the I/O completed now (the feedback) and releases its capacity.
    pub fn complete(self) {
        drop(self);
    }
}

impl Drop for Grant {
    fn drop(&mut self) {
        if self.tokens.is_empty() {
            return;
        }
        let mut state = lock(&self.shared.state);
        let now = monotonic_ns();
        for token in self.tokens.drain(..) {
            let _ = state.queue.complete(token, now);
        }
        let wake = state.dispatch(now);
        self.shared.notify_timer(&mut state);
        drop(state);
        wake_all(wake);
    }
}
