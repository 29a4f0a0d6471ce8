//! `weir align DIR`: where do written requests land on the device, and how aligned are they?
//! (see docs/reference/probe.md and weir_probe::align).

use std::path::PathBuf;

use weir_engine::Backend;
use weir_probe::align::run::{run_align, AlignOptions, AlignReport, Prepare};
use weir_probe::align::{bucket_label, BUCKETS_BYTES};

use crate::cmd::doctor::probe;
use crate::error::{CliResult, OutputFile, RuntimeError, UsageError};

#[derive(clap::Args)]
pub struct AlignArgs {
    /// The directory to write the test files in (they are removed afterwards).
    pub dir: PathBuf,
    /// Print the report as JSON (schema in docs/reference/probe.md).
    #[arg(long)]
    pub json: bool,
    /// Also write an SVG bar chart of the distributions to this file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Write request size (binary suffixes).
    #[arg(long, default_value = "128k")]
    pub request_size: String,
    /// Size of each file.
    #[arg(long, default_value = "32m")]
    pub file_size: String,
    /// Files written at once (like shards each writing its own file).
    #[arg(long, default_value_t = 4)]
    pub files: u32,
    /// Requests in flight per file.
    #[arg(long, default_value_t = 1)]
    pub depth: u32,
    /// Preparation modes, comma-separated: append, pretruncate, fallocate, sloppy, overwrite.
    #[arg(long, default_value = "append,pretruncate,fallocate,sloppy")]
    pub modes: String,
    /// RAID chunk size for the boundary-crossing count (default: the md chunk found under DIR).
    #[arg(long, value_name = "SIZE")]
    pub chunk: Option<String>,
    /// Keep the written files.
    #[arg(long)]
    pub keep_files: bool,
    /// I/O backend: uring or aio.
    #[arg(long, default_value = "uring")]
    pub backend: String,
}

fn size(flag: &'static str, text: &str) -> Result<u64, UsageError> {
    weir_model::units::parse_size(text).map_err(|error| UsageError::Unit {
        flag,
        value: Some(text.to_string()),
        error,
    })
}

fn options(args: &AlignArgs) -> Result<AlignOptions, UsageError> {
    let request_bytes = size("--request-size", &args.request_size)?;
    let file_bytes = size("--file-size", &args.file_size)?;
    if request_bytes == 0 || request_bytes % 4096 != 0 || request_bytes > (64 << 20) {
        return Err(UsageError::OutOfRange {
            flag: "--request-size",
            value: args.request_size.clone(),
            accepted: "must be a multiple of 4 KiB up to 64 MiB",
        });
    }
    if file_bytes < request_bytes || file_bytes % request_bytes != 0 {
        return Err(UsageError::FileSizeNotMultiple {
            file_size: args.file_size.clone(),
            request_size: args.request_size.clone(),
        });
    }
    let modes = args
        .modes
        .split(',')
        .map(|m| m.trim().parse::<Prepare>().map_err(UsageError::Modes))
        .collect::<Result<Vec<_>, _>>()?;
    // The engine's names (uring, io_uring, aio, linux-aio, libaio), as every command takes.
    let backend = args
        .backend
        .parse::<Backend>()
        .map_err(|_| UsageError::OutOfRange {
            flag: "--backend",
            value: args.backend.clone(),
            accepted: "expected uring or aio",
        })?;
    let chunk_bytes = match &args.chunk {
        Some(c) => Some(size("--chunk", c)?).filter(|&c| c > 0),
        None => None,
    };
    if args.files == 0 || args.depth == 0 {
        return Err(UsageError::Zero {
            flags: "--files and --depth",
            rule: "must be at least 1",
        });
    }
    Ok(AlignOptions {
        request_bytes: request_bytes as u32,
        file_bytes,
        files: args.files,
        depth_per_file: args.depth,
        modes,
        chunk_bytes,
        keep_files: args.keep_files,
        backend,
    })
}

pub fn run(args: AlignArgs) -> CliResult {
    let opts = options(&args)?;
    let facts = probe(&args.dir, None)?;
    let report = run_align(&args.dir, &facts, &opts).map_err(RuntimeError::Align)?;
    if let Some(path) = &args.plot {
        let json = serde_json::to_value(&report).map_err(|error| RuntimeError::Encode {
            what: "the report",
            error,
        })?;
        let charts: Vec<_> = weir_report::figures::align::chart(&json)
            .into_iter()
            .collect();
        std::fs::write(path, weir_report::charts_svg(&charts)).map_err(|error| {
            RuntimeError::Write {
                file: OutputFile::Plot,
                path: path.clone(),
                error,
            }
        })?;
    }
    if args.json {
        let text = serde_json::to_string_pretty(&report).map_err(|error| RuntimeError::Encode {
            what: "JSON",
            error,
        })?;
        println!("{text}");
    } else {
        print!("{}", render_text(&report));
        if let Some(path) = &args.plot {
            println!("chart written to {}", path.display());
        }
    }
    Ok(())
}

fn bar(share: f64, width: usize) -> String {
    let n = (share * width as f64).round() as usize;
    format!("{:<width$}", "#".repeat(n.min(width)))
}

/// The text report: per address level, one column per mode (share and a bar per bucket).
pub fn render_text(r: &AlignReport) -> String {
    let mut s = format!(
        "weir align {}: {} with {} B blocks on {}\n  {} files x {} MiB each mode, {} KiB writes, {} in flight per file ({})\n",
        r.path,
        r.fs_type,
        r.fs_block_bytes,
        r.device_stack.as_deref().unwrap_or("no block device"),
        r.files,
        r.file_bytes >> 20,
        r.request_bytes >> 10,
        r.depth_per_file,
        r.backend
    );
    for n in &r.notes {
        s.push_str(&format!("  note: {n}\n"));
    }
    let levels = r.modes.first().map_or(0, |m| m.levels.len());
    for li in 0..levels {
        let (device, how) = r.modes[0]
            .levels
            .get(li)
            .map_or(("?", "?"), |l| (l.device.as_str(), l.how.as_str()));
        s.push_str(&format!(
            "\nAddresses on {device} ({how}):\n{:<10}",
            "alignment"
        ));
        for m in &r.modes {
            s.push_str(&format!(" {:<20}", m.mode));
        }
        s.push('\n');
        for (b, _) in BUCKETS_BYTES.iter().enumerate() {
            s.push_str(&format!("{:<10}", bucket_label(b)));
            for m in &r.modes {
                let h = &m.levels[li].histogram;
                let share = if h.requests > 0 {
                    h.counts[b] as f64 / h.requests as f64
                } else {
                    0.0
                };
                s.push_str(&format!(" {:>5.1}% {}", share * 100.0, bar(share, 13)));
            }
            s.push('\n');
        }
        let row = |label: &str, f: &dyn Fn(&weir_probe::align::run::ModeReport) -> String| {
            let mut line = format!("{label:<10}");
            for m in &r.modes {
                line.push_str(&format!(" {:<20}", f(m)));
            }
            line.push('\n');
            line
        };
        s.push_str(&row(">=4K", &|m| {
            format!("{:.1}%", m.levels[li].histogram.share_aligned(4096) * 100.0)
        }));
        s.push_str(&row("split", &|m| {
            let h = &m.levels[li].histogram;
            format!("{} of {}", h.split_requests, h.requests)
        }));
        if let Some(chunk) = r.modes[0].levels[li].histogram.chunk_bytes {
            s.push_str(&format!("crossing a {} KiB chunk boundary:\n", chunk >> 10));
            s.push_str(&row("chunk", &|m| {
                let h = &m.levels[li].histogram;
                let c = h.chunk_crossing_requests.unwrap_or(0);
                format!("{:.1}% ({c})", c as f64 * 100.0 / h.requests.max(1) as f64)
            }));
        }
    }
    s.push('\n');
    let mut line = format!("{:<10}", "extents");
    for m in &r.modes {
        let total: u64 = m.extents_per_file.iter().sum();
        let mean = total as f64 / m.extents_per_file.len().max(1) as f64;
        line.push_str(&format!(" {:<20}", format!("{mean:.1}/file")));
    }
    s.push_str(&line);
    s.push('\n');
    s
}
