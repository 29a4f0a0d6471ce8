//! weir killed at random moments, in every phase of run (prefill and measuring), tune, explore
//! and report, with SIGINT, SIGTERM and SIGKILL: the operator's files beside weir's never
//! change; after SIGINT or SIGTERM weir exits by itself and leaves none of its files; after
//! SIGKILL the next command removes the leftovers (they carry weir's mark) and says so; at the
//! end nothing of weir's remains.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// Kills that must land (a command that ends before its moment is not counted); the phases
/// and signals rotate, the moments are random.
const KILLS: usize = 50;
const MAX_ATTEMPTS: usize = 90;

/// xorshift64*: the moments are random but reproducible from the printed seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// The operator's files by name, with their bytes (weir's own files, which can be gigabytes
/// after a SIGKILL of explore, are never read).
fn snapshot(dir: &Path, names: &[&str]) -> BTreeMap<PathBuf, Vec<u8>> {
    names
        .iter()
        .map(|n| dir.join(n))
        .filter_map(|p| std::fs::read(&p).ok().map(|bytes| (p, bytes)))
        .collect()
}

/// weir's files in `dir`: anything carrying its mark, and its direct-I/O trial files.
fn weirs_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".weir-dio-trial-")
                || matches!(
                    weir_guard::owned::inspect(&e.path()),
                    Ok(weir_guard::Ownership::Weirs(_))
                )
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn command(phase: &str, dir: &Path, jobs: &Path, out: &Path) -> Command {
    let mut c = common::weir();
    let d = dir.to_str().expect("utf-8");
    match phase {
        // A 64 MB overwrite file per shard: killed while prefilling or while measuring.
        "run" => c.args(["run"]).arg(jobs.join("overwrite.yaml")).args([
            "--dir",
            d,
            "--duration",
            "400ms",
            "--shards",
            "2",
        ]),
        "run-unlink" => c.args(["run"]).arg(jobs.join("unlink.yaml")).args([
            "--dir",
            d,
            "--duration",
            "400ms",
            "--shards",
            "2",
        ]),
        "tune" => c
            .args(["tune", "--dir", d, "--duration", "5s", "--properties-file"])
            .arg(out.join("io-properties.yaml")),
        "explore" => c
            .args(["explore", "--dir", d, "--quick", "--budget", "5s", "--out"])
            .arg(out.join("explore-out")),
        "report" => c
            .args(["report", "--dir", d, "--quick", "--force", "--out"])
            .arg(out.join("report.html")),
        other => panic!("no phase {other}"),
    };
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill() on the pid of a child this test spawned and has not reaped.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// Waits up to `limit` for the child; None if it is still running.
fn wait_for(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return Some(status);
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
#[cfg_attr(
    not(feature = "system-tests"),
    ignore = "system tier: cargo test --workspace --features weir/system-tests"
)]
fn kills_at_random_moments_leave_the_users_files_and_nothing_of_weirs() {
    let s = Scratch::new();
    let dir = s.dir().join("data");
    let out = s.dir().join("out");
    std::fs::create_dir(&dir).expect("mkdir data");
    std::fs::create_dir(&out).expect("mkdir out");
    let names = ["weir-o-0.data.bak", "test-o-0", "notes.txt", "weir-o.data"];
    for name in names {
        std::fs::write(dir.join(name), format!("the operator's {name}\n")).expect("user file");
    }
    s.job(
        "overwrite.yaml",
        "- name: o\n  type: randwrite\n  shards: all\n  data_size: 128MB\n  shard_info:\n    \
         parallelism: 4\n    reqsize: 64kB\n",
    );
    s.job(
        "unlink.yaml",
        "- name: u\n  type: unlink\n  shards: all\n  data_size: 16MB\n  files_count: 16\n  \
         shard_info:\n    parallelism: 1\n    think_time: 20ms\n",
    );
    let user = snapshot(&dir, &names);
    assert_eq!(user.len(), names.len());
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    eprintln!("kill moments seeded with {seed}");
    let mut rng = Rng(seed);
    let phases = ["run", "run-unlink", "tune", "explore", "report"];
    let signals = [libc::SIGINT, libc::SIGTERM, libc::SIGKILL];
    let start = Instant::now();
    let mut swept_said = false;
    let mut killed = 0;
    let mut handled = 0;
    for i in 0..MAX_ATTEMPTS {
        if killed >= KILLS {
            break;
        }
        let phase = phases[i % phases.len()];
        let sig = signals[(i / phases.len()) % signals.len()];
        let leftovers_before = !weirs_files(&dir).is_empty();
        let mut child = command(phase, &dir, s.jobs.path(), &out)
            .spawn()
            .expect("spawn weir");
        let moment = Duration::from_millis(rng.below(900));
        std::thread::sleep(moment);
        let ran_to_end = child.try_wait().expect("try_wait").is_some();
        if !ran_to_end {
            signal(&child, sig);
            killed += 1;
        }
        let Some(status) = wait_for(&mut child, Duration::from_secs(20)) else {
            signal(&child, libc::SIGKILL);
            let _ = child.wait();
            panic!("{phase}: still running 20 s after signal {sig} at {moment:?}");
        };
        let output = child.wait_with_output().expect("output");
        let err = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(!err.contains("panicked"), "{phase} {sig}: {err}");
        if leftovers_before && err.contains("an interrupted weir run left") {
            swept_said = true;
        }
        if sig != libc::SIGKILL || ran_to_end {
            // A signal that lands before weir installs its handler (the first milliseconds
            // after exec, before anything is created) ends it at once; later ones stop it.
            handled += usize::from(status.code().is_some());
            let left = weirs_files(&dir);
            assert!(
                left.is_empty(),
                "{phase}: signal {sig} at {moment:?} left {left:?}\n{err}"
            );
        }
        assert_eq!(snapshot(&dir, &names), user, "{phase}: a user file changed");
    }
    // The next run after the last kills removes what they left, and nothing of weir's stays.
    let leftovers = !weirs_files(&dir).is_empty();
    let o = common::run(
        &s.jobs.path().join("unlink.yaml"),
        &dir,
        &["--duration", "100ms", "--shards", "1"],
    );
    assert_exit(&o, 0);
    if leftovers {
        swept_said |= stderr(&o).contains("an interrupted weir run left");
    }
    assert!(weirs_files(&dir).is_empty(), "{:?}", weirs_files(&dir));
    assert_eq!(snapshot(&dir, &names), user);
    assert!(
        swept_said,
        "no command said it removed a killed run's files"
    );
    assert!(killed >= KILLS, "only {killed} kills landed");
    assert!(handled > 0, "no SIGINT or SIGTERM was handled");
    eprintln!(
        "{killed} kills in {:?}; {handled} stops by SIGINT/SIGTERM handled",
        start.elapsed()
    );
}
