//! Supergroups: the upper level of the two-level share hierarchy.
//!
//! Every class belongs to exactly one group. A class registered with
//! [`ShardQueue::add_class`](crate::ShardQueue::add_class) gets a group of its own with the
//! class's shares (it competes at the top level as if the hierarchy were flat); a class
//! registered with [`ShardQueue::add_class_in`](crate::ShardQueue::add_class_in) joins a
//! supergroup made by [`ShardQueue::add_group`](crate::ShardQueue::add_group).
//!
//! The queue serves groups in order of their *global* virtual time (disk time consumed by
//! the group's classes divided by the group's shares) — the same clock that flat classes use,
//! so the top level holds across shards exactly as flat classes do. Inside a group, classes
//! are served in order of their own virtual time (their disk time divided by their shares),
//! which is local to the group: it only decides which of the group's classes takes the
//! group's turn. A group, like a class, is per shard: a supergroup named on two shards is two
//! instances, each with the group's shares (as io_tester's per-shard jobs are).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A group on one shard, as returned by `ShardQueue::add_group`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GroupId(pub u32);

/// How a supergroup is configured: its classes share its shares at the top level and
/// divide its turns between them by their own shares.
///
/// ```
/// use std::sync::Arc;
/// use weir_model::cost::CostModel;
/// use weir_sched::{ClassConfig, GroupConfig, SchedConfig, ShardQueue, SharedBudget};
///
/// let model = CostModel::new(100_000.0, 1e9, 100_000.0, 1e9, 1.0, false)?;
/// let budget = Arc::new(SharedBudget::new(model, SchedConfig::default())?);
/// let mut queue = ShardQueue::new(budget, 0)?;
/// let background = queue.add_group(GroupConfig::new("background", 100))?;
/// queue.add_class_in(background, ClassConfig::new("compaction", 1))?;
/// queue.add_class_in(background, ClassConfig::new("flush", 3))?;
/// assert_eq!(queue.group_by_name("background"), Some(background));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupConfig {
    /// The group's name: unique among the shard's groups.
    pub name: String,
    /// Relative weight against the other top-level entries (supergroups and classes outside
    /// any supergroup), 1..=1_000_000.
    pub shares: u32,
}

impl GroupConfig {
    /// A group with `shares` at the top level.
    pub fn new(name: impl Into<String>, shares: u32) -> Self {
        GroupConfig {
            name: name.into(),
            shares,
        }
    }
}

#[derive(Debug)]
pub(crate) struct Group {
    pub(crate) config: GroupConfig,
    /// A class's own group (made by `add_class`): its shares follow the class's.
    pub(crate) implicit: bool,
    /// Global virtual time: disk time consumed / shares.
    pub(crate) vt: u64,
    /// Backlogged classes of this group by their in-group virtual time.
    pub(crate) classes: Waiting,
    /// Classes taken off `classes` during one `dispatch` because their lane was full.
    pub(crate) set_aside: Vec<(u64, u32)>,
    /// True while the group is in the queue's top-level heap (or set aside from it).
    pub(crate) active: bool,
    /// In-group virtual time of the class last served: where a waking class starts when no
    /// sibling is backlogged.
    pub(crate) inner_clock: u64,
}

impl Group {
    pub(crate) fn new(config: GroupConfig, implicit: bool, vt: u64) -> Self {
        Group {
            config,
            implicit,
            vt,
            classes: if implicit {
                Waiting::One(None)
            } else {
                Waiting::Many(BinaryHeap::new())
            },
            set_aside: Vec::new(),
            active: false,
            inner_clock: 0,
        }
    }

    /// Where a class waking in this group may start: at most `head_start_ps` of disk time
    /// (scaled by its shares) ahead of the siblings that kept the group busy.
    pub(crate) fn waking_vt(&self, class_vt: u64, class_shares: u32, head_start_ps: u64) -> u64 {
        let reference = self.classes.peek().map_or(self.inner_clock, |(vt, _)| vt);
        class_vt.max(reference.saturating_sub(head_start_ps / u64::from(class_shares)))
    }
}

/// A group's waiting classes as (in-group virtual time, class index), smallest first. A
/// class's own group holds at most that class, so it keeps it inline: the flat case pays no
/// heap allocation, no sift and no extra cache line per dispatch.
#[derive(Debug)]
pub(crate) enum Waiting {
    One(Option<(u64, u32)>),
    Many(BinaryHeap<Reverse<(u64, u32)>>),
}

impl Waiting {
    pub(crate) fn peek(&self) -> Option<(u64, u32)> {
        match self {
            Waiting::One(one) => *one,
            Waiting::Many(heap) => heap.peek().map(|r| r.0),
        }
    }

    pub(crate) fn push(&mut self, vt: u64, index: u32) {
        match self {
            // Only the group's own class is ever pushed, and only while it is not waiting.
            Waiting::One(one) => *one = Some((vt, index)),
            Waiting::Many(heap) => heap.push(Reverse((vt, index))),
        }
    }

    pub(crate) fn pop(&mut self) {
        match self {
            Waiting::One(one) => *one = None,
            Waiting::Many(heap) => {
                heap.pop();
            }
        }
    }

    /// The head class was served: its virtual time moved on to `vt`.
    pub(crate) fn set_head_vt(&mut self, vt: u64) {
        match self {
            Waiting::One(Some(one)) => one.0 = vt,
            Waiting::One(None) => {}
            Waiting::Many(heap) => {
                if let Some(mut top) = heap.peek_mut() {
                    top.0 .0 = vt;
                }
            }
        }
    }
}
