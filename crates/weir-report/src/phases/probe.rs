//! The probe phases: doctor, qualify and align, through `weir-probe`'s library functions. Each
//! section's JSON has the shape of the command's own `--json` output.

use std::path::Path;

use serde_json::{json, Value};
use weir_engine::Backend;
use weir_probe::align::run::{run_align, AlignOptions};
use weir_probe::qualify::{qualify as run_qualify, QualifyOptions, Verdict};

use crate::doc::{Section, SectionKind, Status};

fn section(kind: SectionKind, status: Status, commands: Vec<String>, json: Value) -> Section {
    Section {
        kind,
        status,
        elapsed_s: 0.0,
        commands,
        json,
    }
}

pub(crate) fn doctor(dir: &Path) -> Section {
    let command = vec![format!("weir doctor {} --json", dir.display())];
    match weir_probe::probe_path(dir) {
        Ok(facts) => {
            let findings = weir_probe::checks(&facts);
            let worst = weir_probe::doctor::worst(&findings);
            let doc = json!({ "facts": facts, "findings": findings, "worst": worst });
            section(SectionKind::Doctor, Status::Done, command, doc)
        }
        Err(e) => section(
            SectionKind::Doctor,
            Status::Failed(e.to_string()),
            command,
            Value::Null,
        ),
    }
}

pub(crate) fn qualify(dir: &Path, ios: u64) -> Section {
    let command = vec![format!(
        "weir qualify {} --ios {ios} --nowait-ios {ios} --json",
        dir.display()
    )];
    let facts = weir_probe::probe_path(dir).ok();
    if let Some(f) = &facts {
        if matches!(f.filesystem.fs_type.as_str(), "tmpfs" | "ramfs") {
            return Section::not_run(
                SectionKind::Qualify,
                &format!(
                    "{} is {}, memory rather than a disk: there is no asynchronous disk I/O to qualify",
                    dir.display(),
                    f.filesystem.fs_type
                ),
            );
        }
    }
    let opts = QualifyOptions {
        ios,
        nowait_ios: ios,
        request_bytes: 4096,
        aio: true,
        uring: true,
    };
    let results = run_qualify(dir, &opts);
    let errors = results
        .iter()
        .filter(|r| r.verdict == Verdict::Error)
        .count();
    let status = if errors == 0 {
        Status::Done
    } else {
        Status::Failed(format!(
            "{errors} of {} tests could not run; the table says why",
            results.len()
        ))
    };
    let doc = json!({
        "path": dir.display().to_string(),
        "filesystem": facts.as_ref().map(|f| &f.filesystem),
        "device_stack": facts.as_ref().and_then(|f| f.stack.as_ref()).map(|s| s.chain()),
        "request_bytes": 4096,
        "results": results,
    });
    section(SectionKind::Qualify, status, command, doc)
}

pub(crate) fn align(dir: &Path, backend: Backend, file_bytes: u64) -> Section {
    let opts = AlignOptions {
        file_bytes,
        backend,
        ..AlignOptions::default()
    };
    let modes: Vec<String> = opts.modes.iter().map(|m| m.to_string()).collect();
    let command = vec![format!(
        "weir align {} --file-size {}m --modes {} --backend {} --json --plot align.svg",
        dir.display(),
        file_bytes >> 20,
        modes.join(","),
        backend_flag(backend)
    )];
    let facts = match weir_probe::probe_path(dir) {
        Ok(f) => f,
        Err(e) => {
            return section(
                SectionKind::Align,
                Status::Failed(e.to_string()),
                command,
                Value::Null,
            )
        }
    };
    match run_align(dir, &facts, &opts) {
        Ok(report) => {
            let doc = serde_json::to_value(&report).unwrap_or(Value::Null);
            section(SectionKind::Align, Status::Done, command, doc)
        }
        Err(e) => section(
            SectionKind::Align,
            Status::Failed(e.to_string()),
            command,
            Value::Null,
        ),
    }
}

/// The `--backend` value naming `backend`.
pub(crate) fn backend_flag(backend: Backend) -> &'static str {
    match backend {
        Backend::Uring => "uring",
        Backend::Aio => "aio",
    }
}
