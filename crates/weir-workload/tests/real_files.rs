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
    let dir = tempfile::Builder::new()
        .prefix("weir-bw-")
        .tempdir_in("/var/tmp")
        .expect("temp dir");
    let text = "- name: capped\n  type: seqwrite\n  data_size: 64MB\n  shard_info:\n    \
                parallelism: 4\n    reqsize: 64kB\n    bandwidth: 8MB\n";
    for backend in Backend::ALL {
        let report = run_file(text, dir.path(), 1, backend, false);
        let job = &report.jobs[0];
        let mib_per_s = job.bandwidth_bytes_per_s / f64::from(1 << 20);
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
        let path = fs.path().join(format!("test-hinted-{shard}"));
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
    assert!(report.jobs[0].ops > 0, "the run went on");
}

/// An unmounted loop device over a sparse image, detached and deleted on drop.
struct LoopDevice {
    device: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl LoopDevice {
    fn new(size_bytes: u64) -> LoopDevice {
        let dir = tempfile::Builder::new()
            .prefix("weir-rawdev-")
            .tempdir_in("/var/tmp")
            .expect("temp dir");
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
        report.jobs.iter().all(|j| j.ops > 0 && j.errors == 0),
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

/// The engine with every submitted request's segment lengths recorded (an empty list for a
/// plain one-buffer request), as the kernel receives them.
struct SegmentSpy {
    engine: weir_workload::EngineFactory,
    seen: std::sync::Mutex<Vec<Vec<usize>>>,
}

struct SpyDevice<'a, D> {
    inner: D,
    seen: &'a std::sync::Mutex<Vec<Vec<usize>>>,
}

impl<D: Device> Device for SpyDevice<'_, D> {
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }
    fn capacity(&self) -> u32 {
        self.inner.capacity()
    }
    unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError> {
        let lens = op.vectored.map_or_else(Vec::new, |v| {
            // SAFETY: the driver keeps `count` segments alive at `ptr` until completion.
            let segments = unsafe { std::slice::from_raw_parts(v.ptr, v.count as usize) };
            segments.iter().map(|s| s.len).collect()
        });
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(lens);
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
    fn open(&self, shard: usize, depth: u32) -> Result<Self::Device, String> {
        Ok(SpyDevice {
            inner: self.engine.open(shard, depth)?,
            seen: &self.seen,
        })
    }
}

#[test]
fn vectorized_requests_reach_the_kernel_as_iov_count_segments_on_both_backends() {
    let dir = tempfile::Builder::new()
        .prefix("weir-vec-")
        .tempdir_in("/var/tmp")
        .expect("temp dir");
    // Seastar's documented example: 64kB requests as 4 segments of 16kB.
    let text = "- name: vectorized_writes\n  type: randwrite\n  shards: all\n  data_size: 16MB\n  \
                shard_info:\n    parallelism: 10\n    reqsize: 64kB\n    vectorized: true\n    \
                iov_count: 4\n    shares: 10\n- name: vectorized_reads\n  type: randread\n  \
                shards: all\n  data_size: 16MB\n  shard_info:\n    parallelism: 2\n    \
                reqsize: 4kB\n    vectorized: true\n    iov_count: 1\n";
    let plan = parse_plan(text).unwrap_or_else(|e| panic!("job file: {e}"));
    for backend in Backend::ALL {
        let spy = SegmentSpy {
            engine: weir_workload::EngineFactory {
                backend,
                nowait: true,
            },
            seen: std::sync::Mutex::new(Vec::new()),
        };
        let options = RunOptions {
            dir: Some(dir.path().to_path_buf()),
            duration: Duration::from_millis(300),
            shards: 1,
            backend,
            verify: true,
            ..RunOptions::default()
        };
        let report = run_with(&plan, &options, &&spy, &mut |_| Control::Continue)
            .unwrap_or_else(|e| panic!("{backend}: {e}"));
        for job in &report.jobs {
            assert!(job.ops > 0 && job.errors == 0, "{backend}: {}", job.name);
        }
        assert_eq!(report.verify.as_ref().map(|v| v.corruptions), Some(0));
        let seen = spy.seen.lock().expect("lock");
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
        let requests_in_report: u64 = report.jobs.iter().map(|j| j.ops).sum();
        assert!((writes + reads) as u64 >= requests_in_report, "{backend}");
    }
}
