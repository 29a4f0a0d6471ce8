//! The cross-shard lag: a shard whose head leads the slowest shard's by more than the lag
//! stops its `dispatch` call (a stall), and how long it waits before it looks again.
//!
//! The lag holds only while some shard with a backlog may wait on the shared budget. On a
//! device that completes inside the submission each shard's rounds are paced by its own CPU:
//! when every backlogged shard's last call was a round the round bound ended with nothing
//! refused, holding a leader back gives the laggard nothing, and with one CPU slower than the
//! other (another thread on it) it held the faster shard to the slower one's pace (seeded,
//! `inline_shards.rs`: 0.919 of unscheduled at 0.85; section 19).
//!
//! A shard with pieces in the disk is woken by their completions, and its timer is only the
//! backstop for completions that arrive on other shards: goal / 8. A shard with
//! nothing in the disk has only its timer; on a disk that holds its requests (vda) it keeps
//! goal / 8. On a device seen to complete inside the submission (zram) that is every stall:
//! a whole round comes back before the next call, and a round of
//! 4 KiB writes (~35-64 pieces of a few us of CPU each) is shorter than goal / 8 (~94 us at
//! the default goal). Those sleeps cost a zram bench 4-10% of its 4 KiB write totals (docs/scheduler-rate.md section 18). The laggard moves its virtual time only
//! when it ends a `dispatch` call, so the leader wakes when the laggard is next expected to
//! end one (its last call's end plus its usual gap between calls, the `boards` module), never later
//! than goal / 8 and never sooner than a microsecond (section 19).

use super::ShardQueue;

/// The soonest a stalled shard looks again: a wake-up costs a loop pass.
const STALL_WAKE_MIN_NS: u64 = 1_000;

impl ShardQueue {
    /// Publishes `group_vt` (the head this call is at) and says whether the call must stop
    /// for another shard's virtual time; if so, sets the wake-up.
    pub(super) fn lag_stalled(&mut self, group_vt: u64, group_index: u32, now_ns: u64) -> bool {
        self.budget.publish(self.shard, group_vt);
        // The group with the most shares (up to 1000) may lead by a goal of its disk time,
        // and every group by the same virtual time (so by its share of that goal), or by at
        // least a sixteenth of a goal of its own disk time: a 1-share group beside 1000-share
        // ones has a single 4 KiB read move its virtual time ~20 lags, and two shards then
        // took turns one request at a time, each waiting for a timer.
        let shares = u64::from(self.groups[group_index as usize].config.shares.max(1));
        let lag_vt = self.lag_vt().max(self.lag_floor_ps / shares);
        let leads = group_vt > self.budget.global_head_vt().saturating_add(lag_vt);
        if !leads || !self.budget.boards().any_waits_on_budget() {
            return false;
        }
        // A laggard later than a timer's slack (the backstop, goal / 8) past its own next
        // call is off its CPU: holding this shard for it only idles the disk.
        if self
            .budget
            .boards()
            .laggard_overdue(now_ns, self.stall_wake_max_ns())
        {
            self.lag_overdue_skips += 1;
            return false;
        }
        // Another shard's class is behind in virtual time: let it catch up.
        self.lag_stalls += 1;
        let at_ns = self.stall_wake_ns(now_ns);
        self.wake_at(at_ns);
        true
    }

    /// The end of a `dispatch` call: publishes the head, when the call ended and whether it
    /// was paced by this shard's own CPU (`own_pace`: the round bound ended it and the budget
    /// refused nothing).
    pub(super) fn end_call(&mut self, now_ns: u64, own_pace: bool) {
        let head = self.heap.peek().map_or(u64::MAX, |r| r.0 .0);
        self.budget.publish(self.shard, head);
        let gap_cap_ns = self.stall_wake_max_ns();
        let boards = self.budget.boards();
        boards.end_call(self.shard, now_ns, gap_cap_ns);
        boards.set_waits_on_budget(self.shard, !own_pace);
        // A shard with pieces in a disk that holds them (no round bound yet: vda) calls again
        // at their completions, which no clock here bounds: it publishes no expectation and is
        // never judged off its CPU (0), so the lag there holds in full.
        let next_call_ns = if self.in_flight > 0 && self.round_bounds == 0 {
            0
        } else {
            self.wakeup_ns.unwrap_or(now_ns + gap_cap_ns)
        };
        boards.set_next_call(self.shard, next_call_ns);
    }

    /// How far in virtual time every group of this shard may lead: a goal of disk time at
    /// the largest shares registered here, counted as 1000 when larger.
    ///
    /// Why the largest shares and not 1000 always: virtual time is disk time / shares, so a
    /// fixed lag of a goal at 1000 shares is a sixteenth of a goal (the floor) for two
    /// 1-share classes. vda's 4 KiB reads at 1:1 then stalled 16-18 K times in a 5 s row
    /// against 5-8 K at 1000:100 and 100:1000, and ran 0.85-0.97
    /// of unscheduled against 0.97-1.08. The same virtual time for every group keeps what
    /// the lag is for: the split between classes a shard lead can bend is the same fraction
    /// at any shares (a lag of a goal of each class's *own* disk time let the 100-share
    /// class of the simulated read/write mix take 8.8:1 of a 10:1 split).
    pub(super) fn lag_vt(&self) -> u64 {
        let largest = self
            .groups
            .iter()
            .map(|g| u64::from(g.config.shares))
            .max()
            .unwrap_or(1)
            .clamp(1, 1000);
        (self.budget.goal_ps() / largest).max(1)
    }

    /// When a shard stalled on the cross-shard lag at `now_ns` looks again.
    pub(super) fn stall_wake_ns(&mut self, now_ns: u64) -> u64 {
        let backstop_ns = now_ns + self.stall_wake_max_ns();
        // Only on a device seen to complete inside the submission (the round bound has
        // engaged on this shard): a disk that holds its requests keeps goal / 8 (without this
        // gate a loaded vda run woke 40-75% of its stalls early; section 19).
        if self.in_flight > 0 || self.round_bounds == 0 {
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
