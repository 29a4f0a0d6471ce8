//! The report as data: what ran, how it ended and the JSON each command produced. The page is a
//! pure function of this document ([`crate::page::render`]), and the document is embedded in the
//! page, so every number on the page can be found in the page's own JSON.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Everything the page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportDoc {
    pub schema_version: u32,
    pub meta: Meta,
    pub sections: Vec<Section>,
}

/// The machine, the versions and the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// The `weir report` command line as run.
    pub command: String,
    pub dir: String,
    /// quick, default or full.
    pub mode: String,
    pub weir_version: String,
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus: usize,
    pub memory_bytes: u64,
    /// Seconds since the Unix epoch at the start and the end.
    pub started_unix_s: u64,
    pub elapsed_s: f64,
    /// Set when the run was interrupted (Ctrl-C): the sections that did not finish say so.
    pub interrupted: bool,
}

/// How a section's phase ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", content = "reason", rename_all = "snake_case")]
pub enum Status {
    /// Ran to the end.
    Done,
    /// Stopped early (Ctrl-C): the data is what was measured until then.
    Partial(String),
    /// Could not run or failed; the reason says why and what to do.
    Failed(String),
    /// Not run (not requested, not available, or an earlier Ctrl-C).
    NotRun(String),
}

impl Status {
    pub fn label(&self) -> &'static str {
        match self {
            Status::Done => "done",
            Status::Partial(_) => "partial",
            Status::Failed(_) => "failed",
            Status::NotRun(_) => "not run",
        }
    }

    pub fn reason(&self) -> Option<&str> {
        match self {
            Status::Done => None,
            Status::Partial(r) | Status::Failed(r) | Status::NotRun(r) => Some(r),
        }
    }
}

/// Which part of the page a section is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SectionKind {
    Doctor,
    Qualify,
    Tune,
    Explore,
    Qos,
    Align,
}

impl SectionKind {
    pub const ALL: [SectionKind; 6] = [
        SectionKind::Doctor,
        SectionKind::Qualify,
        SectionKind::Tune,
        SectionKind::Explore,
        SectionKind::Qos,
        SectionKind::Align,
    ];

    pub fn id(self) -> &'static str {
        match self {
            SectionKind::Doctor => "doctor",
            SectionKind::Qualify => "qualify",
            SectionKind::Tune => "tune",
            SectionKind::Explore => "explore",
            SectionKind::Qos => "qos",
            SectionKind::Align => "align",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            SectionKind::Doctor => "Doctor: the device stack and filesystem checklist",
            SectionKind::Qualify => "Qualify: does this filesystem do asynchronous direct I/O?",
            SectionKind::Tune => "Tune: the disk's model",
            SectionKind::Explore => "Explore: the mixed read/write map",
            SectionKind::Qos => "QoS: the same reads beside writes, with and without the scheduler",
            SectionKind::Align => "Align: where written requests land on the device",
        }
    }
}

/// One command's part of the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    pub kind: SectionKind,
    pub status: Status,
    pub elapsed_s: f64,
    /// The exact commands that reproduce this section's figures.
    pub commands: Vec<String>,
    /// The command's JSON (its `--json` / `--format json` document, or the report's own
    /// collection of them); `null` when nothing was measured.
    pub json: Value,
}

impl Section {
    pub fn not_run(kind: SectionKind, reason: &str) -> Self {
        Section {
            kind,
            status: Status::NotRun(reason.into()),
            elapsed_s: 0.0,
            commands: Vec::new(),
            json: Value::Null,
        }
    }
}

pub const SCHEMA_VERSION: u32 = 1;
