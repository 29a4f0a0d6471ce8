//! `weir report`: runs doctor, qualify, tune, explore, a QoS demo and align through their
//! libraries and writes one self-contained HTML page (weir-report holds everything; this file
//! parses the flags, shows progress on a terminal and writes the file).

use std::io::IsTerminal;
use std::path::PathBuf;

use weir_engine::Backend;
use weir_report::{page, run_report, Mode, Progress, ReportOptions};

use crate::error::{CliResult, OutputFile, RuntimeError, UsageError};

#[derive(clap::Args)]
pub struct ReportArgs {
    /// Directory on the disk to report on (test files are created there and removed).
    #[arg(long, value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Where to write the page.
    #[arg(long, value_name = "FILE", default_value = "report.html")]
    out: PathBuf,
    /// Short runs and explore's quick map (about 3 minutes).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// Explore's full map (longer).
    #[arg(long)]
    full: bool,
    /// I/O backend: uring or aio.
    #[arg(long, default_value = "uring")]
    backend: String,
    /// Replace output files that exist but were not written by weir (by default weir refuses
    /// to overwrite them).
    #[arg(long)]
    force: bool,
}

pub fn run(args: ReportArgs) -> CliResult {
    let backend: Backend = args.backend.parse().map_err(UsageError::Backend)?;
    super::check_dir_flag(&args.dir, "report on")?;
    super::guard::check_output("--out", &args.out, args.force)?;
    super::guard::sweep_leftovers(&args.dir);
    // Fail on an unwritable --out now, not after minutes of measuring.
    std::fs::write(&args.out, b"").map_err(|error| UsageError::OutFlag {
        flag: "--out",
        path: args.out.clone(),
        error,
    })?;
    weir_guard::output::mark(&args.out);
    crate::interrupt::install().map_err(|errno| RuntimeError::InterruptHandler {
        signal: "Ctrl-C",
        errno,
    })?;
    let mode = if args.quick {
        Mode::Quick
    } else if args.full {
        Mode::Full
    } else {
        Mode::Default
    };
    let opts = ReportOptions {
        dir: args.dir.clone(),
        mode,
        backend,
        command: std::env::args().collect::<Vec<_>>().join(" "),
        cancel: crate::interrupt::token(),
    };
    let progress = if std::io::stderr().is_terminal() {
        Progress::drawing_to(Box::new(std::io::stderr()))
    } else {
        Progress::hidden()
    };
    let doc = run_report(&opts, &progress);
    drop(progress);
    let html = page::render(&doc);
    std::fs::write(&args.out, &html).map_err(|error| RuntimeError::Write {
        file: OutputFile::Page,
        path: args.out.clone(),
        error,
    })?;
    weir_guard::output::mark(&args.out);
    let unfinished: Vec<String> = doc
        .sections
        .iter()
        .filter(|s| s.status != weir_report::Status::Done)
        .map(|s| format!("{} ({})", s.kind.id(), s.status.label()))
        .collect();
    eprintln!(
        "weir report: wrote {} ({} KiB) in {:.0} s{}",
        args.out.display(),
        html.len() >> 10,
        doc.meta.elapsed_s,
        if unfinished.is_empty() {
            String::new()
        } else {
            format!("; not finished: {}", unfinished.join(", "))
        }
    );
    if doc.meta.interrupted {
        return Err(RuntimeError::ReportInterrupted.into());
    }
    Ok(())
}
