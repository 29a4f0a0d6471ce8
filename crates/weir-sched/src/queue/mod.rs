//! One shard's fair queue: classes with shares, ordered by virtual time (disk time consumed
//! divided by shares), dispatching into the shared budget.

use crate::budget::{Blocked, SharedBudget};
use crate::group::{Group, GroupConfig, GroupId};
use crate::metrics::{ClassMetrics, ShardMetrics};
use crate::SchedError;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;
use weir_model::device::Direction;

const NONE: u32 = u32::MAX;
/// Generations count in 31 bits, so a token (generation << 32 | slot) never sets bit 63.
const GENERATION_MASK: u32 = u32::MAX >> 1;
/// Classes with a cap may run this far ahead of their rate before they are held back.
const CAP_BURST_NS: u64 = 10_000_000;

#[derive(Debug)]
struct Pending {
    user_data: u64,
    direction: Direction,
    len_bytes: u64,
    next_offset_bytes: u64,
    enqueued_ns: u64,
    split: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClassState {
    Idle,
    InHeap,
    Throttled,
}

#[derive(Debug)]
struct Class {
    config: ClassConfig,
    /// Index of the class's group in `ShardQueue::groups`.
    group: u32,
    /// Virtual time within the group (disk time / the class's shares).
    vt: u64,
    queue: VecDeque<Pending>,
    state: ClassState,
    waiting_since_ns: Option<u64>,
    /// Theoretical arrival time of the next request under the caps (GCRA).
    cap_tat_ns: u64,
    period_dispatched_ps: u64,
    period_completed_ps: u64,
    /// Disk time of this class's pieces in the disk, per direction, and whether the class
    /// holds the pipeline shut on that direction's lane (see the `drained` module).
    in_flight_ps: [u64; 2],
    drained: [bool; 2],
    metrics: ClassMetrics,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    generation: u32,
    class: u32,
    split: u32,
    direction: Direction,
    user_data: u64,
    offset_bytes: u64,
    len_bytes: u64,
    cost_ps: u64,
    ahead_ps: u64,
    enqueued_ns: u64,
    dispatched_ns: u64,
}

/// One shard's queue. Sans-I/O: it never blocks, sleeps or reads a clock; the caller passes
/// `now_ns` from its device. The crate's top-level docs show the whole loop.
///
/// ```
/// use std::sync::Arc;
/// use weir_model::cost::CostModel;
/// use weir_model::device::Direction;
/// use weir_sched::{ClassConfig, Request, SchedConfig, ShardQueue, SharedBudget};
///
/// let model = CostModel::new(100_000.0, 1e9, 100_000.0, 1e9, 1.0, false)?;
/// let budget = Arc::new(SharedBudget::new(model, SchedConfig::default())?);
/// let mut queue = ShardQueue::new(budget, 0)?;
/// let query = queue.add_class(ClassConfig::new("query", 1000))?;
/// queue.enqueue(query, Request { direction: Direction::Read, len_bytes: 4096, user_data: 1 }, 0)?;
/// let mut out = Vec::new();
/// assert_eq!(queue.dispatch(0, &mut out), 1);
/// let done = queue.complete(out[0].token, 90_000).expect("in flight");
/// assert!(done.request_done);
/// assert_eq!((done.user_data, done.disk_ns), (1, 90_000));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ShardQueue {
    budget: Arc<SharedBudget>,
    shard: usize,
    classes: Vec<Class>,
    groups: Vec<Group>,
    /// Active groups by global virtual time.
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    /// Groups taken off the heap during one `dispatch` because every waiting class of theirs
    /// had a full lane, put back at its end (reused between calls).
    set_aside: Vec<Reverse<(u64, u32)>>,
    /// Groups whose classes were set aside during one `dispatch`.
    groups_set_aside: Vec<u32>,
    throttled: Vec<(u64, u32)>,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    /// Outstanding pieces per split request.
    splits: Vec<u32>,
    free_splits: Vec<u32>,
    max_request_bytes: [u64; 2],
    /// A sixteenth of a goal of disk time: the least lead a group of any share count gets
    /// (a group's largest lead: `lag_vt` in `queue/lag.rs`).
    lag_floor_ps: u64,
    wakeup_ns: Option<u64>,
    next_tick_ns: u64,
    tick_period_ns: u64,
    queued: usize,
    in_flight: usize,
    /// `dispatch` calls that stopped because this shard's head led another shard's by more
    /// than the lag (a cross-shard stall: the shard waits on the other's virtual time).
    lag_stalls: u64,
    /// Of those, the stalls woken at the laggard's next expected call rather than after
    /// goal / 8 (`queue/lag.rs`).
    lag_short_wakes: u64,
    /// Leads the lag let go because the laggard (the shard with the smallest backlogged
    /// virtual time) was long past its own next call (off its CPU: `queue/lag.rs`).
    lag_overdue_skips: u64,
    /// Pieces the last `dispatch` call moved if this shard had nothing in the disk when it
    /// started, else 0: the round an inline device may serve whole before the next call.
    last_round_pieces: usize,
    /// `dispatch` calls that stopped at the first class they emptied (`round_bound`).
    round_bounds: u64,
}

/// What one `dispatch` call carries from piece to piece.
struct DispatchCall {
    now_ns: u64,
    /// Whether other shards share the budget (the lag and the window timer apply).
    cross_shard: bool,
    goal_ns: u64,
    /// Whether reads and writes have a lane each.
    duplex: bool,
    /// Whether the call stops at the first class it empties (`round_bound`).
    bounded: bool,
    /// Pieces left before a bound call may stop.
    room: usize,
    /// Lanes the budget refused during this call (index: read 0, write 1).
    lane_full: [bool; 2],
    /// Whether the shared budget refused a piece this call (the `boards` module).
    budget_refused: bool,
}

/// Whether a `dispatch` call goes on to the next head or stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Next,
    Stop,
}

/// A round of at least this many pieces that the device served whole before the next
/// `dispatch` call marks a device that completes inside the submission (zram).
const INLINE_ROUND_PIECES: usize = 16;

impl ShardQueue {
    /// A queue for shard `shard` (0-based, below `SchedConfig::shards`) over `budget`.
    pub fn new(budget: Arc<SharedBudget>, shard: usize) -> Result<Self, SchedError> {
        if shard >= budget.config().shards {
            return Err(SchedError::NoSuchShard {
                shard,
                shards: budget.config().shards,
            });
        }
        let goal_ns = budget.goal_ps() / 1000;
        Ok(ShardQueue {
            max_request_bytes: [
                budget.max_request_bytes(Direction::Read),
                budget.max_request_bytes(Direction::Write),
            ],
            lag_floor_ps: budget.goal_ps() / 16,
            tick_period_ns: (goal_ns * 100).max(10_000_000),
            budget,
            shard,
            classes: Vec::new(),
            groups: Vec::new(),
            heap: BinaryHeap::new(),
            set_aside: Vec::new(),
            groups_set_aside: Vec::new(),
            throttled: Vec::new(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            splits: Vec::new(),
            free_splits: Vec::new(),
            wakeup_ns: None,
            next_tick_ns: 0,
            queued: 0,
            in_flight: 0,
            lag_stalls: 0,
            lag_short_wakes: 0,
            lag_overdue_skips: 0,
            last_round_pieces: 0,
            round_bounds: 0,
        })
    }

    /// Registers a class outside any supergroup: it competes at the top level with its own
    /// shares. Errors: shares outside 1..=1_000_000, a zero cap, a duplicate name.
    pub fn add_class(&mut self, config: ClassConfig) -> Result<ClassId, SchedError> {
        check_shares(&config.name, config.shares)?;
        let group = GroupConfig::new(config.name.clone(), config.shares);
        let index = self.push_group(group, true)?;
        self.push_class(config, index)
    }

    /// Registers a supergroup: its classes (`add_class_in`) share its shares at the top
    /// level, and divide its turns between them by their own shares. Errors: shares outside
    /// 1..=1_000_000, a duplicate group name.
    pub fn add_group(&mut self, config: GroupConfig) -> Result<GroupId, SchedError> {
        check_shares(&config.name, config.shares)?;
        if self
            .groups
            .iter()
            .any(|g| !g.implicit && g.config.name == config.name)
        {
            return Err(SchedError::GroupTwice {
                group: config.name,
                shard: self.shard,
            });
        }
        self.push_group(config, false).map(GroupId)
    }

    /// The supergroup registered under `name`.
    pub fn group_by_name(&self, name: &str) -> Option<GroupId> {
        self.groups
            .iter()
            .position(|g| !g.implicit && g.config.name == name)
            .map(|i| GroupId(i as u32))
    }

    /// Registers a class inside supergroup `group`. Errors as for `add_class`, and an unknown
    /// group.
    pub fn add_class_in(
        &mut self,
        group: GroupId,
        config: ClassConfig,
    ) -> Result<ClassId, SchedError> {
        check_shares(&config.name, config.shares)?;
        match self.groups.get(group.0 as usize) {
            Some(g) if !g.implicit => self.push_class(config, group.0),
            _ => Err(SchedError::NoSuchGroup {
                class: config.name,
                group: group.0,
                shard: self.shard,
            }),
        }
    }

    fn push_group(&mut self, config: GroupConfig, implicit: bool) -> Result<u32, SchedError> {
        let index =
            u32::try_from(self.groups.len()).map_err(|_| SchedError::TooMany { what: "groups" })?;
        self.groups
            .push(Group::new(config, implicit, self.budget.vt_floor()));
        Ok(index)
    }

    fn push_class(&mut self, config: ClassConfig, group: u32) -> Result<ClassId, SchedError> {
        if config.bandwidth_cap_bytes_per_sec == Some(0) || config.iops_cap == Some(0) {
            return Err(SchedError::ZeroCap { class: config.name });
        }
        if self.classes.iter().any(|c| c.config.name == config.name) {
            return Err(SchedError::ClassTwice {
                class: config.name,
                shard: self.shard,
            });
        }
        let id = u32::try_from(self.classes.len())
            .map_err(|_| SchedError::TooMany { what: "classes" })?;
        self.classes.push(Class {
            metrics: ClassMetrics {
                name: config.name.clone(),
                shares: config.shares,
                flow_ratio: 1.0,
                ..Default::default()
            },
            config,
            group,
            vt: 0,
            queue: VecDeque::new(),
            state: ClassState::Idle,
            waiting_since_ns: None,
            cap_tat_ns: 0,
            period_dispatched_ps: 0,
            period_completed_ps: 0,
            in_flight_ps: [0; 2],
            drained: [false; 2],
        });
        Ok(ClassId(id))
    }

    /// Changes a class's shares; takes effect from its next dispatch.
    pub fn set_shares(&mut self, class: ClassId, shares: u32) -> Result<(), SchedError> {
        let c = self.class_mut(class)?;
        check_shares(&c.config.name, shares)?;
        c.config.shares = shares;
        c.metrics.shares = shares;
        let group = c.group as usize;
        // A class outside any supergroup is its own group: its top-level weight follows.
        if self.groups[group].implicit {
            self.groups[group].config.shares = shares;
        }
        Ok(())
    }

    /// The class registered under `name`.
    pub fn class_by_name(&self, name: &str) -> Option<ClassId> {
        self.classes
            .iter()
            .position(|c| c.config.name == name)
            .map(|i| ClassId(i as u32))
    }

    fn class_mut(&mut self, class: ClassId) -> Result<&mut Class, SchedError> {
        self.classes
            .get_mut(class.0 as usize)
            .ok_or(SchedError::UnknownClass(class.0))
    }

    /// Longer requests are dispatched as pieces of at most this many bytes.
    pub fn max_request_bytes(&self, direction: Direction) -> u64 {
        self.max_request_bytes[direction.index()]
    }

    /// Queues a request. It is dispatched by a later `dispatch` call.
    pub fn enqueue(
        &mut self,
        class: ClassId,
        request: Request,
        now_ns: u64,
    ) -> Result<(), SchedError> {
        if request.len_bytes == 0 {
            return Err(SchedError::EmptyRequest);
        }
        let head_start_ps = self.budget.head_start_ps();
        let c = self.class_mut(class)?;
        c.queue.push_back(Pending {
            user_data: request.user_data,
            direction: request.direction,
            len_bytes: request.len_bytes,
            next_offset_bytes: 0,
            enqueued_ns: now_ns,
            split: NONE,
        });
        c.metrics.queue_length += 1;
        if c.state == ClassState::Idle {
            c.state = ClassState::InHeap;
            c.waiting_since_ns = Some(now_ns);
            self.wake_class(class.0, head_start_ps);
        }
        self.queued += 1;
        self.refresh_drained(class.0);
        Ok(())
    }

    /// Puts a class that starts waiting (new work, or the end of its cap's hold) into its
    /// group's heap, and the group into the top-level heap if it was idle. Waking from
    /// idle, each may start at most `head_start` of disk time ahead of those that kept the
    /// disk (or the group) busy meanwhile (Seastar's tau, configurable).
    fn wake_class(&mut self, index: u32, head_start_ps: u64) {
        let floor_ps = self.in_disk_floor_ps();
        let class = &mut self.classes[index as usize];
        let group = &mut self.groups[class.group as usize];
        let woke_vt = group.waking_vt(class.vt, class.config.shares, head_start_ps);
        debug_assert!(
            woke_vt >= class.vt,
            "a waking class's virtual time went back"
        );
        class.vt = woke_vt;
        group.classes.push(class.vt, index);
        if group.active {
            return;
        }
        let global_head = self.budget.global_head_vt();
        let reference = if global_head == u64::MAX {
            self.budget.vt_floor()
        } else {
            global_head
        };
        let earliest = reference.saturating_sub(head_start_ps / u64::from(group.config.shares));
        // A class with a quarter goal of its own work still in the disk was never idle: its
        // virtual time is what it dispatched, and another class's lead over it is what that
        // one took beyond its shares (the share hold across lanes, `queue/hold.rs`).
        let busy = class.in_flight_ps.iter().sum::<u64>() >= floor_ps;
        if !busy {
            group.vt = group.vt.max(earliest);
        }
        group.active = true;
        self.heap.push(Reverse((group.vt, class.group)));
    }

    /// Moves every piece that may go to the disk now into `out` (appending) and returns how
    /// many it moved. Call it after enqueues, after completions and at `next_wakeup_ns`.
    pub fn dispatch(&mut self, now_ns: u64, out: &mut Vec<Dispatched>) -> usize {
        self.budget.refill(now_ns);
        if now_ns >= self.next_tick_ns {
            self.tick(now_ns);
        }
        self.release_throttled(now_ns);
        self.wakeup_ns = None;
        let before = out.len();
        let empty_at_start = self.in_flight == 0;
        let mut call = DispatchCall {
            now_ns,
            cross_shard: self.budget.config().shards > 1 && !self.budget.config().unlimited,
            goal_ns: self.budget.goal_ps() / 1000,
            duplex: self.budget.model().duplex(),
            bounded: self.round_bound(),
            room: INLINE_ROUND_PIECES,
            lane_full: [false; 2],
            budget_refused: false,
        };
        while let Some(&Reverse((group_vt, group_index))) = self.heap.peek() {
            if call.cross_shard && self.lag_stalled(group_vt, group_index, now_ns) {
                break;
            }
            if self.dispatch_head(&mut call, group_vt, group_index, out) == Step::Stop {
                break;
            }
        }
        self.put_back_set_aside();
        if call.cross_shard {
            self.end_call(now_ns, call.bounded && !call.budget_refused);
        }
        let moved = out.len() - before;
        self.last_round_pieces = if empty_at_start { moved } else { 0 };
        moved
    }

    /// Takes one step at the head of the top-level heap (group `group_index`, at `group_vt`):
    /// drops an emptied group or class, sets a class aside, or moves one piece into `out`.
    fn dispatch_head(
        &mut self,
        call: &mut DispatchCall,
        group_vt: u64,
        group_index: u32,
        out: &mut Vec<Dispatched>,
    ) -> Step {
        let now_ns = call.now_ns;
        let group = &mut self.groups[group_index as usize];
        let Some((class_vt, index)) = group.classes.peek() else {
            self.heap.pop();
            if group.set_aside.is_empty() {
                group.active = false;
            } else {
                // Every waiting class of the group has a full lane: the group keeps its
                // place for a later call.
                self.set_aside.push(Reverse((group_vt, group_index)));
            }
            return Step::Next;
        };
        let class = &mut self.classes[index as usize];
        let Some(pending) = class.queue.front() else {
            group.classes.pop();
            class.state = ClassState::Idle;
            return Step::Next;
        };
        let direction = pending.direction;
        if call.lane_full[direction.index()] {
            self.set_class_aside(group_index, class_vt, index);
            return Step::Next;
        }
        let remaining = pending.len_bytes - pending.next_offset_bytes;
        let piece_bytes = remaining.min(self.max_request_bytes[direction.index()]);
        let cost_ps = self.budget.model().cost_ps(direction, piece_bytes);
        let cap_increment = cap_increment_ns(&class.config, piece_bytes);
        if cap_increment.is_some() && class.cap_tat_ns > now_ns + CAP_BURST_NS {
            group.classes.pop();
            class.state = ClassState::Throttled;
            let until = class.cap_tat_ns - CAP_BURST_NS;
            self.throttled.push((until, index));
            self.wake_at(until);
            return Step::Next;
        }
        if self.share_held(index, direction, cost_ps) {
            // A drained class's completion brings it back (the `hold` module).
            self.set_class_aside(group_index, class_vt, index);
            return Step::Next;
        }
        let ahead_ps = match self.budget.try_acquire(direction, cost_ps) {
            Ok(ahead) => ahead,
            Err(blocked) => {
                return self.budget_refused(call, blocked, direction, group_index, class_vt, index)
            }
        };
        // The cap books only pieces that go.
        if let Some(increment_ns) = cap_increment {
            let class = &mut self.classes[index as usize];
            class.cap_tat_ns = class.cap_tat_ns.max(now_ns) + increment_ns;
        }
        match self.start_piece(index, piece_bytes, cost_ps, ahead_ps, now_ns) {
            Some(d) => out.push(d),
            None => return Step::Stop,
        }
        self.after_piece(call, group_index, index)
    }

    /// The shared budget refused class `index`'s next piece on `direction`'s lane: arms the
    /// wake-up that frees it and says whether the call can still serve the other lane.
    fn budget_refused(
        &mut self,
        call: &mut DispatchCall,
        blocked: Blocked,
        direction: Direction,
        group_index: u32,
        class_vt: u64,
        index: u32,
    ) -> Step {
        call.budget_refused = true;
        match blocked {
            Blocked::Bucket { wait_ns } => self.wake_at(call.now_ns + wait_ns),
            // A completion on this shard frees the window (the lane is not empty, or the
            // request would have gone); the timer covers completions that arrive on other
            // shards.
            Blocked::Window if call.cross_shard => {
                self.wake_at(call.now_ns + (call.goal_ns / 4).max(1000));
            }
            Blocked::Window => {}
        }
        // On a duplex disk reads and writes have a lane each: a class whose lane is full
        // steps aside for this call so the other lane's classes still go (a compaction
        // waiting for write room must not hold a query's reads). On a half-duplex disk one
        // full lane means nothing fits.
        if !call.duplex {
            return Step::Stop;
        }
        call.lane_full[direction.index()] = true;
        if call.lane_full == [true, true] {
            return Step::Stop;
        }
        // The class keeps its place in virtual time (the piece goes on a later call).
        self.set_class_aside(group_index, class_vt, index);
        Step::Next
    }

    /// After class `index` of group `group_index` moved a piece: its place in its group's
    /// heap and its group's in the top-level heap follow its new virtual time, and a bound
    /// round stops at the first class it empties.
    fn after_piece(&mut self, call: &mut DispatchCall, group_index: u32, index: u32) -> Step {
        call.room = call.room.saturating_sub(1);
        self.refresh_drained(index);
        let class = &mut self.classes[index as usize];
        let group = &mut self.groups[group_index as usize];
        let emptied = class.queue.is_empty();
        if emptied {
            group.classes.pop();
            class.state = ClassState::Idle;
        } else {
            group.classes.set_head_vt(class.vt);
        }
        // An emptied group leaves the heap on the next pass (or the next call).
        if let Some(mut top) = self.heap.peek_mut() {
            top.0 .0 = group.vt;
        }
        if call.bounded && emptied && call.room == 0 {
            Step::Stop
        } else {
            Step::Next
        }
    }

    /// Puts the classes and groups set aside during a `dispatch` call back in their heaps.
    fn put_back_set_aside(&mut self) {
        for group_index in self.groups_set_aside.drain(..) {
            let group = &mut self.groups[group_index as usize];
            for (vt, index) in group.set_aside.drain(..) {
                group.classes.push(vt, index);
            }
        }
        self.heap.extend(self.set_aside.drain(..));
    }

    /// How many pieces this `dispatch` call may move. On a device that completes inside the
    /// submission (zram under io_uring), the whole of the last round is back before the next
    /// call: nothing waits in the disk and, while the window and the bucket have room, every
    /// queued request goes at once, so every class gets its parallelism and shares mean
    /// nothing (docs/scheduler-rate.md section 18). After such a round the call stops at the
    /// first class it empties (once it has moved `INLINE_ROUND_PIECES`, so a class with one
    /// request queued cannot shrink the round to one): the class that leads in virtual time
    /// runs dry first and the others keep their backlog, so the fair queue decides the
    /// split. At 1000:100 with 32 queued each a round is ~35 pieces; at 1:1 it is ~63 of 64.
    /// A disk that holds its requests never sees it (its next call comes with the round
    /// still in flight), and a light load never does (its rounds are under
    /// `INLINE_ROUND_PIECES`).
    fn round_bound(&mut self) -> bool {
        // `--no-scheduler` (unlimited) is the bench's anchor: it dispatches everything.
        if self.in_flight > 0
            || self.last_round_pieces < INLINE_ROUND_PIECES
            || self.budget.config().unlimited
        {
            return false;
        }
        self.round_bounds += 1;
        true
    }

    /// Takes class `index` (the head of group `group_index`) off its group's heap for the
    /// rest of this `dispatch` call: its lane is full.
    fn set_class_aside(&mut self, group_index: u32, class_vt: u64, index: u32) {
        let group = &mut self.groups[group_index as usize];
        group.classes.pop();
        if group.set_aside.is_empty() {
            self.groups_set_aside.push(group_index);
        }
        group.set_aside.push((class_vt, index));
    }

    /// Takes one piece off class `index`'s front request and books it in flight.
    fn start_piece(
        &mut self,
        index: u32,
        piece_bytes: u64,
        cost_ps: u64,
        ahead_ps: u64,
        now_ns: u64,
    ) -> Option<Dispatched> {
        let class = &mut self.classes[index as usize];
        let shares = u64::from(class.config.shares);
        let group = &mut self.groups[class.group as usize];
        let dispatched_vt = group.vt;
        // Virtual time only moves forward; an overflow (which would send it back) panics in
        // a debug build.
        group.vt += (cost_ps / u64::from(group.config.shares)).max(1);
        group.inner_clock = class.vt;
        class.vt += (cost_ps / shares).max(1);
        class.period_dispatched_ps += cost_ps;
        let m = &mut class.metrics;
        m.consumption_sec += cost_ps as f64 / 1e12;
        m.disk_queue_length += 1;
        if let Some(since) = class.waiting_since_ns {
            m.starvation_sec += now_ns.saturating_sub(since) as f64 / 1e9;
        }
        // `dispatch` only calls this for a class whose queue is non-empty.
        let pending = class.queue.front_mut()?;
        class.in_flight_ps[pending.direction.index()] += cost_ps;
        let offset = pending.next_offset_bytes;
        pending.next_offset_bytes += piece_bytes;
        let last = pending.next_offset_bytes == pending.len_bytes;
        let needs_split = !(last && offset == 0);
        if needs_split && pending.split == NONE {
            let pieces = pending.len_bytes.div_ceil(piece_bytes) as u32;
            pending.split = match self.free_splits.pop() {
                Some(i) => {
                    self.splits[i as usize] = pieces;
                    i
                }
                None => {
                    self.splits.push(pieces);
                    (self.splits.len() - 1) as u32
                }
            };
        }
        let slot = Slot {
            generation: 0,
            class: index,
            split: pending.split,
            direction: pending.direction,
            user_data: pending.user_data,
            offset_bytes: offset,
            len_bytes: piece_bytes,
            cost_ps,
            ahead_ps,
            enqueued_ns: pending.enqueued_ns,
            dispatched_ns: now_ns,
        };
        m.queue_latency
            .record(now_ns.saturating_sub(pending.enqueued_ns));
        m.count_piece(slot.direction, piece_bytes);
        if last {
            class.queue.pop_front();
            m.queue_length -= 1;
            self.queued -= 1;
        }
        class.waiting_since_ns = if class.queue.is_empty() {
            None
        } else {
            Some(now_ns)
        };
        self.budget.note_dispatched_vt(dispatched_vt);
        self.in_flight += 1;
        Some(Dispatched {
            token: self.book_slot(slot),
            user_data: slot.user_data,
            class: ClassId(index),
            direction: slot.direction,
            offset_in_request_bytes: offset,
            len_bytes: piece_bytes,
        })
    }

    /// Books `slot` in flight (reusing a freed one) and returns its token.
    fn book_slot(&mut self, slot: Slot) -> u64 {
        let index_in_slots = match self.free_slots.pop() {
            Some(i) => {
                // 31 bits of generation: tokens never set bit 63, which callers may use
                // to tell their own ids from tokens.
                let generation =
                    self.slots[i as usize].generation.wrapping_add(1) & GENERATION_MASK;
                self.slots[i as usize] = Slot { generation, ..slot };
                i
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        };
        let generation = self.slots[index_in_slots as usize].generation;
        (u64::from(generation) << 32) | u64::from(index_in_slots)
    }

    /// Reports that the piece with `token` left the disk at `now_ns`. Returns `None` for a
    /// token that is not in flight (already completed, or never dispatched).
    pub fn complete(&mut self, token: u64, now_ns: u64) -> Option<Completed> {
        let index = (token & 0xffff_ffff) as usize;
        let generation = (token >> 32) as u32;
        let slot = *self.slots.get(index)?;
        if slot.generation != generation || slot.class == NONE {
            return None;
        }
        self.slots[index].class = NONE;
        self.free_slots.push(index as u32);
        self.in_flight -= 1;
        let disk_ns = now_ns.saturating_sub(slot.dispatched_ns);
        self.budget
            .release(slot.direction, slot.cost_ps, slot.ahead_ps, disk_ns);
        let class = &mut self.classes[slot.class as usize];
        class.period_completed_ps += slot.cost_ps;
        class.metrics.completed_sec += slot.cost_ps as f64 / 1e12;
        class.metrics.disk_queue_length -= 1;
        class.in_flight_ps[slot.direction.index()] -= slot.cost_ps;
        class.metrics.disk_latency.record(disk_ns);
        self.refresh_drained(slot.class);
        let request_done = if slot.split == NONE {
            true
        } else {
            let left = &mut self.splits[slot.split as usize];
            *left -= 1;
            if *left == 0 {
                self.free_splits.push(slot.split);
            }
            *left == 0
        };
        Some(Completed {
            user_data: slot.user_data,
            class: ClassId(slot.class),
            direction: slot.direction,
            offset_in_request_bytes: slot.offset_bytes,
            len_bytes: slot.len_bytes,
            request_done,
            queue_ns: slot.dispatched_ns.saturating_sub(slot.enqueued_ns),
            disk_ns,
        })
    }

    /// When `dispatch` should be called again even if nothing completes (the bucket refills,
    /// a capped class may resume, another shard may have caught up). `None`: only after the
    /// next enqueue or completion.
    pub fn next_wakeup_ns(&self) -> Option<u64> {
        if self.queued == 0 {
            None
        } else {
            self.wakeup_ns
        }
    }

    fn wake_at(&mut self, at_ns: u64) {
        self.wakeup_ns = Some(self.wakeup_ns.map_or(at_ns, |w| w.min(at_ns)));
    }

    fn release_throttled(&mut self, now_ns: u64) {
        let mut i = 0;
        while i < self.throttled.len() {
            let (until, index) = self.throttled[i];
            if until <= now_ns {
                self.throttled.swap_remove(i);
                self.classes[index as usize].state = ClassState::InHeap;
                self.wake_class(index, self.budget.head_start_ps());
            } else {
                self.wake_at(until);
                i += 1;
            }
        }
    }

    /// Every period (100 goals, at least 10 ms): the flow ratio of each class, smoothed as
    /// Seastar does (EMA 0.95).
    fn tick(&mut self, now_ns: u64) {
        self.next_tick_ns = now_ns + self.tick_period_ns;
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
        for c in &mut self.classes {
            if c.period_completed_ps > 0 {
                let ratio = c.period_dispatched_ps as f64 / c.period_completed_ps as f64;
                c.metrics.flow_ratio = 0.95 * c.metrics.flow_ratio + 0.05 * ratio;
            }
            c.period_dispatched_ps = 0;
            c.period_completed_ps = 0;
        }
    }

    /// The queue's own bookkeeping agrees with itself: every class has the shares it was
    /// given (and a class outside any supergroup gives them to its group), the counts of
    /// queued and in-flight pieces match the queues and slots, and each class's disk time
    /// in flight is the sum of its slots'. Walks every class and slot: called once a tick
    /// in a debug build.
    fn check_invariants(&self) {
        let mut in_flight_ps = vec![[0u64; 2]; self.classes.len()];
        let mut in_flight = 0;
        for slot in self.slots.iter().filter(|s| s.class != NONE) {
            in_flight_ps[slot.class as usize][slot.direction.index()] += slot.cost_ps;
            in_flight += 1;
        }
        assert_eq!(in_flight, self.in_flight, "pieces in flight");
        let mut queued = 0;
        for (c, ps) in self.classes.iter().zip(&in_flight_ps) {
            let name = &c.config.name;
            assert!(
                check_shares(name, c.config.shares).is_ok(),
                "class {name}'s shares"
            );
            assert_eq!(c.metrics.shares, c.config.shares, "class {name}'s shares");
            let group = &self.groups[c.group as usize];
            if group.implicit {
                assert_eq!(group.config.shares, c.config.shares, "class {name}'s group");
            }
            assert_eq!(&c.in_flight_ps, ps, "class {name}'s disk time in flight");
            queued += c.queue.len();
        }
        assert_eq!(queued, self.queued, "requests queued");
    }

    /// Requests waiting (not yet fully dispatched).
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Pieces in the disk.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// `dispatch` calls since start that stopped to let another shard catch up in virtual
    /// time (cross-shard stalls).
    pub fn lag_stalls(&self) -> u64 {
        self.lag_stalls
    }

    /// Cross-shard stalls woken at the laggard's next expected call rather than after
    /// goal / 8: only a shard with nothing in the disk (`queue/lag.rs`).
    pub fn lag_short_wakes(&self) -> u64 {
        self.lag_short_wakes
    }

    /// Leads let go because the laggard was off its CPU, not waiting on the budget
    /// (`queue/lag.rs`).
    pub fn lag_overdue_skips(&self) -> u64 {
        self.lag_overdue_skips
    }

    /// `dispatch` calls bound to stop at the first class they empty (`round_bound`).
    pub fn round_bounds(&self) -> u64 {
        self.round_bounds
    }

    /// One class's counters, without copying.
    pub fn class_metrics(&self, class: ClassId) -> Option<&ClassMetrics> {
        self.classes.get(class.0 as usize).map(|c| &c.metrics)
    }

    /// A copy of every class's counters (allocates; not for the hot path).
    pub fn metrics(&self) -> ShardMetrics {
        ShardMetrics {
            shard: self.shard,
            classes: self.classes.iter().map(|c| c.metrics.clone()).collect(),
            speed_factor: self.budget.lane_stats(Direction::Write).speed_factor,
            tail_guard: self.budget.lane_stats(Direction::Write).tail_guard,
            rate_factor: self.budget.lane_stats(Direction::Write).rate_factor,
            lanes: [
                self.budget.lane_stats(Direction::Read),
                self.budget.lane_stats(Direction::Write),
            ],
            lag_stalls: self.lag_stalls,
            lag_short_wakes: self.lag_short_wakes,
            lag_overdue_skips: self.lag_overdue_skips,
            round_bounds: self.round_bounds,
            merged: Default::default(),
        }
    }

    /// The shared budget.
    pub fn budget(&self) -> &Arc<SharedBudget> {
        &self.budget
    }
}

mod drained;
mod types;

use types::{cap_increment_ns, check_shares};
pub use types::{ClassConfig, ClassId, Completed, Dispatched, Request};
mod hold;
mod lag;

#[cfg(test)]
mod tests;
