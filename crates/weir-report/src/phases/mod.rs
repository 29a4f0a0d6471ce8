//! Running the report: each phase calls one command's library function and keeps its JSON.
//! Phases run in page order; Ctrl-C stops the phase that runs (the engine's loops poll the
//! interrupt flag), keeps what it measured, and the phases after it are marked not run.

mod explore;
mod probe;
mod qos;
mod tune;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use weir_engine::Backend;

use crate::doc::{Meta, ReportDoc, Section, SectionKind, SCHEMA_VERSION};
use crate::progress::Progress;

/// How much to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The quick map and short runs: <= 3 minutes on the project's VM.
    Quick,
    /// <= 6 minutes.
    Default,
    /// The full explore map.
    Full,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Quick => "quick",
            Mode::Default => "default",
            Mode::Full => "full",
        }
    }
}

/// What the phases measure, per mode.
#[derive(Debug, Clone)]
pub struct Budget {
    pub tune: Duration,
    /// Each QoS run's measured duration.
    pub qos_run: Duration,
    pub qualify_ios: u64,
    pub align_file_bytes: u64,
    /// The explore map's budget.
    pub explore: Duration,
}

impl Budget {
    pub fn for_mode(mode: Mode) -> Self {
        match mode {
            Mode::Quick => Budget {
                tune: Duration::from_secs(30),
                qos_run: Duration::from_secs(4),
                qualify_ios: 300,
                align_file_bytes: 16 << 20,
                explore: explore::budget(mode),
            },
            Mode::Default | Mode::Full => Budget {
                tune: Duration::from_secs(30),
                qos_run: Duration::from_secs(10),
                qualify_ios: 1000,
                align_file_bytes: 32 << 20,
                explore: explore::budget(mode),
            },
        }
    }

    /// The expected length of each phase, for the progress line.
    fn estimate(&self, kind: SectionKind) -> Duration {
        match kind {
            SectionKind::Doctor => Duration::from_secs(1),
            SectionKind::Qualify => Duration::from_secs(4 + self.qualify_ios / 100),
            SectionKind::Tune => self.tune + Duration::from_secs(3),
            SectionKind::Explore => self.explore + Duration::from_secs(20),
            SectionKind::Qos => (self.qos_run + Duration::from_secs(2)) * qos::RUNS as u32,
            SectionKind::Align => Duration::from_secs(5 + (self.align_file_bytes >> 22)),
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    pub dir: PathBuf,
    pub mode: Mode,
    pub backend: Backend,
    /// The command line as typed, for the page.
    pub command: String,
    /// Stops the report early (the `weir` binary cancels it on Ctrl-C): the running phase
    /// winds down and the phases after it are marked not run.
    pub cancel: weir_engine::Cancel,
}

/// What the phases hand each other: the tune's model feeds the QoS demo.
#[derive(Default)]
pub(crate) struct Carry {
    pub(crate) model: Option<weir_model::io_properties::DiskProperties>,
    /// The model explore fitted, when it fitted one.
    pub(crate) explored: Option<weir_model::io_properties::DiskProperties>,
}

/// Runs every phase and returns the document (also when interrupted: then the sections that
/// did not finish say so).
pub fn run_report(opts: &ReportOptions, progress: &Progress) -> ReportDoc {
    let started = Instant::now();
    let budget = Budget::for_mode(opts.mode);
    let mut carry = Carry::default();
    let mut sections = Vec::new();
    let count = SectionKind::ALL.len();
    for (i, kind) in SectionKind::ALL.iter().copied().enumerate() {
        let after = SectionKind::ALL[i + 1..]
            .iter()
            .map(|k| budget.estimate(*k))
            .sum();
        progress.phase(i, count, kind.id(), budget.estimate(kind), after);
        if opts.cancel.is_cancelled() {
            sections.push(Section::not_run(
                kind,
                "interrupted (Ctrl-C) before this phase started",
            ));
            continue;
        }
        let t = Instant::now();
        let mut section = run_phase(kind, opts, &budget, &mut carry);
        section.elapsed_s = t.elapsed().as_secs_f64();
        sections.push(section);
    }
    ReportDoc {
        schema_version: SCHEMA_VERSION,
        meta: machine_meta(opts, started),
        sections,
    }
}

fn run_phase(
    kind: SectionKind,
    opts: &ReportOptions,
    budget: &Budget,
    carry: &mut Carry,
) -> Section {
    match kind {
        SectionKind::Doctor => probe::doctor(&opts.dir),
        SectionKind::Qualify => probe::qualify(&opts.dir, budget.qualify_ios),
        SectionKind::Tune => tune::tune(opts, budget, carry),
        SectionKind::Explore => explore::explore(opts, carry),
        SectionKind::Qos => qos::demo(opts, budget, carry),
        SectionKind::Align => probe::align(&opts.dir, opts.backend, budget.align_file_bytes),
    }
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn machine_meta(opts: &ReportOptions, started: Instant) -> Meta {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or_else(|| "unknown".into(), |m| m.trim().to_string());
    let memory_bytes = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kib| kib.parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024);
    let started_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        .saturating_sub(started.elapsed().as_secs());
    Meta {
        command: opts.command.clone(),
        dir: opts.dir.display().to_string(),
        mode: opts.mode.name().into(),
        weir_version: env!("CARGO_PKG_VERSION").into(),
        hostname: read_trimmed("/proc/sys/kernel/hostname"),
        kernel: read_trimmed("/proc/sys/kernel/osrelease"),
        cpu_model,
        cpus: weir_engine::shards::available_cores(),
        memory_bytes,
        started_unix_s,
        elapsed_s: started.elapsed().as_secs_f64(),
        interrupted: opts.cancel.is_cancelled(),
    }
}
