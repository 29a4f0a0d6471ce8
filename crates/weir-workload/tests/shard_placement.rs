//! Every shape of shard placement: jobs on `[0]`, `[1]`, `[1, 0]` and `all`, in every order
//! beside one another, on the simulated disk (with and without the scheduler, two and three
//! shards) and on real files with io_uring and Linux AIO.
//!
//! A shard runs only the jobs placed on it, so its list of jobs is a subsequence of the
//! plan's. The driver once indexed that list by the plan's job index, which crashed ("index
//! out of bounds", "buffer 1 of 1") as soon as a job was missing from a shard that ran a later
//! job. Jobs here differ in type and parallelism so that any mix-up between two jobs shows as
//! a crash, a job on the wrong shard, or a job with no requests.

mod common;

use std::time::Duration;

use common::Sim;
use weir_engine::Backend;
use weir_sim::SimConfig;
use weir_workload::parse::parse_plan;
use weir_workload::run::SchedulerOptions;
use weir_workload::{run, run_with, Control, Report, RunOptions};

/// The four placements: how a job file spells them, and the shards they mean out of `n`.
const PLACEMENTS: [&str; 4] = ["[0]", "[1]", "[1, 0]", "all"];

fn placement_shards(placement: &str, shard_count: usize) -> Vec<usize> {
    match placement {
        "[0]" => vec![0],
        "[1]" => vec![1],
        "[1, 0]" => vec![0, 1],
        _ => (0..shard_count).collect(),
    }
}

/// Every ordered pair of placements (a placement beside itself included), then every order
/// of all four together.
fn shapes() -> Vec<Vec<&'static str>> {
    let mut shapes = Vec::new();
    for a in PLACEMENTS {
        for b in PLACEMENTS {
            shapes.push(vec![a, b]);
        }
    }
    permutations(&PLACEMENTS, &mut Vec::new(), &mut shapes);
    shapes
}

fn permutations(
    rest: &[&'static str],
    prefix: &mut Vec<&'static str>,
    out: &mut Vec<Vec<&'static str>>,
) {
    if rest.is_empty() {
        out.push(prefix.clone());
        return;
    }
    for i in 0..rest.len() {
        let mut left = rest.to_vec();
        prefix.push(left.remove(i));
        permutations(&left, prefix, out);
        prefix.pop();
    }
}

/// A job file with one job per placement: reads and writes alternate and each job keeps a
/// different number of requests in flight.
fn job_file(shape: &[&str]) -> String {
    let mut text = String::new();
    for (i, placement) in shape.iter().enumerate() {
        let job_type = if i % 2 == 0 { "randread" } else { "seqwrite" };
        text.push_str(&format!(
            "- name: j{i}\n  shards: {placement}\n  type: {job_type}\n  data_size: 4MB\n  \
             shard_info:\n    parallelism: {}\n    reqsize: 4kB\n",
            i + 1
        ));
    }
    text
}

/// Each job ran on exactly its shards and nothing failed; with `every_shard_busy`, each job
/// also completed requests on each of its shards (the simulated disk: deterministic). On real
/// files a shard of a contended host may see no completion of a QD1 job within the short
/// window, so there each job must have completed requests somewhere.
fn check(report: &Report, shape: &[&str], shard_count: usize, every_shard_busy: bool, what: &str) {
    assert!(
        report.stopped_early.is_none(),
        "{what}: {:?}",
        report.stopped_early
    );
    assert_eq!(report.jobs.len(), shape.len(), "{what}");
    for (job, placement) in report.jobs.iter().zip(shape) {
        let mut ran_on: Vec<usize> = job.per_shard.iter().map(|s| s.shard).collect();
        ran_on.sort_unstable();
        assert_eq!(
            ran_on,
            placement_shards(placement, shard_count),
            "{what}: job {} placed on {placement}",
            job.name
        );
        assert_eq!(job.errors, 0, "{what}: job {}", job.name);
        assert!(
            job.throughput.ops > 0,
            "{what}: job {} did nothing",
            job.name
        );
        for shard in job.per_shard.iter().filter(|_| every_shard_busy) {
            assert!(
                shard.throughput.ops > 0,
                "{what}: job {} did nothing on shard {}",
                job.name,
                shard.shard
            );
        }
    }
}

/// The scheduler path of the loop (requests enqueued, pieces dispatched and settled) without
/// its limits: shards on the simulated disk each keep their own virtual clock, so a budget
/// shared between them would compare unrelated times.
fn sim_scheduler(config: &SimConfig) -> SchedulerOptions {
    let model = weir_model::cost::CostModel::new(
        config.read.iops,
        config.read.bytes_per_sec,
        config.write.iops,
        config.write.bytes_per_sec,
        1.0,
        false,
    )
    .expect("model");
    SchedulerOptions {
        model,
        config: weir_sched::SchedConfig {
            unlimited: true,
            ..weir_sched::SchedConfig::default()
        },
        mountpoint: "/sim".into(),
        merge_adjacent: true,
        groups: None,
    }
}

#[test]
fn every_placement_runs_on_the_simulated_disk() {
    let seed = std::env::var("WEIR_SIM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(19);
    let config = SimConfig::nvme_like(seed);
    let factory = Sim {
        config: config.clone(),
    };
    for shard_count in [2, 3] {
        for scheduled in [false, true] {
            for shape in shapes() {
                let what = format!(
                    "seed {seed}, {shard_count} shards, scheduler {scheduled}, shape {shape:?}"
                );
                let plan = parse_plan(&job_file(&shape)).unwrap_or_else(|e| panic!("{what}: {e}"));
                let options = RunOptions {
                    dir: None,
                    duration: Duration::from_millis(20),
                    shards: shard_count,
                    seed,
                    scheduler: scheduled.then(|| sim_scheduler(&config)),
                    ..RunOptions::default()
                };
                let report = run_with(&plan, &options, &factory, &mut |_| Control::Continue)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                check(&report, &shape, shard_count, true, &what);
            }
        }
    }
}

#[test]
fn every_placement_runs_on_real_files_with_both_backends() {
    let dir = tempfile::Builder::new()
        .prefix("weir-placement-")
        .tempdir_in("/var/tmp")
        .expect("temp dir");
    // The simulated disk runs every shape on every path; on real files each ordered pair of
    // placements runs once, the backends taking turns, and the full four-way shape on both
    // backends: every placement meets every other on real I/O in about 18 s rather than 80.
    let pairs = shapes().into_iter().filter(|shape| shape.len() == 2);
    let mut runs: Vec<(Backend, Vec<&'static str>)> = pairs
        .enumerate()
        .map(|(i, shape)| (Backend::ALL[i % Backend::ALL.len()], shape))
        .collect();
    for backend in Backend::ALL {
        runs.push((backend, PLACEMENTS.to_vec()));
    }
    for (backend, shape) in runs {
        let what = format!("{backend}, shape {shape:?}");
        let plan = parse_plan(&job_file(&shape)).unwrap_or_else(|e| panic!("{what}: {e}"));
        let options = RunOptions {
            dir: Some(dir.path().to_path_buf()),
            // A second, not 200 ms: vda stalls for a few hundred ms at times, and a QD1
            // job can complete nothing in a 200 ms window.
            duration: Duration::from_millis(1000),
            shards: 2,
            backend,
            ..RunOptions::default()
        };
        let report = run(&plan, &options, &mut |_| Control::Continue)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        check(&report, &shape, 2, false, &what);
    }
}
