//! The Linux AIO tests: context switches inside io_submit, and RWF_NOWAIT's EAGAIN rate.

use std::path::Path;

use weir_engine::Backend;

use super::drive::{self, Spec};
use super::{
    error_result, verdict, Measurements, QualifyError, QualifyOptions, TestResult, Verdict,
    Workload, EAGAIN_THRESHOLD_PER_1000, SWITCH_THRESHOLD,
};

/// The engine name every Linux AIO result carries.
const ENGINE: &str = "linux-aio";

/// The context-switch tests, in report order: (workload, depth, O_DSYNC).
const SWITCH_TESTS: &[(Workload, u32, bool)] = &[
    (Workload::Append, 1, false),
    (Workload::Append, 3, false),
    (Workload::PretruncateFill, 1, false),
    (Workload::PretruncateFill, 3, false),
    (Workload::PreallocFill, 1, false),
    (Workload::PreallocFill, 3, false),
    (Workload::Overwrite, 1, false),
    (Workload::Overwrite, 3, false),
    (Workload::Append, 1, true),
    (Workload::Overwrite, 1, true),
    (Workload::Read, 1, false),
    (Workload::Read, 3, false),
];

pub(super) fn run_all(dir: &Path, opts: &QualifyOptions) -> Vec<TestResult> {
    let mut out: Vec<TestResult> = SWITCH_TESTS
        .iter()
        .map(|&(w, depth, dsync)| switch_test(dir, opts, w, depth, dsync))
        .collect();
    out.push(nowait_test(dir, opts, Workload::Append));
    out.push(nowait_test(dir, opts, Workload::PretruncateFill));
    out.push(nowait_test(dir, opts, Workload::Overwrite));
    out
}

fn switch_test(
    dir: &Path,
    opts: &QualifyOptions,
    w: Workload,
    depth: u32,
    dsync: bool,
) -> TestResult {
    let id = format!(
        "aio.{}{}.depth{depth}",
        w.as_str(),
        if dsync { "_dsync" } else { "" }
    );
    let b = TestResult {
        dsync,
        ..TestResult::pending(
            ENGINE,
            id,
            w,
            depth,
            "context_switches_per_io",
            SWITCH_THRESHOLD,
        )
    };
    match measure_switches(dir, opts, w, depth, dsync) {
        Ok((ios, switches)) => {
            let value = switches as f64 / ios.max(1) as f64;
            let v = verdict(value, SWITCH_THRESHOLD, false);
            TestResult {
                value,
                verdict: v,
                measurements: Measurements {
                    ios,
                    submitter_switches: Some(switches),
                    ..Measurements::default()
                },
                meaning: switch_meaning(w, depth, dsync, v, value),
                ..b
            }
        }
        Err(e) => error_result(b, &e),
    }
}

fn switch_meaning(w: Workload, depth: u32, dsync: bool, v: Verdict, value: f64) -> String {
    let what = match (w, dsync) {
        (Workload::Append, false) => "appending writes",
        (Workload::Append, true) => "O_DSYNC appending writes",
        (Workload::PretruncateFill, _) => "writes into a pre-truncated file",
        (Workload::PreallocFill, _) => "writes into fallocated space",
        (Workload::Overwrite, false) => "overwrites",
        (Workload::Overwrite, true) => "O_DSYNC overwrites",
        (Workload::Read, _) => "reads",
    };
    match v {
        Verdict::Good => {
            format!("{what} at depth {depth} are asynchronous: io_submit returns without sleeping")
        }
        _ => {
            let advice = match w {
                Workload::Append => "pre-truncate or fallocate files to their final size (or grow them ahead, sloppy_size), keep appends to one in flight per file, or use XFS",
                Workload::PretruncateFill | Workload::PreallocFill => "block allocation blocks the submitter here: preallocate earlier, off the I/O path",
                Workload::Overwrite => "even overwrites block: this filesystem is unsuitable for thread-per-core direct I/O",
                Workload::Read => "reads block the submitter: the device or filesystem is not doing asynchronous direct reads",
            };
            format!(
                "{what} at depth {depth} block the submitting thread ({value:.2} sleeps per I/O): a thread-per-core engine stalls its whole core; {advice}"
            )
        }
    }
}

/// Runs `opts.ios` requests in batches of `depth` on the shard loop; returns (ios, voluntary
/// switches of the submitting thread inside its io_submit calls).
fn measure_switches(
    dir: &Path,
    opts: &QualifyOptions,
    workload: Workload,
    depth: u32,
    dsync: bool,
) -> Result<(u64, u64), QualifyError> {
    let spec = Spec {
        backend: Backend::Aio,
        workload,
        ios: opts.ios,
        depth,
        dsync,
        nowait: false,
    };
    let m = drive::measure(dir, opts, spec, &mut |_| {})?;
    Ok((m.ios, m.submitter_switches()))
}

fn nowait_test(dir: &Path, opts: &QualifyOptions, w: Workload) -> TestResult {
    let id = format!("aio.nowait.{}", w.as_str());
    let b = TestResult {
        nowait: true,
        ..TestResult::pending(
            ENGINE,
            id,
            w,
            1,
            "eagain_per_1000",
            EAGAIN_THRESHOLD_PER_1000,
        )
    };
    let measured = drive::nowait_counts(dir, opts, Backend::Aio, w);
    nowait_result(b, "Linux AIO", w, measured)
}

/// The verdict of a RWF_NOWAIT test from its (requests, EAGAIN refusals), for either engine.
pub(super) fn nowait_result(
    b: TestResult,
    engine: &str,
    w: Workload,
    measured: Result<(u64, u64), QualifyError>,
) -> TestResult {
    match measured {
        Ok((ios, eagain)) => {
            let value = eagain as f64 * 1000.0 / ios.max(1) as f64;
            let v = verdict(value, EAGAIN_THRESHOLD_PER_1000, true);
            TestResult {
                value,
                verdict: v,
                measurements: Measurements {
                    ios,
                    eagain: Some(eagain),
                    ..Measurements::default()
                },
                meaning: nowait_meaning(engine, w, v, value),
                ..b
            }
        }
        Err(e) => error_result(b, &e),
    }
}

pub(super) fn nowait_meaning(engine: &str, w: Workload, v: Verdict, value: f64) -> String {
    let what = match w {
        Workload::Append => "appending writes",
        Workload::PretruncateFill => "writes into a pre-truncated file",
        _ => "overwrites",
    };
    match v {
        Verdict::Good => format!("{engine} RWF_NOWAIT {what} go through without EAGAIN: the reactor can submit them directly"),
        _ => format!(
            "{engine} RWF_NOWAIT {what} got EAGAIN {value:.0} times per 1000: each one is retried from a helper thread \
             (extra context switches and latency); on kernels that return EAGAIN for timestamp (cmtime) updates, \
             do not rely on RWF_NOWAIT for writes"
        ),
    }
}
