//! `weir tune`: flags and glue. The measuring lives in `weir-tune` (see its crate docs); this
//! file parses the flags, runs the preflight and the tune for each directory, writes
//! io-properties.yaml and prints the chosen format.

use crate::error::{CliError, CliResult, OutputFile, RuntimeError, UsageError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use weir_engine::backend::Backend;
use weir_model::units::parse_duration;
use weir_tune::crosscheck::CrossCheckConfig;
use weir_tune::output::{disk_properties, human_summary, io_properties_yaml, option_line};
use weir_tune::plan::SustainedConfig;
use weir_tune::real::{cross_check_dir, preflight, tune_dir, DirRun, Preflight};
use weir_tune::{TuneConfig, TuneReport};

#[derive(clap::Args)]
pub struct TuneArgs {
    /// Directory on the disk to measure (repeatable: one entry per mount point).
    #[arg(long = "dir", value_name = "DIR", default_value = ".")]
    dirs: Vec<PathBuf>,
    /// Time for the whole run, preflight and cleanup included (e.g. 30s, 2m).
    #[arg(long, default_value = "30s")]
    duration: String,
    /// Where to write io-properties.yaml.
    #[arg(long, value_name = "FILE", default_value = "io-properties.yaml")]
    properties_file: PathBuf,
    /// Keep each final measurement going until it has been steady for --sustained-window, and
    /// report sustained figures (in the YAML) beside the peak ones.
    #[arg(long)]
    sustained: bool,
    /// The steady window of --sustained (e.g. 30s, 10m).
    #[arg(long, default_value = "30s")]
    sustained_window: String,
    /// What to print: a human summary, iotune's option line (`seastar` or `envfile`), or JSON.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Shards loading the disk at once (default: one per CPU).
    #[arg(long)]
    shards: Option<u32>,
    /// I/O backend: uring or aio.
    #[arg(long, default_value = "uring")]
    backend: String,
    /// Also draw the depth, saturation and sector sweeps into this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Replace output files that exist but were not written by weir (by default weir refuses
    /// to overwrite them).
    #[arg(long)]
    force: bool,
    /// After the tune, measure each figure again with weir's engine and with fio, alternately
    /// (3 pairs each, at the figure's request size, depth and file regime), and report the
    /// ratios. Needs fio; its time is not part of --duration.
    #[arg(long)]
    cross_check: bool,
    /// Counted time of each cross-check run (a ramp of a quarter of it, at most 0.5 s, runs
    /// first); the data it writes per shard scales with it (64 MiB .. 1 GiB).
    #[arg(long, default_value = "2s", value_name = "DURATION")]
    cross_check_run: String,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Human,
    Seastar,
    Envfile,
    Json,
}

fn duration_flag(flag: &'static str, value: &str) -> Result<Duration, CliError> {
    parse_duration(value).map_err(|error| {
        UsageError::Unit {
            flag,
            value: Some(value.to_string()),
            error,
        }
        .into()
    })
}

pub fn run(args: TuneArgs) -> CliResult {
    let start = Instant::now();
    let duration = duration_flag("--duration", &args.duration)?;
    if duration < Duration::from_secs(5) {
        return Err(UsageError::OutOfRange {
            flag: "--duration",
            value: args.duration.clone(),
            accepted: "at least 5s is needed to measure four figures; the default is 30s",
        }
        .into());
    }
    let backend: Backend = args.backend.parse().map_err(UsageError::Backend)?;
    // As in `weir run`: 0 used to be taken as 1 silently, and the tune ran.
    if args.shards == Some(0) {
        return Err(UsageError::Zero {
            flags: "--shards",
            rule: "must be at least 1 (omit it for one per core)",
        }
        .into());
    }
    let shards = args
        .shards
        .unwrap_or(weir_engine::shards::available_cores() as u32)
        .max(1);
    let mut cfg = TuneConfig::new(0);
    if args.sustained {
        cfg.sustained = Some(SustainedConfig {
            window_ns: duration_flag("--sustained-window", &args.sustained_window)?.as_nanos()
                as u64,
            ..SustainedConfig::default()
        });
    }
    super::guard::check_output("--properties-file", &args.properties_file, args.force)?;
    if let Some(path) = &args.plot {
        super::guard::check_output("--plot", path, args.force)?;
    }
    let cross_check = if args.cross_check {
        let run = duration_flag("--cross-check-run", &args.cross_check_run)?;
        let cfg = CrossCheckConfig::new(run.as_nanos() as u64);
        // Before measuring: a missing fio must not cost the user a whole tune first.
        weir_tune::crosscheck::fio_version(&cfg.fio)?;
        Some(cfg)
    } else {
        None
    };
    check_writable(&args.properties_file)?;
    for dir in &args.dirs {
        super::guard::sweep_leftovers(dir);
    }
    let quiet = args.format != Format::Human;
    // Ctrl-C cancels the measurement; the test files are removed either way.
    let cancel = crate::interrupt::install().map_err(|errno| RuntimeError::InterruptHandler {
        signal: "Ctrl-C",
        errno,
    })?;
    // WEIR_TUNE_TRACE=1 writes every load's samples to stderr (see weir_tune::trace).
    let trace = std::env::var_os("WEIR_TUNE_TRACE").is_some_and(|v| !v.is_empty() && v != "0");
    let pres = preflights(&args.dirs, shards, quiet)?;
    let deadline = start + duration;
    let mut results: Vec<(Preflight, TuneReport)> = Vec::new();
    let count = pres.len() as u32;
    for (i, pre) in pres.into_iter().enumerate() {
        // Each directory gets an equal share of the time that is left.
        let left = deadline.saturating_duration_since(Instant::now());
        let dir_deadline = Instant::now() + left / (count - i as u32);
        note(
            quiet,
            &format!(
                "measuring {} (up to {:.0} s)...",
                pre.dir.display(),
                left.as_secs_f64() / f64::from(count - i as u32)
            ),
        );
        let mut stderr = std::io::stderr();
        let run = DirRun {
            backend,
            deadline: dir_deadline,
            cancel: &cancel,
            trace: trace.then_some(&mut stderr as &mut dyn std::io::Write),
        };
        let report = tune_dir(&pre, &cfg, run, &mut |line: &str| {
            note(quiet, &format!("  {line}"))
        })?;
        results.push((pre, report));
    }
    let tune_elapsed = start.elapsed();
    if let Some(cfg) = &cross_check {
        for (pre, report) in &mut results {
            note(
                quiet,
                &format!("cross-checking {} against fio...", pre.dir.display()),
            );
            let check = cross_check_dir(pre, report, cfg, backend, &cancel, &mut |line: &str| {
                note(quiet, &format!("  {line}"))
            })?;
            report.cross_check = Some(check);
        }
    }
    let disks = results
        .iter()
        .map(|(pre, r)| disk_properties(&pre.mountpoint, r))
        .collect();
    let yaml = io_properties_yaml(disks);
    std::fs::write(&args.properties_file, &yaml).map_err(|error| RuntimeError::Write {
        file: OutputFile::PropertiesFile,
        path: args.properties_file.clone(),
        error,
    })?;
    weir_guard::output::mark(&args.properties_file);
    let elapsed = start.elapsed();
    if let Some(path) = &args.plot {
        write_plot(path, &results)?;
    }
    print_result(&args, &results, &yaml, elapsed, tune_elapsed)
}

/// Fails on an unwritable --properties-file now rather than after the measuring, without
/// touching a file that is already there (opened to append, and removed if it was new).
fn check_writable(path: &Path) -> Result<(), UsageError> {
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|error| UsageError::OutFlag {
            flag: "--properties-file",
            path: path.to_path_buf(),
            error,
        })?;
    if !existed {
        // Best effort: the file is written again at the end, so one left behind is harmless.
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// The sweeps of every measured directory, drawn by weir-report's tune charts.
fn write_plot(path: &std::path::Path, results: &[(Preflight, TuneReport)]) -> CliResult {
    let mut charts = Vec::new();
    for (pre, report) in results {
        let json = serde_json::json!({ "preflight": pre, "report": report });
        charts.extend(weir_report::figures::tune::charts(&json));
    }
    super::write_plot(path, &charts)
}

/// Preflight of every directory; directories on the same mount point are measured once.
fn preflights(dirs: &[PathBuf], shards: u32, quiet: bool) -> Result<Vec<Preflight>, CliError> {
    let mut out: Vec<Preflight> = Vec::new();
    for dir in dirs {
        let pre = preflight(dir, shards)?;
        if out.iter().any(|p| p.mountpoint == pre.mountpoint) {
            note(
                quiet,
                &format!(
                    "{}: same mount point as an earlier --dir; measured once",
                    dir.display()
                ),
            );
            continue;
        }
        note(quiet, &format!("preflight: {}", pre.describe()));
        for f in &pre.doctor {
            let fix = f
                .fix
                .as_deref()
                .map(|x| format!("\n  fix: {x}"))
                .unwrap_or_default();
            note(
                quiet,
                &format!("doctor: {} {}: {}{fix}", f.status.as_str(), f.id, f.summary),
            );
        }
        for w in &pre.warnings {
            note(
                quiet,
                &format!("warning: {}\n  why: {}\n  fix: {}", w.what, w.why, w.fix),
            );
        }
        out.push(pre);
    }
    Ok(out)
}

/// Progress goes to stdout for the human format and to stderr otherwise, so stdout stays
/// machine-readable.
fn note(quiet: bool, line: &str) {
    if quiet {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
}

fn print_result(
    args: &TuneArgs,
    results: &[(Preflight, TuneReport)],
    yaml: &str,
    elapsed: Duration,
    tune_elapsed: Duration,
) -> CliResult {
    let path = args.properties_file.display().to_string();
    let abs = std::fs::canonicalize(&args.properties_file)
        .map(|p| p.display().to_string())
        .unwrap_or(path.clone());
    match args.format {
        Format::Human => {
            for (pre, r) in results {
                println!("{}:", pre.mountpoint);
                print!("{}", human_summary(r));
            }
            println!(
                "wrote {path} in {:.1} s total ({:.1} s tuning):\n{yaml}",
                elapsed.as_secs_f64(),
                tune_elapsed.as_secs_f64()
            );
        }
        Format::Seastar | Format::Envfile => {
            eprintln!("wrote {path} in {:.1} s", elapsed.as_secs_f64());
            print!("{}", option_line(args.format == Format::Envfile, &abs));
        }
        Format::Json => {
            let dirs: Vec<_> = results
                .iter()
                .map(|(pre, r)| serde_json::json!({ "preflight": pre, "report": r }))
                .collect();
            let doc = serde_json::json!({
                "properties_file": abs,
                "io_properties_yaml": yaml,
                "elapsed_s": elapsed.as_secs_f64(),
                "tune_elapsed_s": tune_elapsed.as_secs_f64(),
                "dirs": dirs,
            });
            let text =
                serde_json::to_string_pretty(&doc).map_err(|error| RuntimeError::Encode {
                    what: "the JSON report",
                    error,
                })?;
            println!("{text}");
        }
    }
    Ok(())
}
