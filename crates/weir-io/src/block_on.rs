//! A minimal executor for the blocking calls: polls one future on the calling thread and
//! parks between polls. No runtime needed; any waker the future registers unparks it.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

struct ThreadWaker(Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `future` to completion on this thread, parking while it is pending. For the blocking
/// forms of weir-io's calls from threads without an async runtime; don't call it from inside
/// an async task (it blocks that task's worker thread).
///
/// ```
/// let answer = weir_io::block_on(async { 6 * 7 });
/// assert_eq!(answer, 42);
/// ```
pub fn block_on<F: Future>(future: F) -> F::Output {
    drive(future, std::thread::park)
}

/// Polls `future` on this thread until it is ready, calling `idle` between polls: `park` for
/// [`block_on`], one turn of the ring for a local shard, whose completions are what wake it.
pub(crate) fn drive<F: Future>(future: F, mut idle: impl FnMut()) -> F::Output {
    let mut future = pin!(future);
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        idle();
    }
}
