//! The cross-shard stall's wake: how long a shard whose head leads the slowest shard's by more
//! than the lag waits before it looks again.
//!
//! A shard with pieces in the disk is woken by their completions, and its timer is only the
//! backstop for completions that arrive on other shards: goal / 8, as before. A shard with
//! nothing in the disk has only its timer. On a device that completes inside the submission
//! (zram) that is every stall: a whole round comes back before the next call, and a round of
//! 4 KiB writes (~35-64 pieces of a few us of CPU each) is shorter than goal / 8 (~94 us at
//! the default goal). Session 13's quiet zram bench lost 4-10% of its 4 KiB write totals to
//! those sleeps (docs/scheduler-rate.md section 18). The laggard moves its virtual time only
//! when it ends a `dispatch` call, so the leader wakes when the laggard is next expected to
//! end one (its last call's end plus its usual gap between calls, `boards.rs`), never later
//! than goal / 8 and never sooner than a microsecond (section 19).

use super::ShardQueue;

/// The soonest a stalled shard looks again: a wake-up costs a loop pass.
const STALL_WAKE_MIN_NS: u64 = 1_000;

impl ShardQueue {
    /// When a shard stalled on the cross-shard lag at `now_ns` looks again.
    pub(super) fn stall_wake_ns(&mut self, now_ns: u64) -> u64 {
        let backstop_ns = now_ns + self.stall_wake_max_ns();
        if self.in_flight > 0 {
            return backstop_ns;
        }
        let Some(next_ns) = self.budget.boards().laggard_next_call_ns(now_ns) else {
            return backstop_ns;
        };
        let at_ns = next_ns.clamp(now_ns + STALL_WAKE_MIN_NS, backstop_ns);
        if at_ns < backstop_ns {
            self.lag_short_wakes += 1;
        }
        at_ns
    }

    /// The longest a stall waits, and the longest gap between two calls a shard's usual gap
    /// counts (a stall's own wait, an idle spell): goal / 8.
    pub(super) fn stall_wake_max_ns(&self) -> u64 {
        (self.budget.goal_ps() / 1000 / 8).max(STALL_WAKE_MIN_NS)
    }
}
