//! `weir run` on loop-mounted XFS with 1 KiB and 4 KiB blocks (root only; skipped with a
//! printed reason otherwise): every write preparation passes `--verify` on both backends, and
//! a 4 KiB-sector device refuses 512-byte requests with the alignment named.

mod common;

use common::*;
use weir_testfs::{require_root_with, FsKind, TestFs, TestFsOptions};

fn xfs(test: &str, block_bytes: u32, sector_bytes: u32) -> Option<TestFs> {
    let root = require_root_with(test, &["mkfs.xfs", "losetup", "mount"])?;
    let opts = TestFsOptions::new(FsKind::Xfs { block_bytes })
        .direct_io(true)
        .sector_bytes(sector_bytes);
    match TestFs::create(&root, test, &opts) {
        Ok(fs) => Some(fs),
        Err(e) => {
            // As root (CI) a tier that cannot set up fails rather than passing unrun.
            weir_testfs::skip(test, &format!("cannot build the XFS image: {e}"));
            None
        }
    }
}

const JOBS: &str = "\
- name: fresh
  type: seqwrite
  prepare: pretruncate
  data_size: 8MB
  shard_info:
    parallelism: 4
    reqsize: 128kB
- name: appends
  type: append
  prepare: sloppy
  data_size: 8MB
  shard_info:
    parallelism: 2
    reqsize: 64kB
- name: falloc
  type: randwrite
  prepare: fallocate
  data_size: 8MB
  shard_info:
    parallelism: 4
    reqsize: 4kB
- name: reads
  type: randread
  data_size: 8MB
  shard_info:
    parallelism: 4
    reqsize: 4kB
";

fn run_all_modes(fs: &TestFs, label: &str) {
    let s = Scratch::new();
    let job = s.job("xfs.yaml", JOBS);
    for backend in ["uring", "aio"] {
        // 1 s: long enough that a loop device stalled by other tests still completes requests.
        let o = run(&job, fs.path(), &verified_run_args(backend));
        assert_exit(&o, 0);
        let v = json(&o);
        assert_eq!(v["verify"]["corruptions"], 0, "{label}/{backend}: {v}");
        for j in v["jobs"].as_array().expect("jobs") {
            assert!(j["ops"].as_u64().unwrap_or(0) > 0, "{label}/{backend}: {j}");
        }
        assert!(files_in(fs.path()).is_empty(), "{label}: files left");
    }
}

#[test]
fn xfs_1k_blocks_every_mode_verifies() {
    if let Some(fs) = xfs("run-xfs-1k", 1024, 512) {
        run_all_modes(&fs, "xfs 1k");
    }
}

#[test]
fn xfs_4k_blocks_every_mode_verifies() {
    if let Some(fs) = xfs("run-xfs-4k", 4096, 512) {
        run_all_modes(&fs, "xfs 4k");
    }
}

#[test]
fn xfs_on_4k_sectors_refuses_512_byte_requests() {
    let Some(fs) = xfs("run-xfs-4ksector", 4096, 4096) else {
        return;
    };
    let s = Scratch::new();
    let job = s.job(
        "small.yaml",
        "- name: r\n  type: randread\n  data_size: 4MB\n  shard_info:\n    reqsize: 512\n",
    );
    let o = run(&job, fs.path(), &["--duration", "100ms", "--shards", "1"]);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("4096 bytes") && err.contains("reqsize 512"),
        "{err}"
    );
}

#[test]
fn xfs_disk_full_with_direct_io_stops_reports_and_cleans_up() {
    let Some(fs) = xfs("run-xfs-enospc", 4096, 512) else {
        return;
    };
    let s = Scratch::new();
    let job = s.job(
        "fill.yaml",
        "- name: fill\n  type: append\n  shard_info:\n    parallelism: 4\n    reqsize: 1MB\n",
    );
    let o = run(
        &job,
        fs.path(),
        &["--duration", "60s", "--shards", "2", "--output", "json"],
    );
    assert_exit(&o, 1);
    let err = stderr(&o);
    assert!(err.contains("ENOSPC") && err.contains("removed"), "{err}");
    let v = json(&o);
    assert!(v["jobs"][0]["ops"].as_u64().unwrap_or(0) > 0, "{v}");
    // Stopped by ENOSPC before the 60 s asked (how soon depends on the disk's load).
    assert!(v["duration_s"].as_f64().unwrap_or(60.0) < 60.0, "{v}");
    assert!(files_in(fs.path()).is_empty(), "{:?}", files_in(fs.path()));
}
