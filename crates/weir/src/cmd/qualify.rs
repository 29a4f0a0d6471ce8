//! `weir qualify DIR`: fsqual, extended (see docs/reference/probe.md and weir_probe::qualify).

use std::path::PathBuf;

use weir_probe::qualify::{qualify, QualifyOptions, TestResult, Verdict};

use crate::cmd::doctor::probe;
use crate::error::{CliError, CliResult, Problem, RuntimeError, UsageError};

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineChoice {
    Aio,
    Uring,
    Both,
}

#[derive(clap::Args)]
pub struct QualifyArgs {
    /// The directory to qualify (scratch files are created unlinked and vanish on exit).
    pub dir: PathBuf,
    /// Print the results as JSON (schema in docs/reference/probe.md).
    #[arg(long)]
    pub json: bool,
    /// Requests per context-switch and io-wq test (fsqual uses 10000).
    #[arg(long, default_value_t = 1000)]
    pub ios: u64,
    /// Requests per RWF_NOWAIT test (EAGAINs are reported per 1000).
    #[arg(long, default_value_t = 1000)]
    pub nowait_ios: u64,
    /// Request size (binary suffixes: 4k, 128k).
    #[arg(long, default_value = "4k")]
    pub request_size: String,
    /// Which submission interface to test.
    #[arg(long, value_enum, default_value_t = EngineChoice::Both)]
    pub engine: EngineChoice,
}

pub fn run(args: QualifyArgs) -> CliResult {
    let request_bytes =
        weir_model::units::parse_size(&args.request_size).map_err(|error| UsageError::Unit {
            flag: "--request-size",
            value: Some(args.request_size.clone()),
            error,
        })?;
    if request_bytes == 0 || request_bytes % 512 != 0 || request_bytes > (16 << 20) {
        return Err(UsageError::OutOfRange {
            flag: "--request-size",
            value: args.request_size.clone(),
            accepted: "must be a multiple of 512 B between 512 B and 16 MiB (direct I/O sizes)",
        }
        .into());
    }
    if args.ios == 0 || args.nowait_ios == 0 {
        return Err(UsageError::Zero {
            flags: "--ios and --nowait-ios",
            rule: "must be at least 1",
        }
        .into());
    }
    // The facts are context for the verdicts; a probe failure other than a bad directory is
    // reported and the tests still run.
    let facts = match probe(&args.dir, None) {
        Ok(f) => Some(f),
        Err(e @ CliError::Usage(_)) => return Err(e),
        Err(e) => {
            eprintln!("weir: warning: {e}");
            None
        }
    };
    let opts = QualifyOptions {
        ios: args.ios,
        nowait_ios: args.nowait_ios,
        request_bytes: request_bytes as u32,
        aio: args.engine != EngineChoice::Uring,
        uring: args.engine != EngineChoice::Aio,
    };
    let fs_check = facts.as_ref().map(|f| {
        weir_probe::checks(f)
            .into_iter()
            .find(|c| c.id == "fs.type")
    });
    if let Some(Some(c)) = &fs_check {
        if c.status != weir_probe::Status::Pass && !args.json {
            eprintln!("weir: note: {}", c.summary);
        }
    }
    let kernel = kernel_release();
    if let Some(refusal) = facts.as_ref().and_then(memory_fs_refusal) {
        // tmpfs accepts O_DIRECT on recent kernels and never blocks, so every verdict would be
        // a meaningless GOOD: refuse, after printing what was found.
        if args.json {
            let doc = serde_json::json!({
                "path": args.dir.display().to_string(),
                "kernel": kernel,
                "filesystem": facts.as_ref().map(|f| &f.filesystem),
                "results": [],
                "error": refusal.to_string(),
            });
            println!("{doc:#}");
        } else {
            print!("{}", render_text(&args.dir, &kernel, facts.as_ref(), &[]));
        }
        return Err(refusal.into());
    }
    let results = qualify(&args.dir, &opts);
    if args.json {
        let doc = serde_json::json!({
            "path": args.dir.display().to_string(),
            "kernel": kernel,
            "filesystem": facts.as_ref().map(|f| &f.filesystem),
            "device_stack": facts.as_ref().and_then(|f| f.stack.as_ref()).map(|s| s.chain()),
            "request_bytes": request_bytes,
            "results": results,
        });
        let text = serde_json::to_string_pretty(&doc).map_err(|error| RuntimeError::Encode {
            what: "JSON",
            error,
        })?;
        println!("{text}");
    } else {
        print!(
            "{}",
            render_text(&args.dir, &kernel, facts.as_ref(), &results)
        );
    }
    let bad = results.iter().filter(|r| r.verdict == Verdict::Bad).count();
    let errors: Vec<&TestResult> = results
        .iter()
        .filter(|r| r.verdict == Verdict::Error)
        .collect();
    if let Some(first) = errors.first() {
        return Err(Problem::QualifyCouldNotRun {
            count: errors.len(),
            dir: args.dir.clone(),
            first_id: first.id.to_string(),
            first_error: first.error.clone(),
        }
        .into());
    }
    if bad > 0 {
        return Err(Problem::QualifyBad {
            bad,
            dir: args.dir.clone(),
        }
        .into());
    }
    Ok(())
}

/// Why a memory filesystem cannot be qualified, or `None` for a disk-backed one.
fn memory_fs_refusal(facts: &weir_probe::PathFacts) -> Option<UsageError> {
    let t = facts.filesystem.fs_type.as_str();
    matches!(t, "tmpfs" | "ramfs").then(|| UsageError::MemoryFilesystem {
        path: facts.path.clone(),
        fs_type: t.to_string(),
    })
}

fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn metric_label(metric: &str) -> &str {
    match metric {
        "context_switches_per_io" => "switches/IO",
        "eagain_per_1000" => "EAGAIN/1000",
        "iowq_switches_per_io" => "io-wq sleeps/IO",
        "submit_us_p99" => "submit p99 us",
        other => other,
    }
}

fn render_text(
    dir: &std::path::Path,
    kernel: &str,
    facts: Option<&weir_probe::PathFacts>,
    results: &[TestResult],
) -> String {
    let mut s = format!("weir qualify {} (kernel {kernel})\n", dir.display());
    if let Some(f) = facts {
        s.push_str(&format!(
            "  filesystem: {} block {} B on {}\n",
            f.filesystem.fs_type,
            f.filesystem.block_bytes,
            f.stack
                .as_ref()
                .map_or_else(|| "no block device".into(), |n| n.chain())
        ));
    }
    s.push_str(&format!(
        "\n{:<46} {:<16} {:>10} {:>9}  {}\n",
        "TEST", "METRIC", "VALUE", "THRESHOLD", "VERDICT"
    ));
    for r in results {
        let value = if r.value.is_nan() {
            "-".to_string()
        } else if r.metric == "eagain_per_1000" || r.metric == "submit_us_p99" {
            format!("{:.0}", r.value)
        } else {
            format!("{:.3}", r.value)
        };
        s.push_str(&format!(
            "{:<46} {:<16} {:>10} {:>9}  {}\n",
            r.id,
            metric_label(&r.metric),
            value,
            r.threshold,
            r.verdict.as_str()
        ));
    }
    s.push_str("\nWhat it means:\n");
    for r in results {
        let text = r.error.as_deref().unwrap_or(&r.meaning);
        s.push_str(&format!("  {:<5} {}: {}\n", r.verdict.as_str(), r.id, text));
    }
    s
}
