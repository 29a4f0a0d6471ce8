//! The I/O side: weir performs the I/O on its own loop threads, one scheduler queue and one
//! io_uring (or AIO) device per loop, all sharing one disk budget.
//!
//! Callers on any thread (tokio tasks, plain threads) hand requests to a loop through a
//! mutex-guarded inbox; a loop that sleeps in the kernel is woken by an eventfd read it keeps
//! armed in its own ring, so waking costs one `write` only when the loop is asleep. With the
//! AIO backend (which cannot wait on an eventfd) a loop with I/O in flight polls its inbox
//! every [`AIO_INBOX_POLL`], and an idle one sleeps on a condition variable.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use weir_engine::Backend;
use weir_model::device::Direction;
use weir_sched::{ClassMetrics, ShardMetrics, SharedBudget};

use crate::shard::{IoFuture, ShardCore, Submit};
use crate::{Error, File, FileOptions, IoBuf, IoClass, LocalShard, Policy};

/// How often a loop on the AIO backend looks at its inbox while I/O is in flight.
pub const AIO_INBOX_POLL: Duration = Duration::from_micros(100);

/// Requests a loop keeps at the device at most (pieces of requests, after splitting).
const DEFAULT_DEPTH: u32 = 256;

/// Weir's I/O on one disk: loop threads that perform reads and writes scheduled by a
/// [`Policy`], and the shards reserved for [`LocalShard`]s (thread-per-core). Clone it freely;
/// the loops stop when the last clone is dropped, after finishing what was submitted.
///
/// ```
/// use weir_io::{ClassSpec, Disk, DiskModel, FileOptions, IoBuf, Policy};
///
/// let model = DiskModel::builder()
///     .read_iops(50_000).read_bytes_per_sec(1 << 30)
///     .write_iops(25_000).write_bytes_per_sec(1 << 30)
///     .build()?;
/// let mut policy = Policy::builder(model);
/// let log = policy.class(ClassSpec::new("log", 500))?;
/// let disk = Disk::builder(&policy.build()?).build()?;
///
/// let dir = tempfile::tempdir().expect("temp dir");
/// let file = disk.open(dir.path().join("log"), FileOptions::new().create(true).direct(false))?;
/// let (written, _buf) = weir_io::block_on(disk.append(&file, log, IoBuf::from_slice(b"entry")));
/// assert_eq!(written?, 0); // the offset the entry landed at
/// # Ok::<(), weir_io::Error>(())
/// ```
#[derive(Clone)]
pub struct Disk {
    shared: Arc<DiskShared>,
}

struct DiskShared {
    policy: Policy,
    budget: Arc<SharedBudget>,
    loops: Vec<Arc<Inbox>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    next_loop: AtomicUsize,
    first_local: usize,
    next_local: AtomicUsize,
    shards: usize,
    backend: Backend,
    depth: u32,
}

/// Builds a [`Disk`].
#[derive(Debug, Clone)]
pub struct DiskBuilder {
    policy: Policy,
    loops: usize,
    local_shards: usize,
    backend: Backend,
    depth: u32,
    spin_ns: u64,
}

enum Msg {
    Op(Submit),
    SetShares(IoClass, u32, mpsc::Sender<Result<(), Error>>),
    Metrics(mpsc::Sender<ShardMetrics>),
}

struct Inbox {
    msgs: Mutex<Vec<Msg>>,
    /// `msgs` holds something: what a spinning loop watches instead of taking the lock.
    has_msgs: AtomicBool,
    /// The loop is (about to be) asleep: the next sender wakes it.
    sleeping: AtomicBool,
    closed: AtomicBool,
    /// io_uring: the loop keeps a read of this eventfd in its ring.
    eventfd: Option<OwnedFd>,
    /// AIO: an idle loop waits here.
    cond: Condvar,
}

impl Inbox {
    fn send(&self, msg: Msg) {
        self.msgs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(msg);
        self.has_msgs.store(true, Ordering::SeqCst);
        if self.sleeping.swap(false, Ordering::SeqCst) {
            self.wake();
        }
    }

    fn wake(&self) {
        match &self.eventfd {
            Some(fd) => {
                let one: u64 = 1;
                // SAFETY: writes 8 bytes from a live u64 to an eventfd we own. A failure
                // (EAGAIN at the counter's maximum) means a wake-up is already pending.
                let _ = unsafe { libc::write(fd.as_raw_fd(), (&one as *const u64).cast(), 8) };
            }
            None => {
                let _guard = self.msgs.lock().unwrap_or_else(|p| p.into_inner());
                self.cond.notify_one();
            }
        }
    }
}

impl Disk {
    /// A builder: one loop thread, io_uring, 256 pieces in flight per loop.
    pub fn builder(policy: &Policy) -> DiskBuilder {
        DiskBuilder {
            policy: policy.clone(),
            loops: 1,
            local_shards: 0,
            backend: Backend::Uring,
            depth: DEFAULT_DEPTH,
            spin_ns: 0,
        }
    }

    /// The policy the loops schedule by.
    pub fn policy(&self) -> &Policy {
        &self.shared.policy
    }

    /// Opens a file for this disk's I/O.
    pub fn open(&self, path: impl AsRef<Path>, options: FileOptions) -> Result<File, Error> {
        File::open(path, options)
    }

    /// Reads `buf.len()` bytes at `offset_bytes` in `class`; resolves to the bytes read
    /// (fewer at the end of the file; the buffer's length is cut to them) and the buffer.
    pub fn read_at(&self, file: &File, class: IoClass, buf: IoBuf, offset_bytes: u64) -> IoFuture {
        self.submit(file, class, Direction::Read, buf, offset_bytes)
    }

    /// Writes `buf.len()` bytes at `offset_bytes` in `class`; resolves to the bytes written
    /// and the buffer.
    pub fn write_at(&self, file: &File, class: IoClass, buf: IoBuf, offset_bytes: u64) -> IoFuture {
        self.submit(file, class, Direction::Write, buf, offset_bytes)
    }

    /// Writes `buf` at the end of the file in `class`; resolves to the offset it landed at.
    /// Each append reserves its range at the call, so concurrent appends never overlap (they
    /// may complete out of order).
    pub fn append(&self, file: &File, class: IoClass, buf: IoBuf) -> crate::AppendFuture {
        let offset = file.reserve_append(buf.len() as u64);
        crate::AppendFuture::new(self.write_at(file, class, buf, offset), offset)
    }

    fn submit(
        &self,
        file: &File,
        class: IoClass,
        direction: Direction,
        buf: IoBuf,
        offset_bytes: u64,
    ) -> IoFuture {
        let (submit, future) = match Submit::checked(
            &self.shared.policy,
            file,
            class,
            direction,
            buf,
            offset_bytes,
        ) {
            Ok(pair) => pair,
            Err(resolved) => return resolved,
        };
        let loops = &self.shared.loops;
        if loops.is_empty() {
            return IoFuture::ready((Err(Error::LoopStopped), submit.buf));
        }
        let i = if loops.len() == 1 {
            0
        } else {
            self.shared.next_loop.fetch_add(1, Ordering::Relaxed) % loops.len()
        };
        loops[i].send(Msg::Op(submit));
        future
    }

    /// Changes `class`'s shares on every loop, from its next request on. (Local shards are
    /// changed through [`LocalShard::set_shares`].)
    pub fn set_shares(&self, class: IoClass, shares: u32) -> Result<(), Error> {
        self.shared.policy.check(class)?;
        let (tx, rx) = mpsc::channel();
        for inbox in &self.shared.loops {
            inbox.send(Msg::SetShares(class, shares, tx.clone()));
        }
        drop(tx);
        for r in rx {
            r?;
        }
        Ok(())
    }

    /// The loops' metrics, per shard.
    pub fn shard_metrics(&self) -> Vec<ShardMetrics> {
        let (tx, rx) = mpsc::channel();
        for inbox in &self.shared.loops {
            inbox.send(Msg::Metrics(tx.clone()));
        }
        drop(tx);
        let mut all: Vec<ShardMetrics> = rx.into_iter().collect();
        all.sort_by_key(|m| m.shard);
        all
    }

    /// Per-class counters and histograms (queue wait, device service, bytes, ops) totalled
    /// over the loops, in class-handle order.
    pub fn metrics(&self) -> Vec<ClassMetrics> {
        merge_classes(&self.shard_metrics())
    }

    /// The loops' metrics as Prometheus text labelled with `mountpoint`.
    pub fn prometheus(&self, mountpoint: &str) -> String {
        weir_sched::render_prometheus(mountpoint, &self.shard_metrics())
    }

    /// Claims one of the shards reserved with [`DiskBuilder::local_shards`] for the calling
    /// thread: its ring is created here and must be used from this thread only.
    pub fn local_shard(&self) -> Result<LocalShard, Error> {
        let s = &self.shared;
        let shard = s.first_local + s.next_local.fetch_add(1, Ordering::Relaxed);
        if shard >= s.shards {
            return Err(Error::Scheduler(weir_sched::SchedError::NoSuchShard {
                shard,
                shards: s.shards,
            }));
        }
        let core = ShardCore::new(&s.policy, s.budget.clone(), shard, s.backend, s.depth, 0)?;
        Ok(LocalShard::new(s.policy.clone(), core))
    }
}

pub(crate) fn merge_classes(shards: &[ShardMetrics]) -> Vec<ClassMetrics> {
    let mut total: Vec<ClassMetrics> = Vec::new();
    for m in shards {
        for (i, c) in m.classes.iter().enumerate() {
            match total.get_mut(i) {
                Some(t) => t.merge(c),
                None => total.push(c.clone()),
            }
        }
    }
    total
}

impl DiskBuilder {
    /// Loop threads (default 1). Each has its own ring and queue; requests are spread over
    /// them. 0 leaves all I/O to local shards.
    pub fn loops(mut self, loops: usize) -> Self {
        self.loops = loops;
        self
    }

    /// Shards kept for [`Disk::local_shard`] (thread-per-core), beside the loop threads.
    pub fn local_shards(mut self, shards: usize) -> Self {
        self.local_shards = shards;
        self
    }

    /// The kernel interface (default io_uring).
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = backend;
        self
    }

    /// Pieces each loop keeps at the device at most (default 256).
    pub fn depth(mut self, depth: u32) -> Self {
        self.depth = depth.max(1);
        self
    }

    /// How long a loop with I/O in flight stays awake, watching its inbox and its ring,
    /// before it sleeps in the kernel (io_uring only; default zero: it sleeps at once). An
    /// awake loop sees a completion without a wake-up, and a caller's next request without
    /// the caller's eventfd write; the watch costs the loop's CPU time, and on a machine
    /// with no CPU to spare the spinning loop delays the very callers it waits for, so it
    /// is off unless asked for.
    pub fn spin(mut self, spin: Duration) -> Self {
        self.spin_ns = spin.as_nanos().min(u128::from(u64::MAX)) as u64;
        self
    }

    /// Starts the loops. Errors: no shard at all, the backend cannot start.
    pub fn build(self) -> Result<Disk, Error> {
        let shards = self.loops + self.local_shards;
        let budget = self.policy.budget(shards)?;
        let mut inboxes = Vec::with_capacity(self.loops);
        let mut threads = Vec::with_capacity(self.loops);
        for shard in 0..self.loops {
            let (inbox, thread) = self.start_loop(&budget, shard)?;
            inboxes.push(inbox);
            threads.push(thread);
        }
        Ok(Disk {
            shared: Arc::new(DiskShared {
                policy: self.policy,
                budget,
                loops: inboxes,
                threads: Mutex::new(threads),
                next_loop: AtomicUsize::new(0),
                first_local: self.loops,
                next_local: AtomicUsize::new(0),
                shards,
                backend: self.backend,
                depth: self.depth,
            }),
        })
    }

    fn start_loop(
        &self,
        budget: &Arc<SharedBudget>,
        shard: usize,
    ) -> Result<(Arc<Inbox>, JoinHandle<()>), Error> {
        let eventfd = match self.backend {
            Backend::Uring => {
                // SAFETY: plain syscall; the result is checked before use.
                let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
                if fd < 0 {
                    return Err(Error::Device {
                        message: format!("eventfd: {}", weir_engine::describe_errno(errno())),
                    });
                }
                // SAFETY: a fresh descriptor we own.
                Some(unsafe { OwnedFd::from_raw_fd(fd) })
            }
            _ => None,
        };
        let inbox = Arc::new(Inbox {
            msgs: Mutex::new(Vec::new()),
            has_msgs: AtomicBool::new(false),
            sleeping: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            eventfd,
            cond: Condvar::new(),
        });
        let (ready_tx, ready_rx) = mpsc::channel();
        let policy = self.policy.clone();
        let budget = budget.clone();
        let (backend, depth, spin_ns) = (self.backend, self.depth, self.spin_ns);
        let for_loop = inbox.clone();
        let thread = std::thread::Builder::new()
            .name(format!("weir-io-{shard}"))
            .spawn(move || {
                let reserved = u32::from(for_loop.eventfd.is_some());
                match ShardCore::new(&policy, budget, shard, backend, depth, reserved) {
                    Ok(core) => {
                        let _ = ready_tx.send(Ok(()));
                        loop_main(&for_loop, core, spin_ns);
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                    }
                }
            })
            .map_err(|e| Error::Device {
                message: format!("cannot start an I/O loop thread: {e}"),
            })?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok((inbox, thread)),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => {
                let _ = thread.join();
                Err(Error::LoopStopped)
            }
        }
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

impl Drop for DiskShared {
    fn drop(&mut self) {
        for inbox in &self.loops {
            inbox.closed.store(true, Ordering::SeqCst);
            inbox.sleeping.store(false, Ordering::SeqCst);
            inbox.wake();
        }
        let threads = std::mem::take(self.threads.get_mut().unwrap_or_else(|p| p.into_inner()));
        for t in threads {
            let _ = t.join();
        }
    }
}

/// One loop thread: take requests from the inbox, dispatch, wait, complete; until the disk is
/// dropped and nothing is left.
fn loop_main(inbox: &Inbox, mut core: ShardCore, spin_ns: u64) {
    // The eventfd read's target: boxed so it stays put while the ring holds its address.
    let mut wake_buf = Box::new([0u8; 8]);
    let mut armed = false;
    let mut batch = Vec::new();
    let mut failed = false;
    loop {
        {
            let mut msgs = inbox.msgs.lock().unwrap_or_else(|p| p.into_inner());
            inbox.has_msgs.store(false, Ordering::SeqCst);
            std::mem::swap(&mut batch, &mut *msgs);
        }
        let now = core.now_ns();
        for msg in batch.drain(..) {
            match msg {
                Msg::Op(s) if failed => s.state.finish((Err(Error::LoopStopped), s.buf)),
                Msg::Op(s) => core.submit(s, now),
                Msg::SetShares(class, shares, reply) => {
                    let _ = reply.send(core.set_shares(class, shares));
                }
                Msg::Metrics(reply) => {
                    let _ = reply.send(core.metrics());
                }
            }
        }
        if !failed && core.pump(now).is_err() {
            // The device refused a submission: stop taking work; what is in flight drains
            // when the core drops, and later requests fail with LoopStopped.
            failed = true;
        }
        let closed = inbox.closed.load(Ordering::SeqCst);
        if closed && (!core.busy() || failed) && !armed {
            break;
        }
        if let Some(fd) = &inbox.eventfd {
            if !armed {
                // SAFETY: `wake_buf` lives until after `core` (dropped first, below).
                if unsafe { core.push_wake_read(fd.as_raw_fd(), wake_buf.as_mut_ptr()) }.is_ok() {
                    armed = true;
                }
            }
        }
        if spin_ns > 0
            && inbox.eventfd.is_some()
            && !failed
            && core.pieces_in_device() > 0
            && !closed
        {
            match spin(inbox, &mut core, spin_ns) {
                Spun::Work { woke } => {
                    if woke {
                        armed = false;
                    }
                    continue;
                }
                Spun::Failed => failed = true,
                Spun::Idle => {}
            }
        }
        inbox.sleeping.store(true, Ordering::SeqCst);
        let pending = !inbox
            .msgs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty();
        if pending || (closed && !core.busy() && !armed) {
            inbox.sleeping.store(false, Ordering::SeqCst);
            continue;
        }
        if closed && armed && !core.busy() {
            // Complete our own wake-up read so the ring holds nothing at exit.
            inbox.wake();
        }
        let deadline = core.next_wakeup_ns();
        let waited = if inbox.eventfd.is_some() {
            core.wait(deadline)
        } else if core.pieces_in_device() > 0 {
            let poll = core.now_ns() + AIO_INBOX_POLL.as_nanos() as u64;
            core.wait(Some(deadline.map_or(poll, |d| d.min(poll))))
        } else {
            idle_wait(inbox, deadline, core.now_ns());
            Ok(())
        };
        inbox.sleeping.store(false, Ordering::SeqCst);
        if waited.is_err() {
            failed = true;
        }
        if core.reap() {
            armed = false;
        }
    }
    drop(core);
    drop(wake_buf);
}

enum Spun {
    /// A message came in or requests completed: the loop goes round again.
    Work {
        woke: bool,
    },
    /// Nothing within the spin: the loop sleeps in the kernel.
    Idle,
    Failed,
}

/// Watches the inbox and the ring for up to `spin_ns`, completing what the ring posts. The
/// inbox is an atomic load; the ring is looked at every [`SPIN_RING_LOOK_NS`] only, as each
/// look is a system call (with `DEFER_TASKRUN` completions are posted only inside one).
fn spin(inbox: &Inbox, core: &mut ShardCore, spin_ns: u64) -> Spun {
    let start_ns = core.now_ns();
    let until_ns = start_ns + spin_ns;
    let mut look_ns = start_ns;
    loop {
        if inbox.has_msgs.load(Ordering::SeqCst) {
            return Spun::Work { woke: false };
        }
        let now_ns = core.now_ns();
        if now_ns >= look_ns {
            look_ns = now_ns + SPIN_RING_LOOK_NS;
            if core.poll_device().is_err() {
                return Spun::Failed;
            }
            let before = core.pieces_in_device();
            let woke = core.reap();
            if woke || core.pieces_in_device() < before {
                return Spun::Work { woke };
            }
        }
        if now_ns >= until_ns {
            return Spun::Idle;
        }
        std::hint::spin_loop();
    }
}

/// How often a spinning loop looks at its ring.
const SPIN_RING_LOOK_NS: u64 = 4_000;

/// AIO, nothing in flight: sleep until a message or the queue's next wakeup.
fn idle_wait(inbox: &Inbox, deadline_ns: Option<u64>, now_ns: u64) {
    let guard = inbox.msgs.lock().unwrap_or_else(|p| p.into_inner());
    if !guard.is_empty() || inbox.closed.load(Ordering::SeqCst) {
        return;
    }
    match deadline_ns {
        Some(d) => {
            let wait = Duration::from_nanos(d.saturating_sub(now_ns));
            drop(inbox.cond.wait_timeout(guard, wait));
        }
        None => drop(inbox.cond.wait(guard)),
    }
}
