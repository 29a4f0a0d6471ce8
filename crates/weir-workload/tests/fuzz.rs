//! A bounded, seeded fuzz of everything an operator can hand weir: job files, io-properties,
//! scheduling-group files and simulated-disk files. Structured mutations of valid files
//! (`fuzz/mutate.rs`) go through each parser; nothing may panic, and a job file that parses
//! and validates must run to the end on the simulated disk (or stop with a clean error).
//!
//! It runs within the normal `cargo test` for a bounded time: `WEIR_FUZZ_SECS` per target
//! (default 6 s), `WEIR_FUZZ_SEED` to replay (every failure prints the seed and its case).

#[path = "fuzz/mutate.rs"]
mod mutate;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use weir_workload::DeviceOpenError;

use mutate::Mutator;
use weir_model::io_properties::IoProperties;
use weir_sched::{SchedConfig, SharedBudget};
use weir_sim::{SharedSim, SharedSimHandle, SimConfig, SimDiskFile};
use weir_workload::parse::parse_plan;
use weir_workload::sched_groups::SchedGroups;
use weir_workload::{run_with, Control, DeviceFactory, Plan, RunOptions};

/// Shards of each simulated run: 2, so jobs on a subset of shards (`shards: [0]`, `[1]`) run
/// beside others (the shape that once crashed shard placement).
const RUN_SHARDS: usize = 2;

fn seed() -> u64 {
    std::env::var("WEIR_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5745_4952_f022)
}

fn budget() -> Duration {
    let secs = std::env::var("WEIR_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(6.0);
    Duration::from_secs_f64(secs)
}

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");

fn example(name: &str) -> String {
    std::fs::read_to_string(format!("{EXAMPLES}/{name}")).expect("example file")
}

/// Job files using every key weir reads.
fn job_corpus() -> Vec<String> {
    let mut corpus: Vec<String> = ["io-tester-doc.yaml", "mixed.yaml", "bandwidth.yaml"]
        .iter()
        .map(|n| example(n))
        .collect();
    corpus.push(
        "- name: a\n  type: randread\n  shards: [0]\n  data_size: 8MB\n  shard_info:\n    \
         parallelism: 4\n    reqsize: 4kB\n    shares: 100\n    class: q\n    limit: 100\n    \
         think_time: 100us\n    think_after: 1ms\n- name: b\n  type: randwrite\n  shards: all\n  \
         data_size: 16MB\n  options:\n    dsync: true\n    pause_distribution: poisson\n    \
         sleep_type: steady\n  shard_info:\n    parallelism: 2\n    rps: 1000\n    batch: 2\n    \
         reqsize: 8kB\n- name: c\n  type: append\n  shards: [1]\n  options:\n    \
         extent_allocation_size_hint: 1MB\n    sloppy_size_hint: 2MB\n    fallocate: true\n  \
         shard_info:\n    bandwidth: 10MB\n    reqsize: 64kB\n- name: d\n  type: seqwrite\n  \
         prepare: pretruncate\n  data_size: 4MB\n  shard_info:\n    reqsize: 128kB\n"
            .to_string(),
    );
    corpus
}

/// Runs `cases` of `target` on mutations of `corpus` until the budget is spent; returns the
/// number of cases. A case returns Err(description) when it found a bug.
fn fuzz(name: &str, corpus: &[String], mut target: impl FnMut(&str) -> Result<(), String>) -> u64 {
    let seed = seed();
    let deadline = Instant::now() + budget();
    let mut failures = Vec::new();
    let mut case = 0u64;
    while Instant::now() < deadline && failures.len() < 5 {
        let mut m = Mutator::new(seed, case);
        let base = &corpus[case as usize % corpus.len()];
        let input = m.mutate(base);
        let outcome = catch_unwind(AssertUnwindSafe(|| target(&input)));
        let failure = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e),
            Err(panic) => Some(format!("panicked: {}", panic_message(&panic))),
        };
        if let Some(f) = failure {
            failures.push(format!(
                "case {case} (WEIR_FUZZ_SEED={seed}): {f}\n--- input ---\n{input}--- end ---"
            ));
        }
        case += 1;
    }
    println!("{name}: {case} cases, seed {seed}");
    assert!(
        failures.is_empty(),
        "{name}: {} failure(s):\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    case
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

struct Sim(std::sync::Arc<SharedSim>);

impl DeviceFactory for Sim {
    type Device = SharedSimHandle;
    fn name(&self) -> String {
        "sim".into()
    }
    fn open(&self, shard: usize, depth: u32) -> Result<SharedSimHandle, DeviceOpenError> {
        self.0.open(shard, depth).map_err(DeviceOpenError::other)
    }
}

/// Runs a validated plan for 2 ms of virtual time on `disk`, in a thread so a hang is
/// reported instead of stalling the suite. Clean usage and setup errors are fine (a plan
/// may ask for more memory than a test should take); an internal error is not.
fn run_briefly(plan: Plan, disk: SimConfig) -> Result<(), String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let options = RunOptions {
            dir: None,
            duration: Duration::from_millis(2),
            shards: RUN_SHARDS,
            ..RunOptions::default()
        };
        let sim = Sim(SharedSim::new(disk, RUN_SHARDS));
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            run_with(&plan, &options, &sim, &mut |_| Control::Continue)
        }));
        let _ = tx.send(match outcome {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) if e.to_string().contains("internal error") => Err(e.to_string()),
            Ok(Err(_)) => Ok(()),
            Err(panic) => Err(format!("run panicked: {}", panic_message(&panic))),
        });
    });
    rx.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| Err("a 2 ms simulated run did not end within 20 s".into()))
}

/// The buffer memory a fuzz case may take (all jobs, all shards).
const TEST_BUFFER_BYTES: u64 = 256 << 20;

fn buffer_bytes(plan: &Plan) -> u64 {
    plan.jobs
        .iter()
        .map(|j| u64::from(j.max_in_flight()) * u64::from(j.request_bytes))
        .sum::<u64>()
        .saturating_mul(RUN_SHARDS as u64)
}

#[test]
fn job_files_never_crash_and_valid_ones_run_to_the_end() {
    let mut ran = 0;
    let cases = fuzz("job files", &job_corpus(), |text| {
        let Ok(plan) = parse_plan(text) else {
            return Ok(());
        };
        plan.validate()
            .map_err(|e| format!("parsed but invalid: {e}"))?;
        // Validation allows up to 16 GiB of buffers per job and shard; a test on a shared
        // machine runs only plans that need little memory.
        if buffer_bytes(&plan) > TEST_BUFFER_BYTES {
            return Ok(());
        }
        ran += 1;
        run_briefly(plan, SimConfig::nvme_like(1))
    });
    println!("{ran} of {cases} mutated job files parsed and ran");
    assert!(
        ran > 0,
        "no mutation of a valid file ran: the harness tests nothing"
    );
}

#[test]
fn io_properties_never_crash() {
    let corpus = vec![
        example("sim-nvme-properties.yaml"),
        "disks:\n  - mountpoints: [/a, /b]\n    read_iops: 95k\n    read_bandwidth: 2GiB\n    \
         write_iops: 10K\n    write_bandwidth: 1G\n    read_saturation_length: 128k\n    \
         write_saturation_length: 64KiB\n    physical_block_size: 4096\n    duplex: true\n    \
         rate_factor: 0.9\n"
            .to_string(),
    ];
    fuzz("io-properties", &corpus, |text| {
        let Ok(props) = IoProperties::parse(text, "fuzz.yaml") else {
            return Ok(());
        };
        for disk in &props.disks {
            let Ok(model) = disk.cost_model() else {
                continue;
            };
            let config = SchedConfig {
                shards: 2,
                ..SchedConfig::default()
            };
            let _ = SharedBudget::new(model, config);
        }
        Ok(())
    });
}

#[test]
fn sched_group_files_never_crash() {
    let corpus = vec![example("sched-groups.yaml")];
    let plan = parse_plan(&example("sched-groups-jobs.yaml")).expect("example jobs");
    fuzz("sched-groups", &corpus, |text| {
        if let Ok(groups) = SchedGroups::parse(text) {
            let _ = groups.place(&plan, "fuzz.yaml");
        }
        Ok(())
    });
}

#[test]
fn disk_files_never_crash_and_valid_ones_run() {
    let corpus = vec![example("sim-raid0.yaml"), example("sim-nvme.yaml")];
    let plan = parse_plan(
        "- name: w\n  type: seqwrite\n  shards: all\n  data_size: 64MB\n  shard_info:\n    \
         parallelism: 4\n    reqsize: 384kB\n- name: r\n  type: randread\n  shards: all\n  \
         data_size: 64MB\n",
    )
    .expect("valid plan");
    let mut ran = 0;
    fuzz("disk files", &corpus, |text| {
        let Ok(file) = SimDiskFile::parse(text) else {
            return Ok(());
        };
        ran += 1;
        run_briefly(plan.clone(), file.config)
    });
    assert!(ran > 0, "no mutated disk file ran");
}

/// Found by this harness: `rps` and `batch` near u32::MAX made the open-loop depth
/// (parallelism x batch) overflow u32 in `Job::max_in_flight` and stopped the shard with an
/// internal error; once that saturated, the run generated 1.6e19 arrivals per second and did
/// not end. The depth saturates, and validation refuses rounds beyond its queue and more than
/// 100M requests/s per shard.
#[test]
fn regression_open_loop_depth_overflowed_u32() {
    let text = "- name: a\n  type: randread\n  data_size: 8MB\n  shard_info:\n    \
                parallelism: 2\n    rps: 4000000000\n    batch: 4000000000\n    reqsize: 4kB\n";
    let e = parse_plan(text).expect_err("too many per round");
    assert!(e.to_string().contains("requests per arrival round"), "{e}");
    assert_eq!(e.line, Some(7), "{e}");
    // Within the round limit, a rate beyond any disk is refused too.
    let e = parse_plan(&text.replace("batch: 4000000000", "batch: 1000")).expect_err("too fast");
    assert!(
        e.to_string().contains("lower rps, batch or parallelism"),
        "{e}"
    );
    assert_eq!(e.line, Some(6), "{e}");
    // Within the limit, the same shape runs to the end.
    let plan = parse_plan(&text.replace("4000000000", "1000")).expect("valid");
    run_briefly(plan, SimConfig::nvme_like(1)).expect("runs to the end");
}

/// Found while fixing the above: a data_size near u64::MAX passed validation and overflowed
/// rounding each shard's part up to 1 MiB.
#[test]
fn regression_data_size_near_u64_max_overflowed() {
    let text = "- name: a\n  type: randread\n  data_size: 18446744073709551615\n";
    let e = parse_plan(text).expect_err("too large");
    assert!(e.to_string().contains("1 EiB"), "{e}");
    assert_eq!(e.line, Some(3), "{e}");
}

/// Found by this harness: parallelism in the millions passed validation and then allocated
/// (and, for writes, filled) one buffer per request: 2,000,000 x 4 KiB is 8 GB; 4e9 x 1 GiB
/// failed only at run time. Validation now refuses more than 16 GiB of buffers per job and
/// shard, naming the field and the fix.
#[test]
fn regression_huge_parallelism_is_refused_before_allocating() {
    let e = parse_plan(
        "- name: a\n  type: randread\n  data_size: 8GB\n  shard_info:\n    \
         parallelism: 4000000000\n    reqsize: 1GB\n",
    )
    .expect_err("too much memory");
    assert!(
        e.to_string().contains("lower parallelism or reqsize"),
        "{e}"
    );
    assert_eq!(e.line, Some(5), "{e}");
}

/// Found while reviewing the simulated disk's clock: `sleep_type: busyloop` polls the device
/// without waiting, and on the simulated disk virtual time moves only inside a wait, so the
/// run never reached its end. An empty poll now takes weir_sim::POLL_NS of virtual time.
#[test]
fn regression_busyloop_on_the_simulated_disk_never_ended() {
    let plan = parse_plan(
        "- name: a\n  type: randread\n  data_size: 8MB\n  options:\n    sleep_type: busyloop\n  \
         shard_info:\n    parallelism: 2\n    rps: 100\n",
    )
    .expect("valid");
    run_briefly(plan, SimConfig::nvme_like(1)).expect("runs to the end");
}

/// Found while checking disk files by hand: with the scheduler, a simulated disk whose
/// `queue_depth` was below the scheduler's window (1 here) never ended: each shard's handle
/// took the disk's queue depth as its ring size. A handle now holds at least what the shard
/// asks for, as a real ring sized to the need does.
#[test]
fn regression_scheduler_on_a_shallow_simulated_disk_never_ended() {
    let plan = parse_plan(&example("mixed.yaml")).expect("valid");
    let disk = SimConfig {
        queue_depth: 1,
        ..SimConfig::nvme_like(1)
    };
    let model = weir_model::cost::CostModel::new(85_000.0, 1.9e9, 60_000.0, 1.75e9, 1.0, false)
        .expect("model");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let options = RunOptions {
            dir: None,
            duration: Duration::from_millis(20),
            shards: 2,
            scheduler: Some(weir_workload::SchedulerOptions {
                model,
                config: SchedConfig::default(),
                mountpoint: "/sim".into(),
                merge_adjacent: true,
                groups: None,
            }),
            ..RunOptions::default()
        };
        let sim = Sim(SharedSim::new(disk, 2));
        let outcome = run_with(&plan, &options, &sim, &mut |_| Control::Continue);
        let _ = tx.send(outcome.map(|_| ()).map_err(|e| e.to_string()));
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("a 20 ms simulated run ends")
        .expect("runs to the end");
}
