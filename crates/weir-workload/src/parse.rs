//! Reading io_tester job files.
//!
//! A job file is a YAML list of jobs, exactly as Seastar's io_tester reads it (see
//! `docs/reference/job-files.md`). Parsing goes through typed serde structures that deny unknown fields, so a
//! misspelt key is an error carrying its line and column and the list of keys valid at that
//! level, instead of being silently ignored as io_tester does. Checks that need several fields
//! at once run afterwards ([`Job::validate`]) and name the job and the field; the job's line is
//! found again in the source so those errors carry a location too.

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use weir_model::units::{parse_duration, parse_size};

use crate::job::{Job, JobType, PauseDistribution, Plan, Prepare, ShardSet};

/// Why a job file was rejected. `line` and `column` are 1-based when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(line), Some(column)) => write!(f, "{line}:{column}: {}", self.message),
            (Some(line), None) => write!(f, "{line}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ParseError {}

/// Parses a job file's text into a validated [`Plan`].
pub fn parse_plan(text: &str) -> Result<Plan, ParseError> {
    let raw: Vec<RawJob> = match serde_yaml::from_str::<Option<Vec<RawJob>>>(text) {
        Ok(Some(raw)) => raw,
        Ok(None) => Vec::new(),
        Err(e) => return Err(from_yaml_error(&e)),
    };
    let plan = Plan::new(raw.into_iter().map(RawJob::into_job).collect());
    plan.validate().map_err(|e| {
        let key = e.field.rsplit('.').next().unwrap_or(e.field);
        ParseError::at_job_key(text, &e.job, key, e.to_string())
    })?;
    Ok(plan)
}

pub(crate) fn from_yaml_error(e: &serde_yaml::Error) -> ParseError {
    let location = e.location();
    let mut message = e.to_string();
    // serde_yaml appends " at line L column C"; the location is printed in front instead.
    if let Some(at) = message.rfind(" at line ") {
        message.truncate(at);
    }
    message = readable_path(&message);
    if message.contains("invalid type: map, expected a sequence")
        || message.contains("expected a sequence")
    {
        message
            .push_str(" (a job file is a YAML list of jobs: each job starts with `- name: ...`)");
    }
    ParseError {
        line: location.as_ref().map(|l| l.line()),
        column: location.as_ref().map(|l| l.column()),
        message,
    }
}

/// serde_yaml prefixes errors with a path such as `.[1].shard_info: `; say "job 2" instead.
fn readable_path(message: &str) -> String {
    let Some(rest) = message.strip_prefix(".[") else {
        return message.to_string();
    };
    let Some((index, rest)) = rest.split_once(']') else {
        return message.to_string();
    };
    let Ok(index) = index.parse::<usize>() else {
        return message.to_string();
    };
    let rest = rest.strip_prefix('.').unwrap_or(rest);
    let sep = if rest.starts_with(':') { "" } else { ", " };
    format!("job {}{sep}{rest}", index + 1)
}

impl ParseError {
    /// An error found after parsing, placed back in the source: at `key` within the entry
    /// named `job` (a job, a scheduling group), else at the entry's first column, else nowhere.
    pub(crate) fn at_job_key(text: &str, job: &str, key: &str, message: String) -> ParseError {
        let line = find_job_line(text, job);
        let (line, column) = match line.and_then(|l| find_key_in_job(text, l, key)) {
            Some((l, c)) => (Some(l), Some(c)),
            None => (line, line.map(|_| 1)),
        };
        ParseError {
            line,
            column,
            message,
        }
    }
}

/// The line of `name: <job>` in the source, for errors found after parsing.
pub(crate) fn find_job_line(text: &str, job: &str) -> Option<usize> {
    if job.is_empty() {
        return None;
    }
    text.lines()
        .position(|line| {
            let line = line.trim_start().trim_start_matches('-').trim_start();
            line.strip_prefix("name:")
                .map(|rest| rest.trim().trim_matches(|c| c == '"' || c == '\'') == job)
                .unwrap_or(false)
        })
        .map(|index| index + 1)
}

/// The 1-based line and column of `key:` inside the job whose `name:` is on `job_line`, so
/// an error about one field points at it. The job ends at the next list item at or left of
/// its own dash.
pub(crate) fn find_key_in_job(text: &str, job_line: usize, key: &str) -> Option<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let first = lines.get(job_line.checked_sub(1)?)?;
    let dash_column = first.find('-').unwrap_or(0);
    for (index, line) in lines.iter().enumerate().skip(job_line) {
        let indent = line.len() - line.trim_start().len();
        let body = line.trim_start();
        if body.starts_with('-') && indent <= dash_column {
            break;
        }
        let body = body.trim_start_matches('-').trim_start();
        if body
            .strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
        {
            return Some((index + 1, line.len() - body.len() + 1));
        }
    }
    None
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJob {
    name: String,
    #[serde(rename = "type")]
    job_type: RawType,
    #[serde(default)]
    shards: RawShards,
    data_size: Option<Size>,
    /// io_tester's unlink jobs: files created per shard before the run.
    files_count: Option<u64>,
    #[serde(default)]
    shard_info: RawShardInfo,
    #[serde(default)]
    options: RawOptions,
    /// weir's extension: how the file looks before the run.
    prepare: Option<RawPrepare>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawShardInfo {
    parallelism: Option<u32>,
    rps: Option<u32>,
    /// io_tester's per-shard byte rate (weir paces it open-loop; exclusive with rps).
    bandwidth: Option<Size>,
    batch: Option<u32>,
    limit: Option<u64>,
    shares: Option<u32>,
    class: Option<String>,
    reqsize: Option<Size>,
    think_time: Option<Time>,
    think_after: Option<Time>,
    /// `cpu` jobs: the busy loop per request.
    execution_time: Option<Time>,
    /// readv/writev with `iov_count` segments per request.
    vectorized: Option<bool>,
    iov_count: Option<u32>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawOptions {
    dsync: Option<bool>,
    /// How io_tester's fibers sleep: `busyloop` makes weir's shard poll instead of sleeping
    /// (exact send times, one busy core); `lowres` and `steady` wait in the kernel.
    sleep_type: Option<SleepType>,
    pause_distribution: Option<RawPause>,
    /// An extent size hint set on each new file (XFS); other filesystems get a warning.
    extent_allocation_size_hint: Option<Size>,
    sloppy_size_hint: Option<Size>,
    /// weir's shorthand for `prepare: sloppy` with the default hint.
    sloppy_size: Option<bool>,
    fallocate: Option<bool>,
}

impl RawJob {
    fn into_job(self) -> Job {
        let mut job = Job::new(self.name, self.job_type.0);
        job.shards = self.shards.0;
        job.data_size_bytes = self.data_size.map(|s| s.0);
        let info = self.shard_info;
        if let Some(p) = info.parallelism {
            job.parallelism = p;
        }
        job.rps = info.rps;
        job.bandwidth_bytes_per_s = info.bandwidth.map(|b| b.0);
        job.batch = info.batch.unwrap_or(1);
        job.limit = info.limit;
        if let Some(shares) = info.shares {
            job.shares = shares;
        }
        job.class = info.class;
        if let Some(size) = info.reqsize {
            job.request_bytes = u32::try_from(size.0).unwrap_or(u32::MAX);
        }
        job.think_time = info.think_time.map(|t| t.0).unwrap_or_default();
        job.think_after = info.think_after.map(|t| t.0).unwrap_or_default();
        job.execution_time = info.execution_time.map(|t| t.0).unwrap_or_default();
        // io_tester ignores iov_count unless vectorized is true; its default count is 1.
        if info.vectorized == Some(true) {
            job.iov_count = Some(info.iov_count.unwrap_or(1));
        }
        let options = self.options;
        job.dsync = options.dsync.unwrap_or(false);
        job.pause_distribution = options.pause_distribution.map(|p| p.0).unwrap_or_default();
        job.sloppy_size_hint_bytes = options.sloppy_size_hint.map(|s| s.0);
        job.busy_poll = matches!(options.sleep_type, Some(SleepType(true)));
        job.extent_size_hint_bytes = options.extent_allocation_size_hint.map(|s| s.0);
        job.files_count = self.files_count;
        job.prepare = self.prepare.map(|p| p.0);
        if job.prepare.is_none() {
            let sloppy = options.sloppy_size == Some(true) || job.sloppy_size_hint_bytes.is_some();
            // io_tester fills read and overwrite files even when it fallocates them first, so
            // the option only changes the preparation of a fresh file (seqwrite).
            let fresh = job.job_type.default_prepare() == Prepare::Pretruncate;
            if options.fallocate == Some(true) && fresh {
                job.prepare = Some(Prepare::Fallocate);
            } else if sloppy && job.job_type.default_prepare().extends_file() {
                job.prepare = Some(Prepare::Sloppy);
            }
        }
        job
    }
}

/// A byte size: a YAML integer or a string with a binary suffix (`512`, `4k`, `256kB`).
struct Size(u64);

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SizeVisitor)
    }
}

struct SizeVisitor;

impl Visitor<'_> for SizeVisitor {
    type Value = Size;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a size such as 4096, 4k or 256kB")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Size, E> {
        Ok(Size(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Size, E> {
        u64::try_from(v)
            .map(Size)
            .map_err(|_| E::custom(format!("a size cannot be negative ({v})")))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Size, E> {
        parse_size(v).map(Size).map_err(E::custom)
    }
}

/// A duration: `0`, or a number with a unit (`100us`, `1ms`, `2s`). A bare number other than 0
/// is refused: io_tester refuses it too, and guessing the unit would silently change a run.
struct Time(Duration);

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TimeVisitor)
    }
}

struct TimeVisitor;

const BARE_NUMBER_TIME: &str = "a duration needs a unit (ns, us, ms or s), e.g. 100us; only 0 \
     may be written without one";

impl Visitor<'_> for TimeVisitor {
    type Value = Time;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a duration such as 0, 100us, 1ms or 2s")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Time, E> {
        if v == 0 {
            Ok(Time(Duration::ZERO))
        } else {
            Err(E::custom(format!("`{v}`: {BARE_NUMBER_TIME}")))
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Time, E> {
        if v == 0 {
            Ok(Time(Duration::ZERO))
        } else {
            Err(E::custom(format!("`{v}`: {BARE_NUMBER_TIME}")))
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Time, E> {
        Err(E::custom(format!("`{v}`: {BARE_NUMBER_TIME}")))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Time, E> {
        let trimmed = v.trim();
        if trimmed == "0" {
            return Ok(Time(Duration::ZERO));
        }
        if trimmed.parse::<f64>().is_ok() {
            return Err(E::custom(format!("`{v}`: {BARE_NUMBER_TIME}")));
        }
        parse_duration(v).map(Time).map_err(E::custom)
    }
}

/// `shards: all` or `shards: [0, 2]`.
#[derive(Default)]
struct RawShards(ShardSet);

impl<'de> Deserialize<'de> for RawShards {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShardsVisitor)
    }
}

struct ShardsVisitor;

impl<'de> Visitor<'de> for ShardsVisitor {
    type Value = RawShards;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("`all` or a list of shard numbers such as [0, 1]")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawShards, E> {
        if v == "all" {
            Ok(RawShards(ShardSet::All))
        } else {
            Err(E::custom(format!(
                "shards: `{v}` is not `all` or a list of shard numbers such as [0, 1]"
            )))
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawShards, A::Error> {
        let mut list = Vec::new();
        while let Some(shard) = seq.next_element::<usize>()? {
            if !list.contains(&shard) {
                list.push(shard);
            }
        }
        if list.is_empty() {
            return Err(de::Error::custom(
                "shards: the list is empty; give `all` or at least one shard number",
            ));
        }
        list.sort_unstable();
        Ok(RawShards(ShardSet::List(list)))
    }
}

/// Deserializes a name from a fixed list, naming the valid ones on error. The check runs
/// inside the visitor so serde_yaml attaches the value's own line and column to the error.
fn named<'de, D, T>(
    d: D,
    what: &'static str,
    lookup: fn(&str) -> Option<T>,
    valid: &'static [&'static str],
    extra: fn(&str) -> Option<&'static str>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    d.deserialize_str(NameVisitor {
        what,
        lookup,
        valid,
        extra,
    })
}

struct NameVisitor<T> {
    what: &'static str,
    lookup: fn(&str) -> Option<T>,
    valid: &'static [&'static str],
    extra: fn(&str) -> Option<&'static str>,
}

impl<T> Visitor<'_> for NameVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a {} name: one of {}", self.what, self.valid.join(", "))
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<T, E> {
        (self.lookup)(name).ok_or_else(|| {
            let hint = (self.extra)(name)
                .map(|h| format!(" ({h})"))
                .unwrap_or_default();
            E::custom(format!(
                "unknown {} `{name}`{hint}: valid values are {}",
                self.what,
                self.valid.join(", ")
            ))
        })
    }
}

const TYPE_NAMES: &[&str] = &[
    "seqread",
    "seqwrite",
    "overwrite",
    "randread",
    "randwrite",
    "append",
    "cpu",
    "unlink",
];
const PREPARE_NAMES: &[&str] = &["overwrite", "append", "pretruncate", "fallocate", "sloppy"];

struct RawType(JobType);

impl<'de> Deserialize<'de> for RawType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        named(d, "type", JobType::from_name, TYPE_NAMES, |_| None).map(RawType)
    }
}

struct RawPrepare(Prepare);

impl<'de> Deserialize<'de> for RawPrepare {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        named(d, "prepare mode", Prepare::from_name, PREPARE_NAMES, |_| {
            None
        })
        .map(RawPrepare)
    }
}

struct RawPause(PauseDistribution);

impl<'de> Deserialize<'de> for RawPause {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let lookup = |name: &str| match name {
            "uniform" => Some(PauseDistribution::Uniform),
            "poisson" => Some(PauseDistribution::Poisson),
            _ => None,
        };
        named(
            d,
            "pause_distribution",
            lookup,
            &["uniform", "poisson"],
            |_| None,
        )
        .map(RawPause)
    }
}

/// True for `busyloop`.
struct SleepType(bool);

impl<'de> Deserialize<'de> for SleepType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let lookup = |name: &str| match name {
            "lowres" | "steady" => Some(false),
            "busyloop" => Some(true),
            _ => None,
        };
        named(
            d,
            "sleep_type",
            lookup,
            &["lowres", "steady", "busyloop"],
            |_| None,
        )
        .map(SleepType)
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
