//! The explore phase: `weir explore`'s map through `weir-explore` (its quick map by default,
//! the full one with `--full`), kept as `{map, charts, io_properties_yaml}`: the map is
//! `explore.json`, the charts are explore's own heatmaps (read and write p99 with the goal
//! contour and the fitted boundary) as data, and the fitted model feeds the QoS demo.

use std::time::Duration;

use serde_json::{json, Value};
use weir_explore::meter::{leftover_files, WorkloadMeter, WriteRegime};
use weir_explore::plots::{heatmap, Direction};
use weir_explore::regions::regions;
use weir_explore::{Map, SearchSettings, SteadyRule};
use weir_model::io_properties::IoProperties;
use weir_workload::run::EngineFactory;
use weir_workload::RunOptions;

use super::probe::backend_flag;
use super::{Carry, Mode, ReportOptions};
use crate::chart::Chart;
use crate::doc::{Section, SectionKind, Status};

/// Read p99 goal of the map (`weir explore`'s default).
const GOAL_US: f64 = 1000.0;

/// The map's time budget per mode (a soft limit: no ray starts that would end past it).
pub(crate) fn budget(mode: Mode) -> Duration {
    match mode {
        Mode::Quick => Duration::from_secs(60),
        Mode::Default => Duration::from_secs(120),
        Mode::Full => Duration::from_secs(600),
    }
}

pub(crate) fn explore(opts: &ReportOptions, carry: &mut Carry) -> Section {
    let full = opts.mode == Mode::Full;
    let budget = budget(opts.mode);
    let mut section = Section {
        kind: SectionKind::Explore,
        status: Status::Done,
        elapsed_s: 0.0,
        commands: vec![format!(
            "weir explore --dir {}{} --budget {}s --goal 1ms --write-regime fresh --backend {} --out explore-out",
            opts.dir.display(),
            if full { "" } else { " --quick" },
            budget.as_secs(),
            backend_flag(opts.backend)
        )],
        json: Value::Null,
    };
    let free_bytes = match weir_probe::probe_path(&opts.dir) {
        Ok(f) => f.space.avail_bytes,
        Err(e) => {
            section.status = Status::Failed(e.to_string());
            return section;
        }
    };
    let shards = weir_engine::available_cores().max(1);
    let factory = EngineFactory {
        backend: opts.backend,
        nowait: true,
    };
    let sizes = regions(free_bytes, !full);
    let regime = WriteRegime::Fresh;
    let mut meter = WorkloadMeter {
        factory: &factory,
        options: RunOptions {
            dir: Some(opts.dir.clone()),
            shards,
            backend: opts.backend,
            cancel: opts.cancel.clone(),
            ..RunOptions::default()
        },
        read_bytes: 4096,
        write_bytes: 128 << 10,
        regime,
        read_region_bytes: sizes.read_region_bytes,
        overwrite_region_bytes: sizes.overwrite_region_bytes,
        fresh_file_cap_bytes: sizes.fresh_file_cap_bytes,
        rule: if full {
            SteadyRule::full()
        } else {
            SteadyRule::quick()
        },
        goal_us: GOAL_US,
    };
    let settings = if full {
        SearchSettings::full(GOAL_US, regime, budget)
    } else {
        SearchSettings::quick(GOAL_US, regime, budget)
    };
    let outcome = weir_explore::search(&mut meter, &settings, &mut |_| {});
    // Already gone is fine; a file that cannot be removed is named in the section, so the
    // operator sees it on the page and in the JSON.
    let not_removed: Vec<String> = leftover_files(&opts.dir, shards)
        .into_iter()
        .filter_map(|file| match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Some(format!(
                "cannot remove {}: {e}; remove it by hand",
                file.display()
            )),
            _ => None,
        })
        .collect();
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            section.status = Status::Failed(with_leftovers(e.to_string(), &not_removed));
            return section;
        }
    };
    let map = Map::from_search(outcome, regime, GOAL_US, 4096, 128 << 10);
    if map.interrupted {
        section.status = Status::Partial(
            "interrupted (Ctrl-C): the map holds the points measured until then".into(),
        );
    }
    let mountpoint = carry
        .model
        .as_ref()
        .and_then(|d| d.mountpoints.first().cloned())
        .unwrap_or_else(|| opts.dir.display().to_string());
    let yaml = map.io_properties_yaml(&mountpoint);
    carry.explored = yaml
        .as_deref()
        .and_then(|y| IoProperties::parse(y, "weir explore").ok())
        .and_then(|p| p.disks.into_iter().next());
    let charts: Vec<Chart> = [
        ("explore-read-p99", Direction::Read),
        ("explore-write-p99", Direction::Write),
    ]
    .iter()
    .map(|(id, d)| Chart::from_figure(id, &heatmap(&map, *d)))
    .collect();
    section.json = json!({ "map": map, "charts": charts, "io_properties_yaml": yaml });
    if !not_removed.is_empty() {
        let reason = match &section.status {
            Status::Partial(r) => r.clone(),
            _ => "the map is complete, but test files remain".into(),
        };
        section.status = Status::Partial(with_leftovers(reason, &not_removed));
    }
    section
}

/// `reason`, followed by every test file that could not be removed.
fn with_leftovers(reason: String, not_removed: &[String]) -> String {
    if not_removed.is_empty() {
        reason
    } else {
        format!("{reason}; {}", not_removed.join("; "))
    }
}
