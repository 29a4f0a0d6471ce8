//! Which classes hold the window's pipeline shut.
//!
//! The in-disk window may hold the disk's pipeline on top of a goal (`SharedBudget`'s
//! `pipeline_ps`), but only while that extra room is shared by share: the fair queue imposes
//! a ratio only on classes that still have requests *queued*. A class whose every request is
//! already in the disk takes no more of a wider window, so the room the pipeline adds goes
//! to the others alone and the ratio moves with it (measured on vda: 4 KiB writes at 0.611
//! and 1.301 of the asked ratio; in simulation 0.41 of 1000:100 at the bench's depth,
//! `the_pipeline_keeps_both_ratios_at_the_benchs_depth`). Such a class is *drained*: nothing
//! queued and at least a quarter goal of disk time of its own in a lane. While any class of
//! any shard is drained on a lane, that lane's window is a goal without the pipeline, so the
//! drained class's completions come back to a scheduler that still holds the others' backlog
//! and its re-queued requests go ahead of it in virtual-time order. A class with less than a
//! quarter goal in the disk (a 1-deep query beside a bulk load) does not count: it gets all
//! it asks already, and holding the pipeline shut for it would only idle the disk.

use super::{ShardQueue, SharedBudget};
use weir_model::device::Direction;

impl ShardQueue {
    /// A quarter goal of disk time: a class with this much of its own work in the disk is
    /// not idle, whether its queue is empty (drained, here) or it wakes (`wake_class`). The
    /// goal is the share hold's (at most 750 us, `hold_goal_ps`): at a 1.5 ms goal vda's
    /// bench class, 32 16 KiB writes a shard (250 us of model time), never counted as
    /// drained and the split fell to 0.097 of asked (docs/scheduler-matrix.md section 29).
    pub(super) fn in_disk_floor_ps(&self) -> u64 {
        self.budget.hold_goal_ps() / 4
    }

    /// Re-judges whether class `index` is drained on each lane after its queue or its
    /// in-flight work changed, and tells the budget when that flips.
    pub(super) fn refresh_drained(&mut self, index: u32) {
        let floor_ps = self.in_disk_floor_ps();
        let class = &mut self.classes[index as usize];
        for dir in [Direction::Read, Direction::Write] {
            let drained = class.queue.is_empty() && class.in_flight_ps[dir.index()] >= floor_ps;
            if drained != class.drained[dir.index()] {
                class.drained[dir.index()] = drained;
                self.budget.note_drained(dir, drained);
            }
        }
    }
}

/// A shard that stops (its queue dropped) must not hold the others: with work still queued
/// its last published virtual time would stay the global minimum for good, and every other
/// shard whose head is more than a goal ahead of it would wait for a catch-up that never
/// comes (seen as `weir run` rows that overran their duration by minutes once one shard had
/// ended: the other woke every eighth of a goal and dispatched nothing). Nor may its drained
/// classes keep every lane's pipeline shut.
impl Drop for ShardQueue {
    fn drop(&mut self) {
        self.budget.publish(self.shard, u64::MAX);
        forget_drained(&self.budget, self.classes.iter().map(|c| c.drained));
    }
}

fn forget_drained(budget: &SharedBudget, drained: impl Iterator<Item = [bool; 2]>) {
    for flags in drained {
        for dir in [Direction::Read, Direction::Write] {
            if flags[dir.index()] {
                budget.note_drained(dir, false);
            }
        }
    }
}
