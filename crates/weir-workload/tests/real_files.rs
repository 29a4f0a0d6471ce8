//! `weir_workload::run` on real files: io_tester's `bandwidth` pacing on the disk under a temp
//! directory, and `extent_allocation_size_hint` on loop-mounted XFS (applied, read back) and
//! ext4 (one warning naming the filesystem, the run goes on). Mount tests need root and print
//! why they skip otherwise.

use std::path::Path;
use std::time::Duration;

use weir_engine::extent::extent_size_hint;
use weir_engine::Backend;
use weir_model::device::{Device, DeviceError, IoCompletion, IoOp};
use weir_testfs::TestFs;
use weir_workload::parse::parse_plan;
use weir_workload::{run, run_with, Control, DeviceFactory, Report, RunOptions};

/// A fresh directory on the disk under /var/tmp (not tmpfs, which has no O_DIRECT or extents);
/// removed when dropped.
fn temp_dir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in("/var/tmp")
        .expect("temp dir")
}

fn run_file(text: &str, dir: &Path, shards: usize, backend: Backend, keep: bool) -> Report {
    let plan = parse_plan(text).unwrap_or_else(|e| panic!("job file: {e}"));
    let options = RunOptions {
        dir: Some(dir.to_path_buf()),
        duration: Duration::from_millis(1500),
        shards,
        backend,
        keep_files: keep,
        ..RunOptions::default()
    };
    run(&plan, &options, &mut |_| Control::Continue).unwrap_or_else(|e| panic!("run: {e}"))
}

#[test]
fn bandwidth_caps_the_byte_rate_on_both_backends() {
    let dir = temp_dir("weir-bw-");
    let text = "- name: capped\n  type: seqwrite\n  data_size: 64MB\n  shard_info:\n    \
                parallelism: 4\n    reqsize: 64kB\n    bandwidth: 8MB\n";
    for backend in Backend::ALL {
        let report = run_file(text, dir.path(), 1, backend, false);
        let job = &report.jobs[0];
        let mib_per_s = job.throughput.bandwidth_bytes_per_s / f64::from(1 << 20);
        // 8 MiB/s paced as 128 x 64 KiB per second; any disk here does far more.
        assert!(
            (7.2..=8.8).contains(&mib_per_s),
            "{backend}: {mib_per_s:.2} MiB/s for an 8 MiB/s cap"
        );
        assert_eq!(job.bandwidth_limit_bytes_per_s, Some(8 << 20));
        assert_eq!(job.errors, 0);
    }
}

#[test]
fn extent_hint_is_applied_on_xfs() {
    let what = "extent_allocation_size_hint on XFS";
    let Some(root) = weir_testfs::require_root_with(what, &["mkfs.xfs"]) else {
        return;
    };
    let fs = TestFs::xfs(&root, what, 4096).unwrap_or_else(|e| panic!("{what}: {e}"));
    let text = "- name: hinted\n  type: seqwrite\n  data_size: 32MB\n  shard_info:\n    \
                parallelism: 2\n    reqsize: 64kB\n  options:\n    \
                extent_allocation_size_hint: 1MB\n";
    let report = run_file(text, fs.path(), 2, Backend::Uring, true);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    for shard in 0..2 {
        let path = fs.path().join(format!("weir-hinted-{shard}.data"));
        let file = std::fs::File::open(&path).expect("kept file");
        let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
        assert_eq!(extent_size_hint(fd), Ok(1 << 20), "{}", path.display());
    }
}

#[test]
fn extent_hint_on_ext4_warns_once_and_runs() {
    let what = "extent_allocation_size_hint on ext4";
    let Some(root) = weir_testfs::require_root_with(what, &["mkfs.ext4"]) else {
        return;
    };
    let fs = TestFs::ext4(&root, what).unwrap_or_else(|e| panic!("{what}: {e}"));
    let text = "- name: hinted\n  type: seqwrite\n  data_size: 32MB\n  shard_info:\n    \
                parallelism: 2\n    reqsize: 64kB\n  options:\n    \
                extent_allocation_size_hint: 1MB\n";
    let report = run_file(text, fs.path(), 2, Backend::Aio, false);
    assert_eq!(
        report.warnings.len(),
        1,
        "one warning for two shards: {:?}",
        report.warnings
    );
    let w = &report.warnings[0];
    assert!(
        w.contains("ext4") && w.contains("hinted") && w.contains("not applied"),
        "{w}"
    );
    assert!(report.jobs[0].throughput.ops > 0, "the run went on");
}

/// An unmounted loop device over a sparse image, detached and deleted on drop.
struct LoopDevice {
    device: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl LoopDevice {
    fn new(size_bytes: u64) -> LoopDevice {
        let dir = temp_dir("weir-rawdev-");
        let image = dir.path().join("image");
        std::fs::File::create(&image)
            .and_then(|f| f.set_len(size_bytes))
            .expect("image");
        let out = std::process::Command::new("losetup")
            .args(["--find", "--show", "--direct-io=on"])
            .arg(&image)
            .output()
            .expect("losetup");
        assert!(
            out.status.success(),
            "losetup: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let device = String::from_utf8_lossy(&out.stdout).trim().into();
        LoopDevice { device, _dir: dir }
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup")
            .arg("-d")
            .arg(&self.device)
            .status();
    }
}

fn run_on_device(text: &str, device: &Path, shards: usize) -> Result<Report, String> {
    let plan = parse_plan(text).unwrap_or_else(|e| panic!("job file: {e}"));
    let options = RunOptions {
        device: Some(device.to_path_buf()),
        duration: Duration::from_millis(500),
        shards,
        ..RunOptions::default()
    };
    run(&plan, &options, &mut |_| Control::Continue).map_err(|e| e.to_string())
}

#[test]
fn raw_device_jobs_write_only_their_own_regions() {
    let what = "--device on a loop device";
    let Some(_root) = weir_testfs::require_root_with(what, &["losetup"]) else {
        return;
    };
    let dev = LoopDevice::new(64 << 20);
    // Two shards of a 32 MiB seqwrite job: regions [0, 16) and [16, 32) MiB; a randread job
    // after them at [32, 40) and [40, 48) MiB. Nothing may land beyond 32 MiB.
    let text = "- name: w\n  type: seqwrite\n  data_size: 32MB\n  shard_info:\n    \
                parallelism: 4\n    reqsize: 64kB\n- name: r\n  type: randread\n  \
                data_size: 16MB\n  shard_info:\n    parallelism: 4\n";
    let report = run_on_device(text, &dev.device, 2).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        report
            .jobs
            .iter()
            .all(|j| j.throughput.ops > 0 && j.errors == 0),
        "{:?}",
        report.jobs
    );
    let data = std::fs::read(&dev.device).expect("read the device");
    let mib = 1 << 20;
    let written = |range: std::ops::Range<usize>| data[range].iter().any(|&b| b != 0);
    assert!(written(0..mib), "shard 0's region starts at 0");
    assert!(
        written(16 * mib..17 * mib),
        "shard 1's region starts at 16 MiB"
    );
    assert!(
        !written(32 * mib..64 * mib),
        "the read job's regions and the rest stay untouched"
    );
    // Too big for the device: refused before anything runs, naming the sizes.
    let big = "- name: w\n  type: seqwrite\n  data_size: 128MB\n";
    let e = run_on_device(big, &dev.device, 1).expect_err("does not fit");
    assert!(e.contains("lower data_size"), "{e}");
    let grow = "- name: a\n  type: append\n";
    let e = run_on_device(grow, &dev.device, 1).expect_err("append on a device");
    assert!(e.contains("a device cannot"), "{e}");
}

#[test]
fn raw_device_is_refused_while_mounted() {
    let what = "--device on a mounted loop device";
    let Some(root) = weir_testfs::require_root_with(what, &["mkfs.ext4"]) else {
        return;
    };
    let fs = TestFs::ext4(&root, what).unwrap_or_else(|e| panic!("{what}: {e}"));
    let device = fs.loop_device().expect("loop-backed").to_path_buf();
    let text = "- name: w\n  type: seqwrite\n  data_size: 4MB\n";
    let e = run_on_device(text, &device, 1).expect_err("mounted");
    assert!(e.contains("is mounted at") && e.contains("umount"), "{e}");
    let e = run_on_device(text, fs.path(), 1).expect_err("a directory");
    assert!(e.contains("not a block device"), "{e}");
}

/// What the spy saw of one submitted request.
struct Submitted {
    /// Segment lengths; empty for a plain one-buffer request.
    segments: Vec<usize>,
    /// The file the descriptor names.
    file: String,
    dsync: bool,
}

/// The engine with every request recorded as the backend receives it.
struct SegmentSpy {
    engine: weir_workload::EngineFactory,
    seen: std::sync::Mutex<Vec<Submitted>>,
}

impl SegmentSpy {
    fn new(backend: Backend) -> SegmentSpy {
        SegmentSpy {
            engine: weir_workload::EngineFactory {
                backend,
                nowait: true,
            },
            seen: std::sync::Mutex::new(Vec::new()),
        }
    }
}

struct SpyDevice<'a, D> {
    inner: D,
    seen: &'a std::sync::Mutex<Vec<Submitted>>,
}

impl<D: Device> Device for SpyDevice<'_, D> {
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }
    fn capacity(&self) -> u32 {
        self.inner.capacity()
    }
    unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError> {
        let segments = op.vectored.map_or_else(Vec::new, |v| {
            // SAFETY: the driver keeps `count` segments alive at `ptr` until completion.
            let segments = unsafe { std::slice::from_raw_parts(v.ptr, v.count as usize) };
            segments.iter().map(|s| s.len).collect()
        });
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(Submitted {
                segments,
                file: std::fs::read_link(format!("/proc/self/fd/{}", op.fd))
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                dsync: op.flags.dsync,
            });
        }
        // SAFETY: the caller's promise, passed on.
        unsafe { self.inner.push(op) }
    }
    fn submit_and_wait(&mut self, min: u32, deadline: Option<u64>) -> Result<u32, DeviceError> {
        self.inner.submit_and_wait(min, deadline)
    }
    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        self.inner.reap(out)
    }
}

impl<'a> DeviceFactory for &'a SegmentSpy {
    type Device = SpyDevice<'a, <weir_workload::EngineFactory as DeviceFactory>::Device>;
    fn name(&self) -> String {
        self.engine.name()
    }
    fn open(
        &self,
        shard: usize,
        depth: u32,
    ) -> Result<Self::Device, weir_workload::DeviceOpenError> {
        Ok(SpyDevice {
            inner: self.engine.open(shard, depth)?,
            seen: &self.seen,
        })
    }
}

/// A 300 ms run of `text` on one shard through a [`SegmentSpy`], for its report and what
/// the spy saw; `verify` reads every write back at the end.
fn run_spied(text: &str, dir: &Path, backend: Backend, verify: bool) -> (Report, SegmentSpy) {
    let plan = parse_plan(text).unwrap_or_else(|e| panic!("job file: {e}"));
    let spy = SegmentSpy::new(backend);
    let options = RunOptions {
        dir: Some(dir.to_path_buf()),
        duration: Duration::from_millis(300),
        shards: 1,
        backend,
        verify,
        ..RunOptions::default()
    };
    let report = run_with(&plan, &options, &&spy, &mut |_| Control::Continue)
        .unwrap_or_else(|e| panic!("{backend}: {e}"));
    (report, spy)
}

#[test]
fn vectorized_requests_reach_the_kernel_as_iov_count_segments_on_both_backends() {
    let dir = temp_dir("weir-vec-");
    // Seastar's documented example: 64kB requests as 4 segments of 16kB.
    let text = "- name: vectorized_writes\n  type: randwrite\n  shards: all\n  data_size: 16MB\n  \
                shard_info:\n    parallelism: 10\n    reqsize: 64kB\n    vectorized: true\n    \
                iov_count: 4\n    shares: 10\n- name: vectorized_reads\n  type: randread\n  \
                shards: all\n  data_size: 16MB\n  shard_info:\n    parallelism: 2\n    \
                reqsize: 4kB\n    vectorized: true\n    iov_count: 1\n";
    for backend in Backend::ALL {
        let (report, spy) = run_spied(text, dir.path(), backend, true);
        for job in &report.jobs {
            assert!(
                job.throughput.ops > 0 && job.errors == 0,
                "{backend}: {}",
                job.name
            );
        }
        assert_eq!(report.verify.as_ref().map(|v| v.corruptions), Some(0));
        let seen: Vec<Vec<usize>> = spy
            .seen
            .lock()
            .expect("lock")
            .drain(..)
            .map(|s| s.segments)
            .collect();
        let writes = seen.iter().filter(|l| l.len() == 4).count();
        let reads = seen.iter().filter(|l| l.len() == 1).count();
        assert!(
            writes > 0 && reads > 0,
            "{backend}: {writes} writes, {reads} reads"
        );
        // Every request of both jobs went out vectored (the final verify pass reads plainly).
        assert!(
            seen.iter()
                .filter(|l| !l.is_empty())
                .all(|l| l == &[16 << 10; 4] || l == &[4096]),
            "{backend}: segment lengths {:?}",
            seen.iter().find(|l| l != &&[16 << 10; 4] && l != &&[4096])
        );
        let requests_in_report: u64 = report.jobs.iter().map(|j| j.throughput.ops).sum();
        assert!((writes + reads) as u64 >= requests_in_report, "{backend}");
    }
}

#[test]
fn dsync_writes_are_submitted_with_rwf_dsync_on_both_backends() {
    let dir = temp_dir("weir-dsync-");
    // weir asks for O_DSYNC semantics per write (RWF_DSYNC, which the kernel treats as
    // O_DSYNC for that request) rather than in the open flags.
    let text = "- name: durable\n  type: seqwrite\n  data_size: 8MB\n  shard_info:\n    \
                parallelism: 2\n    reqsize: 64kB\n  options:\n    dsync: true\n\
                - name: plain\n  type: seqwrite\n  data_size: 8MB\n  shard_info:\n    \
                parallelism: 2\n    reqsize: 64kB\n";
    for backend in Backend::ALL {
        let (report, spy) = run_spied(text, dir.path(), backend, false);
        assert!(report
            .jobs
            .iter()
            .all(|j| j.throughput.ops > 0 && j.errors == 0));
        let seen = spy.seen.lock().expect("lock");
        // Each job writes its own file, weir-<job>-<shard>.data.
        let (durable, plain): (Vec<&Submitted>, Vec<&Submitted>) = seen
            .iter()
            .partition(|s| s.file.ends_with("weir-durable-0.data"));
        assert!(!durable.is_empty(), "{backend}: no write of `durable` seen");
        assert!(
            plain.iter().all(|s| s.file.ends_with("weir-plain-0.data")),
            "{backend}"
        );
        assert!(
            durable.iter().all(|s| s.dsync),
            "{backend}: a durable write without RWF_DSYNC"
        );
        assert!(
            plain.iter().all(|s| !s.dsync),
            "{backend}: a plain write with RWF_DSYNC"
        );
    }
}

#[test]
fn a_cpu_job_shows_in_its_shards_busy_time_and_io_testers_output() {
    let dir = temp_dir("weir-cpu-");
    // Shaped as Seastar's conf.yaml: a cpu hog on shard 0 beside light reads on every shard.
    let text = "- name: reads\n  shards: all\n  type: randread\n  data_size: 8MB\n  \
                shard_info:\n    parallelism: 1\n    reqsize: 4kB\n    think_time: 10ms\n\
                - name: cpu_hog\n  shards: [0]\n  type: cpu\n  shard_info:\n    \
                parallelism: 1\n    execution_time: 90µs\n    think_time: 10us\n";
    for backend in Backend::ALL {
        let report = run_file(text, dir.path(), 2, backend, false);
        let hog = &report.jobs[1];
        let shards: Vec<usize> = hog.per_shard.iter().map(|s| s.shard).collect();
        assert_eq!(shards, [0], "{backend}");
        // At most one 90 us loop per 100 us of the window.
        let most = (report.duration_s / 100e-6) as u64 + 1;
        assert!(
            hog.throughput.ops > 0 && hog.throughput.ops <= most,
            "{backend}: {} loops",
            hog.throughput.ops
        );
        assert!(
            hog.latencies.disk_latency_us.p50 >= 90.0,
            "{backend}: {:?}",
            hog.latencies.disk_latency_us
        );
        let busy = &report.shard_busy_s;
        assert_eq!(busy.len(), 2, "{backend}");
        // Shard 1 only reads every 10 ms; shard 0 also spins ~90% of the time. (The
        // spin is timed on the wall clock, so on a contended host the CPU time of both
        // shards shrinks; their ratio is what a cpu job changes.)
        assert!(
            busy[0] > 3.0 * busy[1] && busy[0] > 0.0,
            "{backend}: busy {busy:?} s over {:.2} s",
            report.duration_s
        );
        let yaml: serde_yaml::Value =
            serde_yaml::from_str(&report.to_io_tester_yaml()).expect("YAML");
        let entry = yaml[0]["cpu_hog"].as_mapping().expect("cpu_hog on shard 0");
        let keys: Vec<&str> = entry.keys().filter_map(|k| k.as_str()).collect();
        assert_eq!(
            keys,
            ["throughput"],
            "{backend}: io_tester prints only throughput"
        );
        assert!(yaml[1]["cpu_hog"].is_null(), "{backend}: not on shard 1");
    }
}

/// The unlink job's files left in `dir`.
fn unlink_files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("weir-unlinking-shard-"))
        .collect();
    names.sort();
    names
}

#[test]
fn unlink_removes_one_file_per_request_and_the_rest_at_the_end() {
    let dir = temp_dir("weir-unlink-");
    // Seastar's conf.yaml job, scaled down: 40 files of 1 MiB per shard, an unlink every 50 ms (~30 in 1.5 s).
    let text = "- name: unlinking\n  shards: all\n  type: unlink\n  data_size: 80MB\n  \
                files_count: 40\n  shard_info:\n    parallelism: 1\n    think_time: 50ms\n";
    for backend in Backend::ALL {
        let report = run_file(text, dir.path(), 2, backend, true);
        let job = &report.jobs[0];
        assert_eq!(job.errors, 0, "{backend}");
        let left = unlink_files_in(dir.path());
        for shard in &job.per_shard {
            // A request after the last file removes nothing (as in io_tester).
            let removed = shard.throughput.ops.min(40);
            let prefix = format!("weir-unlinking-shard-{}-file-", shard.shard);
            let left_here: Vec<&String> = left.iter().filter(|n| n.starts_with(&prefix)).collect();
            assert!(
                shard.throughput.ops > 0,
                "{backend}: shard {} unlinked nothing",
                shard.shard
            );
            assert_eq!(
                left_here.len() as u64,
                40 - removed,
                "{backend}: shard {}: {} requests, files left {left_here:?}",
                shard.shard,
                shard.throughput.ops
            );
            // Files go in order: the first one is the first removed.
            assert!(
                !left_here.iter().any(|n| n.ends_with("-file-0")),
                "{backend}"
            );
        }
        let yaml: serde_yaml::Value =
            serde_yaml::from_str(&report.to_io_tester_yaml()).expect("YAML");
        let entry = &yaml[0]["unlinking"];
        assert!(entry["IOPS"].as_f64().is_some(), "{backend}");
        assert!(entry["latencies"]["max"].as_f64().is_some(), "{backend}");
        assert!(entry["stats"]["total_requests"].as_u64().is_some());
        assert!(
            entry["throughput"].is_null(),
            "{backend}: io_tester has no throughput here"
        );
        for name in left {
            std::fs::remove_file(dir.path().join(name)).expect("clean up");
        }
    }
    // Without --keep-files nothing is left.
    let _ = run_file(text, dir.path(), 2, Backend::Uring, false);
    assert!(unlink_files_in(dir.path()).is_empty());
}

#[test]
fn sleep_type_busyloop_keeps_its_shard_busy_between_arrivals() {
    let dir = temp_dir("weir-sleep-");
    // The same light open-loop reads on two shards: shard 0 polls between arrivals
    // (busyloop), shard 1 sleeps in the kernel until the next one (lowres).
    let job = |name: &str, shard: u32, sleep_type: &str| {
        format!(
            "- name: {name}\n  shards: [{shard}]\n  type: randread\n  data_size: 8MB\n  \
             shard_info:\n    parallelism: 1\n    rps: 100\n    reqsize: 4kB\n  options:\n    \
             sleep_type: {sleep_type}\n"
        )
    };
    let text = job("polling", 0, "busyloop") + &job("sleeping", 1, "lowres");
    for backend in Backend::ALL {
        let report = run_file(&text, dir.path(), 2, backend, false);
        assert!(
            report.jobs.iter().all(|j| j.throughput.ops > 0),
            "{backend}"
        );
        let busy = &report.shard_busy_s;
        // 150 reads of ~10 us CPU each keep a sleeping shard ~0.1% busy; polling, ~100%
        // of what the host gives the thread (on a contended host far less: the ratio is
        // ~5 with every core shared, ~100 alone).
        assert!(
            busy[0] > 3.0 * busy[1],
            "{backend}: busy {busy:?} s over {:.2} s",
            report.duration_s
        );
    }
}

#[test]
fn fallocate_leaves_unwritten_extents_beyond_the_writes_in_fiemap() {
    use weir_probe::fiemap::{fiemap, FIEMAP_EXTENT_UNWRITTEN};
    let dir = temp_dir("weir-falloc-");
    // Four 64 KiB writes into a 16 MiB file: with `fallocate: true` the rest of the file is
    // allocated but unwritten; without it, not allocated at all.
    let job = |fallocate: bool| {
        format!(
            "- name: f\n  type: seqwrite\n  data_size: 16MB\n  shard_info:\n    \
             parallelism: 1\n    reqsize: 64kB\n    limit: 4\n  options:\n    \
             fallocate: {fallocate}\n"
        )
    };
    for backend in Backend::ALL {
        for fallocate in [true, false] {
            let report = run_file(&job(fallocate), dir.path(), 1, backend, true);
            assert_eq!(report.jobs[0].throughput.ops, 4, "{backend}");
            let path = dir.path().join("weir-f-0.data");
            let file = std::fs::File::open(&path).expect("kept file");
            let extents = fiemap(std::os::fd::AsRawFd::as_raw_fd(&file))
                .unwrap_or_else(|e| panic!("{backend}: FIEMAP errno {e}"));
            let unwritten: u64 = extents
                .iter()
                .filter(|e| e.flags & FIEMAP_EXTENT_UNWRITTEN != 0)
                .map(|e| e.length_bytes)
                .sum();
            let mapped: u64 = extents.iter().map(|e| e.length_bytes).sum();
            if fallocate {
                assert!(
                    unwritten >= (16 << 20) - (256 << 10),
                    "{backend}: {unwritten} unwritten bytes: {extents:?}"
                );
            } else {
                assert_eq!(unwritten, 0, "{backend}: {extents:?}");
                assert!(mapped < 16 << 20, "{backend}: {extents:?}");
            }
            drop(file);
            std::fs::remove_file(&path).expect("remove");
        }
    }
}
