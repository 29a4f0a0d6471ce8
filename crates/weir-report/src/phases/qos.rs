//! The QoS demo: latency-sensitive 4 KiB reads, first alone, then beside a compaction-like
//! writer without the scheduler and through weir's scheduler with the tuned model (and with
//! the explored model once `weir explore` is part of the build). Each run goes through
//! `weir_workload::run` exactly as `weir run` does; the section keeps each run's JSON report,
//! its read latency CDF (from the exact histogram) and its write bandwidth per window.

use std::time::Duration;

use serde_json::{json, Value};
use weir_model::io_properties::{DiskProperties, IoProperties};
use weir_sched::SchedConfig;
use weir_workload::parse::parse_plan;
use weir_workload::{Control, Progress, RunError, RunOptions, SchedulerOptions};

use super::probe::backend_flag;
use super::{Budget, Carry, ReportOptions};
use crate::doc::{Section, SectionKind, Status};
use crate::samples::{job_cdf, Timeline};

/// Runs measured (reads alone, no scheduler, the scheduler with the tuned and with the
/// explored model).
pub(crate) const RUNS: usize = 4;

const LATENCY_GOAL: Duration = weir_sched::DEFAULT_LATENCY_GOAL;
const SAMPLE_INTERVAL: Duration = Duration::from_millis(250);

const READS_JOB: &str = "- name: reads
  type: randread
  shards: [0]
  data_size: 1GB
  shard_info:
    parallelism: 4
    reqsize: 4kB
    class: query
    shares: 1000
";

/// The writer: 128 KiB sequential writes, 64 in flight, into a fresh sparse file of
/// `data_size` (it wraps to overwriting when the run writes more than that).
fn writes_job(data_size: &str) -> String {
    format!(
        "- name: writes
  type: seqwrite
  shards: [0]
  data_size: {data_size}
  prepare: pretruncate
  shard_info:
    parallelism: 64
    reqsize: 128kB
    class: compaction
    shares: 100
"
    )
}

/// The writer's file size: a quarter of the free space, between 1 and 32 GiB, so a run writes
/// fresh extents for as long as the disk allows without filling it.
fn write_file_gib(dir: &std::path::Path) -> u64 {
    weir_probe::probe_path(dir)
        .map_or(1, |f| (f.space.avail_bytes / 4) >> 30)
        .clamp(1, 32)
}

/// One run of the demo.
struct RunSpec {
    name: &'static str,
    jobs: String,
    /// None: no scheduler at all; Some(false): classes measured, nothing held back;
    /// Some(true): weir's scheduler.
    scheduled: Option<bool>,
}

pub(crate) fn demo(opts: &ReportOptions, budget: &Budget, carry: &Carry) -> Section {
    let dir = opts.dir.display().to_string();
    let data_size = format!("{}GB", write_file_gib(&opts.dir));
    let mixed = format!("{READS_JOB}{}", writes_job(&data_size));
    let mut specs = vec![RunSpec {
        name: "reads alone",
        jobs: READS_JOB.to_string(),
        scheduled: None,
    }];
    specs.push(RunSpec {
        name: "+ writes, no scheduler",
        jobs: mixed.clone(),
        scheduled: carry.model.as_ref().map(|_| false),
    });
    specs.push(RunSpec {
        name: "+ writes, weir (tuned)",
        jobs: mixed.clone(),
        scheduled: Some(true),
    });
    let tuned = carry.model.as_ref().map(demo_disk);
    let mut runs = Vec::new();
    let mut status = Status::Done;
    for spec in &specs {
        if opts.cancel.is_cancelled() {
            runs.push(
                json!({ "name": spec.name, "status": "not run", "reason": "interrupted (Ctrl-C)" }),
            );
            status = Status::Partial(
                "interrupted (Ctrl-C): the runs marked not run or partial did not finish".into(),
            );
            continue;
        }
        let run = one_run(opts, budget, tuned.as_ref(), spec);
        if run.get("status").and_then(Value::as_str) != Some("done") {
            status = Status::Partial("not every run finished; each run's row says why".into());
        }
        runs.push(run);
    }
    if carry.explored.is_some() {
        let spec = RunSpec {
            name: "+ writes, weir (explored)",
            jobs: mixed.clone(),
            scheduled: Some(true),
        };
        let run = if opts.cancel.is_cancelled() {
            json!({ "name": spec.name, "status": "not run", "reason": "interrupted (Ctrl-C)" })
        } else {
            one_run(opts, budget, carry.explored.as_ref(), &spec)
        };
        runs.push(run);
    } else {
        runs.push(json!({
            "name": "+ writes, weir (explored)",
            "status": "not run",
            "reason": "explore fitted no model (see the explore section)",
        }));
    }
    let secs = budget.qos_run.as_secs_f64();
    let backend = backend_flag(opts.backend);
    let properties_yaml = carry.model.as_ref().map(|d| {
        IoProperties {
            disks: vec![demo_disk(d)],
        }
        .to_yaml_string()
    });
    let commands = vec![
        "# reads.yaml is the first job of qos.yaml; io-properties.yaml is the one shown above".to_string(),
        format!("weir run reads.yaml --dir {dir} --duration {secs}s --backend {backend} --output json --plot reads.svg"),
        format!("weir run qos.yaml --dir {dir} --duration {secs}s --backend {backend} --io-properties io-properties.yaml --no-scheduler --output json --plot unscheduled.svg"),
        format!("weir run qos.yaml --dir {dir} --duration {secs}s --backend {backend} --io-properties io-properties.yaml --latency-goal 0.75ms --output json --plot scheduled.svg"),
    ];
    Section {
        kind: SectionKind::Qos,
        status,
        elapsed_s: 0.0,
        commands,
        json: json!({
            "workload": "4 KiB random reads x4 (class query, 1000 shares) beside 128 KiB sequential writes x64 (class compaction, 100 shares), shard 0",
            "write_regime": format!("fresh extents: a sparse {data_size} file written sequentially (overwrite after it wraps)"),
            "latency_goal_us": LATENCY_GOAL.as_micros() as u64,
            "duration_s": secs,
            "job_yaml": mixed,
            "io_properties_yaml": properties_yaml,
            "runs": runs,
        }),
    }
}

/// The model the demo schedules by: the tuned one with `duplex: true`. A tune does not measure
/// duplex (neither does iotune); this project's disk serves reads beside writes, and
/// bench/qos.sh schedules its README rows the same way (docs/benchmarks.md measures both).
fn demo_disk(tuned: &DiskProperties) -> DiskProperties {
    DiskProperties {
        duplex: true,
        ..tuned.clone()
    }
}

fn scheduler(
    disk: Option<&DiskProperties>,
    opts: &ReportOptions,
    unlimited: bool,
) -> Result<SchedulerOptions, String> {
    let disk = disk.ok_or(
        "no model: the tune phase did not finish, so the scheduler has nothing to schedule by",
    )?;
    let model = disk
        .cost_model()
        .map_err(|e| format!("the model is unusable: {e}"))?;
    Ok(SchedulerOptions {
        model,
        config: SchedConfig {
            latency_goal: LATENCY_GOAL,
            unlimited,
            ..SchedConfig::default()
        },
        mountpoint: disk
            .mountpoints
            .first()
            .cloned()
            .unwrap_or_else(|| opts.dir.display().to_string()),
        merge_adjacent: true,
        groups: None,
    })
}

fn one_run(
    opts: &ReportOptions,
    budget: &Budget,
    model: Option<&DiskProperties>,
    spec: &RunSpec,
) -> Value {
    let fail = |reason: String| json!({ "name": spec.name, "status": "failed", "reason": reason });
    let plan = match parse_plan(&spec.jobs) {
        Ok(p) => p,
        Err(e) => return fail(format!("the demo's job file does not parse: {e}")),
    };
    let scheduler = match spec.scheduled {
        None => None,
        Some(on) => match scheduler(model, opts, !on) {
            Ok(s) => Some(s),
            Err(e) => return json!({ "name": spec.name, "status": "not run", "reason": e }),
        },
    };
    let options = RunOptions {
        dir: Some(opts.dir.clone()),
        duration: budget.qos_run,
        backend: opts.backend,
        sample_interval: Some(SAMPLE_INTERVAL),
        scheduler,
        cancel: opts.cancel.clone(),
        ..RunOptions::default()
    };
    let mut timeline = Timeline::default();
    let mut on_sample = |p: &Progress| {
        timeline.sample(p);
        Control::Continue
    };
    let (report, status, reason) = match weir_workload::run(&plan, &options, &mut on_sample) {
        Ok(r) => (r, "done", None),
        Err(RunError::Failed {
            message, partial, ..
        }) => (*partial, "partial", Some(message)),
        Err(e) => return fail(e.to_string()),
    };
    let report_json: Value = serde_json::from_str(&report.to_json()).unwrap_or(Value::Null);
    json!({
        "name": spec.name,
        "status": status,
        "reason": reason,
        "scheduler": match spec.scheduled {
            None => "none",
            Some(false) => "classes measured, nothing held back",
            Some(true) => "weir",
        },
        "read_latency_cdf_ms": job_cdf(&report, "reads"),
        "write_bandwidth_timeline": timeline.job("writes"),
        "report": report_json,
    })
}
