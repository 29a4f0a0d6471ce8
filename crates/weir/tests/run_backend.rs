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
    if weir_testfs::require_root(name).is_none() {
        return;
    }
    let control = std::path::Path::new("/sys/class/zram-control/hot_add");
    if !control.exists() {
        let _ = std::process::Command::new("modprobe").arg("zram").status();
    }
    if !control.exists() {
        weir_testfs::skip(name, "no zram support (modprobe zram failed)");
        return;
    }
    let id = std::fs::read_to_string(control)
        .expect("hot_add")
        .trim()
        .to_string();
    struct Remove(String);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = std::fs::write(format!("/sys/block/zram{}/reset", self.0), "1");
            let _ = std::fs::write("/sys/class/zram-control/hot_remove", &self.0);
        }
    }
    let _remove = Remove(id.clone());
    std::fs::write(format!("/sys/block/zram{id}/disksize"), "64M").expect("disksize");
    let s = Scratch::new();
    let job = s.job("job.yaml", JOB);
    let device = format!("/dev/zram{id}");
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
