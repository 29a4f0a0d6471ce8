//! Running a [`Plan`]: shards, files, the measurement window, progress sampling, the report.
//!
//! [`run`] drives the real engine (io_uring or Linux AIO on files in a directory);
//! [`run_with`] takes any [`DeviceFactory`], e.g. the simulated disk, so callers such as
//! `weir tune` can drive the same jobs in simulation. Shards prepare their files, wait for one
//! another, start together, and stop together when the duration ends, a shard fails, the
//! caller's sampling callback says [`Control::Stop`], or SIGINT/SIGTERM arrives.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use weir_engine::ShardLoop;
use weir_sched::{ClassConfig, GroupConfig, SchedConfig, ShardMetrics, ShardQueue, SharedBudget};

use crate::driver::{self, Failure, JobRun, JobSetup, LoopOptions, Scheduling, StopSignal};
pub use crate::error::{RunError, SetupError, UsageError};
pub use crate::factory::{DeviceFactory, DeviceOpenError, EngineFactory};
use crate::hist::{LatencyHistogram, LatencySummary};
use crate::job::Plan;
pub use crate::options::{RunOptions, SchedulerOptions};
use crate::report::{cpu_usage, JobReport, Report, VerifyReport, SCHEMA_VERSION};
use crate::sampled::{await_window, FinishedOnDrop, Published, ShardMark, ShardWait};
use crate::sched_groups::ClassPlacement;
use crate::setup;
use weir_sched::merge::MergeCounts;

/// What the sampling callback sees: cumulative totals since the start.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Device time since the common start (shard 0's clock).
    pub elapsed: Duration,
    pub jobs: Vec<JobProgress>,
}

/// One job's totals so far, all shards.
#[derive(Debug, Clone)]
pub struct JobProgress {
    pub name: String,
    pub ops: u64,
    pub bytes: u64,
    /// Latency of every request so far.
    pub latency_us: LatencySummary,
    /// Latency of the requests completed since the previous sample.
    pub recent_latency_us: LatencySummary,
    pub recent_ops: u64,
    /// The histogram behind `recent_latency_us`, so a caller that measures in windows (weir
    /// explore) can merge the windows it keeps into exact percentiles.
    pub recent_latency: LatencyHistogram,
}

/// The sampling callback's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Continue,
    Stop,
}

/// Runs `plan` on the real engine. `on_sample` is called every
/// `options.sample_interval` with cumulative progress and may stop the run early (the report
/// then covers the time until the stop). See [`run_with`].
pub fn run(
    plan: &Plan,
    options: &RunOptions,
    on_sample: &mut dyn FnMut(&Progress) -> Control,
) -> Result<Report, RunError> {
    let factory = EngineFactory {
        backend: options.backend,
        nowait: options.nowait,
    };
    run_with(plan, options, &factory, on_sample)
}

/// Runs `plan` on devices from `factory`.
///
/// Returns the full report, or [`RunError::Failed`] with the partial report when the run
/// started and then failed (disk full, I/O error) or was interrupted. Data corruption found
/// by `verify` is not an error here: it is in [`Report::verify`].
pub fn run_with<F: DeviceFactory>(
    plan: &Plan,
    options: &RunOptions,
    factory: &F,
    on_sample: &mut dyn FnMut(&Progress) -> Control,
) -> Result<Report, RunError> {
    plan.validate()
        .map_err(|e| RunError::Usage(UsageError::Plan(e)))?;
    let shard_count = if options.shards == 0 {
        weir_engine::available_cores()
    } else {
        options.shards
    };
    let checked = setup::check(plan, options, shard_count)?;
    let placements = class_placements(plan, options)?;
    let placements = &placements;
    let budget = match &options.scheduler {
        Some(sched) => {
            let config = SchedConfig {
                shards: shard_count,
                ..sched.config.clone()
            };
            let budget = SharedBudget::new(sched.model.clone(), config)
                .map_err(|e| RunError::Usage(UsageError::Scheduler(e)))?;
            Some(Arc::new(budget))
        }
        None => None,
    };
    let budget = &budget;
    let shared = Shared::new(plan, shard_count, options);
    let (tick_tx, tick_rx) = mpsc::sync_channel::<u64>(0);
    let (reply_tx, reply_rx) = mpsc::sync_channel::<bool>(1);
    let results = std::thread::scope(|scope| {
        let shared = &shared;
        let checked = &checked;
        let reply_rx = Mutex::new(reply_rx);
        let tick_tx = Mutex::new(Some(tick_tx));
        let worker = scope.spawn(move || {
            let signal_parts = (&tick_tx, &reply_rx);
            let out = weir_engine::spawn_shards(shard_count, |placement| {
                let _finished = shared.marks.get(placement.shard).map(FinishedOnDrop);
                let signal = ShardSignal {
                    shard: placement.shard,
                    shared,
                    tick: if placement.shard == 0 {
                        signal_parts.0.lock().ok().and_then(|mut t| t.take())
                    } else {
                        None
                    },
                    reply: signal_parts.1,
                };
                let context = ShardContext {
                    plan,
                    options,
                    checked,
                    budget: budget.as_ref(),
                    placements,
                };
                shard_main(placement.shard, &context, factory, &signal)
            });
            // Dropping every sender ends the sampler loop below.
            if let Ok(mut t) = tick_tx.lock() {
                t.take();
            }
            out
        });
        let wait = if factory.simulated_clock() {
            ShardWait::EveryShard
        } else {
            ShardWait::Limited
        };
        let mut window = 0;
        while let Ok(elapsed_ns) = tick_rx.recv() {
            // Shard 0 ended window `window`; the others end it on their own clocks.
            window += 1;
            await_window(&shared.marks, window, wait, &shared.cancel);
            let progress = shared.progress(plan, elapsed_ns);
            let keep_going = on_sample(&progress) == Control::Continue;
            if !keep_going {
                shared.stopped_by_caller.store(true, Ordering::SeqCst);
            }
            let _ = reply_tx.send(keep_going);
        }
        worker.join()
    });
    let shard_results = match results {
        Ok(Ok(r)) => r,
        Ok(Err(panic)) => return Err(RunError::Setup(SetupError::ShardPanicked(panic))),
        Err(_) => return Err(RunError::Setup(SetupError::SupervisorFailed)),
    };
    assemble(
        plan,
        options,
        factory,
        &shared,
        shard_count,
        &checked,
        shard_results,
    )
}

/// What one shard hands back.
#[derive(Default)]
pub(crate) struct ShardResult {
    window_ns: u64,
    /// CPU time of the shard's thread during the loop.
    busy_ns: u64,
    eagain_retries: u64,
    setup_error: Option<RunError>,
    jobs: Vec<FinishedJob>,
    sched_metrics: Option<ShardMetrics>,
    merge_counts: MergeCounts,
    warnings: Vec<String>,
}

/// What every shard needs to start.
struct ShardContext<'a> {
    plan: &'a Plan,
    options: &'a RunOptions,
    checked: &'a setup::Checked,
    budget: Option<&'a Arc<SharedBudget>>,
    /// Each job's class and supergroup (by job index).
    placements: &'a [ClassPlacement],
}

struct FinishedJob {
    index: usize,
    stats: crate::report::ShardJobStats,
    corruptions: Vec<crate::report::CorruptionReport>,
    corruption_count: u64,
    blocks_checked: u64,
}

fn shard_main<F: DeviceFactory>(
    shard: usize,
    context: &ShardContext,
    factory: &F,
    signal: &ShardSignal,
) -> ShardResult {
    let ShardContext { plan, options, .. } = *context;
    let mut result = ShardResult::default();
    // The default timer slack (50 us) would let every timed wait, i.e. every open-loop
    // arrival and think time, wake up to 50 us late; ask for exact wakeups on this thread.
    // SAFETY: PR_SET_TIMERSLACK only changes the calling thread's timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    let (setups, mut scheduling, mut device) = match set_up_shard(shard, context, factory, signal) {
        Ok((setups, scheduling, device, warnings)) => {
            result.warnings = warnings;
            (setups, scheduling, device)
        }
        Err(e) => {
            signal.shared.setup_failed.store(true, Ordering::SeqCst);
            result.setup_error = Some(e);
            return result;
        }
    };
    let sampling = options.sample_interval.is_some();
    let dsync_by_job = plan.jobs.iter().map(|j| j.dsync).collect();
    // Every op's offset and length is a multiple of its job's request size (or of a 4 KiB
    // scheduler piece), which setup checked against the direct-I/O alignment.
    let offset_align_bytes = setups
        .iter()
        .fold(4096, |g, s| gcd(g, s.job.request_bytes))
        .max(1);
    let (mut jobs, pools): (Vec<JobRun>, Vec<_>) = setups
        .into_iter()
        .enumerate()
        .map(|(pos, s)| JobRun::new(s, shard, sampling, pos))
        .unzip();
    // The loop owns the buffers from here: it drains every request before they are freed,
    // and leaks them if the device broke with requests still in the kernel.
    let engine_options = weir_engine::LoopOptions {
        offset_align_bytes,
        ..weir_engine::LoopOptions::default()
    };
    let mut lp = ShardLoop::new(&mut device, pools, engine_options);
    factory.register(&mut lp, &job_fds(&jobs));
    if !signal.shared.barrier() {
        return result;
    }
    let loop_options = LoopOptions {
        duration_ns: options.duration.as_nanos() as u64,
        nowait: options.nowait,
        dsync_by_job,
        busy_poll: jobs.iter().any(|j| j.job.busy_poll),
    };
    let busy_before_ns = thread_cpu_ns();
    let outcome = driver::run_loop(
        &mut lp,
        &mut jobs,
        &loop_options,
        signal,
        scheduling.as_mut(),
    );
    result.busy_ns = thread_cpu_ns().saturating_sub(busy_before_ns);
    result.sched_metrics = scheduling.as_ref().map(|s| s.queue.metrics());
    result.merge_counts = scheduling
        .as_ref()
        .map_or_else(MergeCounts::default, Scheduling::merge_counts);
    result.window_ns = outcome.window_ns;
    if outcome.device_broken {
        // Requests may still be in the kernel: the loop's drop drains them or leaks their
        // buffers; the jobs' files are closed only after it.
        drop(lp);
        return result;
    }
    if options.verify && signal.shared.failure().is_none() {
        verify_files(&mut lp, &mut jobs, signal);
    }
    drop(lp);
    result.eagain_retries = factory.eagain_retries(&device);
    let by_fd = factory.eagain_retries_by_fd(&device);
    finish_jobs(jobs, shard, &by_fd, signal, &mut result);
    drop(device);
    result
}

/// The distinct files the shard's jobs use (for the device to register).
fn job_fds(jobs: &[JobRun]) -> Vec<i32> {
    let mut fds: Vec<i32> = jobs
        .iter()
        .map(|j| j.target.fd)
        .filter(|&fd| fd >= 0)
        .collect();
    fds.sort_unstable();
    fds.dedup();
    fds
}

/// `--verify`: reads every job's file back once the load is over; the first failure stops it.
fn verify_files<D: weir_model::device::Device>(
    lp: &mut ShardLoop<D>,
    jobs: &mut [JobRun],
    signal: &ShardSignal,
) {
    for job in jobs.iter_mut() {
        if let Err(f) = crate::check::final_verify_pass(lp, job) {
            signal.fail(f);
            break;
        }
    }
}

/// What a shard runs with once set up: its jobs' files and buffers, its scheduler queue (when
/// the run schedules), its device, and the warnings setup gave.
type ShardParts<D> = (Vec<JobSetup>, Option<Scheduling>, D, Vec<String>);

/// Prepares the shard's files, its scheduler queue and its device, in that order (the
/// device's depth follows from the jobs and the scheduler's pieces).
fn set_up_shard<F: DeviceFactory>(
    shard: usize,
    context: &ShardContext,
    factory: &F,
    signal: &ShardSignal,
) -> Result<ShardParts<F::Device>, RunError> {
    let ShardContext {
        plan,
        options,
        checked,
        budget,
        placements,
    } = *context;
    let (setups, warnings) =
        setup::prepare_shard(shard, plan, options, checked, signal.shared.shard_count)?;
    // Unlimited (--no-scheduler) holds nothing back, so nothing waits to be merged: the
    // kernel then sees what it would without the scheduler.
    let merge_adjacent = options
        .scheduler
        .as_ref()
        .is_some_and(|s| s.merge_adjacent && !s.config.unlimited);
    let scheduling = budget
        .map(|b| shard_scheduling(b, shard, plan, placements, merge_adjacent))
        .transpose()?;
    let depth = shard_depth(&setups, budget);
    let device = factory
        .open(shard, depth)
        .map_err(|error| RunError::Setup(SetupError::Backend { shard, error }))?;
    Ok((setups, scheduling, device, warnings))
}

/// The requests a shard's device must hold at once: every buffer of every job, and with the
/// scheduler, which may send a request out in pieces, every piece of each.
fn shard_depth(setups: &[JobSetup], budget: Option<&Arc<SharedBudget>>) -> u32 {
    setups
        .iter()
        .map(|s| {
            let pieces = budget.map_or(1, |b| {
                let longest = b
                    .max_request_bytes(weir_model::device::Direction::Read)
                    .min(b.max_request_bytes(weir_model::device::Direction::Write))
                    .max(4096);
                u64::from(s.job.request_bytes).div_ceil(longest) as u32
            });
            s.pool.count() as u32 * pieces
        })
        .sum::<u32>()
        .max(1)
}

/// Hands each job's results to the shard's result: closes its file (a failure to finish it
/// fails the run), takes the EAGAIN retries counted on its descriptor, and warns where an
/// `unlink` job ran out of files.
fn finish_jobs(
    jobs: Vec<JobRun>,
    shard: usize,
    by_fd: &[(i32, u64)],
    signal: &ShardSignal,
    result: &mut ShardResult,
) {
    let single_job = jobs.len() == 1 && by_fd.is_empty();
    for mut job in jobs {
        if let Some(files) = &job.unlink_files {
            if files.exhausted_requests > 0 {
                result.warnings.push(format!(
                    "job `{}`, shard {shard}: {} requests found no file left to unlink (as in \
                     io_tester, each counts as a request); raise files_count or think_time",
                    job.job.name, files.exhausted_requests
                ));
            }
        }
        if let Some(file) = &mut job.target.file {
            if let Err(e) = file.finish() {
                signal.fail(Failure::Io {
                    job: job.job.name.clone(),
                    detail: e.to_string(),
                });
            }
            job.stats.file_bytes = file.file().metadata().map(|m| m.len()).unwrap_or_default();
        }
        if single_job {
            job.stats.eagain_retries = result.eagain_retries;
        } else if let Some((_, n)) = by_fd
            .iter()
            .find(|(fd, _)| *fd == job.target.fd && job.target.fd >= 0)
        {
            job.stats.eagain_retries = *n;
        }
        result.jobs.push(FinishedJob {
            index: job.index,
            stats: std::mem::take(&mut job.stats),
            corruptions: std::mem::take(&mut job.corruptions),
            corruption_count: job.corruption_count,
            blocks_checked: job.blocks_checked,
        });
        // Dropping the job closes (and, unless kept, removes) its file.
    }
}

/// Each job's class: from the `--sched-groups` hierarchy when given, else the job's `class`
/// (or name) at the top level with the job's shares.
fn class_placements(plan: &Plan, options: &RunOptions) -> Result<Vec<ClassPlacement>, RunError> {
    match options.scheduler.as_ref().and_then(|s| s.groups.as_ref()) {
        Some(groups) => groups
            .place(plan, "the --sched-groups file")
            .map_err(|e| RunError::Usage(UsageError::SchedGroups(e))),
        None => Ok(plan
            .jobs
            .iter()
            .map(|job| ClassPlacement {
                class: job.class_name().to_string(),
                shares: job.shares,
                supergroup: None,
            })
            .collect()),
    }
}

/// The shard's scheduler queue with one class per distinct job class on this shard, each in
/// its supergroup when it has one.
fn shard_scheduling(
    budget: &Arc<SharedBudget>,
    shard: usize,
    plan: &Plan,
    placements: &[ClassPlacement],
    merge_adjacent: bool,
) -> Result<Scheduling, RunError> {
    let sched_err = |e: weir_sched::SchedError| RunError::Usage(UsageError::Scheduler(e));
    let mut queue = ShardQueue::new(Arc::clone(budget), shard).map_err(sched_err)?;
    let mut class_by_job = Vec::with_capacity(plan.jobs.len());
    for (job, placement) in plan.jobs.iter().zip(placements) {
        if !job.shards.contains(shard) {
            class_by_job.push(None);
            continue;
        }
        if let Some(id) = queue.class_by_name(&placement.class) {
            class_by_job.push(Some(id));
            continue;
        }
        let config = ClassConfig::new(placement.class.clone(), placement.shares);
        let id = match &placement.supergroup {
            None => queue.add_class(config),
            Some((name, shares)) => {
                let group = match queue.group_by_name(name) {
                    Some(g) => g,
                    None => queue
                        .add_group(GroupConfig::new(name.clone(), *shares))
                        .map_err(sched_err)?,
                };
                queue.add_class_in(group, config)
            }
        }
        .map_err(sched_err)?;
        class_by_job.push(Some(id));
    }
    Ok(Scheduling::new(queue, class_by_job, merge_adjacent))
}

fn assemble<F: DeviceFactory>(
    plan: &Plan,
    options: &RunOptions,
    factory: &F,
    shared: &Shared,
    shard_count: usize,
    checked: &setup::Checked,
    mut shard_results: Vec<ShardResult>,
) -> Result<Report, RunError> {
    if let Some(e) = shard_results.iter_mut().find_map(|r| r.setup_error.take()) {
        return Err(e);
    }
    let window_ns = shard_results.iter().map(|r| r.window_ns).max().unwrap_or(0);
    let window_s = window_ns as f64 / 1e9;
    let mut jobs = Vec::with_capacity(plan.jobs.len());
    let mut verify = options.verify.then(VerifyReport::default);
    for (index, job) in plan.jobs.iter().enumerate() {
        let mut per_shard = Vec::new();
        for r in &shard_results {
            for finished in r.jobs.iter().filter(|f| f.index == index) {
                per_shard.push(finished.stats.clone());
                if let Some(v) = &mut verify {
                    v.blocks_checked += finished.blocks_checked;
                    v.corruptions += finished.corruption_count;
                    v.first.extend(finished.corruptions.iter().cloned());
                }
            }
        }
        jobs.push(JobReport::merge(job, &per_shard, window_s));
    }
    let interrupted = shared.cancel.is_cancelled();
    let failure = shared.failure();
    let stopped_early = if let Some(f) = &failure {
        Some(f.to_string())
    } else if interrupted {
        Some("interrupted (SIGINT or SIGTERM)".to_string())
    } else if shared.stopped_by_caller.load(Ordering::SeqCst) {
        Some("stopped by the caller".to_string())
    } else {
        None
    };
    let sched_metrics: Vec<ShardMetrics> = shard_results
        .iter_mut()
        .filter_map(|r| r.sched_metrics.take())
        .collect();
    let mut merged = MergeCounts::default();
    for r in &shard_results {
        merged.add(r.merge_counts);
    }
    let scheduler = options
        .scheduler
        .as_ref()
        .map(|s| crate::report::SchedulerReport::build(s, &jobs, &sched_metrics, merged, window_s));
    let mut warnings: Vec<String> = shard_results
        .iter()
        .flat_map(|r| r.warnings.iter().cloned())
        .chain(checked.warnings.iter().cloned())
        .collect();
    warnings.sort();
    warnings.dedup();
    let report = Report {
        schema_version: SCHEMA_VERSION,
        duration_s: window_s,
        requested_duration_s: options.duration.as_secs_f64(),
        shards: shard_count,
        backend: factory.name(),
        direct_io: checked.direct_io,
        stopped_early,
        cpu: cpu_usage(),
        eagain_retries: shard_results.iter().map(|r| r.eagain_retries).sum(),
        verify,
        jobs,
        scheduler,
        scheduler_metrics: sched_metrics,
        shard_busy_s: shard_results
            .iter()
            .map(|r| r.busy_ns as f64 / 1e9)
            .collect(),
        warnings,
    };
    match failure {
        Some(f) => Err(RunError::Failed {
            message: f.to_string(),
            interrupted: false,
            failure: Some(f),
            partial: Box::new(report),
        }),
        None if interrupted => Err(RunError::Failed {
            message: "interrupted by SIGINT/SIGTERM: the run stopped early; the results above \
                      cover the time until the signal, and the files were removed"
                .to_string(),
            interrupted: true,
            failure: None,
            partial: Box::new(report),
        }),
        None => Ok(report),
    }
}

/// State shared by all shards and the sampler.
struct Shared {
    shard_count: usize,
    stop: AtomicBool,
    stopped_by_caller: AtomicBool,
    setup_failed: AtomicBool,
    ready: AtomicUsize,
    failure: Mutex<Option<Failure>>,
    sample_interval_ns: Option<u64>,
    /// Indexed [shard][job]; a job not on a shard stays empty.
    published: Vec<Vec<Mutex<Published>>>,
    /// Indexed by shard: windows ended, loop over (see `sampled`).
    marks: Vec<ShardMark>,
    cancel: weir_engine::Cancel,
}

impl Shared {
    fn new(plan: &Plan, shard_count: usize, options: &RunOptions) -> Shared {
        let sampling = options.sample_interval.is_some();
        let published = (0..shard_count)
            .map(|_| {
                plan.jobs
                    .iter()
                    .map(|_| Mutex::new(Published::default()))
                    .take(if sampling { plan.jobs.len() } else { 0 })
                    .collect()
            })
            .collect();
        Shared {
            shard_count,
            stop: AtomicBool::new(false),
            stopped_by_caller: AtomicBool::new(false),
            setup_failed: AtomicBool::new(false),
            ready: AtomicUsize::new(0),
            failure: Mutex::new(None),
            sample_interval_ns: options
                .sample_interval
                .map(|d| (d.as_nanos() as u64).max(1_000_000)),
            published,
            marks: (0..shard_count).map(|_| ShardMark::default()).collect(),
            cancel: options.cancel.clone(),
        }
    }

    /// Waits until every shard is ready. False when another shard failed its setup.
    fn barrier(&self) -> bool {
        self.ready.fetch_add(1, Ordering::SeqCst);
        loop {
            if self.setup_failed.load(Ordering::SeqCst) || self.cancel.is_cancelled() {
                return false;
            }
            if self.ready.load(Ordering::SeqCst) >= self.shard_count {
                return true;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    fn failure(&self) -> Option<Failure> {
        self.failure.lock().ok().and_then(|f| f.clone())
    }

    fn progress(&self, plan: &Plan, elapsed_ns: u64) -> Progress {
        let jobs = plan
            .jobs
            .iter()
            .enumerate()
            .map(|(index, job)| {
                let mut ops = 0;
                let mut bytes = 0;
                let mut recent_ops = 0;
                let mut latency = LatencyHistogram::new();
                let mut recent = LatencyHistogram::new();
                for shard in &self.published {
                    if let Some(Ok(mut p)) = shard.get(index).map(Mutex::lock) {
                        let taken = p.take();
                        ops += p.ops;
                        bytes += p.bytes;
                        recent_ops += taken.ops;
                        latency.add(&p.latency);
                        recent.add(&taken.recent);
                    }
                }
                JobProgress {
                    name: job.name.clone(),
                    ops,
                    bytes,
                    latency_us: latency.summary_us(),
                    recent_latency_us: recent.summary_us(),
                    recent_ops,
                    recent_latency: recent,
                }
            })
            .collect();
        Progress {
            elapsed: Duration::from_nanos(elapsed_ns),
            jobs,
        }
    }
}

/// One shard's view of the shared state, handed to the driver loop.
struct ShardSignal<'a> {
    shard: usize,
    shared: &'a Shared,
    /// Shard 0 only: tells the sampler a sample point has come.
    tick: Option<mpsc::SyncSender<u64>>,
    reply: &'a Mutex<mpsc::Receiver<bool>>,
}

impl StopSignal for ShardSignal<'_> {
    fn should_stop(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed) || self.shared.cancel.is_cancelled()
    }

    fn fail(&self, failure: Failure) {
        if let Ok(mut f) = self.shared.failure.lock() {
            f.get_or_insert(failure);
        }
        self.shared.stop.store(true, Ordering::SeqCst);
    }

    fn sample(&self, elapsed_ns: u64, jobs: &[JobRun]) -> bool {
        if let Some(row) = self.shared.published.get(self.shard) {
            for job in jobs {
                if let (Some(Ok(mut p)), Some(recent)) =
                    (row.get(job.index).map(Mutex::lock), &job.recent)
                {
                    p.push(job.stats.ops, job.stats.bytes, &recent.latency);
                }
            }
            row_marks_window(self.shared, self.shard);
        }
        let Some(tick) = &self.tick else {
            return !self.should_stop();
        };
        if tick.send(elapsed_ns).is_err() {
            return !self.should_stop();
        }
        let keep_going = self
            .reply
            .lock()
            .ok()
            .and_then(|rx| rx.recv().ok())
            .unwrap_or(true);
        if !keep_going {
            self.shared.stop.store(true, Ordering::SeqCst);
        }
        keep_going
    }

    fn sample_interval_ns(&self) -> Option<u64> {
        self.shared.sample_interval_ns
    }
}

/// This shard ended a window (after publishing every job's part of it).
fn row_marks_window(shared: &Shared, shard: usize) {
    if let Some(mark) = shared.marks.get(shard) {
        mark.window_ended();
    }
}

/// CPU time used by the calling thread, in nanoseconds (0 if the clock cannot be read).
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer; CLOCK_THREAD_CPUTIME_ID always exists on Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Greatest common divisor (for the alignment every op of a shard keeps).
fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
