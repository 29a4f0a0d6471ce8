//! The io_uring tests: RWF_NOWAIT's EAGAIN rate, work punted to io-wq workers, and submission
//! latency.

use std::collections::HashMap;
use std::path::Path;

use weir_engine::Backend;

use super::aio::nowait_result;
use super::drive::{self, Spec};
use super::{
    error_result, percentile, verdict, Measurements, QualifyError, QualifyOptions, TestResult,
    Verdict, Workload, EAGAIN_THRESHOLD_PER_1000, SUBMIT_P99_THRESHOLD_US, SWITCH_THRESHOLD,
};

/// The engine name every io_uring result carries.
const ENGINE: &str = "io_uring";

/// The punt tests, in report order: (workload, depth).
const PUNT_TESTS: &[(Workload, u32)] = &[
    (Workload::Append, 1),
    (Workload::Append, 3),
    (Workload::PretruncateFill, 3),
    (Workload::Overwrite, 3),
];

pub(super) fn run_all(dir: &Path, opts: &QualifyOptions) -> Vec<TestResult> {
    let mut out: Vec<TestResult> = [
        Workload::Append,
        Workload::PretruncateFill,
        Workload::Overwrite,
    ]
    .into_iter()
    .map(|w| nowait_test(dir, opts, w))
    .collect();
    for &(w, depth) in PUNT_TESTS {
        out.extend(punt_test(dir, opts, w, depth));
    }
    out
}

fn nowait_test(dir: &Path, opts: &QualifyOptions, w: Workload) -> TestResult {
    let b = TestResult {
        nowait: true,
        ..TestResult::pending(
            ENGINE,
            format!("uring.nowait.{}", w.as_str()),
            w,
            1,
            "eagain_per_1000",
            EAGAIN_THRESHOLD_PER_1000,
        )
    };
    let measured = drive::nowait_counts(dir, opts, Backend::Uring, w);
    nowait_result(b, "io_uring", w, measured)
}

/// io-wq worker threads of this process and their voluntary context switches.
fn iowq_workers() -> HashMap<u32, u64> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for entry in dir.filter_map(Result::ok) {
        let Ok(tid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
        if !comm.starts_with("iou-wrk") {
            continue;
        }
        let status = std::fs::read_to_string(entry.path().join("status")).unwrap_or_default();
        let switches = status
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        out.insert(tid, switches);
    }
    out
}

/// Tracks worker switch counts across samples (the max seen per thread, minus its count before
/// the test began).
struct WorkerWatch {
    before: HashMap<u32, u64>,
    seen: HashMap<u32, u64>,
}

impl WorkerWatch {
    fn start() -> Self {
        WorkerWatch {
            before: iowq_workers(),
            seen: HashMap::new(),
        }
    }
    fn sample(&mut self) {
        for (tid, sw) in iowq_workers() {
            let e = self.seen.entry(tid).or_insert(0);
            *e = (*e).max(sw);
        }
    }
    fn totals(&self) -> (u64, u64) {
        let switches = self
            .seen
            .iter()
            .map(|(tid, sw)| sw.saturating_sub(self.before.get(tid).copied().unwrap_or(0)))
            .sum();
        let active = self
            .seen
            .iter()
            .filter(|(tid, sw)| {
                **sw > self.before.get(tid).copied().unwrap_or(0) || !self.before.contains_key(tid)
            })
            .count() as u64;
        (active, switches)
    }
}

struct PuntStats {
    ios: u64,
    workers: u64,
    worker_switches: u64,
    submit_us: Vec<f64>,
}

fn measure_punts(
    dir: &Path,
    opts: &QualifyOptions,
    w: Workload,
    depth: u32,
) -> Result<PuntStats, QualifyError> {
    let spec = Spec {
        backend: Backend::Uring,
        workload: w,
        ios: opts.ios,
        depth,
        dsync: false,
        nowait: false,
    };
    let mut watch = WorkerWatch::start();
    let measured = drive::measure(dir, opts, spec, &mut |batch| {
        // Sampling /proc costs ~100 µs; every 16 batches keeps it off most submissions.
        if batch % 16 == 15 {
            watch.sample();
        }
    })?;
    watch.sample();
    let (workers, worker_switches) = watch.totals();
    Ok(PuntStats {
        ios: measured.ios,
        workers,
        worker_switches,
        submit_us: measured.submit_us(),
    })
}

/// Two results per run: io-wq switches per I/O, and p99 submission latency.
fn punt_test(dir: &Path, opts: &QualifyOptions, w: Workload, depth: u32) -> Vec<TestResult> {
    let punt_base = TestResult::pending(
        ENGINE,
        format!("uring.{}.depth{depth}.iowq", w.as_str()),
        w,
        depth,
        "iowq_switches_per_io",
        SWITCH_THRESHOLD,
    );
    let lat_base = TestResult::pending(
        ENGINE,
        format!("uring.{}.depth{depth}.submit_latency", w.as_str()),
        w,
        depth,
        "submit_us_p99",
        SUBMIT_P99_THRESHOLD_US,
    );
    let stats = match measure_punts(dir, opts, w, depth) {
        Ok(s) => s,
        Err(e) => return vec![error_result(punt_base, &e), error_result(lat_base, &e)],
    };
    let mut sorted = stats.submit_us.clone();
    sorted.sort_by(f64::total_cmp);
    let p50 = percentile(&sorted, 50.0);
    let p99 = percentile(&sorted, 99.0);
    let max = sorted.last().copied().unwrap_or(0.0);
    let m = Measurements {
        ios: stats.ios,
        iowq_workers: Some(stats.workers),
        iowq_switches: Some(stats.worker_switches),
        submit_us_p50: Some(p50),
        submit_us_p99: Some(p99),
        submit_us_max: Some(max),
        ..Measurements::default()
    };
    let per_io = stats.worker_switches as f64 / stats.ios.max(1) as f64;
    let pv = verdict(per_io, SWITCH_THRESHOLD, false);
    let what = format!("{} writes at depth {depth}", w.as_str().replace('_', " "));
    let punt_meaning = match pv {
        Verdict::Good => format!("{what} complete inline: io_uring rarely hands them to io-wq workers"),
        _ => format!(
            "{what} are punted to io-wq kernel threads ({} workers, {per_io:.2} worker sleeps per I/O): the submitter does not block, \
             but each punt costs a thread hop and the workers compete with the application for CPU; preallocate or pre-truncate files",
            stats.workers
        ),
    };
    let lv = verdict(p99, SUBMIT_P99_THRESHOLD_US, false);
    let lat_meaning = match lv {
        Verdict::Good => format!("io_uring_enter for {what} returns in {p99:.0} µs at p99: submission does not stall the reactor"),
        _ => format!(
            "io_uring_enter for {what} takes {p99:.0} µs at p99 (max {max:.0} µs): the filesystem does blocking work inline at submission"
        ),
    };
    vec![
        TestResult {
            value: per_io,
            verdict: pv,
            measurements: m.clone(),
            meaning: punt_meaning,
            ..punt_base
        },
        TestResult {
            value: p99,
            verdict: lv,
            measurements: m,
            meaning: lat_meaning,
            ..lat_base
        },
    ]
}
