//! io_tester's `cpu` job: each request is a busy loop of `execution_time` on the shard's own
//! thread (see [`crate::inline`]), so it stalls the shard's I/O the way a long task stalls a
//! Seastar reactor. Like io_tester, a request counts one unit of "throughput" (loops per
//! second), and the shard's CPU time shows the load (`shard_busy_s`).

use std::time::{Duration, Instant};

/// Spins until `execution` has passed on the host's monotonic clock.
pub(crate) fn busy_loop(execution: Duration) {
    let start = Instant::now();
    while start.elapsed() < execution {
        std::hint::spin_loop();
    }
}
