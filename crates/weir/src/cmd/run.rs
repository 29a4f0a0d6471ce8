//! `weir run`: flags and glue. Jobs, the driver and the report live in `weir-workload`; this
//! file reads the job file, maps flags to [`RunOptions`], shows progress on a terminal, prints
//! the chosen format and maps outcomes to exit codes (docs/reference/job-files.md).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use weir_engine::{Backend, BackendChoice, Chosen};
use weir_model::io_properties::IoProperties;
use weir_model::units::parse_duration;
use weir_sched::SchedConfig;
use weir_workload::parse::parse_plan;
use weir_workload::{Control, Progress, Report, RunError, RunOptions, SchedulerOptions};

use crate::error::{
    CliError, CliResult, InputError, InputFile, OutputFile, Problem, RuntimeError, UsageError,
};

#[derive(clap::Args)]
pub struct RunArgs {
    /// io_tester job file (YAML list of jobs; see docs/reference/job-files.md).
    #[arg(value_name = "JOBFILE")]
    job_file: PathBuf,
    /// Directory for the test files (`weir-<job>-<shard>.data`, created exclusively and marked as
    /// weir's; a file of yours by that name is refused, never overwritten); removed at the end.
    #[arg(long, value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Run on a raw block device instead of files: each job and shard gets its own region
    /// (data_size / shards), laid end to end; the device's data is overwritten. Refused while
    /// the device is mounted or held (O_EXCL), and for jobs that write while it holds a
    /// filesystem, partition table, RAID/LVM/ZFS member, LUKS or swap (see --destroy-data).
    #[arg(long, value_name = "BLOCKDEV", conflicts_with = "dir")]
    device: Option<PathBuf>,
    /// Write to the --device even though it holds a filesystem, partition table or other data
    /// weir recognises: that data is destroyed. Read-only jobs never need it.
    #[arg(long, requires = "device")]
    destroy_data: bool,
    /// How long to measure, e.g. 500ms, 10s, 2m.
    #[arg(long, default_value = "10s")]
    duration: String,
    /// What to print on stdout: a table, JSON, or io_tester's YAML layout.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
    /// Shards (threads, one per core); default: one per available core.
    #[arg(long)]
    shards: Option<usize>,
    /// I/O backend: auto (probe the target: aio where it refuses RWF_NOWAIT reads, e.g.
    /// zram, io_uring otherwise), uring (io_uring) or aio (Linux AIO).
    #[arg(long, default_value = "auto")]
    backend: String,
    /// Run through the page cache instead of O_DIRECT (needed on tmpfs).
    #[arg(long)]
    buffered: bool,
    /// Keep the test files after the run (a later run reuses a full `overwrite` file).
    #[arg(long)]
    keep_files: bool,
    /// Stamp every written block with (offset, sequence, checksum), check every read and every
    /// file at the end; corruption is reported with its offset and exit code 1.
    #[arg(long)]
    verify: bool,
    /// Do not send requests with RWF_NOWAIT (by default weir does, and retries and counts
    /// each EAGAIN).
    #[arg(long)]
    no_nowait: bool,
    /// Seed for random offsets and Poisson arrivals.
    #[arg(long, default_value_t = 0x5745_4952)]
    seed: u64,
    /// Disk model (Seastar io-properties.yaml): requests then go through weir's scheduler,
    /// one class per job `class` (default: the job's name) with the job's `shares`.
    #[arg(long, value_name = "FILE")]
    io_properties: Option<PathBuf>,
    /// The scheduler's in-disk latency goal [default: the io-properties file's
    /// `weir_latency_goal_us` (written by `weir explore`), else 0.75ms].
    #[arg(long)]
    latency_goal: Option<String>,
    /// With --io-properties: measure classes (queue vs disk time, consumption) without
    /// holding anything back, for comparison with the scheduler on.
    #[arg(long)]
    no_scheduler: bool,
    /// With --io-properties: submit every piece the scheduler releases on its own instead of
    /// merging pieces that continue each other in a file into one request.
    #[arg(long)]
    no_merge: bool,
    /// Write the scheduler's metrics in Prometheus text format to FILE (needs --io-properties).
    #[arg(long, value_name = "FILE")]
    metrics: Option<PathBuf>,
    /// io_tester's scheduling-group file (YAML list of name, shares, parent): jobs join a
    /// group with `class`; a group named as a `parent` is a supergroup whose share its
    /// children divide. Shares apply with --io-properties (docs/reference/job-files.md).
    #[arg(long, value_name = "FILE")]
    sched_groups: Option<PathBuf>,
    /// Run on a simulated disk described by DISK.yaml (rates, channels, RAID0 members and
    /// chunk size, true and reported sector) instead of files: every shard shares the one
    /// disk on a virtual clock, and the report adds each RAID0 member's load (docs/reference/job-files.md).
    #[arg(long, value_name = "DISK.yaml", conflicts_with_all = ["device", "dir", "verify", "buffered", "keep_files"])]
    simulate: Option<PathBuf>,
    /// Also draw each job's latency CDF and bandwidth over time into this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Replace output files that exist but were not written by weir (by default weir refuses
    /// to overwrite them).
    #[arg(long)]
    force: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq)]
enum Output {
    Text,
    Json,
    Yaml,
}

pub fn run(args: RunArgs) -> CliResult {
    let text = std::fs::read_to_string(&args.job_file).map_err(|error| InputError::Read {
        file: InputFile::JobFile,
        path: args.job_file.clone(),
        error,
    })?;
    let plan = parse_plan(&text).map_err(|error| InputError::JobFile {
        path: args.job_file.clone(),
        error,
    })?;
    let duration = parse_duration(&args.duration).map_err(|error| UsageError::Unit {
        flag: "--duration",
        value: None,
        error,
    })?;
    if duration.is_zero() {
        return Err(UsageError::Zero {
            flags: "--duration",
            rule: "must be longer than zero, e.g. 10s",
        }
        .into());
    }
    let choice: BackendChoice = args.backend.parse().map_err(UsageError::Backend)?;
    if let Some(path) = &args.metrics {
        super::guard::check_output("--metrics", path, args.force)?;
    }
    if let Some(path) = &args.plot {
        super::guard::check_output("--plot", path, args.force)?;
    }
    if args.shards == Some(0) {
        return Err(UsageError::Zero {
            flags: "--shards",
            rule: "must be at least 1 (omit it for one per core)",
        }
        .into());
    }
    let groups = args
        .sched_groups
        .as_deref()
        .map(|path| super::run_groups::load(path, &plan, args.io_properties.is_some()))
        .transpose()?;
    let mut scheduler = scheduler_options(&args)?;
    if let Some(s) = scheduler.as_mut() {
        s.groups = groups;
    }
    let interactive = std::io::stderr().is_terminal();
    let shard_count = args.shards.unwrap_or_else(weir_engine::available_cores);
    let sim = args
        .simulate
        .as_deref()
        .map(|path| super::run_sim::load(path, shard_count))
        .transpose()?;
    // io_tester's `--storage /dev/null`: no files, every request completes at once.
    let null_storage = [args.device.as_deref(), Some(args.dir.as_path())]
        .contains(&Some(std::path::Path::new("/dev/null")));
    if null_storage && args.verify {
        return Err(UsageError::VerifyNullStorage.into());
    }
    // Storage that does no real I/O (the simulated disk, /dev/null) has nothing to probe.
    let chosen = (sim.is_none() && !null_storage).then(|| match &args.device {
        Some(device) => weir_engine::resolve_backend(choice, device, false),
        None => weir_engine::resolve_backend(choice, &args.dir, true),
    });
    let backend = match (&chosen, choice) {
        (Some(c), _) => c.backend,
        (None, BackendChoice::Fixed(b)) => b,
        (None, BackendChoice::Auto) => Backend::default(),
    };
    let options = RunOptions {
        // The simulated disk has no files: each job and shard gets a region of its space.
        dir: (args.device.is_none() && sim.is_none() && !null_storage).then(|| args.dir.clone()),
        device: args.device.clone().filter(|_| !null_storage),
        duration,
        shards: shard_count,
        backend,
        buffered: args.buffered,
        keep_files: args.keep_files,
        keep_files_until_exit: false,
        verify: args.verify,
        nowait: !args.no_nowait,
        // --plot draws bandwidth per window, so it samples finer than the progress line needs.
        sample_interval: if args.plot.is_some() {
            Some(Duration::from_millis(250))
        } else {
            interactive.then_some(Duration::from_secs(1))
        },
        seed: args.seed,
        scheduler,
        destroy_data: args.destroy_data,
        cancel: crate::interrupt::token(),
    };
    // Without the handler Ctrl-C would kill the process and leave the test files behind.
    crate::interrupt::install().map_err(|errno| RuntimeError::InterruptHandler {
        signal: "SIGINT",
        errno,
    })?;
    if let Some(dir) = &options.dir {
        super::guard::sweep_leftovers(dir);
    }
    if interactive {
        let target = match (&args.device, &args.simulate) {
            (Some(d), _) => format!("regions of {}", d.display()),
            (None, Some(s)) => format!("the simulated disk of {}", s.display()),
            (None, None) => format!("files in {}", args.dir.display()),
        };
        eprintln!(
            "weir run: preparing {target} ({} job(s))...",
            plan.jobs.len()
        );
    }
    let mut timeline = weir_report::samples::Timeline::default();
    let mut on_sample = |p: &Progress| {
        timeline.sample(p);
        if interactive {
            show_progress(p, duration);
        }
        Control::Continue
    };
    let outcome = match &sim {
        Some(factory) => weir_workload::run_with(&plan, &options, factory, &mut on_sample),
        None if null_storage => weir_workload::run_with(
            &plan,
            &options,
            &weir_workload::null_device::NullFactory,
            &mut on_sample,
        ),
        None => weir_workload::run(&plan, &options, &mut on_sample),
    };
    let sim = sim.map(|factory| factory.summary());
    if interactive {
        // Clear the progress line.
        eprint!("\r\x1b[K");
    }
    match outcome {
        Ok(report) => {
            print_report(&report, args.output, sim.as_ref(), chosen.as_ref());
            write_plot(&report, &timeline, args.plot.as_deref())?;
            write_metrics(&report, &args, options.scheduler.as_ref())?;
            corruption_result(&report)
        }
        Err(RunError::Usage(e)) => Err(UsageError::Workload(e).into()),
        Err(RunError::Setup(e)) => Err(RuntimeError::Setup(e).into()),
        Err(RunError::Failed {
            message,
            interrupted,
            failure,
            partial,
        }) => {
            print_report(&partial, args.output, sim.as_ref(), chosen.as_ref());
            Err(RuntimeError::RunStopped {
                message,
                interrupted,
                failure,
                files_kept: args.keep_files,
            }
            .into())
        }
        Err(other) => Err(RuntimeError::Workload(other).into()),
    }
}

/// The scheduler settings from --io-properties, --latency-goal and --no-scheduler.
fn scheduler_options(args: &RunArgs) -> Result<Option<SchedulerOptions>, CliError> {
    let Some(path) = &args.io_properties else {
        if args.metrics.is_some() {
            return Err(UsageError::MetricsWithoutModel.into());
        }
        // Without a model there is no scheduler, so a goal would be silently ignored.
        if args.latency_goal.is_some() {
            return Err(UsageError::GoalWithoutModel.into());
        }
        return Ok(None);
    };
    // Read here rather than by IoProperties::load, so an unreadable file gets its fix.
    let text = std::fs::read_to_string(path).map_err(|error| InputError::Read {
        file: InputFile::IoProperties,
        path: path.clone(),
        error,
    })?;
    let properties = IoProperties::parse(&text, &path.display().to_string())
        .map_err(InputError::IoProperties)?;
    // Seastar refuses two entries on one device, and with several entries each mount point
    // must resolve for the right one to be picked (a single entry applies wherever it is).
    if properties.disks.len() > 1 {
        properties
            .check_devices(&path.display().to_string())
            .map_err(InputError::IoProperties)?;
    }
    let target = args.device.as_ref().unwrap_or(&args.dir);
    // The simulated disk is on no mount point: it takes the file's first disk.
    let simulated = args
        .simulate
        .as_ref()
        .and_then(|_| properties.disks.first());
    let disk = simulated
        .or_else(|| properties.disk_for_path(target))
        .ok_or_else(|| InputError::NoDiskFor {
            file: path.clone(),
            target: target.clone(),
            dir: args.dir.clone(),
        })?;
    let model = disk.cost_model().map_err(|error| InputError::CostModel {
        path: path.clone(),
        error,
    })?;
    // A goal given on the command line wins; else the one `weir explore` derived from the map
    // (the in-disk window that keeps reads within the map's arrival-to-completion goal).
    let latency_goal = match (&args.latency_goal, disk.latency_goal_us) {
        (Some(text), _) => parse_duration(text).map_err(|error| UsageError::Unit {
            flag: "--latency-goal",
            value: None,
            error,
        })?,
        (None, Some(us)) => Duration::from_micros(us),
        (None, None) => weir_sched::DEFAULT_LATENCY_GOAL,
    };
    if latency_goal.is_zero() {
        return Err(UsageError::Zero {
            flags: "--latency-goal",
            rule: "must be above zero, e.g. 0.75ms",
        }
        .into());
    }
    let mountpoint = disk
        .mountpoints
        .first()
        .cloned()
        .unwrap_or_else(|| target.display().to_string());
    Ok(Some(SchedulerOptions {
        model,
        config: SchedConfig {
            latency_goal,
            unlimited: args.no_scheduler,
            knee_in_disk: knee_switch(std::env::var_os(KNEE_VAR).as_deref())?,
            ..SchedConfig::default()
        },
        mountpoint,
        merge_adjacent: !args.no_merge,
        groups: None,
    }))
}

/// The environment switch for K's disk-queue knee (`SchedConfig::knee_in_disk`, opt-in:
/// docs/design/scheduler.md, "K's disk-queue knee").
const KNEE_VAR: &str = "WEIR_SCHED_KNEE";

/// `WEIR_SCHED_KNEE`'s value: unset, `0` or `off` is off; `1` or `on` is on; anything else
/// (including a value that is not UTF-8) is a usage error naming the variable.
fn knee_switch(value: Option<&std::ffi::OsStr>) -> Result<bool, UsageError> {
    let Some(value) = value else {
        return Ok(false);
    };
    match value.to_str() {
        Some("0" | "off") => Ok(false),
        Some("1" | "on") => Ok(true),
        _ => Err(UsageError::EnvSwitch {
            var: KNEE_VAR,
            value: value.to_string_lossy().into_owned(),
        }),
    }
}

fn write_metrics(
    report: &Report,
    args: &RunArgs,
    scheduler: Option<&SchedulerOptions>,
) -> CliResult {
    let (Some(path), Some(scheduler)) = (&args.metrics, scheduler) else {
        return Ok(());
    };
    let text = weir_sched::render_prometheus(&scheduler.mountpoint, &report.scheduler_metrics);
    std::fs::write(path, text).map_err(|error| RuntimeError::Write {
        file: OutputFile::Metrics,
        path: path.clone(),
        error,
    })?;
    weir_guard::output::mark(path);
    Ok(())
}

fn write_plot(
    report: &Report,
    timeline: &weir_report::samples::Timeline,
    path: Option<&std::path::Path>,
) -> CliResult {
    let Some(path) = path else {
        return Ok(());
    };
    let json = weir_report::samples::run_plot_json(report, timeline);
    let charts = weir_report::figures::run::charts(&json);
    super::write_plot(path, &charts)
}

fn print_report(
    report: &Report,
    output: Output,
    sim: Option<&super::run_sim::SimSummary>,
    chosen: Option<&Chosen>,
) {
    // Options the filesystem could not apply: on stderr, so JSON and YAML stay parseable.
    for warning in &report.warnings {
        eprintln!("weir run: {warning}");
    }
    let text = with_backend_choice(
        output,
        chosen,
        match (output, sim) {
            (Output::Text, None) => report.to_text(),
            (Output::Json, None) => report.to_json() + "\n",
            (Output::Yaml, None) => report.to_io_tester_yaml(),
            (Output::Text, Some(s)) => report.to_text() + &s.to_text(),
            (Output::Yaml, Some(s)) => report.to_io_tester_yaml() + &s.to_yaml_comments(),
            (Output::Json, Some(s)) => {
                match serde_json::from_str::<serde_json::Value>(&report.to_json()) {
                    Ok(mut v) => {
                        v["simulated_disk"] = s.to_json();
                        v.to_string() + "\n"
                    }
                    Err(_) => report.to_json() + "\n",
                }
            }
        },
    );
    let mut stdout = std::io::stdout().lock();
    // A closed stdout (e.g. piped into `head`) is not worth a panic.
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// Why this backend: a line under the text header, `backend_reason` in JSON (YAML keeps
/// io_tester's layout).
fn with_backend_choice(output: Output, chosen: Option<&Chosen>, text: String) -> String {
    let Some(chosen) = chosen else { return text };
    match output {
        Output::Text => match text.split_once('\n') {
            Some((header, rest)) => format!("{header}\nbackend: {}\n{rest}", chosen.reason),
            None => text,
        },
        Output::Json => match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(mut v) => {
                v["backend_reason"] = chosen.reason.clone().into();
                serde_json::to_string_pretty(&v).map_or(text, |j| j + "\n")
            }
            Err(_) => text,
        },
        Output::Yaml => text,
    }
}

fn corruption_result(report: &Report) -> CliResult {
    match &report.verify {
        Some(v) if v.corruptions > 0 => Err(Problem::Corruption {
            corruptions: v.corruptions,
            blocks_checked: v.blocks_checked,
            first: v.first.first().cloned().map(Box::new),
        }
        .into()),
        _ => Ok(()),
    }
}

fn show_progress(p: &Progress, duration: Duration) {
    let secs = p.elapsed.as_secs_f64();
    let mut line = format!("\r\x1b[K[{secs:5.1}/{:.0} s]", duration.as_secs_f64());
    for job in &p.jobs {
        let iops = job.ops as f64 / secs.max(1e-9);
        line.push_str(&format!(
            "  {}: {:.0} IOPS p99 {:.0} us",
            job.name, iops, job.recent_latency_us.p99
        ));
    }
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(line.as_bytes());
    let _ = stderr.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn the_knee_switch_takes_0_1_on_off_and_names_itself_otherwise() {
        assert!(!knee_switch(None).unwrap());
        for (text, on) in [("0", false), ("off", false), ("1", true), ("on", true)] {
            assert_eq!(knee_switch(Some(OsStr::new(text))).unwrap(), on, "{text}");
        }
        for bad in ["", "2", "yes", "ON", " 1", "true"] {
            let error = knee_switch(Some(OsStr::new(bad))).unwrap_err();
            let error = CliError::from(error);
            assert_eq!(error.exit_code(), 2, "{bad:?}");
            let message = error.to_string();
            assert!(message.starts_with("WEIR_SCHED_KNEE="), "{message}");
            assert!(message.contains("0, 1, on and off"), "{message}");
        }
        let error = knee_switch(Some(OsStr::new("yes"))).unwrap_err();
        assert_eq!(
            error.to_string(),
            "WEIR_SCHED_KNEE=\"yes\": accepted values are 0, 1, on and off (or leave it unset \
             for off)"
        );
    }
}
