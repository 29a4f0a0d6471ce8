//! `weir run` on real files: Seastar's documented example, every preparation mode on both
//! backends (file sizes and contents checked, `--verify` passing), and `--verify` catching a
//! deliberately corrupted block.

mod common;

use std::os::unix::fs::{FileExt, MetadataExt};

use common::*;

const BACKENDS: [&str; 2] = ["uring", "aio"];

#[test]
fn seastar_documented_example_runs_unchanged_and_prints_all_percentiles() {
    let s = Scratch::new();
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/io-tester-doc.yaml"
    );
    // The example reads and writes 1 GiB per shard by default; it runs unchanged, on one
    // shard (the vectorized job's segments are observed in weir-workload's real_files tier).
    let o = run(
        example.as_ref(),
        s.dir(),
        &["--duration", "300ms", "--shards", "1"],
    );
    assert_exit(&o, 0);
    let out = stdout(&o);
    for column in [
        "IOPS",
        "MiB/s",
        "avg",
        "p50",
        "p95",
        "p99",
        "p99.9",
        "max",
        "big_writes",
        "vectorized_writes",
    ] {
        assert!(out.contains(column), "missing {column}:\n{out}");
    }
    assert!(
        files_in(s.dir()).is_empty(),
        "files left: {:?}",
        files_in(s.dir())
    );
}

#[test]
fn seastar_conf_yaml_shape_runs_with_every_job_type_and_prints_io_testers_document() {
    let s = Scratch::new();
    let conf = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/io-tester-conf.yaml"
    );
    let o = run(
        conf.as_ref(),
        s.dir(),
        // A second, not less: the tests beside this one load the same disk, and a 300 ms
        // window has seen vda stall long enough for no write to complete.
        &["--duration", "1s", "--shards", "2", "--output", "yaml"],
    );
    assert_exit(&o, 0);
    let yaml: serde_yaml::Value = serde_yaml::from_slice(&o.stdout).expect("YAML output");
    let shards = yaml.as_sequence().expect("list of shards");
    assert_eq!(shards.len(), 2);
    // What io_tester prints per type (doc/io-tester.md): I/O jobs the full map, cpu only
    // throughput, unlink IOPS, average and max latency and total_requests.
    for (i, shard) in shards.iter().enumerate() {
        assert_eq!(shard["shard"].as_u64(), Some(i as u64));
        let writes = &shard["big_writes"];
        assert!(
            writes["throughput"].as_f64().unwrap_or(0.0) > 0.0,
            "{yaml:?}"
        );
        assert!(writes["stats"]["total_requests"].as_u64().unwrap_or(0) > 0);
        let unlinking = &shard["unlinking"];
        assert!(unlinking["stats"]["total_requests"].as_u64().unwrap_or(0) > 0);
        assert!(unlinking["latencies"]["average"].as_f64().is_some());
        assert!(shard["statistics"]["aio_retries"].as_u64().is_some());
    }
    assert!(shards[0]["latency_reads"]["latencies"]["p0.99"]
        .as_f64()
        .is_some());
    assert!(shards[0]["cpu_hog"]["throughput"].as_f64().unwrap_or(0.0) > 0.0);
    assert!(shards[1]["latency_reads"].is_null() && shards[1]["cpu_hog"].is_null());
    assert!(
        files_in(s.dir()).is_empty(),
        "left: {:?}",
        files_in(s.dir())
    );
}

#[test]
fn dev_null_storage_measures_the_framework_alone() {
    let s = Scratch::new();
    let job = s.job(
        "j.yaml",
        "- name: w\n  type: randwrite\n  shard_info:\n    parallelism: 4\n    reqsize: 64kB\n\
         - name: c\n  type: cpu\n  shard_info:\n    execution_time: 50us\n",
    );
    for storage in [["--device", "/dev/null"], ["--dir", "/dev/null"]] {
        let o = weir_with(&[
            "run",
            job.to_str().expect("utf8"),
            storage[0],
            storage[1],
            "--duration",
            "200ms",
            "--shards",
            "1",
            "--output",
            "json",
        ]);
        assert_exit(&o, 0);
        let v = json(&o);
        assert_eq!(v["backend"], "null", "{v}");
        // Every request completes with its full length; no 1 GiB file was prepared.
        let w = &v["jobs"][0];
        assert!(w["ops"].as_u64().unwrap_or(0) > 0, "{v}");
        assert_eq!(w["bytes"].as_u64(), w["ops"].as_u64().map(|n| n * 65536));
        assert!(v["jobs"][1]["ops"].as_u64().unwrap_or(0) > 0, "{v}");
    }
    assert!(files_in(s.dir()).is_empty(), "{:?}", files_in(s.dir()));
    let o = weir_with(&[
        "run",
        job.to_str().expect("utf8"),
        "--dir",
        "/dev/null",
        "--verify",
    ]);
    assert_exit(&o, 2);
}

#[test]
fn io_tester_yaml_and_json_outputs() {
    let s = Scratch::new();
    let job = s.job(
        "j.yaml",
        "- name: r\n  type: randread\n  data_size: 4MB\n  shard_info:\n    parallelism: 2\n",
    );
    let o = run(
        &job,
        s.dir(),
        &["--duration", "200ms", "--shards", "2", "--output", "yaml"],
    );
    assert_exit(&o, 0);
    let yaml: serde_yaml::Value = serde_yaml::from_slice(&o.stdout).expect("YAML output");
    // Read as a script written for io_tester reads it (Seastar's doc/io-tester.md).
    let shards = yaml.as_sequence().expect("list of shards");
    assert_eq!(shards.len(), 2, "one map per shard");
    for (i, shard) in shards.iter().enumerate() {
        assert_eq!(shard["shard"].as_u64(), Some(i as u64));
        let r = &shard["r"];
        assert!(
            r["throughput"].as_f64().is_some_and(|kbs| kbs > 0.0),
            "{yaml:?}"
        );
        assert!(
            r["IOPS"].as_f64().is_some_and(|iops| iops > 0.0),
            "{yaml:?}"
        );
        assert!(r["latencies"]["p0.999"].as_f64().is_some());
        assert!(r["stats"]["total_requests"].as_u64().unwrap_or(0) > 0);
        assert!(
            r["stats"]["io_queue_total_exec_sec"]
                .as_f64()
                .unwrap_or(0.0)
                > 0.0
        );
        assert_eq!(r["stats"]["file_size_overflows"].as_u64(), Some(0));
        assert!(shard["statistics"]["aio_retries"].as_u64().is_some());
    }
    let o = run(
        &job,
        s.dir(),
        &["--duration", "200ms", "--shards", "2", "--output", "json"],
    );
    assert_exit(&o, 0);
    let v = json(&o);
    let r = &v["jobs"][0];
    assert!(r["ops"].as_u64().unwrap_or(0) > 0, "{v}");
    let per_shard: u64 = r["per_shard"]
        .as_array()
        .expect("per_shard")
        .iter()
        .map(|s| s["ops"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(
        per_shard,
        r["ops"].as_u64().unwrap_or(0),
        "merged ops = sum of shards"
    );
    assert!(v["cpu"]["user_s"].as_f64().is_some());
}

fn seqwrite_job(prepare: &str) -> String {
    format!(
        "- name: w\n  type: seqwrite\n  prepare: {prepare}\n  data_size: 4MB\n  shard_info:\n    \
         parallelism: 4\n    reqsize: 64kB\n"
    )
}

const DATA_BYTES: u64 = 4 << 20;
const REQUEST_BYTES: u64 = 64 << 10;
const VERIFY_MAGIC: u64 = 0x5745_4952_5645_5246;

#[test]
fn every_prepare_mode_on_both_backends_leaves_the_right_file() {
    for backend in BACKENDS {
        for prepare in ["overwrite", "append", "pretruncate", "fallocate", "sloppy"] {
            let s = Scratch::new();
            let job = s.job("w.yaml", &seqwrite_job(prepare));
            let mut args = verified_run_args(backend);
            args.push("--keep-files");
            let o = run(&job, s.dir(), &args);
            let what = format!("{backend}/{prepare}");
            assert_exit(&o, 0);
            let v = json(&o);
            assert_eq!(v["verify"]["corruptions"], 0, "{what}: {v}");
            assert!(
                v["verify"]["blocks_checked"].as_u64().unwrap_or(0) > 0,
                "{what}"
            );
            assert_eq!(v["jobs"][0]["prepare"], prepare, "{what}");
            let ops = v["jobs"][0]["ops"].as_u64().unwrap_or(0);
            assert!(ops > 0, "{what}: nothing measured: {v}");

            let path = s.dir().join("weir-w-0.data");
            let meta = std::fs::metadata(&path).expect("kept file");
            let size = meta.len();
            match prepare {
                "append" | "sloppy" => {
                    // Grown by the writes (sloppy trimmed back to them), bounded by data_size.
                    assert_eq!(size % REQUEST_BYTES, 0, "{what}: size {size}");
                    assert!(size >= ops * REQUEST_BYTES, "{what}: {size} < {ops} writes");
                    assert!(size <= DATA_BYTES, "{what}: {size}");
                }
                _ => assert_eq!(size, DATA_BYTES, "{what}"),
            }
            if prepare == "fallocate" || prepare == "overwrite" {
                assert!(meta.blocks() * 512 >= DATA_BYTES, "{what}: not allocated");
            }
            // The first block holds a weir verify header naming offset 0.
            let file = std::fs::File::open(&path).expect("open");
            let mut head = [0u8; 16];
            file.read_exact_at(&mut head, 0).expect("read");
            assert_eq!(
                u64::from_le_bytes(head[..8].try_into().expect("8")),
                VERIFY_MAGIC
            );
            assert_eq!(u64::from_le_bytes(head[8..].try_into().expect("8")), 0);
        }
    }
}

#[test]
fn verify_reports_a_corrupted_block_with_its_offset() {
    let s = Scratch::new();
    let write = s.job(
        "write.yaml",
        "- name: data\n  type: overwrite\n  data_size: 2MB\n  shard_info:\n    parallelism: 2\n    reqsize: 64kB\n",
    );
    let o = run(
        &write,
        s.dir(),
        &[
            "--duration",
            "200ms",
            "--shards",
            "1",
            "--verify",
            "--keep-files",
        ],
    );
    assert_exit(&o, 0);
    let path = s.dir().join("weir-data-0.data");
    let corrupt_at: u64 = 12_288 + 512;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("open kept file");
    file.write_all_at(&[0xa5u8; 512], corrupt_at)
        .expect("pwrite");
    file.sync_all().expect("fsync");
    drop(file);

    let read = s.job(
        "read.yaml",
        "- name: data\n  type: seqread\n  data_size: 2MB\n  shard_info:\n    parallelism: 2\n    reqsize: 64kB\n",
    );
    for backend in BACKENDS {
        let o = run(
            &read,
            s.dir(),
            &[
                "--duration",
                "200ms",
                "--shards",
                "1",
                "--verify",
                "--keep-files",
                "--backend",
                backend,
                "--output",
                "json",
            ],
        );
        assert_exit(&o, 1);
        let v = json(&o);
        let first = &v["verify"]["first"][0];
        assert_eq!(first["offset_bytes"], corrupt_at, "{backend}: {v}");
        assert!(v["verify"]["corruptions"].as_u64().unwrap_or(0) >= 1);
        let err = stderr(&o);
        assert!(
            err.contains("data corruption") && err.contains("12800"),
            "{err}"
        );
    }
}

#[test]
fn open_loop_poisson_and_closed_loop_with_think_time() {
    let s = Scratch::new();
    let job = s.job(
        "mix.yaml",
        "\
- name: open
  type: randread
  data_size: 4MB
  shard_info:
    rps: 200
    parallelism: 2
    batch: 2
  options:
    pause_distribution: poisson
- name: thinker
  type: randread
  data_size: 4MB
  shard_info:
    parallelism: 1
    think_time: 10ms
",
    );
    let o = run(
        &job,
        s.dir(),
        &["--duration", "1s", "--shards", "1", "--output", "json"],
    );
    assert_exit(&o, 0);
    let v = json(&o);
    // 200/s x 2 fibers x 2 per batch = 800 requests per second, open loop.
    let open = v["jobs"][0]["ops"].as_u64().unwrap_or(0);
    assert!((560..=1040).contains(&open), "open-loop ops {open}: {v}");
    // One fiber thinking 10 ms between requests: at most ~100 per second.
    let thinker = v["jobs"][1]["ops"].as_u64().unwrap_or(0);
    assert!(
        (20..=101).contains(&thinker),
        "think_time ops {thinker}: {v}"
    );
    assert_eq!(v["jobs"][0]["rps"], 200);
}

/// An io-properties file for the scratch directory's disk: 20,000 IOPS and 500 MB/s each way,
/// slow enough that the scheduler holds requests back on any real disk.
fn slow_disk_properties(s: &Scratch) -> std::path::PathBuf {
    s.job(
        "io-properties.yaml",
        &format!(
            "disks:\n  - mountpoint: {}\n    read_iops: 20000\n    read_bandwidth: 500M\n    \
             write_iops: 20000\n    write_bandwidth: 500M\n",
            s.dir().display()
        ),
    )
}

#[test]
fn scheduler_classes_and_prometheus_metrics() {
    let s = Scratch::new();
    let props = slow_disk_properties(&s);
    let job = s.job(
        "classes.yaml",
        "\
- name: query
  type: randread
  data_size: 4MB
  shard_info:
    parallelism: 8
    shares: 300
- name: batch
  type: randread
  data_size: 4MB
  shard_info:
    parallelism: 8
    shares: 100
    class: background
",
    );
    let metrics = s.jobs.path().join("metrics.prom");
    let o = run(
        &job,
        s.dir(),
        &[
            "--duration",
            "500ms",
            "--shards",
            "1",
            "--output",
            "json",
            "--io-properties",
            props.to_str().expect("utf-8"),
            "--metrics",
            metrics.to_str().expect("utf-8"),
        ],
    );
    assert_exit(&o, 0);
    let v = json(&o);
    let classes = v["scheduler"]["classes"].as_array().expect("classes");
    let names: Vec<&str> = classes.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names, ["query", "background"], "{v}");
    for c in classes {
        assert!(c["queue_latency_us"]["p99"].is_number() && c["consumption"].is_number());
    }
    let text = std::fs::read_to_string(&metrics).expect("metrics file");
    assert!(text.contains("weir_io_queue_total_ops") && text.contains("class=\"background\""));
    // --metrics without --io-properties is a usage error.
    let o = run(
        &job,
        s.dir(),
        &["--metrics", metrics.to_str().expect("utf-8")],
    );
    assert_exit(&o, 2);
}

#[test]
fn the_readme_example_runs() {
    let s = Scratch::new();
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/mixed.yaml");
    let o = run(
        example.as_ref(),
        s.dir(),
        &["--duration", "500ms", "--shards", "1", "--output", "json"],
    );
    assert_exit(&o, 0);
    let v = json(&o);
    let names: Vec<&str> = v["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .filter_map(|j| j["name"].as_str())
        .collect();
    assert_eq!(names, ["reads", "flush"]);
    // Every EAGAIN retry is charged to the job whose request it was.
    let per_job: u64 = v["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| j["eagain_retries"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(
        per_job,
        v["eagain_retries"].as_u64().unwrap_or(u64::MAX),
        "{v}"
    );
    assert!(v["jobs"][1]["ops"].as_u64().unwrap_or(0) > 0, "{v}");
    assert!(files_in(s.dir()).is_empty());
}

/// Through the scheduler, sequential pieces released together go out merged (one vectored
/// request each) and every block still lands at its own offset, on both backends;
/// `--no-merge` sends them one by one.
#[test]
fn scheduled_sequential_writes_merge_and_land_where_they_belong() {
    for backend in BACKENDS {
        for merge in [true, false] {
            let s = Scratch::new();
            // 500 MB/s: the scheduler's longest write is 128 KiB, two 64 KiB pieces.
            let props = slow_disk_properties(&s);
            let job = s.job("w.yaml", &seqwrite_job("pretruncate"));
            let mut args = verified_run_args(backend);
            args.extend([
                "--keep-files",
                "--io-properties",
                props.to_str().expect("utf-8"),
            ]);
            if !merge {
                args.push("--no-merge");
            }
            let o = run(&job, s.dir(), &args);
            let what = format!("{backend}, merge {merge}");
            assert_exit(&o, 0);
            let v = json(&o);
            assert_eq!(v["verify"]["corruptions"], 0, "{what}: {v}");
            let merged = &v["scheduler"]["merged"];
            let requests = merged["requests"].as_u64().expect("merged.requests");
            let pieces = merged["pieces"].as_u64().expect("merged.pieces");
            if merge {
                assert!(requests > 0, "{what}: nothing merged: {v}");
                assert!(pieces >= 2 * requests, "{what}: {merged}");
            } else {
                assert_eq!((requests, pieces), (0, 0), "{what}");
            }
            // Every written 4 KiB block names its own offset in its verify header.
            let data = std::fs::read(s.dir().join("weir-w-0.data")).expect("kept file");
            let mut written = 0;
            for (k, block) in data.chunks(4096).enumerate() {
                if block.iter().all(|&b| b == 0) {
                    continue;
                }
                written += 1;
                let magic = u64::from_le_bytes(block[..8].try_into().expect("8"));
                let offset = u64::from_le_bytes(block[8..16].try_into().expect("8"));
                assert_eq!(magic, VERIFY_MAGIC, "{what}: block {k}");
                assert_eq!(
                    offset,
                    k as u64 * 4096,
                    "{what}: block {k} holds another offset"
                );
            }
            assert!(written > 0, "{what}: nothing written");
        }
    }
}

/// Sequential reads through the scheduler merge too (vectored reads scattered into each
/// request's own buffer), and `--verify` checks every block read against what was written.
#[test]
fn scheduled_sequential_reads_merge_and_verify() {
    for backend in BACKENDS {
        let s = Scratch::new();
        let props = slow_disk_properties(&s);
        let job = s.job(
            "r.yaml",
            "- name: r\n  type: seqread\n  data_size: 4MB\n  shard_info:\n    parallelism: 4\n    \
             reqsize: 64kB\n",
        );
        let mut args = verified_run_args(backend);
        args.extend(["--io-properties", props.to_str().expect("utf-8")]);
        let o = run(&job, s.dir(), &args);
        assert_exit(&o, 0);
        let v = json(&o);
        assert_eq!(v["verify"]["corruptions"], 0, "{backend}: {v}");
        assert!(
            v["verify"]["blocks_checked"].as_u64().unwrap_or(0) > 0,
            "{backend}: nothing checked: {v}"
        );
        let requests = v["scheduler"]["merged"]["requests"].as_u64().unwrap_or(0);
        assert!(requests > 0, "{backend}: no read was merged: {v}");
    }
}
