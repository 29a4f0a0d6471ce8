//! The virtual-time board that makes shares hold across shards: each shard publishes the
//! smallest virtual time it has backlogged, and when it ends a `dispatch` call, so a shard
//! that leads and must wait knows when the laggard will next move (docs/scheduler-rate.md
//! section 19). Atomics only: each board is written by its own shard and read by the others.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// One shard's board, on its own cache lines so a publish never slows another shard's.
#[derive(Debug)]
#[repr(align(128))]
struct ShardBoard {
    head_vt: AtomicU64,
    /// When the shard last ended a `dispatch` call (0: never).
    call_end_ns: AtomicU64,
    /// Its usual gap between two calls (a running mean, weight 1/4; 0: not yet known): on a
    /// device that completes inside the submission, one round's CPU time.
    call_gap_ns: AtomicU64,
    /// 0 if the shard's last `dispatch` call was a round the round bound ended with nothing
    /// refused by the shared budget (a device that completes inside the submission: the
    /// shard's pace is its own CPU's), else 1 (from the start, until its first call).
    waits_on_budget: AtomicU64,
    /// When the shard's last call expects the next one: its timer, or the call's end plus the
    /// stall backstop when only a completion or an enqueue brings it back (0: no expectation,
    /// never judged late).
    next_call_ns: AtomicU64,
}

/// Every shard's board.
#[derive(Debug)]
pub(crate) struct ShardBoards {
    boards: Box<[ShardBoard]>,
}

impl ShardBoard {
    /// Past its expected next call by more than `overdue_ns` (never, before its first call).
    fn overdue(&self, now_ns: u64, overdue_ns: u64) -> bool {
        let next_ns = self.next_call_ns.load(Relaxed);
        next_ns != 0 && now_ns > next_ns.saturating_add(overdue_ns)
    }
}

impl ShardBoards {
    pub(crate) fn new(shards: usize) -> Self {
        let boards = (0..shards)
            .map(|_| ShardBoard {
                head_vt: AtomicU64::new(u64::MAX),
                call_end_ns: AtomicU64::new(0),
                call_gap_ns: AtomicU64::new(0),
                waits_on_budget: AtomicU64::new(1),
                next_call_ns: AtomicU64::new(0),
            })
            .collect();
        ShardBoards { boards }
    }

    pub(crate) fn publish(&self, shard: usize, head_vt: u64) {
        if let Some(board) = self.boards.get(shard) {
            board.head_vt.store(head_vt, Relaxed);
        }
    }

    /// Whether shard `shard`'s last `dispatch` call may have waited on the shared budget.
    pub(crate) fn set_waits_on_budget(&self, shard: usize, waits: bool) {
        if let Some(board) = self.boards.get(shard) {
            board.waits_on_budget.store(u64::from(waits), Relaxed);
        }
    }

    /// Whether any shard with a backlog may be waiting on the shared budget. While none is
    /// (every backlogged shard runs rounds paced by its own CPU, as on zram), a shard that
    /// holds back for another's virtual time gives that shard nothing: the lag check is
    /// skipped (docs/scheduler-rate.md section 19).
    pub(crate) fn any_waits_on_budget(&self) -> bool {
        self.boards
            .iter()
            .any(|b| b.head_vt.load(Relaxed) != u64::MAX && b.waits_on_budget.load(Relaxed) != 0)
    }

    /// Whether the shard holding the smallest backlogged virtual time (the one a leader waits
    /// for) is more than `overdue_ns` past the next call its last one expected. Its thread is
    /// then runnable but off its CPU (another process holds it): it is not waiting on the
    /// budget, and a leader held for it gives it nothing: a leader held so slept ~29,000 times
    /// in a 3 s zram row (docs/scheduler-cost-per-io.md).
    pub(crate) fn laggard_overdue(&self, now_ns: u64, overdue_ns: u64) -> bool {
        self.boards
            .iter()
            .filter(|b| b.head_vt.load(Relaxed) != u64::MAX)
            .min_by_key(|b| b.head_vt.load(Relaxed))
            .is_some_and(|b| b.overdue(now_ns, overdue_ns))
    }

    /// Records when shard `shard`'s last call expects its next one.
    pub(crate) fn set_next_call(&self, shard: usize, next_call_ns: u64) {
        if let Some(board) = self.boards.get(shard) {
            board.next_call_ns.store(next_call_ns, Relaxed);
        }
    }

    /// Shard `shard` ended a `dispatch` call at `now_ns`. A gap longer than `gap_cap_ns` (an
    /// idle spell, a stall's own wait) counts as `gap_cap_ns`, so one pause does not make the
    /// shard look slow for the next dozen calls.
    pub(crate) fn end_call(&self, shard: usize, now_ns: u64, gap_cap_ns: u64) {
        let Some(board) = self.boards.get(shard) else {
            return;
        };
        let last = board.call_end_ns.swap(now_ns, Relaxed);
        if last == 0 || now_ns <= last {
            return;
        }
        let gap = (now_ns - last).min(gap_cap_ns);
        let mean = board.call_gap_ns.load(Relaxed);
        let mean = if mean == 0 {
            gap
        } else {
            mean - mean / 4 + gap / 4
        };
        board.call_gap_ns.store(mean.max(1), Relaxed);
    }

    /// The smallest virtual time any shard has backlogged (`u64::MAX` when none has).
    pub(crate) fn global_head_vt(&self) -> u64 {
        self.boards
            .iter()
            .map(|b| b.head_vt.load(Relaxed))
            .min()
            .unwrap_or(u64::MAX)
    }

    /// When the shard holding the smallest backlogged virtual time (the one a leader waits
    /// for) is next expected to end a `dispatch` call and publish: its last call's end plus
    /// its usual gap, or a gap from `now_ns` if that moment has passed. None while no shard
    /// has a backlog or the laggard's gap is not yet known.
    pub(crate) fn laggard_next_call_ns(&self, now_ns: u64) -> Option<u64> {
        let laggard = self
            .boards
            .iter()
            .filter(|b| b.head_vt.load(Relaxed) != u64::MAX)
            .min_by_key(|b| b.head_vt.load(Relaxed))?;
        let gap = laggard.call_gap_ns.load(Relaxed);
        if gap == 0 {
            return None;
        }
        let next = laggard.call_end_ns.load(Relaxed).saturating_add(gap);
        Some(if next > now_ns { next } else { now_ns + gap })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_laggard_is_expected_one_usual_gap_after_its_last_call() {
        let boards = ShardBoards::new(2);
        boards.publish(0, 500);
        boards.publish(1, 100);
        assert_eq!(boards.laggard_next_call_ns(0), None, "no gap known yet");
        for at in [1_000, 1_040, 1_080, 1_120] {
            boards.end_call(1, at, 100_000);
        }
        assert_eq!(boards.laggard_next_call_ns(1_130), Some(1_160));
        // Overdue: another gap from now, never a moment in the past.
        assert_eq!(boards.laggard_next_call_ns(2_000), Some(2_040));
        // Shard 0 is not the laggard: its calls do not decide.
        boards.end_call(0, 1_000, 100_000);
        boards.end_call(0, 9_000, 100_000);
        assert_eq!(boards.laggard_next_call_ns(1_130), Some(1_160));
    }

    #[test]
    fn the_lag_holds_while_a_backlogged_shard_waits_on_the_budget() {
        let boards = ShardBoards::new(2);
        assert!(
            !boards.any_waits_on_budget(),
            "no backlog, nothing to wait for"
        );
        boards.publish(0, 100);
        boards.publish(1, 900);
        assert!(
            boards.any_waits_on_budget(),
            "a shard waits until its first call says not"
        );
        boards.set_waits_on_budget(0, false);
        assert!(boards.any_waits_on_budget(), "shard 1 has not called yet");
        boards.set_waits_on_budget(1, false);
        assert!(!boards.any_waits_on_budget(), "both pace their own rounds");
        boards.set_waits_on_budget(0, true);
        assert!(boards.any_waits_on_budget());
        // A shard without a backlog waits on nothing.
        boards.publish(0, u64::MAX);
        assert!(!boards.any_waits_on_budget());
    }

    #[test]
    fn a_laggard_long_past_its_next_call_is_off_its_cpu() {
        let boards = ShardBoards::new(2);
        boards.publish(0, 100);
        boards.publish(1, 900);
        assert!(!boards.laggard_overdue(1_000_000, 1_000), "never called");
        boards.set_next_call(0, 5_000);
        boards.set_next_call(1, 1);
        assert!(!boards.laggard_overdue(5_000, 1_000), "due now");
        assert!(
            !boards.laggard_overdue(6_000, 1_000),
            "late by the slack: still"
        );
        assert!(
            boards.laggard_overdue(6_001, 1_000),
            "later than that it is off its CPU"
        );
        boards.set_next_call(0, 9_000);
        assert!(
            !boards.laggard_overdue(6_001, 1_000),
            "its next call moved it"
        );
        // Only the laggard decides: shard 1 is long overdue but leads.
        assert!(!boards.laggard_overdue(9_500, 1_000));
    }

    #[test]
    fn a_long_pause_counts_as_the_cap() {
        let boards = ShardBoards::new(1);
        boards.publish(0, 7);
        boards.end_call(0, 1_000, 500);
        boards.end_call(0, 1_000_000, 500);
        assert_eq!(boards.laggard_next_call_ns(1_000_000), Some(1_000_500));
    }

    #[test]
    fn no_backlog_no_laggard() {
        let boards = ShardBoards::new(2);
        boards.end_call(0, 1_000, 500);
        boards.end_call(0, 1_100, 500);
        assert_eq!(boards.laggard_next_call_ns(1_100), None);
        assert_eq!(boards.global_head_vt(), u64::MAX);
    }
}
