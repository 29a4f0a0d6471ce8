//! Sampled windows handed from the shards to the sampler in step.
//!
//! Every shard cuts its own windows on its own clock (`sample_interval` after its start, and
//! again), and shard 0 tells the sampler when its window ends. Summing whatever each shard
//! has published at that moment would count another shard that reaches the same boundary a
//! few microseconds later in the *next* sample, or lose it when the run stops: a two-shard
//! `weir explore` on zram would see windows with one shard's reads missing (a pure-read point
//! at exactly half its offered rate, calibrations 20-35% apart between two maps of one
//! device). So each shard queues one entry per window, and the sampler takes window k from
//! every shard once each has ended it (or has finished).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::hist::LatencyHistogram;

/// How long the sampler waits for a shard to end window k before summing without it (wall
/// clock). Shard 0 waits for the verdict meanwhile and issues nothing, so the wait is kept
/// short: a shard whose thread got no CPU for this long is counted in a later window (the
/// old behaviour, now only on a machine too busy to measure anyway).
const SHARD_WAIT_LIMIT: Duration = Duration::from_millis(100);
const SHARD_POLL: Duration = Duration::from_micros(50);

/// One job on one shard: the windows ended but not yet taken, and the totals taken so far.
#[derive(Default)]
pub(crate) struct Published {
    queue: VecDeque<Ended>,
    pub ops: u64,
    pub bytes: u64,
    /// Every window taken so far, merged.
    pub latency: LatencyHistogram,
}

struct Ended {
    ops_total: u64,
    bytes_total: u64,
    recent: LatencyHistogram,
}

/// What one shard's job did in the window the sampler takes.
pub(crate) struct Taken {
    pub ops: u64,
    pub recent: LatencyHistogram,
}

impl Published {
    /// The shard ended a window: its cumulative totals and the window's latencies.
    pub fn push(&mut self, ops_total: u64, bytes_total: u64, recent: &LatencyHistogram) {
        self.queue.push_back(Ended {
            ops_total,
            bytes_total,
            recent: recent.clone(),
        });
    }

    /// The oldest window not taken yet (none when the shard has not ended it).
    pub fn take(&mut self) -> Taken {
        match self.queue.pop_front() {
            Some(e) => {
                self.ops = e.ops_total;
                self.bytes = e.bytes_total;
                self.latency.add(&e.recent);
                Taken {
                    ops: e.recent.count(),
                    recent: e.recent,
                }
            }
            None => Taken {
                ops: 0,
                recent: LatencyHistogram::new(),
            },
        }
    }
}

/// How far one shard has got: windows ended, and whether its loop is over.
#[derive(Default)]
pub(crate) struct ShardMark {
    windows_ended: AtomicU64,
    finished: AtomicBool,
}

impl ShardMark {
    pub fn window_ended(&self) {
        self.windows_ended.fetch_add(1, Ordering::SeqCst);
    }

    fn has(&self, window: u64) -> bool {
        self.finished.load(Ordering::SeqCst) || self.windows_ended.load(Ordering::SeqCst) >= window
    }
}

/// Marks its shard finished when dropped (also when the shard's thread unwinds), so the
/// sampler never waits for a shard that will not end another window.
pub(crate) struct FinishedOnDrop<'a>(pub &'a ShardMark);

impl Drop for FinishedOnDrop<'_> {
    fn drop(&mut self) {
        self.0.finished.store(true, Ordering::SeqCst);
    }
}

/// How long the sampler may wait for the other shards to end a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShardWait {
    /// Real devices: at most [`SHARD_WAIT_LIMIT`] of wall-clock time.
    Limited,
    /// Simulated devices (see [`crate::DeviceFactory::simulated_clock`]): until every shard
    /// got there. A simulated shard's window ends when its thread gets the CPU, which on a
    /// loaded machine can be long after shard 0's; summing the window without it would make
    /// a seeded run depend on the machine's load.
    EveryShard,
}

/// Waits until every shard has ended `window` (counted from 1) or finished, or the wait limit.
pub(crate) fn await_window(
    marks: &[ShardMark],
    window: u64,
    wait: ShardWait,
    cancel: &weir_engine::Cancel,
) {
    let start = Instant::now();
    while !marks.iter().all(|m| m.has(window)) {
        let limit_passed = wait == ShardWait::Limited && start.elapsed() >= SHARD_WAIT_LIMIT;
        if limit_passed || cancel.is_cancelled() {
            return;
        }
        std::thread::sleep(SHARD_POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist_of(n: u64) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for _ in 0..n {
            h.record_ns(50_000);
        }
        h
    }

    #[test]
    fn a_window_ended_twice_before_a_take_is_taken_one_at_a_time() {
        let mut p = Published::default();
        p.push(10, 40_960, &hist_of(10));
        p.push(25, 102_400, &hist_of(15));
        let first = p.take();
        assert_eq!((first.ops, p.ops, p.bytes), (10, 10, 40_960));
        let second = p.take();
        assert_eq!((second.ops, p.ops, p.bytes), (15, 25, 102_400));
        assert_eq!(p.latency.count(), 25);
        // Nothing ended: the totals stay, the window is empty.
        let none = p.take();
        assert_eq!((none.ops, p.ops), (0, 25));
    }

    #[test]
    fn the_wait_ends_when_every_shard_ended_the_window_or_finished() {
        let marks = [ShardMark::default(), ShardMark::default()];
        marks[0].window_ended();
        assert!(!marks[1].has(1));
        drop(FinishedOnDrop(&marks[1]));
        assert!(marks.iter().all(|m| m.has(1)));
        await_window(&marks, 1, ShardWait::Limited, &weir_engine::Cancel::new());
        assert!(!marks[0].has(2));
    }

    /// Simulated shards: the sampler waits past the wall-clock limit for a shard whose thread
    /// is slow to end the window (here it ends it after three times the limit).
    #[test]
    fn a_simulated_run_waits_for_every_shard_past_the_limit() {
        let marks = [ShardMark::default(), ShardMark::default()];
        marks[0].window_ended();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(SHARD_WAIT_LIMIT * 3);
                marks[1].window_ended();
            });
            await_window(
                &marks,
                1,
                ShardWait::EveryShard,
                &weir_engine::Cancel::new(),
            );
            assert!(marks[1].has(1), "the sampler gave up on shard 1");
        });
    }
}
