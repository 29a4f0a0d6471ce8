//! `weir run`: flags and glue. Jobs, the driver and the report live in `weir-workload`; this
//! file reads the job file, maps flags to [`RunOptions`], shows progress on a terminal, prints
//! the chosen format and maps outcomes to exit codes (docs/run.md).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use weir_engine::Backend;
use weir_model::io_properties::IoProperties;
use weir_model::units::parse_duration;
use weir_sched::SchedConfig;
use weir_workload::parse::parse_plan;
use weir_workload::{Control, Progress, Report, RunError, RunOptions, SchedulerOptions};

use crate::error::{CliError, CliResult};

#[derive(clap::Args)]
pub struct RunArgs {
    /// io_tester job file (YAML list of jobs; see docs/run.md).
    #[arg(value_name = "JOBFILE")]
    job_file: PathBuf,
    /// Directory for the test files (`test-<job>-<shard>`); created files are removed at the end.
    #[arg(long, value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Run on a raw block device instead of files: each job and shard gets its own region
    /// (data_size / shards), laid end to end; the device's data is overwritten. Refused while
    /// the device is mounted or held (O_EXCL).
    #[arg(long, value_name = "BLOCKDEV", conflicts_with = "dir")]
    device: Option<PathBuf>,
    /// How long to measure, e.g. 500ms, 10s, 2m.
    #[arg(long, default_value = "10s")]
    duration: String,
    /// What to print on stdout: a table, JSON, or io_tester's YAML layout.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
    /// Shards (threads, one per core); default: one per available core.
    #[arg(long)]
    shards: Option<usize>,
    /// I/O backend: uring (io_uring) or aio (Linux AIO).
    #[arg(long, default_value = "uring")]
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
    /// The scheduler's in-disk latency goal.
    #[arg(long, default_value = "0.75ms")]
    latency_goal: String,
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
}

#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq)]
enum Output {
    Text,
    Json,
    Yaml,
}

pub fn run(args: RunArgs) -> CliResult {
    let text = std::fs::read_to_string(&args.job_file).map_err(|e| {
        CliError::usage(format!(
            "cannot read the job file {}: {e}; pass the path of an io_tester YAML job file \
             (see examples/ and docs/run.md)",
            args.job_file.display()
        ))
    })?;
    let plan = parse_plan(&text)
        .map_err(|e| CliError::usage(format!("{}:{e}", args.job_file.display())))?;
    let duration =
        parse_duration(&args.duration).map_err(|e| CliError::usage(format!("--duration: {e}")))?;
    if duration.is_zero() {
        return Err(CliError::usage(
            "--duration must be longer than zero, e.g. 10s",
        ));
    }
    let backend: Backend = args
        .backend
        .parse()
        .map_err(|e: String| CliError::usage(format!("--backend: {e}")))?;
    if args.shards == Some(0) {
        return Err(CliError::usage(
            "--shards must be at least 1 (omit it for one per core)",
        ));
    }
    let interactive = std::io::stderr().is_terminal();
    // io_tester's `--storage /dev/null`: no files, every request completes at once.
    let null_storage = [args.device.as_deref(), Some(args.dir.as_path())]
        .contains(&Some(std::path::Path::new("/dev/null")));
    if null_storage && args.verify {
        return Err(CliError::usage(
            "--verify cannot check /dev/null, which stores nothing: drop --verify or use --dir",
        ));
    }
    let options = RunOptions {
        dir: (args.device.is_none() && !null_storage).then(|| args.dir.clone()),
        device: args.device.clone().filter(|_| !null_storage),
        duration,
        shards: args.shards.unwrap_or(0),
        backend,
        buffered: args.buffered,
        keep_files: args.keep_files,
        verify: args.verify,
        nowait: !args.no_nowait,
        sample_interval: interactive.then_some(Duration::from_secs(1)),
        seed: args.seed,
        scheduler: scheduler_options(&args)?,
    };
    // Without the handler Ctrl-C would kill the process and leave the test files behind.
    if let Err(errno) = weir_engine::interrupt::install() {
        return Err(CliError::runtime(format!(
            "cannot install the SIGINT handler: {}",
            weir_engine::describe_errno(errno)
        )));
    }
    if interactive {
        eprintln!(
            "weir run: preparing {} ({} job(s))...",
            args.device.as_ref().map_or_else(
                || format!("files in {}", args.dir.display()),
                |d| format!("regions of {}", d.display())
            ),
            plan.jobs.len()
        );
    }
    let mut on_sample = |p: &Progress| {
        show_progress(p, duration);
        Control::Continue
    };
    let outcome = if null_storage {
        weir_workload::run_with(
            &plan,
            &options,
            &weir_workload::null_device::NullFactory,
            &mut on_sample,
        )
    } else {
        weir_workload::run(&plan, &options, &mut on_sample)
    };
    if interactive {
        // Clear the progress line.
        eprint!("\r\x1b[K");
    }
    match outcome {
        Ok(report) => {
            print_report(&report, args.output);
            write_metrics(&report, &args, options.scheduler.as_ref())?;
            corruption_result(&report)
        }
        Err(RunError::Usage(m)) => Err(CliError::usage(m)),
        Err(RunError::Setup(m)) => Err(CliError::runtime(m)),
        Err(RunError::Failed {
            message, partial, ..
        }) => {
            print_report(&partial, args.output);
            Err(CliError::runtime(format!(
                "{message}\nThe results above cover the time until the stop; the test files \
                 were {}.",
                if args.keep_files { "kept" } else { "removed" }
            )))
        }
        Err(other) => Err(CliError::runtime(other.to_string())),
    }
}

/// The scheduler settings from --io-properties, --latency-goal and --no-scheduler.
fn scheduler_options(args: &RunArgs) -> Result<Option<SchedulerOptions>, CliError> {
    let Some(path) = &args.io_properties else {
        if args.metrics.is_some() {
            return Err(CliError::usage(
                "--metrics needs --io-properties: the metrics are the scheduler's",
            ));
        }
        return Ok(None);
    };
    let properties = IoProperties::load(path).map_err(|e| CliError::usage(e.to_string()))?;
    let target = args.device.as_ref().unwrap_or(&args.dir);
    let disk = properties.disk_for_path(target).ok_or_else(|| {
        CliError::usage(format!(
            "{} describes no disk holding {}: add an entry whose mountpoint is on that disk, \
             or pass the io-properties file measured for it (weir tune --dir {})",
            path.display(),
            target.display(),
            args.dir.display()
        ))
    })?;
    let model = disk
        .cost_model()
        .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
    let latency_goal = parse_duration(&args.latency_goal)
        .map_err(|e| CliError::usage(format!("--latency-goal: {e}")))?;
    if latency_goal.is_zero() {
        return Err(CliError::usage(
            "--latency-goal must be above zero, e.g. 0.75ms",
        ));
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
            ..SchedConfig::default()
        },
        mountpoint,
        merge_adjacent: !args.no_merge,
    }))
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
    std::fs::write(path, text).map_err(|e| {
        CliError::runtime(format!(
            "cannot write the metrics to {}: {e}; pass a writable --metrics path",
            path.display()
        ))
    })
}

fn print_report(report: &Report, output: Output) {
    // Options the filesystem could not apply: on stderr, so JSON and YAML stay parseable.
    for warning in &report.warnings {
        eprintln!("weir run: {warning}");
    }
    let text = match output {
        Output::Text => report.to_text(),
        Output::Json => report.to_json() + "\n",
        Output::Yaml => report.to_io_tester_yaml(),
    };
    let mut stdout = std::io::stdout().lock();
    // A closed stdout (e.g. piped into `head`) is not worth a panic.
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

fn corruption_result(report: &Report) -> CliResult {
    match &report.verify {
        Some(v) if v.corruptions > 0 => {
            let first = v
                .first
                .first()
                .map(|c| {
                    format!(
                        "; first at offset {} of {}: expected {}, found {}",
                        c.offset_bytes, c.file, c.expected, c.found
                    )
                })
                .unwrap_or_default();
            Err(CliError::runtime(format!(
                "data corruption: {} of {} blocks checked did not hold what weir wrote{first}. \
                 Check the device (dmesg, SMART) and the filesystem (xfs_repair -n / fsck -n).",
                v.corruptions, v.blocks_checked
            )))
        }
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
