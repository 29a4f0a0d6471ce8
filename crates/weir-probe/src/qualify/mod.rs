//! Filesystem qualification (fsqual, extended): does this filesystem really perform direct
//! I/O asynchronously, or does it block the submitting thread?
//!
//! Linux AIO: the kernel silently turns an asynchronous request that must wait (an appending
//! write on a filesystem that serializes size changes) into a synchronous one, so `io_submit`
//! sleeps. We count the submitting thread's voluntary context switches
//! (`getrusage(RUSAGE_THREAD).ru_nvcsw`) around each `io_submit`: GOOD below 0.1 per I/O.
//!
//! io_uring never blocks the submitter that way: a request that would block is handed to an
//! io-wq kernel worker thread. So for io_uring we measure what does reveal blocking: EAGAIN
//! answers under RWF_NOWAIT, the context switches of the `iou-wrk-*` worker threads (each
//! punted request that sleeps switches at least once), and the submission latency (inline work
//! done inside `io_uring_enter`).
//!
//! RWF_NOWAIT effectiveness: a thread-per-core engine submits with RWF_NOWAIT and retries from a
//! helper thread on EAGAIN; we count EAGAINs per 1000 writes (GOOD at most 1, fsqual's rule).

mod aio;
mod drive;
mod error;
pub mod file;
mod uring;

use std::path::Path;

use serde::Serialize;

pub use error::{PrepareStep, QualifyError};
pub use file::Layout;

/// A verdict with the number behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    Good,
    Bad,
    /// The test could not run (the error says why).
    Error,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Good => "GOOD",
            Verdict::Bad => "BAD",
            Verdict::Error => "ERROR",
        }
    }
}

/// What a test does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    Append,
    PretruncateFill,
    PreallocFill,
    Overwrite,
    Read,
}

impl Workload {
    fn layout(self) -> Layout {
        match self {
            Workload::Append => Layout::Append,
            Workload::PretruncateFill => Layout::Pretruncate,
            Workload::PreallocFill => Layout::Preallocate,
            Workload::Overwrite | Workload::Read => Layout::Written,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Workload::Append => "append",
            Workload::PretruncateFill => "pretruncate_fill",
            Workload::PreallocFill => "prealloc_fill",
            Workload::Overwrite => "overwrite",
            Workload::Read => "read",
        }
    }
}

/// The measured details of one test (fields that do not apply are absent).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Measurements {
    pub ios: u64,
    /// Voluntary context switches of the submitting thread inside io_submit (AIO).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submitter_switches: Option<u64>,
    /// EAGAIN answers under RWF_NOWAIT.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eagain: Option<u64>,
    /// Distinct io-wq worker threads seen during the test (io_uring).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iowq_workers: Option<u64>,
    /// Voluntary context switches of those workers during the test (a lower bound: a worker
    /// that exits between samples takes its count with it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iowq_switches: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submit_us_p50: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submit_us_p99: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submit_us_max: Option<f64>,
}

/// One qualification test's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestResult {
    /// Stable id, e.g. `aio.append.depth1`, `uring.nowait.overwrite` (docs/reference/probe.md).
    pub id: String,
    /// `linux-aio` or `io_uring`.
    pub engine: String,
    pub workload: Workload,
    pub depth: u32,
    pub dsync: bool,
    pub nowait: bool,
    /// What `value` measures, e.g. `context_switches_per_io`, `eagain_per_1000`.
    pub metric: String,
    pub value: f64,
    /// GOOD when `value` is below this (or at most, for EAGAIN counts).
    pub threshold: f64,
    pub verdict: Verdict,
    pub measurements: Measurements,
    /// What the verdict means for the user.
    pub meaning: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl TestResult {
    /// A test about to run: its identity, metric and threshold, with an `Error` verdict and
    /// no measurements until it has measured (so a test that fails early still reports what it
    /// was). `dsync` and `nowait` start false; callers set them with struct update syntax.
    pub(crate) fn pending(
        engine: &str,
        id: String,
        workload: Workload,
        depth: u32,
        metric: &str,
        threshold: f64,
    ) -> TestResult {
        TestResult {
            id,
            engine: engine.into(),
            workload,
            depth,
            dsync: false,
            nowait: false,
            metric: metric.into(),
            value: 0.0,
            threshold,
            verdict: Verdict::Error,
            measurements: Measurements::default(),
            meaning: String::new(),
            error: None,
        }
    }
}

/// Options for a qualification run.
#[derive(Debug, Clone)]
pub struct QualifyOptions {
    /// Requests per context-switch test (fsqual uses 10000).
    pub ios: u64,
    /// Requests per RWF_NOWAIT test.
    pub nowait_ios: u64,
    pub request_bytes: u32,
    /// Run the Linux AIO tests.
    pub aio: bool,
    /// Run the io_uring tests.
    pub uring: bool,
}

impl Default for QualifyOptions {
    fn default() -> Self {
        QualifyOptions {
            ios: 1000,
            nowait_ios: 1000,
            request_bytes: 4096,
            aio: true,
            uring: true,
        }
    }
}

pub(crate) const SWITCH_THRESHOLD: f64 = 0.1;
pub(crate) const EAGAIN_THRESHOLD_PER_1000: f64 = 1.0;
/// p99 submission latency above which io_uring's inline work counts as blocking: a
/// thread-per-core reactor's task quota is about 500 µs, and one submit should not eat a fifth.
pub(crate) const SUBMIT_P99_THRESHOLD_US: f64 = 100.0;

/// Runs every enabled test in `dir`, in order, and returns all results (failed tests carry
/// `Verdict::Error` and the reason; later tests still run).
pub fn qualify(dir: &Path, opts: &QualifyOptions) -> Vec<TestResult> {
    let mut out = Vec::new();
    if opts.aio {
        out.extend(aio::run_all(dir, opts));
    }
    if opts.uring {
        out.extend(uring::run_all(dir, opts));
    }
    out
}

pub(crate) fn verdict(value: f64, threshold: f64, inclusive: bool) -> Verdict {
    let good = if inclusive {
        value <= threshold
    } else {
        value < threshold
    };
    if good {
        Verdict::Good
    } else {
        Verdict::Bad
    }
}

/// Fills in an error result for a test that could not run.
pub(crate) fn error_result(mut base: TestResult, e: &QualifyError) -> TestResult {
    base.verdict = Verdict::Error;
    base.value = f64::NAN;
    base.error = Some(e.to_string());
    base.meaning = "the test did not run; see the error".into();
    base
}

/// Percentile of sorted microsecond samples (nearest rank).
pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_thresholds() {
        assert_eq!(verdict(0.099, SWITCH_THRESHOLD, false), Verdict::Good);
        assert_eq!(verdict(0.1, SWITCH_THRESHOLD, false), Verdict::Bad);
        // fsqual's NOWAIT rule is "at most one EAGAIN".
        assert_eq!(verdict(1.0, EAGAIN_THRESHOLD_PER_1000, true), Verdict::Good);
        assert_eq!(verdict(2.0, EAGAIN_THRESHOLD_PER_1000, true), Verdict::Bad);
    }

    #[test]
    fn percentile_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&v, 100.0), 100.0);
        assert_eq!(percentile(&[], 99.0), 0.0);
        assert_eq!(percentile(&[7.0], 1.0), 7.0);
    }

    #[test]
    fn runs_in_a_temp_dir_with_every_result_measured() {
        // Real files on whatever filesystem holds the temp dir; the verdicts depend on it, so
        // only the shape is asserted: every test ran and counted what it says it counts.
        let dir = tempfile::tempdir().expect("tempdir");
        let opts = QualifyOptions {
            ios: 12,
            nowait_ios: 12,
            ..QualifyOptions::default()
        };
        let results = qualify(dir.path(), &opts);
        assert_eq!(results.len(), 15 + 3 + 8, "{results:#?}");
        for r in &results {
            if r.verdict == Verdict::Error {
                let e = r.error.as_deref().unwrap_or("");
                // A temp dir on tmpfs has no real direct I/O, or io_uring may be disabled;
                // anything else must run.
                assert!(
                    e.contains("O_DIRECT") || e.contains("io_uring"),
                    "{}: {e}",
                    r.id
                );
                continue;
            }
            assert!(r.measurements.ios >= 12, "{r:#?}");
            assert!(r.value.is_finite(), "{r:#?}");
        }
        let mut ids: Vec<&str> = results.iter().map(|r| r.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), results.len(), "ids are unique");
        assert!(
            std::fs::read_dir(dir.path())
                .expect("read_dir")
                .next()
                .is_none(),
            "scratch files left behind"
        );
    }
}
