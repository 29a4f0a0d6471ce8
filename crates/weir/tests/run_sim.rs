//! `weir run --simulate DISK.yaml`: job files on the shared simulated disk, the RAID0 member
//! load, chunk-boundary splits, and bad disk files. Virtual time: no disk is touched.

mod common;

use common::*;

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");

fn example(name: &str) -> String {
    format!("{EXAMPLES}/{name}")
}

/// `weir run JOB --simulate DISK EXTRA...`.
fn run_simulated(job: &str, disk: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["run", job, "--simulate", disk];
    args.extend_from_slice(extra);
    weir_with(&args)
}

/// [`run_simulated`] with the report as JSON.
fn simulate(job: &str, disk: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--output", "json"];
    args.extend_from_slice(extra);
    run_simulated(job, disk, &args)
}

/// Seastar's RAID0 question: 64 shards x 8 fibers of 128 KiB writes over four members with 1 MiB chunks.
/// Every shard's region starts on a 1 MiB boundary a multiple of the 4 MiB stripe apart, so
/// every shard starts on member 0. The simulator's answer: the ops and the bytes spread
/// evenly (each member is saturated), but a standing queue stays on member 0 and makes the
/// latency bimodal (p50 well under a millisecond, p95 ~20 ms); with the regions staggered
/// (shard k starting on member k mod 4) the same throughput comes with an even ~5 ms.
#[test]
fn seed_001_raid0_shards_aligned_on_one_member_keep_a_queue_there() {
    let disk = example("sim-raid0.yaml");
    let args = ["--shards", "64", "--duration", "100ms"];
    let aligned = simulate(&example("raid0-64-shards.yaml"), &disk, &args);
    assert_exit(&aligned, 0);
    let v = json(&aligned);
    let members = v["simulated_disk"]["members"].as_array().expect("members");
    assert_eq!(members.len(), 4, "{v}");
    let ops: Vec<u64> = members.iter().filter_map(|m| m["ops"].as_u64()).collect();
    let total: u64 = ops.iter().sum();
    let busiest = *ops.iter().max().expect("four members") as f64 / total as f64;
    let latency = &v["jobs"][0]["latency_us"];
    let (p50, p95) = (latency["p50"].as_f64(), latency["p95"].as_f64());
    println!(
        "aligned: ops per member {ops:?}, busiest share {busiest:.3}, p50 {p50:?} p95 {p95:?}"
    );
    assert!(
        busiest < 0.30,
        "a member carried {busiest:.3} of the ops: {ops:?}"
    );
    // 128 KiB writes inside 1 MiB chunks never cross a boundary.
    assert_eq!(v["simulated_disk"]["split_requests"], 0, "{v}");
    // The array writes well above one member's 3.2 GB/s (the seed measured 10.9 of 4 x 3.2).
    let bytes_per_s = v["jobs"][0]["bandwidth_bytes_per_s"]
        .as_f64()
        .expect("throughput");
    assert!(bytes_per_s > 2.5 * 3.2e9, "{bytes_per_s} B/s: {v}");
    // The standing queue on member 0: 512 x 128 KiB at 3.2 GB/s is ~21 ms.
    assert!(
        p95.expect("p95") > 15_000.0 && p50.expect("p50") < 2_000.0,
        "{latency}"
    );
    // Lockstep on one virtual clock: the same seed gives the same run, thread timing aside.
    let again = json(&simulate(&example("raid0-64-shards.yaml"), &disk, &args));
    assert_eq!(again["simulated_disk"], v["simulated_disk"]);

    let staggered = simulate(&example("raid0-64-shards-staggered.yaml"), &disk, &args);
    assert_exit(&staggered, 0);
    let s = json(&staggered);
    let latency = &s["jobs"][0]["latency_us"];
    println!("staggered: {latency}");
    assert!(
        latency["p99"].as_f64().expect("p99") < 10_000.0,
        "{latency}"
    );
    let staggered_bytes = s["jobs"][0]["bandwidth_bytes_per_s"]
        .as_f64()
        .expect("rate");
    assert!(
        (staggered_bytes / bytes_per_s - 1.0).abs() < 0.1,
        "{staggered_bytes} vs {bytes_per_s}"
    );
}

#[test]
fn requests_crossing_a_chunk_are_split_and_counted() {
    let s = Scratch::new();
    // Sequential 384 KiB requests in 1 MiB chunks: two in every eight cross a boundary; the
    // text table names the count.
    let job = s.job(
        "w.yaml",
        "- name: w\n  type: seqwrite\n  data_size: 64MB\n  shard_info:\n    parallelism: 4\n    \
         reqsize: 384kB\n",
    );
    let disk = example("sim-raid0.yaml");
    let o = run_simulated(
        job.to_str().expect("utf-8"),
        &disk,
        &["--shards", "1", "--duration", "50ms"],
    );
    assert_exit(&o, 0);
    let out = stdout(&o);
    let line = out
        .lines()
        .find(|l| l.starts_with("requests split at chunk boundaries"))
        .unwrap_or_else(|| panic!("no split line in:\n{out}"));
    let split: u64 = line
        .split_whitespace()
        .nth(5)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(split > 0, "{line}");
    // 384 KiB writes at 384 KiB offsets are 4 KiB aligned: no read-modify-write.
    assert!(
        out.contains("(it reports 512 B), paying read-modify-write: 0"),
        "{out}"
    );
    // Nothing was written to the scratch directory or the current one.
    assert!(files_in(s.dir()).is_empty());
}

/// Three write jobs joined to examples/sched-groups.yaml: with every class backlogged and
/// writing alike, the scheduler's shares are what divide the disk (a read beside writes
/// would bring in the tail guard, which holds writes back for the reads' sake).
const GROUP_WRITES: &str = "\
- name: w_statement
  type: seqwrite
  shards: all
  data_size: 1GB
  shard_info:
    parallelism: 16
    reqsize: 128kB
    class: statement
- name: w_compaction
  type: seqwrite
  shards: all
  data_size: 1GB
  shard_info:
    parallelism: 16
    reqsize: 128kB
    class: compaction
- name: w_backup
  type: seqwrite
  shards: all
  data_size: 1GB
  shard_info:
    parallelism: 16
    reqsize: 128kB
    class: backup
";

#[test]
fn writes_misaligned_to_the_true_sector_pay_read_modify_write_whatever_it_reports() {
    let s = Scratch::new();
    // 2 KiB writes on a disk that reports 512 B sectors but has 4 KiB ones.
    let job = s.job(
        "w.yaml",
        "- name: w\n  type: randwrite\n  data_size: 16MB\n  shard_info:\n    reqsize: 2kB\n",
    );
    let o = simulate(
        job.to_str().expect("utf-8"),
        &example("sim-raid0.yaml"),
        &["--shards", "1", "--duration", "20ms"],
    );
    assert_exit(&o, 0);
    let v = json(&o);
    let disk = &v["simulated_disk"];
    assert_eq!(disk["reported_physical_sector_bytes"], 512, "{disk}");
    assert_eq!(disk["physical_sector_bytes"], 4096, "{disk}");
    let ops = v["jobs"][0]["ops"].as_u64().expect("ops");
    let rmw = disk["rmw_writes"].as_u64().expect("rmw");
    assert!(
        ops > 0 && rmw >= ops,
        "every 2 KiB write pays: {rmw} of {ops}"
    );
}

#[test]
fn sched_groups_run_on_the_simulated_disk_through_the_scheduler() {
    let s = Scratch::new();
    let props = s.job(
        "props.yaml",
        "disks:\n  - mountpoint: /sim\n    read_iops: 85000\n    read_bandwidth: 1900M\n    \
         write_iops: 60000\n    write_bandwidth: 1750M\n",
    );
    let jobs = s.job("jobs.yaml", GROUP_WRITES);
    let o = simulate(
        jobs.to_str().expect("utf-8"),
        &example("sim-nvme.yaml"),
        &[
            "--sched-groups",
            &example("sched-groups.yaml"),
            "--io-properties",
            props.to_str().expect("utf-8"),
            "--shards",
            "2",
            "--duration",
            "1s",
        ],
    );
    assert_exit(&o, 0);
    let v = json(&o);
    let classes = v["scheduler"]["classes"].as_array().expect("classes");
    let consumption = |name: &str| {
        classes
            .iter()
            .filter(|c| c["name"] == name)
            .filter_map(|c| c["consumption"].as_f64())
            .sum::<f64>()
    };
    let (statement, compaction, backup) = (
        consumption("statement"),
        consumption("compaction"),
        consumption("backup"),
    );
    println!("disk time per s: statement {statement}, compaction {compaction}, backup {backup}");
    let top = statement / (compaction + backup);
    let inner = compaction / backup;
    assert!(
        (top / 10.0 - 1.0).abs() < 0.1,
        "statement : maintenance {top:.2}"
    );
    assert!(
        (inner / 2.0 - 1.0).abs() < 0.1,
        "compaction : backup {inner:.2}"
    );
}

/// `weir explore` writes the in-disk goal it derived into io-properties.yaml; `weir run` runs
/// the scheduler with it unless --latency-goal is given.
#[test]
fn the_latency_goal_comes_from_io_properties_unless_given() {
    let s = Scratch::new();
    let props = s.job(
        "props.yaml",
        "disks:\n  - mountpoint: /sim\n    read_iops: 85000\n    read_bandwidth: 1900M\n    \
         write_iops: 60000\n    write_bandwidth: 1750M\n    weir_latency_goal_us: 420\n",
    );
    let jobs = s.job("jobs.yaml", GROUP_WRITES);
    let goal_us = |extra: &[&str]| {
        let mut args = vec![
            "--io-properties",
            props.to_str().expect("utf-8"),
            "--duration",
            "100ms",
        ];
        args.extend_from_slice(extra);
        let o = simulate(
            jobs.to_str().expect("utf-8"),
            &example("sim-nvme.yaml"),
            &args,
        );
        assert_exit(&o, 0);
        json(&o)["scheduler"]["latency_goal_us"].as_f64()
    };
    assert_eq!(goal_us(&[]), Some(420.0));
    assert_eq!(goal_us(&["--latency-goal", "1ms"]), Some(1000.0));
}

#[test]
fn bad_disk_files_are_usage_errors_with_line_and_column() {
    let s = Scratch::new();
    let job = s.job("r.yaml", "- name: r\n  type: randread\n");
    let disk = s.job(
        "disk.yaml",
        "seed: 1\nraid0:\n  members: 0\n  chunk_size: 1M\n",
    );
    let (job, disk) = (job.to_str().expect("utf-8"), disk.to_str().expect("utf-8"));
    let o = run_simulated(job, disk, &[]);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("disk.yaml:3:12:") && err.contains("give 1 to 1024"),
        "{err}"
    );
    let o = run_simulated(job, disk, &["--verify"]);
    assert_exit(&o, 2);
}
