//! A local shard driven from a tokio runtime's thread (feature `tokio`): the ring signals an
//! eventfd when completions are ready, the runtime's reactor watches it, and a request goes
//! from the task that asks for it to the ring in the driving task's next turn, with no loop
//! thread between them. The runtime then sleeps in one place, its own epoll, and the ring's
//! deadline is a tokio timer.

use std::future::{poll_fn, Future};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::pin::{pin, Pin};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::time::Sleep;

use crate::{Error, LocalShard};

impl LocalShard {
    /// Runs `future` on the current tokio runtime while driving this shard's ring from the
    /// same thread: requests that `future` and the tasks it waits for queue on this shard
    /// reach the ring in this call's next turn, and their completions wake it through the
    /// runtime's reactor. For a current-thread runtime (or a `LocalSet`), one shard per
    /// runtime thread; the runtime needs its I/O driver and, for a scheduler that holds
    /// requests back (not [`crate::PolicyBuilder::unlimited`]), its timer
    /// (`Builder::enable_all`). io_uring only ([`Error::DriveNeedsUring`]); outside a runtime it
    /// returns [`Error::DriveOutsideRuntime`].
    ///
    /// ```
    /// use std::rc::Rc;
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
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    /// let local = tokio::task::LocalSet::new();
    /// let shard = Rc::new(disk.local_shard()?);
    /// let read_back = local.block_on(&runtime, shard.drive(async {
    ///     // A task of its own on this thread: it uses the shard the call drives.
    ///     let (s, f) = (shard.clone(), file.clone());
    ///     let writer = tokio::task::spawn_local(async move {
    ///         s.write_at(&f, data, IoBuf::from_slice(b"abc"), 0).await.0
    ///     });
    ///     assert_eq!(writer.await.expect("writer task")?, 3);
    ///     let (n, buf) = shard.read_at(&file, data, IoBuf::zeroed(3), 0).await;
    ///     n.map(|n| buf[..n].to_vec())
    /// }))??;
    /// assert_eq!(read_back, b"abc");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn drive<F: Future>(&self, future: F) -> Result<F::Output, Error> {
        let watch = Watch::new(self)?;
        let mut future = pin!(future);
        let mut refill: Option<Pin<Box<Sleep>>> = None;
        poll_fn(|cx| {
            self.driving.set(true);
            let polled = self.poll_drive(cx, future.as_mut(), &watch, &mut refill);
            self.driving.set(false);
            polled
        })
        .await
    }

    /// One poll of [`Self::drive`]: the caller's future, then turns of the ring until the
    /// eventfd has nothing new, then the timer for the scheduler's next refill.
    fn poll_drive<F: Future>(
        &self,
        cx: &mut Context<'_>,
        future: Pin<&mut F>,
        watch: &Watch<'_>,
        refill: &mut Option<Pin<Box<Sleep>>>,
    ) -> Poll<Result<F::Output, Error>> {
        {
            let mut driver = self.driver.borrow_mut();
            if !driver.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *driver = Some(cx.waker().clone());
            }
        }
        if let Poll::Ready(out) = future.poll(cx) {
            return Poll::Ready(Ok(out));
        }
        let mut signalled = false;
        loop {
            self.turn_nowait(signalled)?;
            match watch.fd.poll_read_ready(cx) {
                // The counter is not read back: the reactor watches edge-triggered, and each
                // signal is a new edge whatever the count, so a read would only cost a system
                // call per wake-up.
                Poll::Ready(Ok(mut ready)) => {
                    ready.clear_ready();
                    signalled = true;
                }
                Poll::Ready(Err(e)) => {
                    return Poll::Ready(Err(Error::Device {
                        message: format!("watching the ring's eventfd: {e}"),
                    }))
                }
                Poll::Pending => break,
            }
        }
        let wakeup_ns = {
            let core = self.core.borrow();
            core.next_wakeup_ns()
                .map(|at| at.saturating_sub(core.now_ns()))
        };
        match wakeup_ns {
            Some(delay_ns) => {
                let at = tokio::time::Instant::now() + Duration::from_nanos(delay_ns);
                let sleep = refill.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
                sleep.as_mut().reset(at);
                if sleep.as_mut().poll(cx).is_ready() {
                    cx.waker().wake_by_ref();
                }
            }
            None => *refill = None,
        }
        Poll::Pending
    }
}

/// The eventfd a driven shard's ring signals, registered with the ring and the runtime's
/// reactor for as long as one [`LocalShard::drive`] call runs (also when it is dropped early).
struct Watch<'a> {
    shard: &'a LocalShard,
    fd: AsyncFd<OwnedFd>,
}

impl<'a> Watch<'a> {
    fn new(shard: &'a LocalShard) -> Result<Watch<'a>, Error> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(Error::DriveOutsideRuntime);
        }
        // SAFETY: eventfd takes no pointers; a non-negative result is a new descriptor we own.
        let raw = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if raw < 0 {
            let errno = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            return Err(Error::Device {
                message: format!("eventfd: {}", weir_engine::describe_errno(errno)),
            });
        }
        // SAFETY: `raw` is a fresh descriptor nothing else owns.
        let owned = unsafe { OwnedFd::from_raw_fd(raw) };
        shard
            .core
            .borrow_mut()
            .register_eventfd(owned.as_raw_fd())?;
        // SAFETY: the AsyncFd owns the descriptor, which stays open and the same until the
        // AsyncFd is dropped.
        match unsafe { AsyncFd::register_with_interest(owned, Interest::READABLE) } {
            Ok(fd) => Ok(Watch { shard, fd }),
            Err(e) => {
                shard.core.borrow_mut().unregister_eventfd();
                Err(Error::Device {
                    message: format!("registering the ring's eventfd with the tokio reactor: {e}"),
                })
            }
        }
    }
}

impl Drop for Watch<'_> {
    fn drop(&mut self) {
        self.shard.core.borrow_mut().unregister_eventfd();
        *self.shard.driver.borrow_mut() = None;
    }
}
