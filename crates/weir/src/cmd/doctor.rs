//! `weir doctor DIR`: the storage checklist for a data directory (see docs/reference/probe.md).

use std::path::PathBuf;

use weir_probe::doctor::{worst, Finding, Status};
use weir_probe::{PathFacts, ProbeError, SysRoot};

use crate::error::{CliError, CliResult, Problem, RuntimeError};

#[derive(clap::Args)]
pub struct DoctorArgs {
    /// The directory where the data files will live.
    pub dir: PathBuf,
    /// Print the facts and findings as JSON (schema in docs/reference/probe.md).
    #[arg(long)]
    pub json: bool,
    /// Read sysfs/procfs from this tree instead of `/` (a recorded machine: ROOT/sys,
    /// ROOT/proc/self/mountinfo, ROOT/fs.json).
    #[arg(long, value_name = "ROOT")]
    pub root: Option<PathBuf>,
}

/// Probes `dir` under `root` (live when `None`), validating the argument even for fixtures.
pub fn probe(dir: &std::path::Path, root: Option<&PathBuf>) -> Result<PathFacts, CliError> {
    let meta = std::fs::metadata(dir).map_err(|e| ProbeError::from_io(dir, &e))?;
    if !meta.is_dir() {
        return Err(ProbeError::NotADirectory(dir.display().to_string()).into());
    }
    let sysroot = root.map_or_else(SysRoot::live, SysRoot::at);
    Ok(weir_probe::probe_path_in(dir, &sysroot)?)
}

pub fn run(args: DoctorArgs) -> CliResult {
    let facts = probe(&args.dir, args.root.as_ref())?;
    let findings = weir_probe::checks(&facts);
    if args.json {
        let doc =
            serde_json::json!({ "facts": facts, "findings": findings, "worst": worst(&findings) });
        let text = serde_json::to_string_pretty(&doc).map_err(|error| RuntimeError::Encode {
            what: "JSON",
            error,
        })?;
        println!("{text}");
    } else {
        print!("{}", render_text(&facts, &findings));
    }
    let fails = findings.iter().filter(|f| f.status == Status::Fail).count();
    if fails > 0 {
        return Err(Problem::DoctorFailed {
            fails,
            dir: args.dir.clone(),
        }
        .into());
    }
    Ok(())
}

/// The human report: the facts in brief, then one block per finding.
pub fn render_text(facts: &PathFacts, findings: &[Finding]) -> String {
    let mut s = String::new();
    let fs = &facts.filesystem;
    s.push_str(&format!("weir doctor {}\n", facts.path));
    s.push_str(&format!(
        "  filesystem: {} block {} B, mounted at {} from {} ({})\n",
        fs.fs_type,
        fs.block_bytes,
        fs.mount_point.as_deref().unwrap_or("?"),
        fs.source.as_deref().unwrap_or("?"),
        fs.mount_options.as_deref().unwrap_or("?")
    ));
    if let Some(stack) = &facts.stack {
        s.push_str(&format!("  device stack: {}\n", stack.chain()));
    }
    for note in &facts.notes {
        s.push_str(&format!("  note: {note}\n"));
    }
    s.push('\n');
    for f in findings {
        s.push_str(&format!(
            "{}  {:<32} {}\n",
            f.status.as_str(),
            f.id,
            f.summary
        ));
        s.push_str(&format!("      evidence: {}\n", f.evidence));
        if let Some(fix) = &f.fix {
            s.push_str(&format!("      fix: {fix}\n"));
        }
    }
    let count = |st: Status| findings.iter().filter(|f| f.status == st).count();
    s.push_str(&format!(
        "\n{} PASS, {} WARN, {} FAIL\n",
        count(Status::Pass),
        count(Status::Warn),
        count(Status::Fail)
    ));
    s
}
