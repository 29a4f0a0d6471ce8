//! The tune phase: `weir tune`'s preflight and measurement of one directory through
//! `weir-tune`, kept as `{preflight, report, io_properties_yaml}` (one entry of
//! `weir tune --format json`'s `dirs`, plus the YAML). Its model feeds the QoS demo.

use std::time::Instant;

use serde_json::{json, Value};
use weir_tune::output::{disk_properties, io_properties_yaml};
use weir_tune::real::{preflight, tune_dir, DirRun};
use weir_tune::{TuneConfig, TuneError};

use super::probe::backend_flag;
use super::{Budget, Carry, ReportOptions};
use crate::doc::{Section, SectionKind, Status};

pub(crate) fn tune(opts: &ReportOptions, budget: &Budget, carry: &mut Carry) -> Section {
    let dir = opts.dir.display().to_string();
    let command = format!(
        "weir tune --dir {dir} --duration {}s --backend {} --format json --plot tune.svg",
        budget.tune.as_secs(),
        backend_flag(opts.backend)
    );
    let mut section = Section {
        kind: SectionKind::Tune,
        status: Status::Done,
        elapsed_s: 0.0,
        commands: vec![command],
        json: Value::Null,
    };
    let shards = weir_engine::shards::available_cores().max(1) as u32;
    let start = Instant::now();
    let pre = match preflight(&opts.dir, shards) {
        Ok(p) => p,
        Err(e) => {
            section.status = Status::Failed(e.to_string());
            return section;
        }
    };
    // The preflight's own time counts against the budget, as `weir tune --duration` does.
    let deadline = start + budget.tune;
    let cfg = TuneConfig::new(0);
    let run = DirRun {
        backend: opts.backend,
        deadline,
        cancel: &opts.cancel,
        trace: None,
    };
    match tune_dir(&pre, &cfg, run, &mut |_| {}) {
        Ok(report) => {
            let disk = disk_properties(&pre.mountpoint, &report);
            let yaml = io_properties_yaml(vec![disk.clone()]);
            carry.model = Some(disk);
            section.json =
                json!({ "preflight": pre, "report": report, "io_properties_yaml": yaml });
        }
        Err(TuneError::Interrupted) => {
            // A tune is only meaningful whole: its figures come from confirming measurements
            // at the end of each search, so nothing half-measured is kept.
            section.status = Status::Partial(
                "interrupted (Ctrl-C) during the measurement: a tune reports only whole, so no figures were kept".into(),
            );
            section.json = json!({ "preflight": pre });
        }
        Err(e) => section.status = Status::Failed(e.to_string()),
    }
    section
}
