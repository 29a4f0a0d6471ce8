//! The real disk: preflight over `weir-probe`'s facts, one fresh pre-truncated test file per
//! shard (`weir-engine`'s `PreparedFile`, removed on drop — also after an error or Ctrl-C), and
//! a [`ShardedMeter`] over the engine's io_uring (or AIO) devices, one pinned thread per shard.

use crate::drive::{register_engine, ShardTarget};
use crate::error::TuneError;
use crate::meters::ShardedMeter;
use crate::plan::{tune_with_progress, Finding, TuneConfig, TuneReport};
use crate::target::{LAYOUT_BYTES_MIN, WRAP_ROOM_BYTES};
use crate::trace::Traced;
use std::path::{Path, PathBuf};
use std::time::Instant;
use weir_engine::backend::{Backend, EngineDevice};
use weir_engine::file::{DirectIo, FileError};
use weir_engine::prepare::{Prepare, PrepareOptions, PreparedFile};
use weir_engine::{shards, Cancel};
use weir_model::units::format_bytes;
use weir_probe::PathFacts;

/// Bytes per shard the cache probe reads twice on a real disk: a quarter of the data the
/// sequential reads read, so the first pass reads data not read since it was written, and
/// about a second per pass at the 0.5 GB/s a virtual disk gives uncached.
pub const CACHE_PROBE_BYTES_PER_SHARD: u64 = 256 << 20;

/// The least measuring budget the cache probe runs in. Its two passes take 1-2 s with starts
/// and drains, which a short tune (`--duration 10s`: about 8 s of measuring) needs for its
/// random-read sweep, the figure the scheduler leans on most.
pub const CACHE_PROBE_BUDGET_MIN_NS: u64 = 20_000_000_000;

/// Every shard's test file is at least this large (sparse: only written bytes use space): the
/// data its sequential reads read, written once, and room for the writes to wrap in past it.
pub const FILE_BYTES_MIN: u64 = LAYOUT_BYTES_MIN + WRAP_ROOM_BYTES;
/// And at most this large; sequential writes wrap around (and say so) past it.
const FILE_BYTES_MAX: u64 = 32 << 30;

/// A pitfall that distorts what tuning measures, with the reason and the fix.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Warning {
    pub what: String,
    pub why: String,
    pub fix: String,
}

/// What the preflight learned and decided about one directory.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Preflight {
    pub dir: PathBuf,
    /// The mount point holding `dir`: the key Seastar resolves in io-properties.yaml.
    pub mountpoint: String,
    pub facts: PathFacts,
    pub warnings: Vec<Warning>,
    /// `weir doctor`'s other WARN/FAIL findings for this directory (layout pitfalls that do not
    /// distort the measurement but will cost the workload), shown once in the preflight.
    pub doctor: Vec<weir_probe::Finding>,
    pub shards: u32,
    pub file_bytes: u64,
    pub depth_max: u32,
    /// The largest physical sector the kernel reports among the leaf devices.
    pub reported_physical_sector_bytes: Option<u32>,
}

impl Preflight {
    /// One line naming the filesystem and the device stack.
    pub fn describe(&self) -> String {
        let stack = self
            .facts
            .stack
            .as_ref()
            .map(|s| s.chain())
            .unwrap_or_else(|| "no block device".to_string());
        format!(
            "{} on {} ({}, {} B blocks), device stack {stack}; {} free; {} shards, test files {} each (sparse)",
            self.dir.display(),
            self.mountpoint,
            self.facts.filesystem.fs_type,
            self.facts.filesystem.block_bytes,
            format_bytes(self.facts.space.avail_bytes),
            self.shards,
            format_bytes(self.file_bytes),
        )
    }
}

/// Checks that `dir` can be tuned and decides the file sizes. Errors are operator errors.
pub fn preflight(dir: &Path, shards: u32) -> Result<Preflight, TuneError> {
    let shards = shards.max(1);
    let facts = weir_probe::probe_path(dir).map_err(TuneError::Directory)?;
    let fs = &facts.filesystem;
    if matches!(fs.fs_type.as_str(), "tmpfs" | "ramfs") {
        return Err(TuneError::MemoryFilesystem {
            dir: dir.to_path_buf(),
            fs_type: fs.fs_type.clone(),
        });
    }
    let read_only = fs
        .mount_options
        .as_deref()
        .is_some_and(|o| o.split(',').any(|opt| opt == "ro"));
    if read_only {
        return Err(TuneError::ReadOnly {
            dir: dir.to_path_buf(),
        });
    }
    let needed = u64::from(shards) * FILE_BYTES_MIN + (64 << 20);
    let avail = facts.space.avail_bytes;
    if avail < needed {
        return Err(TuneError::NoSpace {
            dir: dir.to_path_buf(),
            avail_bytes: avail,
            need_bytes: needed,
            per_shard_bytes: FILE_BYTES_MIN,
            shards,
        });
    }
    let file_bytes = (avail / 10 * 7 / u64::from(shards)).clamp(FILE_BYTES_MIN, FILE_BYTES_MAX)
        & !((1 << 20) - 1);
    let leaves = facts.leaves();
    let nr_requests: u64 = leaves.iter().filter_map(|l| l.queue.nr_requests).sum();
    let depth_max = if nr_requests == 0 {
        256
    } else {
        nr_requests.clamp(32, 1024) as u32
    };
    let reported_physical_sector_bytes = facts.leaf_physical_block_bytes().map(|b| b as u32);
    let warnings = pitfalls(&facts);
    let doctor = weir_probe::doctor::problems(&facts)
        .into_iter()
        .filter(|f| !f.id.ends_with(".scheduler"))
        .collect();
    Ok(Preflight {
        dir: dir.to_path_buf(),
        mountpoint: fs
            .mount_point
            .clone()
            .unwrap_or_else(|| dir.display().to_string()),
        warnings,
        doctor,
        shards,
        file_bytes,
        depth_max,
        reported_physical_sector_bytes,
        facts,
    })
}

/// Settings of the leaf devices that change what a measurement sees.
fn pitfalls(facts: &PathFacts) -> Vec<Warning> {
    let mut out = Vec::new();
    for leaf in facts.leaves() {
        let q = &leaf.queue;
        let name = &leaf.name;
        if let Some(s) = q.scheduler.as_deref().filter(|s| *s != "none") {
            out.push(Warning {
                what: format!("{name}: kernel I/O scheduler {s}"),
                why: "it reorders and delays requests, so the figures include its behaviour, and Seastar's own scheduler will sit on top of it".to_string(),
                fix: format!("echo none > /sys/block/{name}/queue/scheduler (persist with a udev rule), then tune again"),
            });
        }
        if q.write_cache.as_deref() == Some("write back") {
            out.push(Warning {
                what: format!("{name}: volatile write cache (write back)"),
                why: "writes can complete into the device's cache, so short write measurements may exceed what the media sustains".to_string(),
                fix: "run with --sustained to see the steady rate; on devices with power-loss protection, `echo \"write through\" > /sys/block/<dev>/queue/write_cache`".to_string(),
            });
        }
        if let Some(n) = q.nomerges.filter(|&n| n != 2) {
            out.push(Warning {
                what: format!("{name}: nomerges {n} (the block layer may merge adjacent requests)"),
                why: "merged requests make small sequential requests look as fast as large ones, flattering the saturation length".to_string(),
                fix: format!("echo 2 > /sys/block/{name}/queue/nomerges"),
            });
        }
    }
    out
}

/// How one directory's measurement runs: what the caller (the `weir` binary, or an
/// embedding program) decides rather than the tune.
pub struct DirRun<'a> {
    pub backend: Backend,
    /// When the whole command must be done; the measuring budget is what is left of it minus
    /// a reserve for cleanup.
    pub deadline: Instant,
    /// Stops the load early (the binary cancels it on Ctrl-C); the files are removed and the
    /// tune returns [`TuneError::Interrupted`].
    pub cancel: &'a Cancel,
    /// Where to write the trace of every load's samples ([`crate::trace`]); None: no trace.
    pub trace: Option<&'a mut dyn std::io::Write>,
}

/// Creates the test files, runs the tune on all shards at once, removes the files.
pub fn tune_dir(
    pre: &Preflight,
    cfg: &TuneConfig,
    run: DirRun<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<TuneReport, TuneError> {
    let DirRun {
        backend,
        deadline,
        cancel,
        trace,
    } = run;
    let files = create_files(pre)?;
    let request_bytes_min = files
        .iter()
        .map(|f| f.alignment().offset_align_bytes)
        .max()
        .unwrap_or(512)
        .max(512);
    let targets = files
        .iter()
        .enumerate()
        .map(|(i, f)| ShardTarget::new(f.fd(), pre.file_bytes, 0x7e57 + i as u64))
        .collect();
    let cores = shards::available_cores().max(1);
    let factory = move |shard: u32, depth: u32| -> Result<EngineDevice, TuneError> {
        // Best effort: an unpinned shard still measures, only with more jitter.
        let _ = shards::pin_current_thread(shard as usize % cores);
        EngineDevice::open(backend, depth).map_err(TuneError::RingOpen)
    };
    let interrupted = || cancel.is_cancelled();
    let mut meter = ShardedMeter::new(
        &factory,
        targets,
        pre.depth_max,
        request_bytes_min,
        &interrupted,
    )
    .with_registration(register_engine);
    let mut cfg = cfg.clone();
    cfg.budget_ns = measuring_budget(deadline.saturating_duration_since(Instant::now()));
    cfg.reported_physical_sector_bytes = pre.reported_physical_sector_bytes;
    if cfg.cache_probe_bytes_per_shard == 0 {
        if cfg.budget_ns >= CACHE_PROBE_BUDGET_MIN_NS {
            cfg.cache_probe_bytes_per_shard = CACHE_PROBE_BYTES_PER_SHARD;
        } else {
            progress(&format!(
                "cache below the device: not probed (a measuring budget of {:.1} s leaves no \
                 room for it; it runs from {} s of measuring, e.g. the default --duration 30s)",
                cfg.budget_ns as f64 / 1e9,
                CACHE_PROBE_BUDGET_MIN_NS / 1_000_000_000
            ));
        }
    }
    let result = if let Some(out) = trace {
        let mut traced = Traced::new(&mut meter, out);
        tune_with_progress(&mut traced, &cfg, progress)
    } else {
        tune_with_progress(&mut meter, &cfg, progress)
    };
    if cancel.is_cancelled() {
        drop(files);
        return Err(TuneError::Interrupted);
    }
    let mut report = result?;
    report.written_bytes = meter.targets().iter().map(|t| t.written_bytes).sum();
    report.sequential_read_bytes = meter
        .targets()
        .iter()
        .map(|t| t.sequential_read_bytes())
        .sum();
    report.sequential_read_ranges_bytes = meter
        .targets()
        .iter()
        .map(|t| t.read_ranges().iter().map(|r| [r.start, r.end]).collect())
        .collect();
    report.random_write_bytes = meter
        .targets()
        .iter()
        .map(ShardTarget::random_write_bytes)
        .collect();
    if meter.targets().iter().any(|t| t.wrapped) {
        report.findings.push(Finding {
            what: "sequential writes reached the end of a test file and overwrote earlier data (past the data the sequential reads read, which stays written once); later writes landed on written blocks, which some devices take faster than fresh space"
                .to_string(),
            fix: "free more space under --dir so every write lands on fresh space".to_string(),
        });
    }
    drop(files);
    Ok(report)
}

/// The measuring budget out of `left`, the time from the files' creation to the deadline. The
/// budget is charged each load's wall time (start-up and drain included), so what it does not
/// cover is removing the files and the last step's overrun past its phase (it ends on the first
/// sample past its time, which a loaded machine delivers late, and then drains). A default run
/// on this project's 2-core VM under a load average of 80 came out at 28.4 s with a reserve of
/// 1.5 s, preflight and file creation taking 1.6 s of it: a run must end within --duration
/// however loaded the machine, so the reserve is an eighth of the time left (3.5 s of a default
/// run, which then ends at about 26.5 s), at least 1.5 s and at most 5 s.
pub fn measuring_budget(left: std::time::Duration) -> u64 {
    let reserve = (left / 8).clamp(
        std::time::Duration::from_millis(1500),
        std::time::Duration::from_secs(5),
    );
    left.saturating_sub(reserve).as_nanos() as u64
}

fn create_files(pre: &Preflight) -> Result<Vec<PreparedFile>, TuneError> {
    let mut opts = PrepareOptions::new(Prepare::Pretruncate, pre.file_bytes);
    opts.direct = DirectIo::Required;
    let pid = std::process::id();
    (0..pre.shards)
        .map(|shard| {
            let path = pre.dir.join(format!(".weir-tune-{pid}-{shard}"));
            PreparedFile::create_at(&path, &opts).map_err(file_error)
        })
        .collect()
}

/// Errors the operator can fix (wrong directory, no O_DIRECT, read-only, full) are usage errors.
fn file_error(e: FileError) -> TuneError {
    let operator = matches!(e, FileError::DirectIoUnsupported { .. })
        || matches!(
            e.errno(),
            Some(
                libc::EROFS
                    | libc::EACCES
                    | libc::EPERM
                    | libc::ENOENT
                    | libc::ENOSPC
                    | libc::EDQUOT
            )
        );
    if operator {
        TuneError::FileRefused(e)
    } else {
        TuneError::File(e)
    }
}

/// `--cross-check` for one tuned directory: [`crate::crosscheck::cross_check`] in `pre.dir`
/// with the tune's shards, stopped by `cancel` like the tune (its files are removed either way).
pub fn cross_check_dir(
    pre: &Preflight,
    report: &TuneReport,
    cfg: &crate::crosscheck::CrossCheckConfig,
    backend: Backend,
    cancel: &Cancel,
    progress: &mut dyn FnMut(&str),
) -> Result<crate::crosscheck::CrossCheck, TuneError> {
    let interrupted = || cancel.is_cancelled();
    crate::crosscheck::cross_check(
        &pre.dir,
        pre.shards,
        report,
        cfg,
        backend,
        &interrupted,
        progress,
    )
}

#[cfg(test)]
mod tests {
    use super::measuring_budget;
    use std::time::Duration;

    #[test]
    fn the_budget_keeps_an_eighth_of_the_time_left_for_the_end() {
        // A default run after 1.6 s of preflight and file creation: 3.55 s kept.
        assert_eq!(
            measuring_budget(Duration::from_millis(28_400)),
            24_850_000_000
        );
        assert_eq!(measuring_budget(Duration::from_secs(4)), 2_500_000_000);
        assert_eq!(measuring_budget(Duration::from_secs(120)), 115_000_000_000);
        assert_eq!(measuring_budget(Duration::from_secs(1)), 0);
    }
}
