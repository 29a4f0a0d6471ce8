//! `weir explore`: flags and glue. The map, the search, the fits and the outputs live in
//! `weir-explore` (see its crate docs); this file parses the flags, shows progress, writes
//! the output directory and removes the test files.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use weir_engine::backend::Backend;
use weir_explore::meter::{leftover_files, WorkloadMeter, WriteRegime};
use weir_explore::{output, Map, SearchProgress, SearchSettings, Slice, SteadyRule};
use weir_model::units::{parse_duration, parse_size, UnitError};
use weir_workload::run::EngineFactory;
use weir_workload::RunOptions;

use crate::error::{
    CliError, CliResult, InputError, InputFile, OutputFile, RuntimeError, UsageError,
};

/// Every file explore may write into --out (checked before measuring: none may be a file
/// weir did not write, unless --force).
const OUT_FILES: &[&str] = &[
    "explore.json",
    "explore.csv",
    "read-p99.svg",
    "read-p99.png",
    "write-p99.svg",
    "write-p99.png",
    "summary.txt",
    "io-properties.yaml",
    "grid.md",
    "grid.json",
];

/// Below this much free space the files would be too small to mean anything.
const MIN_FREE_BYTES: u64 = 256 << 20;

#[derive(clap::Args)]
pub struct ExploreArgs {
    /// Directory on the disk to map (test files are created here and removed at the end).
    #[arg(long, value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Read latency goal (p99, from arrival to completion) that outlines the map's safe area.
    #[arg(long, default_value = "1ms")]
    goal: String,
    /// Time for the whole map (a soft limit: no ray starts that would end past it).
    #[arg(long)]
    budget: Option<String>,
    /// A coarser map in about 2 minutes (default budget 2m instead of 10m).
    #[arg(long)]
    quick: bool,
    /// Where the writes land: `fresh` (new fallocated files that never wrap, as compaction
    /// output and `weir tune`) or `overwrite` (a region written before the map, as Diskplorer).
    #[arg(long, default_value = "fresh")]
    write_regime: String,
    /// Which slice to map: `read-iops-write-bw` (Diskplorer's: 4 KiB reads x 128 KiB writes)
    /// or `read-bw-write-iops` (128 KiB reads x 4 KiB writes); the axes, frontier and
    /// summary use its units.
    #[arg(long, default_value = "read-iops-write-bw")]
    slice: String,
    /// Size of the random reads (default: the slice's, 4k or 128k).
    #[arg(long)]
    read_size: Option<String>,
    /// Size of the sequential writes (default: the slice's, 128k or 4k).
    #[arg(long)]
    write_size: Option<String>,
    /// Output directory: explore.json, explore.csv, read-p99.svg, write-p99.svg,
    /// io-properties.yaml, summary.txt.
    #[arg(long, value_name = "OUTDIR", default_value = "explore-out")]
    out: PathBuf,
    /// Read Diskplorer's fio JSON result instead of measuring, and draw and fit it.
    #[arg(long, value_name = "RESULT.json")]
    import: Option<PathBuf>,
    /// Measure weir at exactly the loads of this Diskplorer result (its grid) in --dir,
    /// and print both tools' read p99 side by side (also OUTDIR/grid.md, grid.json).
    #[arg(long, value_name = "RESULT.json", conflicts_with = "import")]
    grid: Option<PathBuf>,
    /// Compare two explore.json files: the frontiers per read rate and the pure loads' spread.
    #[arg(long, num_args = 2, value_names = ["A.json", "B.json"], conflicts_with_all = ["import", "grid"])]
    compare: Option<Vec<PathBuf>>,
    /// Shards loading the disk at once (default: one per CPU).
    #[arg(long)]
    shards: Option<usize>,
    /// I/O backend: uring or aio.
    #[arg(long, default_value = "uring")]
    backend: String,
    /// Replace output files that exist but were not written by weir (by default weir refuses
    /// to overwrite them).
    #[arg(long)]
    force: bool,
}

/// A size or duration flag that does not parse, echoed with its value.
fn unit_error(flag: &'static str, value: &str, error: UnitError) -> UsageError {
    UsageError::Unit {
        flag,
        value: Some(value.to_string()),
        error,
    }
}

fn out_of_range(flag: &'static str, value: &str, accepted: &'static str) -> UsageError {
    UsageError::OutOfRange {
        flag,
        value: value.to_string(),
        accepted,
    }
}

fn size_flag(flag: &'static str, value: &str) -> Result<u32, UsageError> {
    let bytes = parse_size(value).map_err(|e| unit_error(flag, value, e))?;
    if bytes == 0 || bytes % 512 != 0 || bytes > 64 << 20 {
        return Err(out_of_range(
            flag,
            value,
            "a request size is a multiple of 512 bytes up to 64 MiB (e.g. 4k, 128k)",
        ));
    }
    Ok(bytes as u32)
}

pub fn run(args: ExploreArgs) -> CliResult {
    let goal = parse_duration(&args.goal).map_err(|e| unit_error("--goal", &args.goal, e))?;
    let goal_us = goal.as_secs_f64() * 1e6;
    if goal_us.is_nan() || goal_us < 10.0 {
        return Err(out_of_range(
            "--goal",
            &args.goal,
            "a goal of at least 10us is needed (e.g. 1ms)",
        )
        .into());
    }
    if args.compare.is_none() {
        super::guard::check_output_dir("--out", &args.out, OUT_FILES, args.force)?;
    }
    let slice = Slice::from_name(&args.slice)
        .ok_or_else(|| out_of_range("--slice", &args.slice, Slice::NAMES))?;
    let (default_read, default_write) = slice.default_sizes_bytes();
    let read_bytes = match &args.read_size {
        Some(size) => size_flag("--read-size", size)?,
        None => default_read,
    };
    let write_bytes = match &args.write_size {
        Some(size) => size_flag("--write-size", size)?,
        None => default_write,
    };
    let regime = WriteRegime::from_name(&args.write_regime).ok_or_else(|| {
        out_of_range(
            "--write-regime",
            &args.write_regime,
            "write `fresh` or `overwrite`",
        )
    })?;
    if let Some(files) = &args.compare {
        return compare(files);
    }
    let imported = match args.import.as_ref().or(args.grid.as_ref()) {
        Some(file) => {
            let text = read_input(file, InputFile::DiskplorerResult)?;
            let name = file.display().to_string();
            let mut map =
                weir_explore::import::import(&text, &name, goal_us, read_bytes, write_bytes)?;
            map.set_slice(slice);
            Some(map)
        }
        None => None,
    };
    if let (Some(map), None) = (&imported, &args.grid) {
        return finish(map, &args.out, "/");
    }
    // Before the first progress line, and before the clean-up below, which would warn once per
    // test file about a --dir that is not a directory.
    super::check_dir_flag(&args.dir, "map")?;
    super::guard::sweep_leftovers(&args.dir);
    let budget_text = args
        .budget
        .clone()
        .unwrap_or_else(|| if args.quick { "2m" } else { "10m" }.into());
    let budget =
        parse_duration(&budget_text).map_err(|e| unit_error("--budget", &budget_text, e))?;
    let backend: Backend = args.backend.parse().map_err(UsageError::Backend)?;
    crate::interrupt::install().map_err(|errno| RuntimeError::InterruptHandler {
        signal: "Ctrl-C",
        errno,
    })?;
    let shards = args
        .shards
        .unwrap_or_else(weir_engine::available_cores)
        .max(1);
    let map = measure(
        &args,
        regime,
        goal_us,
        budget,
        backend,
        shards,
        (read_bytes, write_bytes),
        imported.as_ref(),
    );
    for file in leftover_files(&args.dir, shards) {
        // Only files that carry weir's mark: a file of the operator's by that name stays.
        if let Err(e) = weir_guard::owned::remove_own(&file) {
            eprintln!("weir: warning: cannot remove {}: {e}", file.display());
        }
    }
    let Some(mut map) = map? else {
        return Ok(());
    };
    map.set_slice(slice);
    let mountpoint = std::fs::canonicalize(&args.dir)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| args.dir.display().to_string());
    finish(&map, &args.out, &mountpoint)?;
    if map.interrupted {
        return Err(RuntimeError::ExploreInterrupted {
            out: args.out.clone(),
        }
        .into());
    }
    Ok(())
}

fn read_input(path: &Path, file: InputFile) -> Result<String, InputError> {
    std::fs::read_to_string(path).map_err(|error| InputError::Read {
        file,
        path: path.to_path_buf(),
        error,
    })
}

/// `--compare A.json B.json`: prints the frontiers side by side with the pure loads' spread.
fn compare(files: &[PathBuf]) -> CliResult {
    let [a, b] = files else {
        return Err(UsageError::CompareArity.into());
    };
    let a_text = read_input(a, InputFile::ExploreJson)?;
    let b_text = read_input(b, InputFile::ExploreJson)?;
    let comparison = weir_explore::compare::compare_frontiers(
        &a_text,
        &a.display().to_string(),
        &b_text,
        &b.display().to_string(),
    )?;
    println!("A = {}, B = {}", a.display(), b.display());
    // The target for two runs on a steady device (zram): frontiers within 5%.
    print!(
        "{}",
        weir_explore::compare::comparison_text(&comparison, 0.05)
    );
    Ok(())
}

/// `--grid`: weir at the imported grid's loads; writes grid.md and grid.json into --out.
fn grid(
    meter: &mut dyn weir_explore::Meter,
    imported: &Map,
    out: &Path,
    tty: bool,
) -> Result<(), CliError> {
    let rows = weir_explore::compare::measure_grid(meter, imported, &mut |done, total, p| {
        let line = format!(
            "grid point {done}/{total}: {:.0} reads/s + {:.0} MB/s: read p99 {:.0} us",
            p.read_iops,
            p.write_bytes_per_s / 1e6,
            p.read_latency_us.p99
        );
        if tty {
            eprint!("\r{line}\x1b[K");
        } else {
            eprintln!("{line}");
        }
    })?;
    if tty {
        eprintln!();
    }
    let table = weir_explore::compare::grid_table(&rows, imported.goal_us);
    let json = serde_json::to_string_pretty(&rows).unwrap_or_default() + "\n";
    std::fs::create_dir_all(out)
        .and_then(|()| std::fs::write(out.join("grid.md"), &table))
        .and_then(|()| std::fs::write(out.join("grid.json"), json))
        .map_err(|error| RuntimeError::Write {
            file: OutputFile::GridDir,
            path: out.to_path_buf(),
            error,
        })?;
    super::guard::mark_outputs(&[out.join("grid.md"), out.join("grid.json")]);
    print!("{table}");
    println!("wrote {0}/grid.md, {0}/grid.json", out.display());
    Ok(())
}

/// Maps the disk, or with `imported` (from `--grid`) measures its loads and returns None.
#[allow(clippy::too_many_arguments)]
fn measure(
    args: &ExploreArgs,
    regime: WriteRegime,
    goal_us: f64,
    budget: Duration,
    backend: Backend,
    shards: usize,
    (read_bytes, write_bytes): (u32, u32),
    imported: Option<&Map>,
) -> Result<Option<Map>, CliError> {
    let factory = EngineFactory {
        backend,
        nowait: true,
    };
    let free_bytes = free_space_bytes(&args.dir).unwrap_or(u64::MAX);
    if free_bytes < MIN_FREE_BYTES {
        return Err(UsageError::NoSpace {
            dir: args.dir.clone(),
            free_bytes,
            need_bytes: MIN_FREE_BYTES,
        }
        .into());
    }
    let regions = weir_explore::regions::regions(free_bytes, args.quick);
    // A grid point is compared with Diskplorer's fixed-time points: the full steadiness rule.
    let rule = if args.quick && imported.is_none() {
        SteadyRule::quick()
    } else {
        SteadyRule::full()
    };
    let mut meter = WorkloadMeter {
        factory: &factory,
        options: RunOptions {
            dir: Some(args.dir.clone()),
            shards,
            backend,
            cancel: crate::interrupt::token(),
            ..RunOptions::default()
        },
        read_bytes,
        write_bytes,
        regime,
        read_region_bytes: regions.read_region_bytes,
        overwrite_region_bytes: regions.overwrite_region_bytes,
        fresh_file_cap_bytes: regions.fresh_file_cap_bytes,
        rule,
        goal_us,
    };
    let tty = std::io::stderr().is_terminal();
    if let Some(imported) = imported {
        eprintln!(
            "weir explore: {} writes at the {} loads of {}",
            regime.as_str(),
            imported.points.len(),
            imported.source
        );
        return grid(&mut meter, imported, &args.out, tty).map(|()| None);
    }
    let settings = if args.quick {
        SearchSettings::quick(goal_us, regime, budget)
    } else {
        SearchSettings::full(goal_us, regime, budget)
    };
    eprintln!(
        "weir explore: {} writes, goal read p99 {:.0} us, budget {:.0} s; calibrating...",
        regime.as_str(),
        goal_us,
        budget.as_secs_f64()
    );
    let outcome = weir_explore::search(&mut meter, &settings, &mut |p| show(p, tty))?;
    if tty {
        eprintln!();
    }
    if let Some(note) = over_budget_note(outcome.seconds, budget, outcome.rays.len()) {
        eprintln!("{note}");
    }
    Ok(Some(Map::from_search(
        outcome,
        regime,
        goal_us,
        read_bytes,
        write_bytes,
    )))
}

/// What to tell a user whose map of `rays` rays ran well past `--budget` (a tenth over is
/// the budget's softness). The budget only holds back the rays between the axes, so a budget
/// shorter than the least map (the calibration at both ends and the rays along both axes)
/// still gets that map; past that, a run ends late when its last points took longer than the
/// ones before them, from which the budget priced them.
fn over_budget_note(seconds: f64, budget: Duration, rays: usize) -> Option<String> {
    let budget_s = budget.as_secs_f64();
    if seconds <= budget_s * 1.1 {
        return None;
    }
    Some(if rays <= 2 {
        format!(
            "note: the map took {seconds:.0} s, over the {budget_s:.0} s budget: the calibration \
             (pure loads at the start and the end) and the rays along the two axes run \
             whatever the budget, so this is the least map this disk allows; raise --budget \
             above {seconds:.0} s for more rays"
        )
    } else {
        format!(
            "note: the map took {seconds:.0} s, over the {budget_s:.0} s budget: its last \
             points took longer than the ones before them, from which the budget priced them"
        )
    })
}

/// One progress update: a bar with time left on a terminal, a line per point otherwise.
fn show(p: &SearchProgress, tty: bool) {
    let pt = p.point;
    let verdict = if pt.within_goal {
        "inside"
    } else if pt.kept_up {
        "over goal"
    } else {
        "behind"
    };
    let point = format!(
        "{:.0} reads/s + {:.0} MB/s: read p99 {:.0} us, {verdict}",
        pt.read_iops,
        pt.write_bytes_per_s / 1e6,
        pt.read_latency_us.p99
    );
    if tty {
        let width = 24;
        let filled = (p.done * width / p.planned.max(1)).min(width);
        eprint!(
            "\r[{}{}] {}/{} points, ~{:.0} s left; {point}\x1b[K",
            "#".repeat(filled),
            ".".repeat(width - filled),
            p.done,
            p.planned,
            p.left_estimate.as_secs_f64()
        );
        let _ = std::io::stderr().flush();
    } else {
        eprintln!(
            "point {}/{} at {:.0} s: {point}",
            p.done,
            p.planned,
            p.elapsed.as_secs_f64()
        );
    }
}

fn finish(map: &Map, out: &Path, mountpoint: &str) -> CliResult {
    let files = output::write_all(map, out, mountpoint)?;
    super::guard::mark_outputs(&files);
    print!("{}", output::summary(map));
    for f in files {
        println!("wrote {}", f.display());
    }
    Ok(())
}

fn free_space_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills a plain struct; the path is NUL-terminated.
    let mut vfs: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers for the duration of the call.
    if unsafe { libc::statvfs(path.as_ptr(), &mut vfs) } != 0 {
        return None;
    }
    Some(vfs.f_bavail as u64 * vfs.f_frsize as u64)
}

#[cfg(test)]
mod tests {
    use super::over_budget_note;
    use std::time::Duration;

    #[test]
    fn a_map_within_a_tenth_of_its_budget_prints_no_note() {
        assert_eq!(over_budget_note(65.0, Duration::from_secs(60), 2), None);
    }

    #[test]
    fn a_least_map_past_a_short_budget_says_what_always_runs() {
        let note = over_budget_note(66.0, Duration::from_secs(10), 2).expect("a note");
        assert!(
            note.starts_with("note: the map took 66 s, over the 10 s budget"),
            "{note}"
        );
        assert!(note.contains("raise --budget above 66 s"), "{note}");
    }

    #[test]
    fn a_map_with_rays_between_the_axes_blames_its_last_points_not_the_least_map() {
        let note = over_budget_note(700.0, Duration::from_secs(600), 9).expect("a note");
        assert!(note.contains("its last points took longer"), "{note}");
        assert!(!note.contains("least map"), "{note}");
    }
}
