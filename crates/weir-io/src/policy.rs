//! The scheduling policy: the disk model, the latency goal, and the I/O classes with their
//! shares, supergroups and caps. One policy serves an [`crate::Admission`] or a
//! [`crate::Disk`]; both build their scheduler queues from it, so class handles mean the
//! same class everywhere.

use std::sync::Arc;
use std::time::Duration;

use weir_sched::{ClassConfig, GroupConfig, SchedConfig, ShardQueue, SharedBudget};

use crate::{DiskModel, Error};

/// An I/O class: a handle from [`PolicyBuilder::class`], passed with every request. Cheap to
/// copy and `Send`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IoClass(pub(crate) u32);

impl IoClass {
    /// The class's position in its policy (0-based, in the order classes were added).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A supergroup: a handle from [`PolicyBuilder::group`]. Its shares compete with the
/// top-level classes; its classes divide its turns by their own shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IoGroup(u32);

/// One class's settings.
///
/// ```
/// use weir_io::ClassSpec;
///
/// let compaction = ClassSpec::new("compaction", 100).bandwidth_cap_bytes_per_sec(200 << 20);
/// assert_eq!(compaction.name(), "compaction");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassSpec {
    name: String,
    shares: u32,
    bandwidth_cap_bytes_per_sec: Option<u64>,
    iops_cap: Option<u64>,
    group: Option<IoGroup>,
}

impl ClassSpec {
    /// A class named `name` with `shares` (1..=1,000,000) of the disk's time.
    pub fn new(name: impl Into<String>, shares: u32) -> ClassSpec {
        ClassSpec {
            name: name.into(),
            shares,
            bandwidth_cap_bytes_per_sec: None,
            iops_cap: None,
            group: None,
        }
    }

    /// Caps the class's bytes per second, whatever the disk has spare (per I/O loop).
    pub fn bandwidth_cap_bytes_per_sec(mut self, bytes_per_sec: u64) -> ClassSpec {
        self.bandwidth_cap_bytes_per_sec = Some(bytes_per_sec);
        self
    }

    /// Caps the class's operations per second (per I/O loop).
    pub fn iops_cap(mut self, iops: u64) -> ClassSpec {
        self.iops_cap = Some(iops);
        self
    }

    /// Puts the class inside a supergroup.
    pub fn in_group(mut self, group: IoGroup) -> ClassSpec {
        self.group = Some(group);
        self
    }

    /// The class's name (metrics label it with this).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The class's shares.
    pub fn shares(&self) -> u32 {
        self.shares
    }

    fn config(&self) -> ClassConfig {
        let mut c = ClassConfig::new(self.name.clone(), self.shares);
        c.bandwidth_cap_bytes_per_sec = self.bandwidth_cap_bytes_per_sec;
        c.iops_cap = self.iops_cap;
        c
    }
}

/// The scheduling policy; build it with [`Policy::builder`]. Cloning is cheap.
///
/// ```
/// use std::time::Duration;
/// use weir_io::{ClassSpec, DiskModel, Policy};
///
/// let model = DiskModel::builder()
///     .read_iops(50_000).read_bytes_per_sec(1 << 30)
///     .write_iops(25_000).write_bytes_per_sec(1 << 30)
///     .build()?;
/// let mut builder = Policy::builder(model).latency_goal(Duration::from_micros(1500));
/// let query = builder.class(ClassSpec::new("query", 1000))?;
/// let maintenance = builder.group("maintenance", 200)?;
/// let compaction = builder.class(ClassSpec::new("compaction", 100).in_group(maintenance))?;
/// let policy = builder.build()?;
/// assert_eq!(policy.class_by_name("compaction")?, compaction);
/// assert_eq!(policy.class_name(query), Some("query"));
/// # Ok::<(), weir_io::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Policy {
    inner: Arc<PolicyInner>,
}

#[derive(Debug)]
struct PolicyInner {
    model: DiskModel,
    config: SchedConfig,
    groups: Vec<(String, u32)>,
    classes: Vec<ClassSpec>,
}

/// Builds a [`Policy`]; see there for an example.
#[derive(Debug, Clone)]
pub struct PolicyBuilder {
    model: DiskModel,
    config: SchedConfig,
    groups: Vec<(String, u32)>,
    classes: Vec<ClassSpec>,
}

impl Policy {
    /// A builder over `model`, with the default latency goal
    /// ([`weir_sched::DEFAULT_LATENCY_GOAL`], or the model's recommended goal when its file
    /// has one) and no classes.
    pub fn builder(model: DiskModel) -> PolicyBuilder {
        let mut config = SchedConfig::default();
        if let Some(goal) = model.recommended_latency_goal() {
            config.latency_goal = goal;
        }
        PolicyBuilder {
            model,
            config,
            groups: Vec::new(),
            classes: Vec::new(),
        }
    }

    /// The class named `name`.
    pub fn class_by_name(&self, name: &str) -> Result<IoClass, Error> {
        self.inner
            .classes
            .iter()
            .position(|c| c.name == name)
            .map(|i| IoClass(i as u32))
            .ok_or_else(|| Error::UnknownClass { name: name.into() })
    }

    /// The name of `class`, if it is one of this policy's.
    pub fn class_name(&self, class: IoClass) -> Option<&str> {
        self.inner.classes.get(class.index()).map(|c| c.name())
    }

    /// Every class, in handle order.
    pub fn classes(&self) -> &[ClassSpec] {
        &self.inner.classes
    }

    /// The latency goal: about this much disk time is kept in the disk, so a request that
    /// reaches the disk waits about this long behind others at most.
    pub fn latency_goal(&self) -> Duration {
        self.inner.config.latency_goal
    }

    /// Whether the policy only measures (no capacity limit).
    pub fn is_unlimited(&self) -> bool {
        self.inner.config.unlimited
    }

    /// The disk model.
    pub fn model(&self) -> &DiskModel {
        &self.inner.model
    }

    pub(crate) fn check(&self, class: IoClass) -> Result<(), Error> {
        if class.index() < self.inner.classes.len() {
            Ok(())
        } else {
            Err(Error::ForeignClass {
                index: class.0,
                classes: self.inner.classes.len(),
            })
        }
    }

    /// The budget shared by `shards` queues.
    pub(crate) fn budget(&self, shards: usize) -> Result<Arc<SharedBudget>, Error> {
        let config = SchedConfig {
            shards,
            ..self.inner.config.clone()
        };
        Ok(Arc::new(SharedBudget::new(
            self.inner.model.cost().clone(),
            config,
        )?))
    }

    /// A queue for `shard` with every group and class, classes in handle order.
    pub(crate) fn queue(
        &self,
        budget: Arc<SharedBudget>,
        shard: usize,
    ) -> Result<ShardQueue, Error> {
        let mut queue = ShardQueue::new(budget, shard)?;
        let mut groups = Vec::with_capacity(self.inner.groups.len());
        for (name, shares) in &self.inner.groups {
            groups.push(queue.add_group(GroupConfig::new(name.clone(), *shares))?);
        }
        for (i, spec) in self.inner.classes.iter().enumerate() {
            let id = match spec.group {
                Some(g) => queue.add_class_in(groups[g.0 as usize], spec.config())?,
                None => queue.add_class(spec.config())?,
            };
            debug_assert_eq!(id.0 as usize, i, "class ids follow the policy's order");
        }
        Ok(queue)
    }
}

impl PolicyBuilder {
    /// Adds a class; its handle goes with every request of the class.
    pub fn class(&mut self, spec: ClassSpec) -> Result<IoClass, Error> {
        if self.classes.iter().any(|c| c.name == spec.name) {
            return Err(Error::Scheduler(weir_sched::SchedError::ClassTwice {
                class: spec.name,
                shard: 0,
            }));
        }
        check_shares(&spec.name, spec.shares)?;
        let index = self.classes.len() as u32;
        self.classes.push(spec);
        Ok(IoClass(index))
    }

    /// Adds a supergroup with `shares` at the top level; put classes in it with
    /// [`ClassSpec::in_group`].
    pub fn group(&mut self, name: impl Into<String>, shares: u32) -> Result<IoGroup, Error> {
        let name = name.into();
        if self.groups.iter().any(|(n, _)| *n == name) {
            return Err(Error::Scheduler(weir_sched::SchedError::GroupTwice {
                group: name,
                shard: 0,
            }));
        }
        check_shares(&name, shares)?;
        self.groups.push((name, shares));
        Ok(IoGroup(self.groups.len() as u32 - 1))
    }

    /// The in-disk latency goal (default 0.75 ms, or the model file's recommendation).
    pub fn latency_goal(mut self, goal: Duration) -> Self {
        self.config.latency_goal = goal;
        self
    }

    /// Steer writes by the tail of reads beside them (on by default): the write window
    /// shrinks while more than 1% of such reads wait longer than the goal in the disk.
    pub fn tail_guard(mut self, on: bool) -> Self {
        self.config.tail_guard = on;
        self
    }

    /// Measure only: every request goes to the disk at once, classes are still counted
    /// (what `weir run --no-scheduler` does). Off by default.
    pub fn unlimited(mut self, unlimited: bool) -> Self {
        self.config.unlimited = unlimited;
        self
    }

    /// The policy. Errors: a zero goal, or a class or group the scheduler refuses.
    pub fn build(self) -> Result<Policy, Error> {
        let policy = Policy {
            inner: Arc::new(PolicyInner {
                model: self.model,
                config: self.config,
                groups: self.groups,
                classes: self.classes,
            }),
        };
        // A trial queue checks every setting the scheduler checks (caps, shares, goal) now,
        // not at the first request.
        policy.queue(policy.budget(1)?, 0)?;
        Ok(policy)
    }
}

fn check_shares(name: &str, shares: u32) -> Result<(), Error> {
    if (1..=1_000_000).contains(&shares) {
        Ok(())
    } else {
        Err(Error::Scheduler(weir_sched::SchedError::Shares {
            class: name.to_string(),
            shares,
        }))
    }
}
