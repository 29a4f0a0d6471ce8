//! Thread-per-core: a shard owned by the thread that uses it, with no loop thread and no
//! runtime. The thread submits, and [`LocalShard::block_on`] drives the ring while its
//! future waits.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::marker::PhantomData;
use std::task::Waker;

use weir_model::device::Direction;
use weir_sched::{ClassMetrics, ShardMetrics};

use crate::shard::{IoFuture, ShardCore, Submit};
use crate::{AppendFuture, Error, File, IoBuf, IoClass, Policy};

/// One shard of a [`crate::Disk`] owned by the calling thread (thread-per-core): its own ring
/// and scheduler queue, sharing the disk's budget with the other shards so shares and the
/// latency goal hold across cores. Not `Send`: create one per core thread with
/// [`crate::Disk::local_shard`].
///
/// ```
/// use weir_io::{ClassSpec, Disk, DiskModel, FileOptions, IoBuf, Policy};
///
/// let model = DiskModel::builder()
///     .read_iops(50_000).read_bytes_per_sec(1 << 30)
///     .write_iops(25_000).write_bytes_per_sec(1 << 30)
///     .build()?;
/// let mut policy = Policy::builder(model);
/// let data = policy.class(ClassSpec::new("data", 100))?;
/// let disk = Disk::builder(&policy.build()?).loops(0).local_shards(1).build()?;
/// let dir = tempfile::tempdir().expect("temp dir");
/// let file = disk.open(dir.path().join("f"), FileOptions::new().create(true).direct(false))?;
///
/// let shard = disk.local_shard()?;
/// let (n, _) = shard.block_on(shard.write_at(&file, data, IoBuf::from_slice(b"abc"), 0));
/// assert_eq!(n?, 3);
/// let (n, buf) = shard.block_on(shard.read_at(&file, data, IoBuf::zeroed(3), 0));
/// assert_eq!((n?, &buf[..]), (3, &b"abc"[..]));
/// # Ok::<(), weir_io::Error>(())
/// ```
pub struct LocalShard {
    policy: Policy,
    pub(crate) core: RefCell<ShardCore>,
    /// The task driving this shard from an event loop ([`LocalShard::drive`]), woken when a
    /// request is queued so it reaches the ring in that task's next turn.
    pub(crate) driver: RefCell<Option<Waker>>,
    /// Set while the driving task runs a turn: a request queued then goes out in that turn,
    /// with no wake-up.
    pub(crate) driving: Cell<bool>,
    /// The ring belongs to this thread.
    _not_send: PhantomData<*const ()>,
}

impl LocalShard {
    pub(crate) fn new(policy: Policy, core: ShardCore) -> LocalShard {
        LocalShard {
            policy,
            core: RefCell::new(core),
            driver: RefCell::new(None),
            driving: Cell::new(false),
            _not_send: PhantomData,
        }
    }

    /// Reads `buf.len()` bytes at `offset_bytes` in `class` (see [`crate::Disk::read_at`]).
    /// The request is queued now and performed while [`Self::block_on`] runs.
    pub fn read_at(&self, file: &File, class: IoClass, buf: IoBuf, offset_bytes: u64) -> IoFuture {
        self.submit(file, class, Direction::Read, buf, offset_bytes)
    }

    /// Writes `buf.len()` bytes at `offset_bytes` in `class`.
    pub fn write_at(&self, file: &File, class: IoClass, buf: IoBuf, offset_bytes: u64) -> IoFuture {
        self.submit(file, class, Direction::Write, buf, offset_bytes)
    }

    /// Writes `buf` at the end of the file; resolves to the offset it landed at.
    pub fn append(&self, file: &File, class: IoClass, buf: IoBuf) -> AppendFuture {
        let offset = file.reserve_append(buf.len() as u64);
        AppendFuture::new(self.write_at(file, class, buf, offset), offset)
    }

    fn submit(
        &self,
        file: &File,
        class: IoClass,
        direction: Direction,
        buf: IoBuf,
        offset_bytes: u64,
    ) -> IoFuture {
        let (submit, future) =
            match Submit::checked(&self.policy, file, class, direction, buf, offset_bytes) {
                Ok(pair) => pair,
                Err(resolved) => return resolved,
            };
        let mut core = self.core.borrow_mut();
        let now = core.now_ns();
        core.submit(submit, now);
        drop(core);
        if !self.driving.get() {
            if let Some(waker) = self.driver.borrow_mut().take() {
                waker.wake();
            }
        }
        future
    }

    /// Runs `future` on this thread, performing this shard's I/O while it waits: dispatches
    /// what the budget allows, sleeps in the kernel until a completion or the scheduler's
    /// next refill, and polls the future again. Combine several requests with a join (e.g.
    /// `futures::future::join_all`) to keep many in flight.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        crate::block_on::drive(future, || self.turn())
    }

    /// One turn of the ring: dispatch, wait for a completion (or the next refill), complete.
    /// With nothing queued or in flight it parks briefly (the future waits on something else).
    pub fn turn(&self) {
        let mut core = self.core.borrow_mut();
        let now = core.now_ns();
        let pumped = core.pump(now);
        if pumped.is_err() || !core.busy() {
            drop(core);
            std::thread::park_timeout(std::time::Duration::from_millis(1));
            return;
        }
        let deadline = core.next_wakeup_ns();
        if core.pieces_in_device() > 0 || deadline.is_some() {
            let _ = core.wait(deadline);
        }
        core.reap();
    }

    /// One turn that never sleeps, for an event loop that waits elsewhere: dispatches what the
    /// budget allows and finishes the requests whose completions are in. It enters the kernel
    /// only when `signalled` (the ring said completions are ready: on a `DEFER_TASKRUN` ring
    /// only an enter posts them) or a request still waits to be submitted; a busy device's
    /// requests are submitted as they are pushed, and those enters post completions too.
    pub(crate) fn turn_nowait(&self, signalled: bool) -> Result<(), Error> {
        let mut core = self.core.borrow_mut();
        let now = core.now_ns();
        core.pump(now)?;
        if signalled || core.has_unsubmitted() {
            core.poll_device()?;
        }
        core.reap();
        Ok(())
    }

    /// Changes `class`'s shares on this shard.
    pub fn set_shares(&self, class: IoClass, shares: u32) -> Result<(), Error> {
        self.policy.check(class)?;
        self.core.borrow_mut().set_shares(class, shares)
    }

    /// This shard's per-class metrics, in class-handle order.
    pub fn metrics(&self) -> Vec<ClassMetrics> {
        self.core.borrow().metrics().classes
    }

    /// This shard's scheduler metrics (for [`weir_sched::render_prometheus`]).
    pub fn shard_metrics(&self) -> ShardMetrics {
        self.core.borrow().metrics()
    }
}
