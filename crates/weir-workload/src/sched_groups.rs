//! io_tester's `--sched-groups` file: a hierarchy of scheduling groups, and which group each
//! job's requests go to.
//!
//! The file is a YAML list of `{name, shares, parent}` maps (Seastar's
//! `apps/io_tester/sched.yaml`). A group named as another's `parent` is a *supergroup*: it
//! takes its share of the disk at the top level and divides it between its children by their
//! shares. Jobs join a group with `shard_info.class: <group>` (their own `shares` then do not
//! apply); a job without `class` is a class of its own, named after the job, with its own
//! shares, at the top level. Supergroups are one level deep, as in Seastar.

use std::collections::HashMap;
use std::fmt;

use serde::Deserialize;

use crate::job::Plan;
use crate::parse::{from_yaml_error, ParseError};

/// The largest share weight the scheduler takes.
pub const MAX_SHARES: u32 = 1_000_000;

/// One group of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedGroup {
    pub name: String,
    pub shares: u32,
    pub parent: Option<String>,
}

/// A validated group hierarchy.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchedGroups {
    pub groups: Vec<SchedGroup>,
}

/// Where one job's requests are scheduled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassPlacement {
    /// The class (a leaf group, or the job's own class).
    pub class: String,
    pub shares: u32,
    /// The supergroup holding the class and its shares; None: the class is at the top level.
    pub supergroup: Option<(String, u32)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGroup {
    name: String,
    shares: u32,
    parent: Option<String>,
}

impl SchedGroups {
    /// Parses and checks a group file: every name unique and non-empty, shares within
    /// 1..=1000000, every parent defined, no group its own ancestor, one level of nesting.
    pub fn parse(text: &str) -> Result<SchedGroups, ParseError> {
        let raw: Vec<RawGroup> = match serde_yaml::from_str::<Option<Vec<RawGroup>>>(text) {
            Ok(Some(raw)) => raw,
            Ok(None) => Vec::new(),
            Err(e) => {
                let mut error = from_yaml_error(&e);
                error.message = error.message.replace("job ", "group ");
                if error.message.contains("expected a sequence") {
                    error.message = "a scheduling-group file is a YAML list of groups: each \
                                     starts with `- name: ...` and has `shares` (and \
                                     optionally `parent`)"
                        .into();
                }
                return Err(error);
            }
        };
        let groups: Vec<SchedGroup> = raw
            .into_iter()
            .map(|r| SchedGroup {
                name: r.name,
                shares: r.shares,
                parent: r.parent,
            })
            .collect();
        let parsed = SchedGroups { groups };
        parsed.check().map_err(|(group, key, message)| {
            ParseError::at_job_key(text, &group, key, format!("group `{group}`: {message}"))
        })?;
        Ok(parsed)
    }

    /// (group, key, message) of the first problem.
    fn check(&self) -> Result<(), (String, &'static str, String)> {
        if self.groups.is_empty() {
            return Err((
                String::new(),
                "name",
                "the file lists no groups: add `- name: ...` entries with `shares`".into(),
            ));
        }
        for (i, g) in self.groups.iter().enumerate() {
            let fail = |key, message: String| Err((g.name.clone(), key, message));
            if g.name.trim().is_empty() {
                return fail("name", "the name is empty: give every group a name".into());
            }
            if self.groups[..i].iter().any(|o| o.name == g.name) {
                return fail("name", "appears twice: group names must be unique".into());
            }
            if !(1..=MAX_SHARES).contains(&g.shares) {
                return fail(
                    "shares",
                    format!(
                        "{} shares is out of range: give 1 to {MAX_SHARES} (a relative weight; \
                         0 would never be served)",
                        g.shares
                    ),
                );
            }
            let Some(parent) = &g.parent else { continue };
            if parent == &g.name {
                return fail(
                    "parent",
                    "names itself as its parent: remove `parent`".into(),
                );
            }
            let Some(p) = self.get(parent) else {
                return fail(
                    "parent",
                    format!(
                        "parent `{parent}` is not defined in this file: add `- name: {parent}` \
                         with its shares, or fix the name (groups: {})",
                        self.names()
                    ),
                );
            };
            if let Some(grand) = &p.parent {
                let message = if self.is_ancestor(&g.name, parent) {
                    format!(
                        "parent `{parent}` is its own ancestor through `{grand}`: the \
                         parents form a cycle; make one of them a top-level group"
                    )
                } else {
                    format!(
                        "parent `{parent}` has a parent itself (`{grand}`): supergroups are one \
                         level deep (as in Seastar); make `{parent}` a top-level group"
                    )
                };
                return fail("parent", message);
            }
        }
        Ok(())
    }

    /// True when following parents up from `from` reaches `name`.
    fn is_ancestor(&self, name: &str, from: &str) -> bool {
        let mut at = from;
        // Bounded: a cycle not through `name` must not loop forever.
        for _ in 0..=self.groups.len() {
            match self.get(at).and_then(|g| g.parent.as_deref()) {
                Some(p) if p == name => return true,
                Some(p) => at = p,
                None => return false,
            }
        }
        false
    }

    pub fn get(&self, name: &str) -> Option<&SchedGroup> {
        self.groups.iter().find(|g| g.name == name)
    }

    /// True when some group names `name` as its parent.
    pub fn is_supergroup(&self, name: &str) -> bool {
        self.groups
            .iter()
            .any(|g| g.parent.as_deref() == Some(name))
    }

    fn names(&self) -> String {
        let names: Vec<&str> = self.groups.iter().map(|g| g.name.as_str()).collect();
        names.join(", ")
    }

    /// Where each job of `plan` (in order) is scheduled; `file` names the group file in
    /// errors. Errors: a job whose `class` names a supergroup, or neither a group nor another
    /// job; a job without `class` whose name is a group's.
    pub fn place(&self, plan: &Plan, file: &str) -> Result<Vec<ClassPlacement>, PlacementError> {
        let mut by_job_class: HashMap<&str, u32> = HashMap::new();
        for job in &plan.jobs {
            if job.class.is_none() {
                by_job_class.entry(job.name.as_str()).or_insert(job.shares);
            }
        }
        let mut placements = Vec::with_capacity(plan.jobs.len());
        for job in &plan.jobs {
            let placement = match &job.class {
                None if self.get(&job.name).is_some() => {
                    return Err(PlacementError::JobNamesGroup {
                        file: file.to_string(),
                        job: job.name.clone(),
                    });
                }
                None => ClassPlacement {
                    class: job.name.clone(),
                    shares: job.shares,
                    supergroup: None,
                },
                Some(class) => self.place_class(class, &job.name, file, &by_job_class)?,
            };
            placements.push(placement);
        }
        Ok(placements)
    }

    fn place_class(
        &self,
        class: &str,
        job: &str,
        file: &str,
        job_classes: &HashMap<&str, u32>,
    ) -> Result<ClassPlacement, PlacementError> {
        if self.is_supergroup(class) {
            return Err(PlacementError::ClassIsSupergroup {
                file: file.to_string(),
                job: job.to_string(),
                class: class.to_string(),
                children: self
                    .groups
                    .iter()
                    .filter(|g| g.parent.as_deref() == Some(class))
                    .map(|g| g.name.clone())
                    .collect(),
            });
        }
        if let Some(group) = self.get(class) {
            let supergroup = group.parent.as_ref().and_then(|p| {
                self.get(p)
                    .map(|parent| (parent.name.clone(), parent.shares))
            });
            return Ok(ClassPlacement {
                class: class.to_string(),
                shares: group.shares,
                supergroup,
            });
        }
        match job_classes.get(class) {
            Some(&shares) => Ok(ClassPlacement {
                class: class.to_string(),
                shares,
                supergroup: None,
            }),
            None => Err(PlacementError::UnknownClass {
                file: file.to_string(),
                job: job.to_string(),
                class: class.to_string(),
                groups: self.groups.iter().map(|g| g.name.clone()).collect(),
            }),
        }
    }
}

/// Why a job cannot be placed in the `--sched-groups` hierarchy; `file` is how the message
/// names the groups file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlacementError {
    /// A job without `class` is named like a group, which would silently make two groups.
    JobNamesGroup { file: String, job: String },
    /// A job's `class` is a parent of other groups, which holds no requests itself.
    ClassIsSupergroup {
        file: String,
        job: String,
        class: String,
        children: Vec<String>,
    },
    /// A job's `class` is neither a group of the file nor another job's name.
    UnknownClass {
        file: String,
        job: String,
        class: String,
        groups: Vec<String>,
    },
}

impl fmt::Display for PlacementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlacementError::JobNamesGroup { file, job } => write!(
                f,
                "job `{job}` has no `class`, and {file} defines a group of the same name: add \
                 `class: {job}` to its shard_info to run it in that group, or rename the job"
            ),
            PlacementError::ClassIsSupergroup {
                file,
                job,
                class,
                children,
            } => write!(
                f,
                "job `{job}`: class `{class}` is a supergroup in {file} (the parent of {}); a \
                 job runs in a group that holds requests: name one of those",
                children.join(", ")
            ),
            PlacementError::UnknownClass {
                file,
                job,
                class,
                groups,
            } => write!(
                f,
                "job `{job}`: class `{class}` is neither a group of {file} ({}) nor the name of \
                 another job: fix the name or add the group",
                groups.join(", ")
            ),
        }
    }
}

impl std::error::Error for PlacementError {}

#[cfg(test)]
#[path = "sched_groups_tests.rs"]
mod tests;
