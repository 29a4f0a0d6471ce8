//! weir-workload: Seastar io_tester's job files, run right.
//!
//! - [`job`] and [`parse`]: the job model and the job-file reader (unknown keys are errors
//!   with line and column; io_tester files are accepted unchanged, plus `seqwrite` and
//!   `prepare`).
//! - [`sched_groups`]: io_tester's `--sched-groups` file (supergroups with `parent`) and the
//!   join of jobs to groups by `class`.
//! - [`driver`]: the per-shard loop, generic over [`weir_model::device::Device`] so it runs on
//!   the real rings and on the simulated disk. Closed-loop fibers (`parallelism`, `think_time`)
//!   and open-loop arrivals ([`arrival`]: `rps`, uniform or Poisson), with open-loop latency
//!   measured from the intended send time, so a stalled disk cannot hide.
//! - [`hist`]: exact HDR histograms per job and shard, merged across shards; three slots per
//!   request: total latency, time in queue, time in the disk.
//! - [`verify`]: every written block carries its offset, write sequence and checksum.
//! - [`run()`]: the library entry point (also used by `weir tune` and `weir align`), and
//!   [`report`]: the table, JSON and io_tester-YAML renderings.
//!
//! ```no_run
//! use std::time::Duration;
//! use weir_workload::{job::{Job, JobType, Plan}, run, Control, RunOptions};
//!
//! let mut job = Job::new("writes", JobType::SeqWrite);
//! job.request_bytes = 128 * 1024;
//! job.data_size_bytes = Some(256 << 20);
//! let options = RunOptions {
//!     dir: Some("/mnt/data".into()),
//!     duration: Duration::from_secs(5),
//!     shards: 1,
//!     sample_interval: Some(Duration::from_secs(1)),
//!     ..RunOptions::default()
//! };
//! let report = run(&Plan::new(vec![job]), &options, &mut |p| {
//!     eprintln!("{:?}: {} ops", p.elapsed, p.jobs[0].ops);
//!     Control::Continue
//! })?;
//! println!("{}", report.to_text());
//! # Ok::<(), weir_workload::RunError>(())
//! ```

pub mod arrival;
mod check;
mod class_report;
mod cpu;
pub mod driver;
pub mod eagain;
mod error;
mod factory;
pub mod hist;
mod inline;
mod io_tester_yaml;
pub mod job;
mod job_report;
mod job_run;
mod measures;
mod merge;
pub mod null_device;
mod options;
pub mod parse;
pub mod report;
mod request;
pub mod run;
mod sampled;
pub mod sched_groups;
mod scheduling;
mod setup;
mod text_table;
mod unlink;
mod vectored;
pub mod verify;
pub use vectored::segment_alignment_bytes;

pub use error::OptionsError;
pub use job::{Job, JobType, Plan, Prepare};
pub use report::Report;
pub use request::Failure;
pub use run::{
    run, run_with, Control, DeviceFactory, DeviceOpenError, EngineFactory, JobProgress, Progress,
    RunError, RunOptions, SchedulerOptions, SetupError, UsageError,
};
