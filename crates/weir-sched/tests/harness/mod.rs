//! Runs shard queues over one simulated disk on its virtual clock, with closed-loop jobs.
//! Every scenario takes its seed from `WEIR_SIM_SEED` when set (to replay a failure) and
//! prints it, so a failing test's output always names the seed that reproduces it.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::Arc;
use weir_model::cost::CostModel;
use weir_model::device::{Device, Direction, IoCompletion, IoOp};
use weir_sched::{
    ClassConfig, ClassId, Dispatched, GroupConfig, LaneStats, Request, SchedConfig, ShardQueue,
    SharedBudget,
};
use weir_sim::{SimConfig, SimDisk};

/// The seed to use: `WEIR_SIM_SEED` or the test's default. Printed for replay.
pub fn seed(default: u64) -> u64 {
    let seed = std::env::var("WEIR_SIM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    println!("seed = {seed} (replay with WEIR_SIM_SEED={seed})");
    seed
}

/// `nvme_like` with its reads `read_factor` and its writes `write_factor` times as fast (a
/// disk off its model, which stays `nvme_like`'s).
pub fn nvme_scaled(seed: u64, read_factor: f64, write_factor: f64) -> SimConfig {
    let mut sim = SimConfig::nvme_like(seed);
    sim.read.iops *= read_factor;
    sim.read.bytes_per_sec *= read_factor;
    sim.write.iops *= write_factor;
    sim.write.bytes_per_sec *= write_factor;
    sim
}

/// The model a perfect iotune would measure for a sim config.
pub fn model_of(config: &SimConfig) -> CostModel {
    model_with(config, false)
}

/// The same model, duplex: reads and writes each get a lane (as bench/vda-quiet.yaml prices
/// vda for bench/qos.sh).
pub fn duplex_model_of(config: &SimConfig) -> CostModel {
    model_with(config, true)
}

fn model_with(config: &SimConfig, duplex: bool) -> CostModel {
    CostModel::new(
        config.read.iops,
        config.read.bytes_per_sec,
        config.write.iops,
        config.write.bytes_per_sec,
        1.0,
        duplex,
    )
    .expect("valid model")
}

#[derive(Debug, Clone)]
pub struct Job {
    pub shard: usize,
    pub class: String,
    pub shares: u32,
    pub direction: Direction,
    pub len_bytes: u64,
    /// Requests kept outstanding (queued or in the disk).
    pub parallelism: u32,
    /// Active from this time (ns); idle before.
    pub start_ns: u64,
    /// The supergroup (name, shares) the class belongs to; None: top level.
    pub group: Option<(String, u32)>,
    /// A neighbour: another process on the same disk that the scheduler never sees (its
    /// requests go straight to the disk, scheduled run or not).
    pub neighbour: bool,
    /// Paced: at most one request every `interval_ns` (a fixed-rate load; the run loop wakes
    /// at each one's due time, `start_ns`); 0: as many as `parallelism` keeps outstanding.
    pub interval_ns: u64,
}

/// Disk op ids of neighbour requests carry this bit (scheduled ids are `token << 8 | shard`).
const NEIGHBOUR_TAG: u64 = 1 << 63;

impl Job {
    pub fn new(
        class: &str,
        shares: u32,
        direction: Direction,
        len_bytes: u64,
        parallelism: u32,
    ) -> Self {
        Job {
            shard: 0,
            class: class.into(),
            shares,
            direction,
            len_bytes,
            parallelism,
            start_ns: 0,
            group: None,
            neighbour: false,
            interval_ns: 0,
        }
    }

    pub fn neighbour(mut self) -> Self {
        self.neighbour = true;
        self
    }

    pub fn in_group(mut self, name: &str, shares: u32) -> Self {
        self.group = Some((name.into(), shares));
        self
    }

    pub fn on_shard(mut self, shard: usize) -> Self {
        self.shard = shard;
        self
    }

    /// One request every `interval_ns` at most (see `interval_ns`).
    pub fn paced(mut self, interval_ns: u64) -> Self {
        self.interval_ns = interval_ns;
        self
    }

    pub fn starting_at(mut self, start_ns: u64) -> Self {
        self.start_ns = start_ns;
        self
    }
}

/// The same jobs on each of shards 0..`shards` (the two-shard runs of the rate tests).
pub fn on_every_shard(jobs: &[Job], shards: usize) -> Vec<Job> {
    (0..shards)
        .flat_map(|shard| jobs.iter().map(move |j| j.clone().on_shard(shard)))
        .collect()
}

/// One completed request as the harness saw it.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub job: usize,
    pub completed_at_ns: u64,
    pub queue_ns: u64,
    pub disk_ns: u64,
    pub bytes: u64,
}

/// An invariant checked after every dispatch round: (budget, now_ns).
pub type Check = Box<dyn FnMut(&SharedBudget, u64)>;

pub struct Harness {
    pub disk: SimDisk,
    pub queues: Vec<ShardQueue>,
    pub budget: Arc<SharedBudget>,
    pub jobs: Vec<Job>,
    classes: Vec<ClassId>,
    outstanding: Vec<u32>,
    /// op id -> (shard, token, job)
    ops: HashMap<u64, (usize, u64, usize)>,
    next_op: u64,
    pub samples: Vec<Sample>,
    /// Called after every dispatch round with the budget (for invariant checks).
    pub check: Option<Check>,
    /// When false, requests bypass the scheduler (the unscheduled baseline).
    pub scheduled: bool,
}

impl Harness {
    pub fn new(sim: SimConfig, config: SchedConfig, jobs: Vec<Job>) -> Self {
        let model = model_of(&sim);
        Self::with_model(sim, model, config, jobs)
    }

    /// A harness whose scheduler charges with `model` (e.g. a measured one that is off).
    /// The same jobs run without the scheduler until `until_ns`: the rate the disk gives
    /// them, which the rate tests judge the scheduled run against.
    pub fn unscheduled(
        (sim, model, config): (&SimConfig, &CostModel, &SchedConfig),
        jobs: Vec<Job>,
        until_ns: u64,
    ) -> Self {
        let mut bare = Harness::with_model(sim.clone(), model.clone(), config.clone(), jobs);
        bare.scheduled = false;
        bare.run_until(until_ns);
        bare
    }

    pub fn with_model(
        sim: SimConfig,
        model: CostModel,
        config: SchedConfig,
        jobs: Vec<Job>,
    ) -> Self {
        let shards = config.shards;
        let budget = Arc::new(SharedBudget::new(model, config).expect("budget"));
        let mut queues: Vec<ShardQueue> = (0..shards)
            .map(|s| ShardQueue::new(budget.clone(), s).expect("queue"))
            .collect();
        let classes = jobs
            .iter()
            .map(|j| {
                let q = &mut queues[j.shard];
                q.class_by_name(&j.class).unwrap_or_else(|| {
                    let config = ClassConfig::new(j.class.clone(), j.shares);
                    match &j.group {
                        None => q.add_class(config).expect("class"),
                        Some((name, shares)) => {
                            let group = q.group_by_name(name).unwrap_or_else(|| {
                                q.add_group(GroupConfig::new(name.clone(), *shares))
                                    .expect("group")
                            });
                            q.add_class_in(group, config).expect("class")
                        }
                    }
                })
            })
            .collect();
        Harness {
            disk: SimDisk::new(sim),
            outstanding: vec![0; jobs.len()],
            queues,
            budget,
            jobs,
            classes,
            ops: HashMap::new(),
            next_op: 0,
            samples: Vec::new(),
            check: None,
            scheduled: true,
        }
    }

    fn fill(&mut self, now: u64) {
        for j in 0..self.jobs.len() {
            let job = &mut self.jobs[j];
            if now < job.start_ns {
                continue;
            }
            while self.outstanding[j] < job.parallelism {
                if job.interval_ns > 0 {
                    if now < job.start_ns {
                        break;
                    }
                    // The next request of a paced job is due one interval after this one's.
                    job.start_ns += job.interval_ns;
                }
                self.outstanding[j] += 1;
                self.next_op += 1;
                let request = Request {
                    direction: job.direction,
                    len_bytes: job.len_bytes,
                    user_data: self.next_op,
                };
                if self.scheduled && !job.neighbour {
                    self.queues[job.shard]
                        .enqueue(self.classes[j], request, now)
                        .expect("enqueue");
                    self.ops.insert(self.next_op, (job.shard, 0, j));
                } else {
                    self.ops.insert(self.next_op, (job.shard, now, j));
                    let id = self.next_op | NEIGHBOUR_TAG;
                    let op = sim_op(id, job.direction, self.next_op, job.len_bytes);
                    push(&mut self.disk, op).expect("room");
                }
            }
        }
    }

    /// Runs until the virtual clock reaches `until_ns`.
    pub fn run_until(&mut self, until_ns: u64) {
        let mut dispatched: Vec<Dispatched> = Vec::new();
        let mut completions: Vec<IoCompletion> = Vec::new();
        while self.disk.now_ns() < until_ns {
            let now = self.disk.now_ns();
            self.fill(now);
            let mut wake = until_ns;
            if let Some(start) = self
                .jobs
                .iter()
                .map(|j| j.start_ns)
                .filter(|&s| s > now)
                .min()
            {
                wake = wake.min(start);
            }
            if self.scheduled {
                for (shard, q) in self.queues.iter_mut().enumerate() {
                    dispatched.clear();
                    q.dispatch(now, &mut dispatched);
                    for d in &dispatched {
                        // The disk's user_data is the piece token tagged with its shard.
                        let op_id = (d.token << 8) | shard as u64;
                        let op = sim_op(op_id, d.direction, d.user_data, d.len_bytes);
                        push(&mut self.disk, op).expect("room");
                    }
                    if let Some(w) = q.next_wakeup_ns() {
                        wake = wake.min(w.max(now + 1));
                    }
                }
                if let Some(check) = self.check.as_mut() {
                    check(&self.budget, now);
                }
            }
            self.disk.submit_and_wait(1, Some(wake)).expect("wait");
            completions.clear();
            self.disk.reap(&mut completions);
            for c in &completions {
                assert!(c.result > 0, "sim I/O failed: {c:?}");
                self.finish(c);
            }
        }
    }

    fn finish(&mut self, c: &IoCompletion) {
        if c.user_data & NEIGHBOUR_TAG == 0 {
            let shard = (c.user_data & 0xff) as usize;
            let token = c.user_data >> 8;
            let done = self.queues[shard]
                .complete(token, c.completed_at_ns)
                .expect("token in flight");
            if !done.request_done {
                return;
            }
            let (_, _, job) = self.ops.remove(&done.user_data).expect("known request");
            self.outstanding[job] -= 1;
            self.samples.push(Sample {
                job,
                completed_at_ns: c.completed_at_ns,
                queue_ns: done.queue_ns,
                disk_ns: done.disk_ns,
                bytes: self.jobs[job].len_bytes,
            });
        } else {
            let id = c.user_data & !NEIGHBOUR_TAG;
            let (_, issued, job) = self.ops.remove(&id).expect("known request");
            self.outstanding[job] -= 1;
            self.samples.push(Sample {
                job,
                completed_at_ns: c.completed_at_ns,
                queue_ns: 0,
                disk_ns: c.completed_at_ns - issued,
                bytes: self.jobs[job].len_bytes,
            });
        }
    }

    /// Completed requests of `job` in [from, to).
    pub fn ops_between(&self, job: usize, from_ns: u64, to_ns: u64) -> u64 {
        self.samples
            .iter()
            .filter(|s| s.job == job && s.completed_at_ns >= from_ns && s.completed_at_ns < to_ns)
            .count() as u64
    }

    /// Disk time (model) of `job`'s completed requests in [from, to), in seconds.
    pub fn disk_time_between(&self, job: usize, from_ns: u64, to_ns: u64) -> f64 {
        let j = &self.jobs[job];
        let cost = self.budget.model().cost_ps(j.direction, j.len_bytes) as f64 / 1e12;
        self.ops_between(job, from_ns, to_ns) as f64 * cost
    }

    /// Completed model disk time per second of the jobs named `class` in [from, to).
    pub fn class_rate_between(&self, class: &str, from_ns: u64, to_ns: u64) -> f64 {
        let seconds = (to_ns - from_ns) as f64 / 1e9;
        (0..self.jobs.len())
            .filter(|&j| self.jobs[j].class == class)
            .map(|j| self.disk_time_between(j, from_ns, to_ns))
            .sum::<f64>()
            / seconds
    }

    /// The p99 of the time requests of every job spent in the disk, completed from `from_ns`.
    pub fn disk_p99_ns_since(&self, from_ns: u64) -> u64 {
        let mut v: Vec<u64> = self
            .samples
            .iter()
            .filter(|s| s.completed_at_ns >= from_ns)
            .map(|s| s.disk_ns)
            .collect();
        percentile(&mut v, 99.0)
    }

    /// The p-th percentile of end-to-end (queue + disk) latency of `job` in [from, to).
    pub fn latency_percentile_ns(&self, job: usize, from_ns: u64, to_ns: u64, p: f64) -> u64 {
        let mut v: Vec<u64> = self
            .samples
            .iter()
            .filter(|s| s.job == job && s.completed_at_ns >= from_ns && s.completed_at_ns < to_ns)
            .map(|s| s.queue_ns + s.disk_ns)
            .collect();
        percentile(&mut v, p)
    }
}

/// The queue the goal bounds comes on top of what a request pays alone in the disk: the
/// in-disk p99 within the solo p99 plus 1.1 goals (the drain speed reads a few % high on a
/// slow disk, so the p99 may run up to a tenth of a goal over: runtime_k.rs's 0.6x disk).
pub fn assert_disk_within_goal(what: &str, disk_p99_ns: u64, solo_p99_ns: u64, goal_ns: u64) {
    assert!(
        disk_p99_ns <= solo_p99_ns + goal_ns + goal_ns / 10,
        "{what}: in-disk p99 {disk_p99_ns} ns over the goal above the solo p99 {solo_p99_ns} ns"
    );
}

/// What a two-class split on a disk judges (`run_split`).
pub struct Split {
    /// Both classes' completed model disk time, scheduled / unscheduled.
    pub reach: f64,
    /// The unscheduled jobs' completed model disk time per second.
    pub real: f64,
    /// The classes' measured ratio / the shares' ratio.
    pub ratio_of_asked: f64,
    pub disk_p99_ns: u64,
    /// A lone request of the same op, unscheduled: the in-disk bound's base.
    pub solo_p99_ns: u64,
    /// The scheduled run's lane at its end.
    pub stats: LaneStats,
}

impl Split {
    /// The bar for a scheduled run: >= 0.95 of unscheduled, the split within 5% of asked, the in-disk
    /// p99 within a lone request's plus the goal's bound.
    pub fn assert_holds(&self, what: &str, goal_ns: u64) {
        assert!(
            self.reach >= 0.95,
            "{what}: {:.3} of unscheduled",
            self.reach
        );
        assert!(
            (self.ratio_of_asked - 1.0).abs() <= 0.05,
            "{what}: ratio {:.3} of asked",
            self.ratio_of_asked
        );
        assert_disk_within_goal(what, self.disk_p99_ns, self.solo_p99_ns, goal_ns);
    }
}

/// Two classes doing the same op (`a` and `b`, shard 0) on every one of `shards`, through
/// the scheduler, judged over [0.5 s, 2 s) against the same jobs unscheduled on the same
/// disk; a lone request of the op, unscheduled, gives the in-disk bound's base.
pub fn run_split(
    sim: &SimConfig,
    model: &CostModel,
    config: &SchedConfig,
    pair: [Job; 2],
    shards: usize,
) -> Split {
    const S: u64 = 1_000_000_000;
    let (a_name, b_name) = (pair[0].class.clone(), pair[1].class.clone());
    let (a_shares, b_shares) = (pair[0].shares, pair[1].shares);
    let lone = vec![Job::new("s", 1, pair[0].direction, pair[0].len_bytes, 1)];
    let jobs = on_every_shard(&pair, shards);
    let rate = |h: &Harness, class: &str| h.class_rate_between(class, S / 2, 2 * S);
    let bare = Harness::unscheduled((sim, model, config), jobs.clone(), 2 * S);
    let real = rate(&bare, &a_name) + rate(&bare, &b_name);
    let mut h = Harness::with_model(sim.clone(), model.clone(), config.clone(), jobs);
    h.run_until(2 * S);
    let (a, b) = (rate(&h, &a_name), rate(&h, &b_name));
    let mut solo = Harness::with_model(sim.clone(), model.clone(), config.clone(), lone);
    solo.scheduled = false;
    solo.run_until(S / 2);
    let mut solo_ns: Vec<u64> = solo.samples.iter().map(|s| s.disk_ns).collect();
    Split {
        reach: (a + b) / real,
        real,
        ratio_of_asked: (a / b) / (f64::from(a_shares) / f64::from(b_shares)),
        disk_p99_ns: h.disk_p99_ns_since(S / 2),
        solo_p99_ns: percentile(&mut solo_ns, 99.0),
        stats: h.budget.lane_stats(pair[0].direction),
    }
}

pub fn percentile(v: &mut [u64], p: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    v[rank.min(v.len()) - 1]
}

fn sim_op(user_data: u64, direction: Direction, key: u64, len_bytes: u64) -> IoOp {
    // Spread requests over a 64 GiB span, aligned to their size.
    let align = len_bytes.next_power_of_two().max(4096);
    let offset_bytes =
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 28) % ((64 << 30) / align) * align;
    IoOp {
        user_data,
        direction,
        fd: -1,
        offset_bytes,
        len_bytes: len_bytes as u32,
        buf: std::ptr::null_mut(),
        flags: Default::default(),
        vectored: None,
    }
}

/// Pushes one op. The tests keep every buffer alive until its completion is reaped (the
/// simulated disk never touches them at all), which is the contract of `Device::push`.
fn push<D: weir_model::device::Device>(
    device: &mut D,
    op: weir_model::device::IoOp,
) -> Result<(), weir_model::device::DeviceError> {
    // SAFETY: see above.
    unsafe { device.push(op) }
}
