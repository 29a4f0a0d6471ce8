//! `weir tune --cross-check`: each of the four figures measured again by weir's engine and by
//! fio, alternately, at the figure's own point (request size, total depth, shards) and file
//! regime, so a user sees whether tune's numbers are the disk's rather than the meter's.
//!
//! A figure gets `pairs` pairs of runs; each run is `ramp_ns` of load that is not counted and
//! then `run_ns` that is, and within a pair the side that runs first alternates (and the first
//! side of the first pair alternates from figure to figure), so a disk that speeds up or slows
//! down over the minutes favours neither side. A pair's ratio is weir / fio; a figure reports
//! the median ratio and its range over the pairs, and tune's own figure over fio's median.
//!
//! Both sides run the same shape: one job per shard, each on its own file and pinned to the
//! shard's CPU, the figure's total depth split as tune splits it, O_DIRECT, io_uring with
//! registered buffers and files (fio: `fixedbufs`, `registerfiles`; weir registers them as
//! `weir run` does), random offsets uniform with replacement (`norandommap`).
//! File regimes:
//! - reads (both figures) read data this cross-check wrote with 1 MiB sequential writes, one
//!   request in flight per file, as tune's sequential reads read data it wrote shallow;
//! - before each side's sequential-read run, weir's engine reads all that data once, from its
//!   start, at the figure's depth (not counted), so both sides read data in the same state:
//!   read in full just before, as every sequential-read measurement of tune reads the data
//!   the one before it read. Without it the side that runs second may read what the first
//!   has just pulled into a cache below the device (the host's page cache under a virtual
//!   disk), which the first did not;
//! - random writes overwrite that data, as tune's random writes overwrite data the run wrote;
//! - sequential writes go into fresh extents: a new sparse file per run and side, never
//!   written before, as tune's sequential writes go into fresh pre-truncated space.

use crate::drive::{register_engine, ShardTarget};
use crate::error::TuneError;
use crate::meter::{Control, Load, Meter, Pattern, Sample};
use crate::meters::{split_depth, ShardedMeter};
use crate::plan::{Figure, TuneReport};
pub use crate::regime::Regime;
pub use report::{CrossCheck, FigureCheck, Pair};
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use weir_engine::backend::{Backend, EngineDevice};
use weir_engine::buffers::DmaBufferPool;
use weir_engine::file::DirectIo;
use weir_engine::payload::{fill_incompressible, stamp_blocks};
use weir_engine::prepare::{Prepare, PrepareOptions, PreparedFile};
use weir_engine::{shards, AlignmentSource, DioAlignment};
use weir_model::device::Direction;

pub mod report;

/// How a cross-check runs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CrossCheckConfig {
    /// The fio binary (a name looked up on PATH, or a path).
    pub fio: PathBuf,
    /// Pairs of runs (weir, fio) per figure.
    pub pairs: u32,
    /// Counted time of one run.
    pub run_ns: u64,
    /// Load before the counted time (queues filling, the device's read-ahead settling).
    pub ramp_ns: u64,
    /// Data written per shard for the reads and the random writes.
    pub data_bytes_per_shard: u64,
    /// Size of each fresh sparse file the sequential writes write into (per shard, per run):
    /// large enough that no run wraps onto blocks it wrote.
    pub fresh_file_bytes_per_shard: u64,
}

impl CrossCheckConfig {
    /// Runs of `run_ns` after a ramp of a quarter of it (at most 0.5 s), 3 pairs per figure,
    /// with data sized to the run: 512 MiB per shard per counted second, between 64 MiB and
    /// 1 GiB, so a short check writes little and a full one reads each byte about once.
    pub fn new(run_ns: u64) -> CrossCheckConfig {
        let run_s = run_ns as f64 / 1e9;
        let data = ((run_s * 512.0) as u64).clamp(64, 1024) << 20;
        CrossCheckConfig {
            fio: PathBuf::from("fio"),
            pairs: 3,
            run_ns,
            ramp_ns: (run_ns / 4).min(500_000_000),
            data_bytes_per_shard: data,
            fresh_file_bytes_per_shard: 16 << 30,
        }
    }
}

/// `fio --version`, or [`TuneError::FioMissing`] when it cannot be run.
pub fn fio_version(fio: &Path) -> Result<String, TuneError> {
    let missing = |errno| TuneError::FioMissing {
        fio: fio.to_path_buf(),
        errno,
    };
    let out = Command::new(fio)
        .arg("--version")
        .output()
        .map_err(|e| missing(e.raw_os_error()))?;
    if !out.status.success() {
        return Err(missing(None));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The median of `values` (the mean of the middle two for an even count); 0 for none.
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// A figure's summary over its pairs.
pub fn summarize_pairs(pairs: &[Pair]) -> (f64, f64, f64, f64, f64, f64) {
    let ratios: Vec<f64> = pairs.iter().map(|p| p.ratio).collect();
    let fio: Vec<f64> = pairs.iter().map(|p| p.fio).collect();
    let weir: Vec<f64> = pairs.iter().map(|p| p.weir).collect();
    let fio_median = median(&fio);
    let fio_spread = if fio_median > 0.0 {
        (fio.iter().copied().fold(f64::MIN, f64::max)
            - fio.iter().copied().fold(f64::MAX, f64::min))
            / fio_median
    } else {
        0.0
    };
    (
        median(&weir),
        fio_median,
        median(&ratios),
        ratios.iter().copied().fold(f64::INFINITY, f64::min),
        ratios.iter().copied().fold(0.0, f64::max),
        fio_spread,
    )
}

/// fio's rw= for a load.
fn fio_rw(load: &Load) -> &'static str {
    match (load.pattern, load.direction) {
        (Pattern::Sequential, Direction::Read) => "read",
        (Pattern::Sequential, Direction::Write) => "write",
        (Pattern::Random, Direction::Read) => "randread",
        (Pattern::Random, Direction::Write) => "randwrite",
    }
}

/// fio's arguments for `load` over `files` (one job per file, `depths[i]` in flight on job i),
/// each job's file `size_bytes` long; `force_async` when the files refuse non-blocking requests.
#[allow(clippy::too_many_arguments)]
pub fn fio_args(
    load: &Load,
    files: &[PathBuf],
    depths: &[u32],
    size_bytes: u64,
    cfg: &CrossCheckConfig,
    backend: Backend,
    cores: usize,
    force_async: bool,
) -> Vec<String> {
    let ms = |ns: u64| format!("{}ms", ns.div_ceil(1_000_000));
    let mut args = vec![
        "--output-format=json".to_string(),
        "--thread".to_string(),
        "--group_reporting".to_string(),
        "--direct=1".to_string(),
        format!("--rw={}", fio_rw(load)),
        format!("--bs={}", load.request_bytes),
        "--norandommap".to_string(),
        "--randrepeat=0".to_string(),
        "--fallocate=none".to_string(),
        "--time_based".to_string(),
        format!("--runtime={}", ms(cfg.run_ns)),
        format!("--ramp_time={}", ms(cfg.ramp_ns)),
    ];
    match backend {
        Backend::Aio => args.push("--ioengine=libaio".to_string()),
        _ => args.extend([
            "--ioengine=io_uring".to_string(),
            "--fixedbufs=1".to_string(),
            "--registerfiles=1".to_string(),
        ]),
    }
    if force_async && backend != Backend::Aio {
        // Files that refuse non-blocking requests (zram): weir's engine sends their requests
        // straight to io-wq as concurrent work; fio's switch for the same path.
        args.push("--force_async=1".to_string());
    }
    for (i, (file, depth)) in files.iter().zip(depths).enumerate() {
        if *depth == 0 {
            continue;
        }
        args.extend([
            format!("--name=shard{i}"),
            format!("--filename={}", file.display()),
            format!("--size={size_bytes}"),
            format!("--iodepth={depth}"),
            format!("--cpus_allowed={}", i % cores.max(1)),
        ]);
    }
    args
}

/// The rate fio's JSON report gives for `load` (all jobs together: `group_reporting`).
pub(crate) fn parse_fio_rate(json: &str, load: &Load) -> Result<f64, String> {
    let start = json
        .find('{')
        .ok_or_else(|| "no JSON in its output".to_string())?;
    let doc: serde_json::Value =
        serde_json::from_str(&json[start..]).map_err(|e| format!("its JSON did not parse: {e}"))?;
    let side = match load.direction {
        Direction::Read => "read",
        Direction::Write => "write",
    };
    let jobs = doc
        .get("jobs")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| "its JSON has no jobs".to_string())?;
    let key = match load.pattern {
        Pattern::Random => "iops",
        Pattern::Sequential => "bw_bytes",
    };
    let mut total = 0.0;
    for job in jobs {
        let v = job
            .get(side)
            .and_then(|s| s.get(key))
            .and_then(serde_json::Value::as_f64)
            .ok_or_else(|| format!("a job has no {side}.{key}"))?;
        total += v;
    }
    Ok(total)
}

/// Runs fio; the rate it measured.
fn run_fio(fio: &Path, args: &[String], load: &Load) -> Result<f64, TuneError> {
    let command = format!("{} {}", fio.display(), args.join(" "));
    let out = Command::new(fio)
        .args(args)
        .output()
        .map_err(|e| TuneError::FioMissing {
            fio: fio.to_path_buf(),
            errno: e.raw_os_error(),
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(TuneError::Fio {
            command,
            what: format!("{} ({})", out.status, stderr.trim()),
        });
    }
    parse_fio_rate(&stdout, load).map_err(|what| TuneError::Fio { command, what })
}

/// The rate of `load` on `meter`: counted from the first sample at or after `ramp_ns` for
/// `run_ns` (a late sample on a loaded machine never shortens the window), and on until a
/// request completed in it, for at most ten windows (a stalled disk reads as what it did).
fn run_weir(meter: &mut dyn Meter, load: &Load, cfg: &CrossCheckConfig) -> Result<f64, TuneError> {
    const SAMPLE_NS: u64 = 50_000_000;
    let mut first: Option<Sample> = None;
    let mut last = Sample::default();
    meter.run(load, SAMPLE_NS, &mut |s: &Sample| {
        if first.is_none() && s.elapsed_ns >= cfg.ramp_ns {
            first = Some(*s);
        }
        last = *s;
        let Some(f) = first else {
            return Control::Continue;
        };
        let counted_ns = s.elapsed_ns - f.elapsed_ns;
        let done = counted_ns >= cfg.run_ns && s.ops > f.ops;
        if done || counted_ns >= cfg.run_ns.saturating_mul(10) {
            Control::Stop
        } else {
            Control::Continue
        }
    })?;
    let first = first.ok_or(TuneError::NoSamples { load: *load })?;
    let seconds = last.elapsed_ns.saturating_sub(first.elapsed_ns) as f64 / 1e9;
    if seconds <= 0.0 {
        return Err(TuneError::NoSamples { load: *load });
    }
    Ok(match load.pattern {
        Pattern::Random => (last.ops - first.ops) as f64 / seconds,
        Pattern::Sequential => (last.bytes - first.bytes) as f64 / seconds,
    })
}

const FIGURES: [&str; 4] = [
    "read_iops",
    "read_bandwidth",
    "write_iops",
    "write_bandwidth",
];

fn figure<'r>(report: &'r TuneReport, name: &str) -> (&'r Figure, Pattern, Direction) {
    match name {
        "read_iops" => (&report.read_iops, Pattern::Random, Direction::Read),
        "read_bandwidth" => (&report.read_bandwidth, Pattern::Sequential, Direction::Read),
        "write_iops" => (&report.write_iops, Pattern::Random, Direction::Write),
        _ => (
            &report.write_bandwidth,
            Pattern::Sequential,
            Direction::Write,
        ),
    }
}

/// Reads all of `data_bytes` of each file once from its start with `load` (a sequential read
/// load), not counted; stops when every byte was read or after `max_ns`.
fn read_once(
    factory: &crate::meters::DeviceFactory<EngineDevice>,
    fds: &[RawFd],
    data_bytes: u64,
    load: &Load,
    interrupted: &(dyn Fn() -> bool + Sync),
    max_ns: u64,
) -> Result<(), TuneError> {
    const SAMPLE_NS: u64 = 10_000_000;
    let targets = fds
        .iter()
        .enumerate()
        .map(|(i, &fd)| ShardTarget::over_prepared(fd, data_bytes, 0x7e57 + i as u64, data_bytes))
        .collect();
    let shards_n = fds.len() as u32;
    let mut meter = ShardedMeter::new(factory, targets, load.depth.max(shards_n), 512, interrupted)
        .with_registration(register_engine);
    let total = data_bytes.saturating_mul(u64::from(shards_n));
    meter.run(load, SAMPLE_NS, &mut |s: &Sample| {
        if s.bytes >= total || s.elapsed_ns >= max_ns {
            Control::Stop
        } else {
            Control::Continue
        }
    })
}

/// Direct-I/O alignment of the cross-check's buffers (a multiple of every logical sector).
const ALIGN: DioAlignment = DioAlignment {
    mem_align_bytes: 4096,
    offset_align_bytes: 4096,
    source: AlignmentSource::Default,
};

/// Writes `bytes` of incompressible, per-block-unique data into `fd` from offset 0 with 1 MiB
/// `pwrite`s, one in flight.
fn write_data(fd: RawFd, path: &Path, bytes: u64, seed: u64) -> Result<(), TuneError> {
    const CHUNK: usize = 1 << 20;
    let mut pool = DmaBufferPool::new(1, CHUNK, &ALIGN).map_err(TuneError::Buffers)?;
    fill_incompressible(pool.slice_mut(0), seed);
    let mut offset = 0u64;
    let mut sequence = 0u64;
    while offset < bytes {
        sequence += 1;
        stamp_blocks(pool.slice_mut(0), offset, sequence);
        // SAFETY: the buffer holds CHUNK bytes and lives across the call; fd is open.
        let n = unsafe {
            libc::pwrite(
                fd,
                pool.ptr(0).cast::<libc::c_void>(),
                CHUNK,
                offset as libc::off_t,
            )
        };
        if n != CHUNK as isize {
            let errno = if n < 0 {
                std::io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO)
            } else {
                libc::ENOSPC
            };
            return Err(TuneError::CrossCheckWrite {
                path: path.to_path_buf(),
                errno,
            });
        }
        offset += CHUNK as u64;
    }
    Ok(())
}

/// Free bytes of the filesystem holding `dir` (0 when it cannot be asked).
fn free_bytes(dir: &Path) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return 0;
    };
    // SAFETY: statvfs fills the zeroed struct; path is a valid C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    (st.f_bavail as u64).saturating_mul(st.f_frsize as u64)
}

fn create(path: &Path, bytes: u64) -> Result<PreparedFile, TuneError> {
    let mut opts = PrepareOptions::new(Prepare::Pretruncate, bytes);
    opts.direct = DirectIo::Required;
    PreparedFile::create_at(path, &opts).map_err(TuneError::File)
}

/// Cross-checks `report`'s four figures in `dir` with `shards` shards. `interrupted` is polled
/// by every weir run (Ctrl-C); every file made here is removed on return, also on an error.
pub fn cross_check(
    dir: &Path,
    shards_n: u32,
    report: &TuneReport,
    cfg: &CrossCheckConfig,
    backend: Backend,
    interrupted: &(dyn Fn() -> bool + Sync),
    progress: &mut dyn FnMut(&str),
) -> Result<CrossCheck, TuneError> {
    let fio_version = fio_version(&cfg.fio)?;
    let shards_n = shards_n.max(1);
    let pid = std::process::id();
    let cores = shards::available_cores().max(1);
    let data_bytes = cfg.data_bytes_per_shard & !((1 << 20) - 1);
    let data_paths: Vec<PathBuf> = (0..shards_n)
        .map(|i| dir.join(format!(".weir-cross-check-{pid}-data-{i}")))
        .collect();
    let data_files = data_paths
        .iter()
        .map(|p| create(p, data_bytes))
        .collect::<Result<Vec<_>, _>>()?;
    std::thread::scope(|scope| {
        let writers: Vec<_> = data_files
            .iter()
            .zip(&data_paths)
            .enumerate()
            .map(|(i, (f, p))| {
                let fd = f.fd();
                scope.spawn(move || {
                    let _ = shards::pin_current_thread(i % cores);
                    write_data(fd, p, data_bytes, 0xc0ffee + i as u64)
                })
            })
            .collect();
        writers
            .into_iter()
            .try_for_each(|w| w.join().unwrap_or(Err(TuneError::ShardPanicked)))
    })?;
    let factory = move |shard: u32, depth: u32| -> Result<EngineDevice, TuneError> {
        let _ = shards::pin_current_thread(shard as usize % cores);
        EngineDevice::open(backend, depth).map_err(TuneError::RingOpen)
    };
    // Each side's fresh files hold at most half the free space between them (a small
    // filesystem must not fill up); a run that writes more wraps onto its own blocks.
    let fresh_bytes = (free_bytes(dir) / 2 / u64::from(shards_n))
        .min(cfg.fresh_file_bytes_per_shard)
        .max(64 << 20)
        & !((1 << 20) - 1);
    let punts = data_files
        .first()
        .is_some_and(|f| weir_engine::iowq::file_punts(f.fd()));
    let mut figures = Vec::new();
    for (index, name) in FIGURES.iter().enumerate() {
        let (f, pattern, direction) = figure(report, name);
        let load = Load {
            direction,
            pattern,
            request_bytes: f.request_bytes,
            depth: f.depth_best.max(1),
        };
        let depths = split_depth(load.depth, shards_n);
        let fresh = pattern == Pattern::Sequential && direction == Direction::Write;
        let mut pairs = Vec::new();
        let mut command = String::new();
        for p in 0..cfg.pairs {
            let weir_first = (p as usize + index) % 2 == 0;
            let mut weir = 0.0;
            let mut fio = 0.0;
            for side in 0..2 {
                let weir_turn = (side == 0) == weir_first;
                if interrupted() {
                    return Err(TuneError::Interrupted);
                }
                // Sequential writes get fresh files each run; the rest use the data files.
                let fresh_files = if fresh {
                    let tag = if weir_turn { "weir" } else { "fio" };
                    (0..shards_n)
                        .map(|i| {
                            create(
                                &dir.join(format!(".weir-cross-check-{pid}-{tag}-{p}-{i}")),
                                fresh_bytes,
                            )
                        })
                        .collect::<Result<Vec<_>, _>>()?
                } else {
                    Vec::new()
                };
                let (paths, size): (Vec<PathBuf>, u64) = if fresh {
                    (
                        fresh_files.iter().map(|f| f.path().to_path_buf()).collect(),
                        fresh_bytes,
                    )
                } else {
                    (data_paths.clone(), data_bytes)
                };
                if pattern == Pattern::Sequential && direction == Direction::Read {
                    let fds: Vec<RawFd> = data_files.iter().map(PreparedFile::fd).collect();
                    read_once(
                        &factory,
                        &fds,
                        data_bytes,
                        &load,
                        interrupted,
                        cfg.run_ns.saturating_mul(10),
                    )?;
                }
                if weir_turn {
                    let fds: Vec<RawFd> = if fresh {
                        fresh_files.iter().map(PreparedFile::fd).collect()
                    } else {
                        data_files.iter().map(PreparedFile::fd).collect()
                    };
                    let targets = fds
                        .iter()
                        .enumerate()
                        .map(|(i, &fd)| {
                            let written = if fresh { 0 } else { data_bytes };
                            ShardTarget::over_prepared(fd, size, 0x7e57 + i as u64, written)
                        })
                        .collect();
                    let mut meter = ShardedMeter::new(
                        &factory,
                        targets,
                        load.depth.max(shards_n),
                        512,
                        interrupted,
                    )
                    .with_registration(register_engine);
                    weir = run_weir(&mut meter, &load, cfg)?;
                } else {
                    let args = fio_args(&load, &paths, &depths, size, cfg, backend, cores, punts);
                    command = format!("fio {}", args.join(" "));
                    fio = run_fio(&cfg.fio, &args, &load)?;
                }
                drop(fresh_files);
            }
            let ratio = if fio > 0.0 { weir / fio } else { 0.0 };
            pairs.push(Pair {
                weir,
                fio,
                ratio,
                weir_first,
            });
        }
        let (weir_median, fio_median, ratio_median, ratio_min, ratio_max, fio_spread) =
            summarize_pairs(&pairs);
        let check = FigureCheck {
            figure: name,
            load,
            regime: f.regime,
            unit: match pattern {
                Pattern::Random => "IOPS",
                Pattern::Sequential => "B/s",
            },
            tune_value: f.value,
            pairs,
            weir_median,
            fio_median,
            ratio_median,
            ratio_min,
            ratio_max,
            tune_over_fio: if fio_median > 0.0 {
                f.value / fio_median
            } else {
                0.0
            },
            fio_spread,
            fio_command: command,
        };
        progress(&check_line(&check));
        figures.push(check);
    }
    drop(data_files);
    Ok(CrossCheck {
        fio_version,
        pairs: cfg.pairs,
        run_s: cfg.run_ns as f64 / 1e9,
        ramp_s: cfg.ramp_ns as f64 / 1e9,
        data_bytes_per_shard: data_bytes,
        shards: shards_n,
        figures,
    })
}

fn rate(v: f64, unit: &str) -> String {
    if unit == "IOPS" {
        format!("{:.1} K IOPS", v / 1e3)
    } else {
        format!("{:.0} MB/s", v / 1e6)
    }
}

/// One figure's line: the point, weir / fio per pair, and tune's figure against fio's median.
pub fn check_line(c: &FigureCheck) -> String {
    let pairs: Vec<String> = c.pairs.iter().map(|p| format!("{:.2}", p.ratio)).collect();
    format!(
        "cross-check {}: {} KiB x{} ({}): weir/fio median {:.2} (pairs {}; weir {}, fio {}, fio's own spread {:.0}%); tune's figure {} = {:.2}x fio",
        c.figure.replace('_', " "),
        c.load.request_bytes >> 10,
        c.load.depth,
        c.regime.describe(),
        c.ratio_median,
        pairs.join(" "),
        rate(c.weir_median, c.unit),
        rate(c.fio_median, c.unit),
        100.0 * c.fio_spread,
        rate(c.tune_value, c.unit),
        c.tune_over_fio,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(pattern: Pattern, direction: Direction) -> Load {
        Load {
            direction,
            pattern,
            request_bytes: 4096,
            depth: 5,
        }
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn pairs_summarize_to_median_range_and_fio_spread() {
        let pair = |weir: f64, fio: f64| Pair {
            weir,
            fio,
            ratio: weir / fio,
            weir_first: true,
        };
        let (w, f, r, lo, hi, spread) =
            summarize_pairs(&[pair(90.0, 100.0), pair(100.0, 100.0), pair(55.0, 50.0)]);
        assert_eq!((w, f), (90.0, 100.0));
        assert!((r - 1.0).abs() < 1e-9 && (lo - 0.9).abs() < 1e-9 && (hi - 1.1).abs() < 1e-9);
        assert!((spread - 0.5).abs() < 1e-9);
    }

    #[test]
    fn fio_gets_the_figures_shape_split_over_one_job_per_shard() {
        let cfg = CrossCheckConfig::new(2_000_000_000);
        let files = [PathBuf::from("/d/a"), PathBuf::from("/d/b")];
        let l = load(Pattern::Random, Direction::Write);
        let args = fio_args(
            &l,
            &files,
            &split_depth(5, 2),
            1 << 30,
            &cfg,
            Backend::Uring,
            2,
            false,
        );
        let joined = args.join(" ");
        for want in [
            "--rw=randwrite",
            "--bs=4096",
            "--runtime=2000ms",
            "--ramp_time=500ms",
            "--name=shard0 --filename=/d/a --size=1073741824 --iodepth=3 --cpus_allowed=0",
            "--name=shard1 --filename=/d/b --size=1073741824 --iodepth=2 --cpus_allowed=1",
            "--fixedbufs=1",
        ] {
            assert!(joined.contains(want), "{want} missing in {joined}");
        }
        // A shard without requests gets no job.
        let one = fio_args(
            &l.with_depth(1),
            &files,
            &split_depth(1, 2),
            1,
            &cfg,
            Backend::Aio,
            2,
            true,
        );
        assert_eq!(one.iter().filter(|a| a.starts_with("--name=")).count(), 1);
        assert!(one.contains(&"--ioengine=libaio".to_string()));
        assert!(!joined.contains("force_async") && !one.iter().any(|a| a.contains("force_async")));
        // On files that punt every request (zram), fio takes io-wq's concurrent path as weir.
        let punting = fio_args(&l, &files, &[1, 1], 1, &cfg, Backend::Uring, 2, true);
        assert!(punting.contains(&"--force_async=1".to_string()));
    }

    #[test]
    fn fio_json_gives_iops_for_random_and_bytes_for_sequential_loads() {
        let json = r#"note: a warning line
{"jobs":[{"read":{"iops":1000.5,"bw_bytes":4098048},"write":{"iops":0,"bw_bytes":0}}]}"#;
        let r = parse_fio_rate(json, &load(Pattern::Random, Direction::Read));
        assert_eq!(r, Ok(1000.5));
        let b = parse_fio_rate(json, &load(Pattern::Sequential, Direction::Read));
        assert_eq!(b, Ok(4098048.0));
        assert!(parse_fio_rate("fio: error", &load(Pattern::Random, Direction::Read)).is_err());
        assert!(
            parse_fio_rate("{\"jobs\":[{}]}", &load(Pattern::Random, Direction::Read))
                .is_err_and(|e| e.contains("read.iops"))
        );
    }

    #[test]
    fn a_missing_fio_is_named_with_the_fix() {
        let e = fio_version(Path::new("/nonexistent/fio")).expect_err("no such fio");
        assert!(e.is_usage());
        let text = e.to_string();
        assert!(
            text.contains("install fio") && text.contains("/nonexistent/fio"),
            "{text}"
        );
    }

    #[test]
    fn every_load_names_its_regime() {
        assert_eq!(
            Regime::of(&load(Pattern::Sequential, Direction::Write)),
            Regime::FreshExtents
        );
        assert_eq!(
            Regime::of(&load(Pattern::Random, Direction::Write)),
            Regime::Overwrite
        );
        assert_eq!(
            Regime::of(&load(Pattern::Random, Direction::Read)),
            Regime::WrittenData
        );
    }

    #[test]
    fn data_scales_with_the_run_between_bounds() {
        assert_eq!(
            CrossCheckConfig::new(2_000_000_000).data_bytes_per_shard,
            1 << 30
        );
        assert_eq!(
            CrossCheckConfig::new(100_000_000).data_bytes_per_shard,
            64 << 20
        );
        assert_eq!(CrossCheckConfig::new(500_000_000).ramp_ns, 125_000_000);
    }
}
