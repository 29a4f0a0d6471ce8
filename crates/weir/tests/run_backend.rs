//! `weir run --backend`: which backend ran and why, in the text header and the JSON; `auto`
//! on a zram device (root tier) picks Linux AIO because zram refuses RWF_NOWAIT reads.

mod common;

use common::{assert_exit, json, run, stdout, weir_with, Scratch};

const JOB: &str = "- name: probe
  shards: [0]
  type: randread
  data_size: 8MB
  shard_info:
    parallelism: 4
    reqsize: 4kB
";

#[test]
fn fixed_backend_is_reported_with_its_reason() {
    let s = Scratch::new();
    let job = s.job("job.yaml", JOB);
    let o = run(
        &job,
        s.dir(),
        &[
            "--duration",
            "200ms",
            "--shards",
            "1",
            "--backend",
            "aio",
            "--output",
            "json",
        ],
    );
    assert_exit(&o, 0);
    let j = json(&o);
    assert_eq!(j["backend"], "aio");
    assert_eq!(j["backend_reason"], "--backend aio");
    let o = run(
        &job,
        s.dir(),
        &["--duration", "200ms", "--shards", "1", "--backend", "uring"],
    );
    assert_exit(&o, 0);
    let text = stdout(&o);
    let second = text.lines().nth(1).unwrap_or_default();
    assert_eq!(second, "backend: --backend uring", "{text}");
}

#[test]
fn auto_on_a_directory_says_what_it_probed_and_leaves_nothing() {
    let s = Scratch::new();
    let job = s.job("job.yaml", JOB);
    let o = run(
        &job,
        s.dir(),
        &["--duration", "200ms", "--shards", "1", "--output", "json"],
    );
    assert_exit(&o, 0);
    let j = json(&o);
    let reason = j["backend_reason"].as_str().unwrap_or_default();
    assert!(reason.contains(&s.dir().display().to_string()), "{reason}");
    // The reason names the backend it led to.
    let backend = j["backend"].as_str().unwrap_or_default();
    let expected = if reason.contains("EOPNOTSUPP") {
        "aio"
    } else {
        "uring"
    };
    assert_eq!(backend, expected, "{reason}");
    let left: Vec<_> = common::files_in(s.dir())
        .into_iter()
        .filter(|f| f.contains("backend-probe"))
        .collect();
    assert!(left.is_empty(), "probe file left behind: {left:?}");
}

#[test]
fn auto_picks_aio_on_zram() {
    let name = "auto_picks_aio_on_zram";
    let Some(root) = weir_testfs::require_root(name) else {
        return;
    };
    let Some(zram) = weir_testfs::Zram::create(&root, name, "64M") else {
        return;
    };
    let s = Scratch::new();
    let job = s.job("job.yaml", JOB);
    let device = zram.path().display().to_string();
    let o = weir_with(&[
        "run",
        job.to_str().expect("utf-8 path"),
        "--device",
        &device,
        "--duration",
        "200ms",
        "--shards",
        "1",
        "--output",
        "json",
    ]);
    assert_exit(&o, 0);
    let j = json(&o);
    let reason = j["backend_reason"].as_str().unwrap_or_default();
    assert_eq!(j["backend"], "aio", "{reason}");
    assert!(
        reason.contains(&device) && reason.contains("EOPNOTSUPP"),
        "{reason}"
    );
    assert!(j["jobs"][0]["ops"].as_u64().unwrap_or(0) > 0, "no I/O ran");
}
