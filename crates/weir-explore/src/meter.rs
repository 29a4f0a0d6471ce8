//! Measuring points: the [`Meter`] trait, and [`WorkloadMeter`], which runs each point as a
//! weir-workload plan (open-loop reads and writes at once) on real files or a simulated disk.

use std::path::PathBuf;

use serde::Serialize;
use weir_workload::hist::LatencyHistogram;
use weir_workload::job::PauseDistribution;
use weir_workload::{
    run_with, Control, DeviceFactory, Job, JobType, Plan, Prepare, Progress, RunError, RunOptions,
};

use crate::error::ExploreError;
use crate::point::{summarize, Load, PointResult, SteadyRule, Window};

/// Where the writes of a map land.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteRegime {
    /// Sequential writes into a new fallocated file per point, sized so it never wraps: what
    /// compaction output and `weir tune` write.
    Fresh,
    /// Sequential writes over a region written before the map (Diskplorer's prefill).
    Overwrite,
}

impl WriteRegime {
    pub fn as_str(self) -> &'static str {
        match self {
            WriteRegime::Fresh => "fresh",
            WriteRegime::Overwrite => "overwrite",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "fresh" => Some(WriteRegime::Fresh),
            "overwrite" => Some(WriteRegime::Overwrite),
            _ => None,
        }
    }
}

/// The closed-loop maxima that set the search's range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Calibration {
    /// Random reads at queue depth 64, no writes.
    pub read_iops: f64,
    /// Sequential writes at queue depth 16, no reads, in each regime.
    pub fresh_write_bytes_per_s: f64,
    pub overwrite_write_bytes_per_s: f64,
}

impl Calibration {
    pub fn write_bytes_per_s(&self, regime: WriteRegime) -> f64 {
        match regime {
            WriteRegime::Fresh => self.fresh_write_bytes_per_s,
            WriteRegime::Overwrite => self.overwrite_write_bytes_per_s,
        }
    }
}

/// Measures points.
pub trait Meter {
    /// The pure closed-loop maxima (the search's range).
    fn calibrate(&mut self) -> Result<Calibration, ExploreError>;
    /// One point at `load`, open-loop, until steady.
    fn measure(&mut self, load: Load) -> Result<PointResult, ExploreError>;
    /// One point at `load` measured for the steady rule's `verify_windows`, neither stopped
    /// early by two agreeing windows nor by one window's tail (a ray's bracket being
    /// verified). Meters without such a rule measure as usual.
    fn measure_long(&mut self, load: Load) -> Result<PointResult, ExploreError> {
        self.measure(load)
    }
}

/// Closed-loop depths of the calibration runs (Diskplorer: reads up to 1000, writes 64; the
/// issue's fio comparison: writes at 16).
const CALIBRATE_READ_DEPTH: u32 = 64;
const CALIBRATE_WRITE_DEPTH: u32 = 16;
/// Open-loop request slots per shard: arrivals beyond them wait in the driver's backlog and
/// count that wait, so the cap bounds memory, not the measured latency.
const OPEN_LOOP_READ_SLOTS: u32 = 256;
const OPEN_LOOP_WRITE_SLOTS: u32 = 64;
const READ_JOB: &str = "explore-read";
/// One job name per regime, so switching regimes never truncates the overwrite region.
const FRESH_JOB: &str = "explore-fresh";
const OVERWRITE_JOB: &str = "explore-overwrite";

/// Runs points as weir-workload plans on `factory`'s devices.
pub struct WorkloadMeter<'a, F: DeviceFactory> {
    pub factory: &'a F,
    /// Directory, shards, backend, seed. `dir: None` runs on a simulated device.
    pub options: RunOptions,
    pub read_bytes: u32,
    pub write_bytes: u32,
    pub regime: WriteRegime,
    /// Total size of the file the random reads cover (laid down once, reused).
    pub read_region_bytes: u64,
    /// Total size of the overwrite regime's region (laid down once, reused).
    pub overwrite_region_bytes: u64,
    /// The largest fresh file (the filesystem's free space bounds it); a point that would
    /// write more wraps within it and the wrap is counted in the run's report.
    pub fresh_file_cap_bytes: u64,
    pub rule: SteadyRule,
    pub goal_us: f64,
}

impl<F: DeviceFactory> WorkloadMeter<'_, F> {
    /// Calibration runs are closed-loop and short: the warm-up and two windows.
    fn calibration_rule(&self) -> SteadyRule {
        SteadyRule {
            max_windows: 2,
            // Never steady early: the two windows are averaged.
            read_p99_tolerance: -1.0,
            read_p99_floor_share: -1.0,
            abandon_p99_factor: f64::INFINITY,
            ..self.rule.clone()
        }
    }

    fn shards(&self) -> usize {
        if self.options.shards == 0 {
            weir_engine::available_cores()
        } else {
            self.options.shards
        }
    }

    fn read_job(&self, read_iops: Option<f64>) -> Job {
        let mut job = Job::new(READ_JOB, JobType::RandRead);
        job.request_bytes = self.read_bytes;
        job.data_size_bytes = Some(self.read_region_bytes);
        match read_iops {
            Some(rate) => {
                let per_shard = rate * f64::from(self.read_bytes) / self.shards() as f64;
                job.bandwidth_bytes_per_s = Some((per_shard.round() as u64).max(1));
                job.pause_distribution = PauseDistribution::Poisson;
                job.parallelism = OPEN_LOOP_READ_SLOTS;
            }
            None => job.parallelism = CALIBRATE_READ_DEPTH,
        }
        job
    }

    fn write_job(&self, regime: WriteRegime, write_bytes_per_s: Option<f64>, seconds: f64) -> Job {
        let mut job = match regime {
            WriteRegime::Fresh => {
                let mut job = Job::new(FRESH_JOB, JobType::SeqWrite);
                job.prepare = Some(Prepare::Fallocate);
                // Big enough that the point never wraps, even at the calibration's rate.
                let rate = write_bytes_per_s.unwrap_or(4e9);
                let size = ((rate * seconds * 1.25) as u64).min(self.fresh_file_cap_bytes);
                job.data_size_bytes = Some(size.max(64 << 20));
                job
            }
            WriteRegime::Overwrite => {
                let mut job = Job::new(OVERWRITE_JOB, JobType::Overwrite);
                job.data_size_bytes = Some(self.overwrite_region_bytes);
                job
            }
        };
        job.request_bytes = self.write_bytes;
        match write_bytes_per_s {
            Some(rate) => {
                let per_shard = rate / self.shards() as f64;
                job.bandwidth_bytes_per_s = Some((per_shard.round() as u64).max(1));
                job.parallelism = OPEN_LOOP_WRITE_SLOTS;
            }
            None => job.parallelism = CALIBRATE_WRITE_DEPTH,
        }
        job
    }

    /// Runs `plan`, cutting it into windows, until `rule` gives a verdict for `offered`.
    fn run_windows(
        &self,
        plan: &Plan,
        offered: Load,
        rule: &SteadyRule,
    ) -> Result<PointResult, ExploreError> {
        let options = RunOptions {
            duration: rule.max_duration() + rule.window / 2,
            sample_interval: Some(rule.window),
            keep_files: true,
            keep_files_until_exit: true,
            ..self.options.clone()
        };
        let mut windows: Vec<Window> = Vec::new();
        let mut verdict = None;
        let mut written_before = 0u64;
        let mut last_elapsed = std::time::Duration::ZERO;
        let mut on_sample = |p: &Progress| {
            let window = window_of(
                p,
                &mut written_before,
                p.elapsed.saturating_sub(last_elapsed),
            );
            last_elapsed = p.elapsed;
            // Samples land just after each window's end on the device clock.
            if p.elapsed < rule.warmup + rule.window / 2 {
                return Control::Continue;
            }
            windows.push(window);
            verdict = rule.verdict(&windows, offered, self.goal_us);
            if verdict.is_some() {
                Control::Stop
            } else {
                Control::Continue
            }
        };
        match run_with(plan, &options, self.factory, &mut on_sample) {
            Ok(_) => {}
            Err(RunError::Usage(e)) => return Err(ExploreError::Workload(e)),
            Err(RunError::Failed {
                interrupted: true, ..
            }) => return Err(ExploreError::Interrupted),
            Err(e) => return Err(ExploreError::Run(Box::new(e))),
        }
        let steady = verdict.unwrap_or(crate::point::Steady::Capped);
        Ok(summarize(offered, &windows, steady, self.goal_us))
    }

    /// A closed-loop run of one job: its achieved rate.
    fn closed_loop(
        &self,
        job: Job,
        rate: impl Fn(&PointResult) -> f64,
    ) -> Result<f64, ExploreError> {
        let rule = self.calibration_rule();
        let idle = Load {
            read_iops: 0.0,
            write_bytes_per_s: 0.0,
        };
        let point = self.run_windows(&Plan::new(vec![job]), idle, &rule)?;
        Ok(rate(&point))
    }
}

/// One sample's window from the cumulative progress.
fn window_of(p: &Progress, written_before: &mut u64, length: std::time::Duration) -> Window {
    let mut window = Window {
        seconds: length.as_secs_f64(),
        reads: 0,
        written_bytes: 0,
        read_latency: LatencyHistogram::new(),
        write_latency: LatencyHistogram::new(),
    };
    for job in &p.jobs {
        if job.name == READ_JOB {
            window.reads = job.recent_ops;
            window.read_latency = job.recent_latency.clone();
        } else if job.name == FRESH_JOB || job.name == OVERWRITE_JOB {
            window.written_bytes = job.bytes.saturating_sub(*written_before);
            *written_before = job.bytes;
            window.write_latency = job.recent_latency.clone();
        }
    }
    window
}

impl<F: DeviceFactory> Meter for WorkloadMeter<'_, F> {
    fn calibrate(&mut self) -> Result<Calibration, ExploreError> {
        let read_iops = self.closed_loop(self.read_job(None), |p| p.achieved_read_iops)?;
        let seconds = self.calibration_rule().max_duration().as_secs_f64();
        let mut rates = [0.0; 2];
        for (i, regime) in [WriteRegime::Fresh, WriteRegime::Overwrite]
            .into_iter()
            .enumerate()
        {
            let job = self.write_job(regime, None, seconds);
            rates[i] = self.closed_loop(job, |p| p.achieved_write_bytes_per_s)?;
        }
        Ok(Calibration {
            read_iops,
            fresh_write_bytes_per_s: rates[0],
            overwrite_write_bytes_per_s: rates[1],
        })
    }

    fn measure(&mut self, load: Load) -> Result<PointResult, ExploreError> {
        self.measure_by(load, &self.rule.clone())
    }

    fn measure_long(&mut self, load: Load) -> Result<PointResult, ExploreError> {
        self.measure_by(load, &self.rule.verifying())
    }
}

impl<F: DeviceFactory> WorkloadMeter<'_, F> {
    fn measure_by(&self, load: Load, rule: &SteadyRule) -> Result<PointResult, ExploreError> {
        let seconds = rule.max_duration().as_secs_f64();
        let mut jobs = Vec::new();
        if load.read_iops > 0.0 {
            jobs.push(self.read_job(Some(load.read_iops)));
        }
        if load.write_bytes_per_s > 0.0 {
            jobs.push(self.write_job(self.regime, Some(load.write_bytes_per_s), seconds));
        }
        if jobs.is_empty() {
            return Err(ExploreError::NoLoad);
        }
        self.run_windows(&Plan::new(jobs), load, rule)
    }
}

/// The test files a map leaves (kept between points so the read file and the overwrite region
/// are written once), for removal at the end.
pub fn leftover_files(dir: &std::path::Path, shards: usize) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for name in [READ_JOB, FRESH_JOB, OVERWRITE_JOB] {
        for shard in 0..shards {
            files.push(dir.join(weir_engine::data_file_name(name, shard as u32)));
        }
    }
    files
}
