//! The vocabulary every tuning module shares: what a load is, what it is judged by, what a
//! sample counts and how a caller answers one. It imports nothing from this crate, so the
//! meter, the steady-state rule, the searches and the errors all point here and never at each
//! other.

use weir_model::device::Direction;

/// Where consecutive requests land.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Uniform random offsets aligned to the request size.
    Random,
    /// Consecutive offsets; writes always go to space never written before in this run.
    Sequential,
}

/// One closed-loop load: `depth` requests in flight in total, spread over all shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Load {
    #[serde(serialize_with = "ser_direction")]
    pub direction: Direction,
    pub pattern: Pattern,
    pub request_bytes: u32,
    pub depth: u32,
}

fn ser_direction<S: serde::Serializer>(d: &Direction, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(direction_name(*d))
}

/// "read" or "write".
pub fn direction_name(direction: Direction) -> &'static str {
    match direction {
        Direction::Read => "read",
        Direction::Write => "write",
    }
}

impl Load {
    /// Random loads are judged by IOPS, sequential ones by bandwidth.
    pub fn metric(&self) -> Metric {
        match self.pattern {
            Pattern::Random => Metric::Iops,
            Pattern::Sequential => Metric::Bandwidth,
        }
    }

    pub fn with_depth(self, depth: u32) -> Load {
        Load { depth, ..self }
    }

    pub fn with_request_bytes(self, request_bytes: u32) -> Load {
        Load {
            request_bytes,
            ..self
        }
    }
}

/// What a measurement optimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    Iops,
    Bandwidth,
}

/// Cumulative counters since the load started, all shards together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sample {
    pub elapsed_ns: u64,
    pub ops: u64,
    pub bytes: u64,
    /// Sum over completed requests of (completion time - submission time).
    pub latency_ns_sum: u64,
}

/// The meter's answer to each sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Continue,
    Stop,
}

/// "random" or "sequential".
pub fn pattern_name(pattern: Pattern) -> &'static str {
    match pattern {
        Pattern::Random => "random",
        Pattern::Sequential => "sequential",
    }
}
