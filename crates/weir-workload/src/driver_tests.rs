//! The driver on a deterministic fake disk (virtual clock, fixed service time, an optional
//! stall), through the public [`crate::run_with`] API.

use crate::run::DeviceOpenError;
use std::time::Duration;

use weir_model::device::{Device, DeviceError, IoCompletion, IoOp};

use crate::job::{Job, JobType, PauseDistribution, Plan};
use crate::run::{run_with, Control, DeviceFactory, RunOptions};

/// Completes every request `service_ns` after submission, except that nothing completes
/// inside `[stall_from_ns, stall_until_ns)`: those requests finish at the stall's end.
struct FakeDisk {
    now_ns: u64,
    service_ns: u64,
    stall: (u64, u64),
    queued: Vec<IoOp>,
    pending: Vec<(u64, u64, i32)>,
    ready: Vec<IoCompletion>,
}

impl Device for FakeDisk {
    fn now_ns(&self) -> u64 {
        self.now_ns
    }

    fn capacity(&self) -> u32 {
        4096
    }

    unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError> {
        self.queued.push(op);
        Ok(())
    }

    fn submit_and_wait(&mut self, min: u32, deadline: Option<u64>) -> Result<u32, DeviceError> {
        let submitted = self.queued.len() as u32;
        for op in self.queued.drain(..) {
            let mut done = self.now_ns + self.service_ns;
            if done >= self.stall.0 && self.now_ns < self.stall.1 {
                done = done.max(self.stall.1);
            }
            self.pending.push((done, op.user_data, op.len_bytes as i32));
        }
        let in_flight = (self.pending.len() + self.ready.len()) as u32;
        let min = min.min(in_flight);
        if (self.ready.len() as u32) < min || (min == 0 && deadline.is_some()) {
            let next = self.pending.iter().map(|p| p.0).min();
            let target = match (next, deadline) {
                (Some(n), Some(d)) => n.min(d),
                (Some(n), None) => n,
                (None, Some(d)) => d,
                (None, None) => self.now_ns,
            };
            self.now_ns = self.now_ns.max(target);
        }
        let now = self.now_ns;
        let mut still = Vec::with_capacity(self.pending.len());
        for (done, user_data, result) in self.pending.drain(..) {
            if done <= now {
                self.ready.push(IoCompletion {
                    user_data,
                    result,
                    completed_at_ns: done,
                });
            } else {
                still.push((done, user_data, result));
            }
        }
        self.pending = still;
        Ok(submitted)
    }

    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        let n = self.ready.len();
        out.append(&mut self.ready);
        n
    }
}

struct Fake {
    stall: (u64, u64),
}

impl DeviceFactory for Fake {
    type Device = FakeDisk;

    fn name(&self) -> String {
        "fake".into()
    }

    fn open(&self, _shard: usize, _depth: u32) -> Result<FakeDisk, DeviceOpenError> {
        Ok(FakeDisk {
            now_ns: 1_000_000,
            service_ns: 100_000,
            stall: self.stall,
            queued: Vec::new(),
            pending: Vec::new(),
            ready: Vec::new(),
        })
    }
}

fn options(duration_ms: u64) -> RunOptions {
    RunOptions {
        dir: None,
        duration: Duration::from_millis(duration_ms),
        shards: 1,
        ..RunOptions::default()
    }
}

fn reads(name: &str) -> Job {
    let mut job = Job::new(name, JobType::RandRead);
    job.data_size_bytes = Some(64 << 20);
    job
}

/// A 100 ms stall half-way through a 1 s run (the fake clock starts at 1 ms).
const STALL: (u64, u64) = (501_000_000, 601_000_000);

#[test]
fn open_loop_latency_counts_a_stall_in_full() {
    let mut open = reads("open");
    open.rps = Some(1000);
    let plan = Plan::new(vec![open]);
    let report = run_with(&plan, &options(1000), &Fake { stall: STALL }, &mut |_| {
        Control::Continue
    })
    .expect("run");
    let job = &report.jobs[0];
    // Every arrival during the stall waits for its end: ~100 of ~1000 requests, with
    // latencies spread from 100 ms down to 0. A closed-loop measurement would record one.
    assert!(
        (990..=1001).contains(&job.throughput.ops),
        "{}",
        job.throughput.ops
    );
    assert!(
        (job.latencies.latency_us.p50 - 100.0).abs() < 2.0,
        "{:?}",
        job.latencies.latency_us
    );
    assert!(
        job.latencies.latency_us.p95 > 45_000.0,
        "{:?}",
        job.latencies.latency_us
    );
    assert!(
        job.latencies.latency_us.max > 99_000.0,
        "{:?}",
        job.latencies.latency_us
    );
    // With 32 request slots, most of the stall is spent in the backlog (queue), not the disk.
    assert!(
        job.latencies.queue_latency_us.max > 60_000.0,
        "{:?}",
        job.latencies.queue_latency_us
    );
}

#[test]
fn closed_loop_hides_the_same_stall() {
    let plan = Plan::new(vec![reads("closed")]);
    let report = run_with(&plan, &options(1000), &Fake { stall: STALL }, &mut |_| {
        Control::Continue
    })
    .expect("run");
    let job = &report.jobs[0];
    // One fiber: one request sees the stall; p99 stays at the service time.
    assert!(
        (job.latencies.latency_us.p99 - 100.0).abs() < 2.0,
        "{:?}",
        job.latencies.latency_us
    );
    assert!(job.latencies.latency_us.max > 99_000.0);
    // 0.9 s of 100 us requests plus the one stalled request.
    assert!(
        (8990..=9010).contains(&job.throughput.ops),
        "{}",
        job.throughput.ops
    );
}

#[test]
fn parallelism_think_time_and_limit_on_a_virtual_clock() {
    let mut two = reads("two");
    two.parallelism = 2;
    let mut thinker = reads("thinker");
    thinker.think_time = Duration::from_micros(900);
    let mut limited = reads("limited");
    limited.limit = Some(123);
    let plan = Plan::new(vec![two, thinker, limited]);
    let report = run_with(&plan, &options(1000), &Fake { stall: (0, 0) }, &mut |_| {
        Control::Continue
    })
    .expect("run");
    let ops: Vec<u64> = report.jobs.iter().map(|j| j.throughput.ops).collect();
    assert!((19_990..=20_000).contains(&ops[0]), "{ops:?}");
    // 100 us of service + 900 us of thinking: 1000 per second.
    assert!((995..=1000).contains(&ops[1]), "{ops:?}");
    assert_eq!(ops[2], 123);
}

#[test]
fn think_after_alternates_active_and_thinking_phases() {
    // io_tester's thinker: 50 ms without pauses (100 us requests: 500 of them), then a 50 ms
    // thinking phase in which the first completion pauses the fiber 50 ms, and again.
    let mut job = reads("phases");
    job.think_time = Duration::from_millis(50);
    job.think_after = Duration::from_millis(50);
    let report = run_with(
        &Plan::new(vec![job]),
        &options(1000),
        &Fake { stall: (0, 0) },
        &mut |_| Control::Continue,
    )
    .expect("run");
    // 10 periods of ~500 requests; thinking for good after the first 50 ms would give ~519.
    let ops = report.jobs[0].throughput.ops;
    assert!((4_950..=5_020).contains(&ops), "{ops}");
}

#[test]
fn uniform_and_poisson_rates_match_the_request() {
    for distribution in [PauseDistribution::Uniform, PauseDistribution::Poisson] {
        let mut job = reads("rate");
        job.rps = Some(500);
        job.parallelism = 2;
        job.batch = 3;
        job.pause_distribution = distribution;
        let plan = Plan::new(vec![job]);
        let report = run_with(&plan, &options(2000), &Fake { stall: (0, 0) }, &mut |_| {
            Control::Continue
        })
        .expect("run");
        // 500/s x 2 fibers x 3 per batch x 2 s = 6000.
        let ops = report.jobs[0].throughput.ops as f64;
        assert!((ops - 6000.0).abs() < 300.0, "{distribution:?}: {ops}");
    }
}

#[test]
fn bandwidth_paces_bytes_and_counts_a_stall_from_the_intended_time() {
    for distribution in [PauseDistribution::Uniform, PauseDistribution::Poisson] {
        // (The fake disk completes 4 KiB per request.)
        let mut job = Job::new("bw", JobType::SeqWrite);
        job.data_size_bytes = Some(256 << 20);
        // 16 MiB/s of 4 KiB writes: 4096 per second, whatever the parallelism.
        job.bandwidth_bytes_per_s = Some(16 << 20);
        job.parallelism = 8;
        job.pause_distribution = distribution;
        let plan = Plan::new(vec![job]);
        let report = run_with(&plan, &options(1000), &Fake { stall: STALL }, &mut |_| {
            Control::Continue
        })
        .expect("run");
        let job = &report.jobs[0];
        let mib_per_s = job.throughput.bandwidth_bytes_per_s / f64::from(1 << 20);
        assert!(
            (mib_per_s - 16.0).abs() < 1.6,
            "{distribution:?}: {mib_per_s} MiB/s"
        );
        assert_eq!(job.bandwidth_limit_bytes_per_s, Some(16 << 20));
        // Arrivals during the 100 ms stall are timed from when they were due, as with rps.
        assert!(
            job.latencies.latency_us.max > 90_000.0,
            "{distribution:?}: {:?}",
            job.latencies.latency_us
        );
        assert!(
            job.latencies.latency_us.p50 < 200.0,
            "{distribution:?}: {:?}",
            job.latencies.latency_us
        );
    }
}

#[test]
fn sampling_sees_progress_and_can_stop_the_run() {
    let plan = Plan::new(vec![reads("r")]);
    let mut opts = options(10_000);
    opts.sample_interval = Some(Duration::from_millis(100));
    let mut samples = Vec::new();
    let report = run_with(&plan, &opts, &Fake { stall: (0, 0) }, &mut |p| {
        samples.push((p.elapsed, p.jobs[0].ops, p.jobs[0].recent_ops));
        if p.elapsed >= Duration::from_millis(300) {
            Control::Stop
        } else {
            Control::Continue
        }
    })
    .expect("run");
    assert_eq!(samples.len(), 3, "{samples:?}");
    assert!(samples.windows(2).all(|w| w[1].1 > w[0].1), "{samples:?}");
    assert!((990..=1000).contains(&samples[0].2), "{samples:?}");
    assert!(
        (report.duration_s - 0.3).abs() < 0.01,
        "{}",
        report.duration_s
    );
    assert_eq!(
        report.stopped_early.as_deref(),
        Some("stopped by the caller")
    );
}

fn scheduled(read_iops: f64, unlimited: bool) -> crate::run::SchedulerOptions {
    let model = weir_model::cost::CostModel::new(read_iops, 1e12, read_iops, 1e12, 1.0, false)
        .expect("model");
    crate::run::SchedulerOptions {
        model,
        // Never above the model, so the cap is exact (by default run-time K raises the rate
        // up to 4x the model while the disk keeps up, as this fake one does).
        config: weir_sched::SchedConfig {
            unlimited,
            max_speed_factor: 1.0,
            max_rate_factor: 1.0,
            ..weir_sched::SchedConfig::default()
        },
        mountpoint: "/fake".into(),
        merge_adjacent: true,
        groups: None,
    }
}

#[test]
fn the_scheduler_caps_the_disk_at_its_model_and_splits_by_shares() {
    let mut low = reads("low");
    low.parallelism = 16;
    low.shares = 100;
    let mut high = reads("high");
    high.parallelism = 16;
    high.shares = 300;
    let plan = Plan::new(vec![low, high]);
    let mut opts = options(1000);
    opts.scheduler = Some(scheduled(10_000.0, false));
    let report = run_with(&plan, &opts, &Fake { stall: (0, 0) }, &mut |_| {
        Control::Continue
    })
    .expect("run");
    let (low, high) = (
        report.jobs[0].throughput.ops as f64,
        report.jobs[1].throughput.ops as f64,
    );
    // 32 requests in flight at 100 us could reach 320,000 IOPS; the model allows 10,000.
    assert!((low + high - 10_000.0).abs() < 1_000.0, "{low} + {high}");
    assert!(
        (high / low - 3.0).abs() < 0.45,
        "shares 300:100 gave {high}:{low}"
    );
    let sched = report.scheduler.as_ref().expect("scheduler section");
    assert_eq!(sched.classes.len(), 2);
    assert!(
        sched.classes[0].latencies.queue_latency_us.p50 > 100.0,
        "{:?}",
        sched.classes[0]
    );
    assert!((sched.classes[0].latencies.disk_latency_us.p50 - 100.0).abs() < 2.0);
    let consumption: f64 = sched.classes.iter().map(|c| c.consumption).sum();
    assert!((consumption - 1.0).abs() < 0.15, "{consumption}");

    // --no-scheduler: the same classes, measured, nothing held back.
    opts.scheduler = Some(scheduled(10_000.0, true));
    let free = run_with(&plan, &opts, &Fake { stall: (0, 0) }, &mut |_| {
        Control::Continue
    })
    .expect("run");
    let total: u64 = free.jobs.iter().map(|j| j.throughput.ops).sum();
    assert!(total > 300_000, "{total}");
    assert!(!free.scheduler.as_ref().expect("section").limiting);
}
