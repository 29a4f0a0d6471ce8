//! What the scheduler refused, and why. A leaf: the budget and the queue both return it.
//!
//! Each refused setting is its own variant carrying the value, so a caller can match the cause;
//! the text is the operator's message, unchanged from when the causes were plain strings.

use std::fmt;

/// What the scheduler refused, and why. The text says what to give instead.
///
/// ```
/// use weir_sched::{SchedConfig, SchedError};
///
/// let refused = SchedConfig::builder().shards(0).build().unwrap_err();
/// assert_eq!(refused, SchedError::Shards { shards: 0 });
/// assert_eq!(refused.to_string(), "0 shards; give between 1 and 4096");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SchedError {
    /// A latency goal of zero.
    ZeroGoal,
    /// A shard count outside 1..=4096.
    Shards {
        /// The count asked for.
        shards: usize,
    },
    /// A tuning factor outside what the budget accepts; `accepted` finishes the sentence.
    Setting {
        /// The setting's name, as `SchedConfig` spells it.
        name: &'static str,
        /// The value given.
        value: f64,
        /// What to give instead.
        accepted: &'static str,
    },
    /// A queue asked for a shard the budget was not built for.
    NoSuchShard {
        /// The shard asked for (0-based).
        shard: usize,
        /// The shards the budget serves.
        shards: usize,
    },
    /// `add_group` with a name the shard already has.
    GroupTwice {
        /// The group's name.
        group: String,
        /// The shard.
        shard: usize,
    },
    /// `add_class_in` named a group the shard does not have.
    NoSuchGroup {
        /// The class being added.
        class: String,
        /// The group it named.
        group: u32,
        /// The shard.
        shard: usize,
    },
    /// More groups or classes than a `u32` numbers; `what` is "groups" or "classes".
    TooMany {
        /// "groups" or "classes".
        what: &'static str,
    },
    /// A class with a bandwidth or IOPS cap of zero.
    ZeroCap {
        /// The class's name.
        class: String,
    },
    /// `add_class` with a name the shard already has.
    ClassTwice {
        /// The class's name.
        class: String,
        /// The shard.
        shard: usize,
    },
    /// Shares outside 1..=1000000.
    Shares {
        /// The class (or group) name.
        class: String,
        /// The shares given.
        shares: u32,
    },
    /// `enqueue` or `set_shares` named a class this queue does not have.
    UnknownClass(u32),
    /// A request of zero bytes.
    EmptyRequest,
}

impl fmt::Display for SchedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchedError::ZeroGoal => {
                f.write_str("the latency goal is 0; give a positive duration such as 0.75ms")
            }
            SchedError::Shards { shards } => {
                write!(f, "{shards} shards; give between 1 and 4096")
            }
            SchedError::Setting {
                name,
                value,
                accepted,
            } => write!(f, "{name} is {value}; give {accepted}"),
            SchedError::NoSuchShard { shard, shards } => write!(
                f,
                "shard {shard} does not exist: the budget was built for {shards} shards"
            ),
            SchedError::GroupTwice { group, shard } => {
                write!(f, "group `{group}` is defined twice on shard {shard}")
            }
            SchedError::NoSuchGroup {
                class,
                group,
                shard,
            } => write!(
                f,
                "class `{class}`: group {group} is not registered on shard {shard}; call \
                 add_group first"
            ),
            SchedError::TooMany { what } => write!(f, "too many {what}"),
            SchedError::ZeroCap { class } => write!(
                f,
                "class `{class}`: a cap of 0 would never dispatch; leave it out for no cap"
            ),
            SchedError::ClassTwice { class, shard } => {
                write!(f, "class `{class}` is defined twice on shard {shard}")
            }
            SchedError::Shares { class, shares } => write!(
                f,
                "class `{class}` has {shares} shares; give between 1 and 1000000 (default 1000)"
            ),
            SchedError::UnknownClass(id) => write!(
                f,
                "class {id} is not registered on this shard; call add_class first"
            ),
            SchedError::EmptyRequest => f.write_str("a request of 0 bytes cannot be scheduled"),
        }
    }
}

impl std::error::Error for SchedError {}
