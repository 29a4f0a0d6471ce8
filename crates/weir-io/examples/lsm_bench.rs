//! The LSM-shaped benchmark behind `bench/lsm.sh`: foreground point reads and commit-log
//! appends arriving open-loop while background writes (flush/compaction-like 1 MiB
//! overwrites, 16 in flight) run as fast as they are let, through:
//!
//! - `weir`: weir-io's loop with the scheduler (the tuned model and a latency goal);
//! - `none`: the same loop, no scheduler (every request goes to the disk at once);
//! - `token-bucket-N`: no scheduler, background writes capped at N MB/s by a token bucket
//!   (RocksDB's `GenericRateLimiter` / TiKV's `IoRateLimiter`, refilled continuously);
//! - `tokio-fs`: std `pread`/`pwrite` on tokio's blocking threads, as `tokio::fs` does.
//!
//! All from one tokio application, on the same files, modes rotated each round; the report
//! is the median over rounds. A second phase measures 4 KiB random reads at 32 in flight:
//! the raw engine device; weir-io from tokio with its loop thread (with and without the
//! scheduler) and driven by the runtime's own thread; weir-io thread-per-core; and tokio-fs.
//!
//! Regimes: background writes overwrite a preallocated file; commit-log appends extend a
//! fresh file each mode; reads hit a prefilled file. All O_DIRECT.

use std::cell::Cell;
use std::future::Future;
use std::os::unix::fs::FileExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde_json::{json, Value};
use weir_engine::{
    Backend, DmaBufferPool, Done, EngineDevice, Flow, LoopBuffers, LoopOptions, Next, Op, OpSource,
    Outcome, ShardLoop,
};
use weir_io::{ClassSpec, Disk, DiskModel, File, FileOptions, IoBuf, IoClass, Policy};
use weir_model::device::Direction;

const READ_FILE_BYTES: u64 = 1 << 30;
const BG_FILE_BYTES: u64 = 1 << 30;
const BG_WRITE_BYTES: usize = 1 << 20;
const BG_LANES: u64 = 16;
const BLOCK: u64 = 4096;
/// The rows of the 4 KiB QD32 phase: the engine's own loop, weir-io on its loop thread (with
/// and without the scheduler), weir-io driven by a tokio runtime's thread, weir-io
/// thread-per-core, and std pread on tokio's blocking threads.
const QD32_ROWS: [&str; 6] = [
    "raw-engine",
    "weir-io",
    "weir-io-scheduled",
    "weir-io-driven",
    "weir-io-local",
    "tokio-fs",
];

struct Args {
    dir: PathBuf,
    duration: Duration,
    out: PathBuf,
    rounds: usize,
    goal_us: u64,
    caps_mb_s: Vec<u64>,
    model: PathBuf,
    /// `--duplex true` (the default) gives a model file that does not say `duplex:` a lane per
    /// direction, as bench/qos.sh does: neither tune nor iotune measures it, and this VM's disk
    /// serves reads beside writes. `--duplex false` keeps such a file half-duplex.
    duplex_when_unsaid: bool,
    read_rate: u64,
    append_rate: u64,
    qd32_secs: u64,
    /// How long weir-io's loop watches for work before sleeping; None: the library default.
    spin_us: Option<u64>,
    /// Tokio worker threads for the QD32 part (the LSM part always uses 2).
    qd32_workers: usize,
    /// Only these modes (names as in the report), for a quick look; empty: all.
    only: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        dir: PathBuf::new(),
        duration: Duration::from_secs(10),
        out: PathBuf::from("lsm.json"),
        rounds: 3,
        goal_us: 1000,
        caps_mb_s: vec![25, 50, 100, 200, 400, 800],
        model: PathBuf::from("io-properties.yaml"),
        duplex_when_unsaid: true,
        read_rate: 2000,
        append_rate: 500,
        qd32_secs: 4,
        spin_us: None,
        qd32_workers: 2,
        only: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let num = |v: String| v.parse::<u64>().map_err(|e| format!("{flag} {v}: {e}"));
        match flag.as_str() {
            "--dir" => a.dir = value()?.into(),
            "--duration" => a.duration = Duration::from_secs(num(value()?)?),
            "--out" => a.out = value()?.into(),
            "--rounds" => a.rounds = num(value()?)? as usize,
            "--goal-us" => a.goal_us = num(value()?)?,
            "--model" => a.model = value()?.into(),
            "--duplex" => {
                a.duplex_when_unsaid = match value()?.as_str() {
                    "true" => true,
                    "false" => false,
                    v => return Err(format!("--duplex {v}: expected true or false")),
                }
            }
            "--read-rate" => a.read_rate = num(value()?)?,
            "--append-rate" => a.append_rate = num(value()?)?,
            "--qd32-secs" => a.qd32_secs = num(value()?)?,
            "--qd32-workers" => a.qd32_workers = num(value()?)?.max(1) as usize,
            "--spin-us" => a.spin_us = Some(num(value()?)?),
            "--only" => a.only = value()?.split(',').map(String::from).collect(),
            "--caps" => {
                a.caps_mb_s = value()?
                    .split(',')
                    .map(|c| {
                        c.trim()
                            .parse::<u64>()
                            .map_err(|e| format!("--caps {c}: {e}"))
                    })
                    .collect::<Result<_, _>>()?
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if a.dir.as_os_str().is_empty() {
        return Err("--dir DIR is required (a directory on the disk to measure)".into());
    }
    Ok(a)
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Weir,
    None,
    TokenBucket(u64),
    TokioFs,
    Solo,
}

impl Mode {
    fn name(self) -> String {
        match self {
            Mode::Weir => "weir".into(),
            Mode::None => "none".into(),
            Mode::TokenBucket(c) => format!("token-bucket-{c}"),
            Mode::TokioFs => "tokio-fs".into(),
            Mode::Solo => "solo".into(),
        }
    }
}

/// A continuously refilled token bucket with debt (RocksDB/TiKV-style byte limiter).
struct TokenBucket {
    rate_bytes_per_sec: f64,
    state: Mutex<(f64, Instant)>,
}

impl TokenBucket {
    fn new(mb_s: u64) -> TokenBucket {
        let rate = mb_s as f64 * 1e6;
        TokenBucket {
            rate_bytes_per_sec: rate,
            // A burst of 100 ms, RocksDB's refill period.
            state: Mutex::new((rate / 10.0, Instant::now())),
        }
    }

    /// How long to wait before `bytes` may go.
    fn request(&self, bytes: u64) -> Duration {
        let mut s = self.state.lock().expect("bucket");
        let now = Instant::now();
        let burst = self.rate_bytes_per_sec / 10.0;
        s.0 = (s.0 + now.duration_since(s.1).as_secs_f64() * self.rate_bytes_per_sec).min(burst);
        s.1 = now;
        s.0 -= bytes as f64;
        if s.0 >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-s.0 / self.rate_bytes_per_sec)
        }
    }
}

/// The I/O path under test.
#[derive(Clone)]
enum Path2 {
    Weir {
        disk: Disk,
        reads: File,
        log: File,
        bg: File,
        query: IoClass,
        commit: IoClass,
        background: IoClass,
    },
    Std {
        reads: Arc<std::fs::File>,
        log: Arc<std::fs::File>,
        bg: Arc<std::fs::File>,
        log_at: Arc<AtomicU64>,
    },
}

impl Path2 {
    async fn read(&self, buf: IoBuf, at: u64) -> IoBuf {
        match self {
            Path2::Weir {
                disk, reads, query, ..
            } => {
                let (r, b) = disk.read_at(reads, *query, buf, at).await;
                r.expect("read");
                b
            }
            Path2::Std { reads, .. } => {
                let f = reads.clone();
                tokio::task::spawn_blocking(move || {
                    let mut buf = buf;
                    f.read_exact_at(&mut buf, at).expect("pread");
                    buf
                })
                .await
                .expect("blocking read")
            }
        }
    }

    async fn append(&self, buf: IoBuf) -> IoBuf {
        match self {
            Path2::Weir {
                disk, log, commit, ..
            } => {
                let (r, b) = disk.append(log, *commit, buf).await;
                r.expect("append");
                b
            }
            Path2::Std { log, log_at, .. } => {
                let f = log.clone();
                let at = log_at.fetch_add(buf.len() as u64, Ordering::Relaxed);
                tokio::task::spawn_blocking(move || {
                    f.write_all_at(&buf, at).expect("pwrite");
                    buf
                })
                .await
                .expect("blocking append")
            }
        }
    }

    async fn write_bg(&self, buf: IoBuf, at: u64) -> IoBuf {
        match self {
            Path2::Weir {
                disk,
                bg,
                background,
                ..
            } => {
                let (r, b) = disk.write_at(bg, *background, buf, at).await;
                r.expect("write");
                b
            }
            Path2::Std { bg, .. } => {
                let f = bg.clone();
                tokio::task::spawn_blocking(move || {
                    f.write_all_at(&buf, at).expect("pwrite");
                    buf
                })
                .await
                .expect("blocking write")
            }
        }
    }
}

struct Sample {
    reads: Histogram<u64>,
    appends: Histogram<u64>,
    read_secs: f64,
    bg_bytes: u64,
    cpu_us: f64,
    ops: u64,
}

fn cpu_us() -> f64 {
    // SAFETY: rusage is plain data; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 * 1e6 + tv.tv_usec as f64;
    t(ru.ru_utime) + t(ru.ru_stime)
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn open_direct(path: &Path, create: bool) -> std::fs::File {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .truncate(create)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()))
}

fn prefill(path: &Path, bytes: u64) {
    if std::fs::metadata(path).is_ok_and(|m| m.len() == bytes) {
        return;
    }
    let f = open_direct(path, true);
    let mut buf = IoBuf::zeroed(4 << 20);
    let mut x = 0x1234_5678u64;
    for chunk in buf.chunks_mut(8) {
        chunk.copy_from_slice(&xorshift(&mut x).to_le_bytes());
    }
    for at in (0..bytes).step_by(buf.len()) {
        f.write_all_at(&buf, at).expect("prefill");
    }
    f.sync_all().expect("fsync");
}

/// One mode for `duration`: open-loop reads and appends, closed-loop background writes.
async fn run_mode(
    path: Path2,
    bucket: Option<Arc<TokenBucket>>,
    with_bg: bool,
    args: &Args,
) -> Sample {
    let stop = Arc::new(AtomicBool::new(false));
    let bg_bytes = Arc::new(AtomicU64::new(0));
    let cpu0 = cpu_us();
    let t0 = Instant::now();
    let mut bg = Vec::new();
    if with_bg {
        for lane in 0..BG_LANES {
            let (path, stop, bg_bytes, bucket) =
                (path.clone(), stop.clone(), bg_bytes.clone(), bucket.clone());
            bg.push(tokio::spawn(async move {
                let mut buf = IoBuf::zeroed(BG_WRITE_BYTES);
                let mut at = lane * BG_WRITE_BYTES as u64;
                while !stop.load(Ordering::Relaxed) {
                    if let Some(b) = &bucket {
                        let wait = b.request(BG_WRITE_BYTES as u64);
                        if !wait.is_zero() {
                            tokio::time::sleep(wait).await;
                        }
                    }
                    buf = path.write_bg(buf, at).await;
                    bg_bytes.fetch_add(BG_WRITE_BYTES as u64, Ordering::Relaxed);
                    at = (at + BG_LANES * BG_WRITE_BYTES as u64) % BG_FILE_BYTES;
                }
            }));
        }
    }
    let reads = Arc::new(Mutex::new(
        Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("hist"),
    ));
    let appends = Arc::new(Mutex::new(
        Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("hist"),
    ));
    // Arrivals come from an OS thread that sleeps to each intended time (tokio's timer has
    // a 1 ms tick, which would bunch arrivals and add up to 1 ms to every latency); latency
    // is counted from the intended arrival, so a late issuer cannot hide queueing.
    let handle = tokio::runtime::Handle::current();
    let start = Instant::now();
    let end = start + args.duration;
    let spawn_stream = |rate: u64, is_read: bool| {
        let (path, hist) = (
            path.clone(),
            if is_read {
                reads.clone()
            } else {
                appends.clone()
            },
        );
        let handle = handle.clone();
        let thread = std::thread::spawn(move || {
            let mut tasks = Vec::new();
            let mut x = if is_read {
                0x9E37_79B9u64
            } else {
                0x7F4A_7C15u64
            };
            let period = Duration::from_secs_f64(1.0 / rate as f64);
            let mut i = 0u32;
            loop {
                let intended = start + period * i;
                if intended >= end {
                    break;
                }
                let now = Instant::now();
                if intended > now {
                    std::thread::sleep(intended - now);
                }
                let (path, hist) = (path.clone(), hist.clone());
                let at = xorshift(&mut x) % (READ_FILE_BYTES / BLOCK) * BLOCK;
                tasks.push(handle.spawn(async move {
                    let buf = IoBuf::zeroed(BLOCK as usize);
                    if is_read {
                        path.read(buf, at).await;
                    } else {
                        path.append(buf).await;
                    }
                    let us = intended.elapsed().as_micros() as u64;
                    hist.lock().expect("hist").saturating_record(us.max(1));
                }));
                i += 1;
            }
            tasks
        });
        tokio::task::spawn_blocking(move || thread.join().expect("arrivals"))
    };
    let r = spawn_stream(args.read_rate, true);
    let a = (args.append_rate > 0 && with_bg).then(|| spawn_stream(args.append_rate, false));
    for t in r.await.expect("reads") {
        t.await.expect("read task");
    }
    let read_secs = t0.elapsed().as_secs_f64();
    if let Some(a) = a {
        for t in a.await.expect("appends") {
            t.await.expect("append task");
        }
    }
    stop.store(true, Ordering::Relaxed);
    let bg_secs = t0.elapsed().as_secs_f64();
    for t in bg {
        t.await.expect("bg");
    }
    let cpu = cpu_us() - cpu0;
    let reads = reads.lock().expect("hist").clone();
    let appends = appends.lock().expect("hist").clone();
    let bg_bytes = bg_bytes.load(Ordering::Relaxed);
    let ops = reads.len() + appends.len() + bg_bytes / BG_WRITE_BYTES as u64;
    Sample {
        reads,
        appends,
        read_secs,
        bg_bytes: (bg_bytes as f64 * read_secs / bg_secs) as u64,
        cpu_us: cpu,
        ops,
    }
}

fn weir_path(args: &Args, model: &DiskModel, unlimited: bool, log_name: &str) -> Path2 {
    let mut policy = Policy::builder(model.clone())
        .latency_goal(Duration::from_micros(args.goal_us))
        .unlimited(unlimited);
    let query = policy.class(ClassSpec::new("query", 1000)).expect("class");
    let commit = policy
        .class(ClassSpec::new("commit_log", 500))
        .expect("class");
    let background = policy
        .class(ClassSpec::new("background", 100))
        .expect("class");
    let mut disk = Disk::builder(&policy.build().expect("policy"));
    if let Some(us) = args.spin_us {
        disk = disk.spin(Duration::from_micros(us));
    }
    let disk = disk.build().expect("disk");
    let open = |name: &str, create: bool| {
        disk.open(
            args.dir.join(name),
            FileOptions::new().create(create).truncate(create),
        )
        .expect("open")
    };
    Path2::Weir {
        reads: open("reads.dat", false),
        bg: open("bg.dat", false),
        log: open(log_name, true),
        disk,
        query,
        commit,
        background,
    }
}

fn std_path(args: &Args, log_name: &str) -> Path2 {
    Path2::Std {
        reads: Arc::new(open_direct(&args.dir.join("reads.dat"), false)),
        bg: Arc::new(open_direct(&args.dir.join("bg.dat"), false)),
        log: Arc::new(open_direct(&args.dir.join(log_name), true)),
        log_at: Arc::new(AtomicU64::new(0)),
    }
}

fn summarize(s: &Sample) -> Value {
    let q = |h: &Histogram<u64>, p: f64| h.value_at_quantile(p);
    json!({
        "read_p50_us": q(&s.reads, 0.50),
        "read_p99_us": q(&s.reads, 0.99),
        "read_p999_us": q(&s.reads, 0.999),
        "read_iops": s.reads.len() as f64 / s.read_secs,
        "append_p99_us": q(&s.appends, 0.99),
        "write_mb_s": s.bg_bytes as f64 / s.read_secs / 1e6,
        "cpu_us_per_op": s.cpu_us / s.ops.max(1) as f64,
        "reads": s.reads.len(),
        "read_min_us": s.reads.min(),
        "read_max_us": s.reads.max(),
    })
}

/// 4 KiB random reads at 32 in flight on the engine's own shard loop (weir-engine's
/// `ShardLoop` over io_uring, its default eager submission), on one thread.
fn qd32_raw(path: &Path, secs: u64) -> (f64, f64) {
    struct Source {
        fd: i32,
        x: u64,
        end: Instant,
        done: u64,
    }
    impl OpSource for Source {
        type Error = String;
        fn next_op(&mut self, _now: u64, buffers: &mut LoopBuffers) -> Result<Next, String> {
            if Instant::now() >= self.end {
                return Ok(Next::Finished);
            }
            let Some(buf) = buffers.acquire(0) else {
                return Ok(Next::WaitForCompletion);
            };
            let at = xorshift(&mut self.x) % (READ_FILE_BYTES / BLOCK) * BLOCK;
            Ok(Next::Op(Op::new(
                0,
                Direction::Read,
                self.fd,
                at,
                buf,
                BLOCK as u32,
            )))
        }
        fn on_done(&mut self, done: Done, buffers: &mut LoopBuffers) -> Result<Flow, String> {
            if done.outcome != Outcome::Full {
                return Err(format!("read failed: {:?}", done.outcome));
            }
            self.done += 1;
            buffers.release(done.buf);
            Ok(Flow::Continue)
        }
    }
    let f = open_direct(path, false);
    let align = weir_engine::dio_alignment_fd(std::os::fd::AsRawFd::as_raw_fd(&f));
    let pool = DmaBufferPool::new(32, BLOCK as usize, &align).expect("pool");
    let dev = EngineDevice::open(Backend::Uring, 32).expect("ring");
    let options = LoopOptions {
        offset_align_bytes: align.offset_align_bytes,
        ..LoopOptions::default()
    };
    let mut shard = ShardLoop::new(dev, vec![pool], options);
    let (cpu0, t0) = (cpu_us(), Instant::now());
    let mut source = Source {
        fd: std::os::fd::AsRawFd::as_raw_fd(&f),
        x: 0xABCD,
        end: t0 + Duration::from_secs(secs),
        done: 0,
    };
    shard.run(&mut source).expect("raw engine run");
    let secs = t0.elapsed().as_secs_f64();
    let cpu = cpu_us() - cpu0;
    (source.done as f64 / secs, cpu / source.done as f64)
}

async fn qd32_async(path: Path2, secs: u64) -> (f64, f64) {
    let done = Arc::new(AtomicU64::new(0));
    let (cpu0, t0) = (cpu_us(), Instant::now());
    let end = t0 + Duration::from_secs(secs);
    let mut tasks = Vec::new();
    for lane in 0..32u64 {
        let (path, done) = (path.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            let mut buf = IoBuf::zeroed(BLOCK as usize);
            let mut x = 0x5555 + lane * 7919;
            while Instant::now() < end {
                let at = xorshift(&mut x) % (READ_FILE_BYTES / BLOCK) * BLOCK;
                buf = path.read(buf, at).await;
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for t in tasks {
        t.await.expect("qd32 task");
    }
    let n = done.load(Ordering::Relaxed);
    (
        n as f64 / t0.elapsed().as_secs_f64(),
        (cpu_us() - cpu0) / n as f64,
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    // NaN for a row left out with --only.
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn median_rows(rounds: &[Value], name: &str) -> Value {
    let rows: Vec<&Value> = rounds.iter().filter(|r| r["name"] == name).collect();
    let mut out = json!({ "name": name });
    for key in [
        "read_p50_us",
        "read_p99_us",
        "read_p999_us",
        "read_iops",
        "append_p99_us",
        "write_mb_s",
        "cpu_us_per_op",
    ] {
        let v: Vec<f64> = rows.iter().filter_map(|r| r[key].as_f64()).collect();
        out[key] = json!(median(v.clone()));
        out[format!("{key}_rounds")] = json!(v);
    }
    out
}

/// The model from `--model`; a file that does not say `duplex:` (outside comments) is read
/// duplex unless `--duplex false` (see `Args::duplex_when_unsaid`).
fn load_model(args: &Args) -> Result<DiskModel, String> {
    let text = std::fs::read_to_string(&args.model)
        .map_err(|e| format!("--model {}: {e}", args.model.display()))?;
    let model = DiskModel::from_io_properties(&args.model, &args.dir).map_err(|e| e.to_string())?;
    let says_duplex = text
        .lines()
        .any(|line| line.split('#').next().unwrap_or("").contains("duplex:"));
    if says_duplex || !args.duplex_when_unsaid {
        return Ok(model);
    }
    model.with_duplex(true).map_err(|e| e.to_string())
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("lsm_bench: {e}");
            std::process::exit(2);
        }
    };
    let model = load_model(&args).unwrap_or_else(|e| {
        eprintln!("lsm_bench: {e}");
        std::process::exit(2);
    });
    eprintln!(
        "model {}: read {} IOPS {} B/s, write {} IOPS {} B/s, duplex {}",
        args.model.display(),
        model.read_iops(),
        model.read_bytes_per_sec(),
        model.write_iops(),
        model.write_bytes_per_sec(),
        model.duplex()
    );
    prefill(&args.dir.join("reads.dat"), READ_FILE_BYTES);
    prefill(&args.dir.join("bg.dat"), BG_FILE_BYTES);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio");
    let qd32_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.qd32_workers)
        .enable_all()
        .build()
        .expect("tokio");
    let mut modes = vec![Mode::Weir, Mode::None, Mode::TokioFs];
    modes.extend(args.caps_mb_s.iter().map(|&c| Mode::TokenBucket(c)));
    let mut rows = Vec::new();
    let mut qd32_rows = Vec::new();
    for round in 0..args.rounds {
        let mut order = modes.clone();
        let n = order.len();
        order.rotate_left(round % n);
        order.insert(0, Mode::Solo);
        order.retain(|m| args.only.is_empty() || args.only.contains(&m.name()));
        for mode in order {
            let log = format!("log-{}.dat", mode.name());
            let (path, bucket) = match mode {
                Mode::Weir => (weir_path(&args, &model, false, &log), None),
                Mode::None | Mode::Solo => (weir_path(&args, &model, true, &log), None),
                Mode::TokenBucket(c) => (
                    weir_path(&args, &model, true, &log),
                    Some(Arc::new(TokenBucket::new(c))),
                ),
                Mode::TokioFs => (std_path(&args, &log), None),
            };
            let sample = rt.block_on(run_mode(path.clone(), bucket, mode != Mode::Solo, &args));
            if let Path2::Weir { disk, .. } = &path {
                for m in disk.metrics() {
                    eprintln!(
                        "    {:>10}: {} pieces, queue p99 {} us, device p99 {} us",
                        m.name,
                        m.read_ops + m.write_ops,
                        m.queue_latency.percentile_ns(99.0) / 1000,
                        m.disk_latency.percentile_ns(99.0) / 1000
                    );
                }
            }
            let mut row = summarize(&sample);
            row["name"] = json!(mode.name());
            row["round"] = json!(round);
            eprintln!("round {round} {:>18}: {row}", mode.name());
            rows.push(row);
            let _ = std::fs::remove_file(args.dir.join(&log));
        }
        // 4 KiB random reads at 32 in flight, rotated too.
        let reads = args.dir.join("reads.dat");
        let mut q = QD32_ROWS.to_vec();
        let n = q.len();
        q.rotate_left(round % n);
        q.retain(|n| args.only.is_empty() || args.only.iter().any(|o| o == n));
        for name in q {
            let (iops, cpu) = match name {
                "raw-engine" => qd32_raw(&reads, args.qd32_secs),
                "weir-io-local" => qd32_local(&args, &model, args.qd32_secs, false),
                "weir-io-driven" => qd32_local(&args, &model, args.qd32_secs, true),
                "weir-io" => qd32_rt.block_on(qd32_async(
                    weir_path(&args, &model, true, "qd32.log"),
                    args.qd32_secs,
                )),
                "weir-io-scheduled" => qd32_rt.block_on(qd32_async(
                    weir_path(&args, &model, false, "qd32.log"),
                    args.qd32_secs,
                )),
                _ => qd32_rt.block_on(qd32_async(std_path(&args, "qd32.log"), args.qd32_secs)),
            };
            eprintln!("round {round} qd32 {name:>18}: {iops:.0} IOPS, {cpu:.1} us CPU/read");
            qd32_rows
                .push(json!({"name": name, "round": round, "iops": iops, "cpu_us_per_read": cpu}));
        }
        let _ = std::fs::remove_file(args.dir.join("qd32.log"));
    }
    report(&args, &model, &modes, &rows, &qd32_rows);
}

fn report(args: &Args, model: &DiskModel, modes: &[Mode], rows: &[Value], qd32_rows: &[Value]) {
    let solo = median_rows(rows, "solo");
    let solo_p99 = solo["read_p99_us"].as_f64().unwrap_or(0.0);
    let limit = 1.25 * (args.goal_us as f64 + solo_p99);
    let out_modes: Vec<Value> = modes.iter().map(|m| median_rows(rows, &m.name())).collect();
    let by = |n: &str| {
        out_modes
            .iter()
            .find(|m| m["name"] == n)
            .cloned()
            .unwrap_or(json!({}))
    };
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let (weir, none) = (by("weir"), by("none"));
    let best_cap = out_modes
        .iter()
        .filter(|m| {
            m["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("token-bucket"))
        })
        .filter(|m| f(m, "read_p99_us") <= limit)
        .max_by(|a, b| f(a, "write_mb_s").total_cmp(&f(b, "write_mb_s")))
        .cloned();
    let q = |n: &str, k: &str| {
        median(
            qd32_rows
                .iter()
                .filter(|r| r["name"] == n)
                .filter_map(|r| r[k].as_f64())
                .collect(),
        )
    };
    let mut qd32 = serde_json::Map::new();
    for name in QD32_ROWS {
        let key = name.replace('-', "_");
        qd32.insert(format!("{key}_iops"), json!(q(name, "iops")));
        qd32.insert(
            format!("{key}_cpu_us_per_read"),
            json!(q(name, "cpu_us_per_read")),
        );
    }
    qd32.insert("rounds".into(), json!(qd32_rows));
    let qd32 = Value::Object(qd32);
    let best_write = best_cap.as_ref().map_or(f64::NAN, |b| f(b, "write_mb_s"));
    let targets = json!({
        "read_p99_limit_us": limit,
        "weir_read_p99_within_limit": f(&weir, "read_p99_us") <= limit,
        "best_cap": best_cap.as_ref().map(|b| b["name"].clone()),
        "weir_write_vs_best_cap": f(&weir, "write_mb_s") / best_write,
        "none_read_p99_over_weir": f(&none, "read_p99_us") / f(&weir, "read_p99_us"),
        "qd32_weir_io_over_raw": f(&qd32, "weir_io_iops") / f(&qd32, "raw_engine_iops"),
        "qd32_weir_io_over_tokio_fs": f(&qd32, "weir_io_iops") / f(&qd32, "tokio_fs_iops"),
        "qd32_weir_io_driven_over_raw":
            f(&qd32, "weir_io_driven_iops") / f(&qd32, "raw_engine_iops"),
        "qd32_weir_io_driven_over_tokio_fs":
            f(&qd32, "weir_io_driven_iops") / f(&qd32, "tokio_fs_iops"),
    });
    let doc = json!({
        "modes": out_modes,
        "goal_us": args.goal_us,
        "model": {
            "file": args.model.display().to_string(),
            "read_iops": model.read_iops(),
            "read_bytes_per_sec": model.read_bytes_per_sec(),
            "write_iops": model.write_iops(),
            "write_bytes_per_sec": model.write_bytes_per_sec(),
            "duplex": model.duplex(),
        },
        "solo_read_p99_us": solo_p99,
        "solo": solo,
        "caps": args.caps_mb_s,
        "qd32": qd32,
        "targets": targets,
        "rounds": args.rounds,
        "duration_s": args.duration.as_secs(),
        "read_rate_per_s": args.read_rate,
        "append_rate_per_s": args.append_rate,
        "regime": "background writes: 1 MiB overwrites of a preallocated 1 GiB file, 16 in flight; \
                   commit log: 4 KiB extending appends to a fresh file; reads: 4 KiB random \
                   over a prefilled 1 GiB file; all O_DIRECT",
        "all_rounds": rows,
    });
    std::fs::write(&args.out, serde_json::to_string_pretty(&doc).expect("json"))
        .unwrap_or_else(|e| panic!("write {}: {e}", args.out.display()));
    println!(
        "lsm: goal {} us, solo p99 {:.0} us, limit {:.0} us | weir p99 {:.0} us, {:.0} MB/s | \
         none p99 {:.0} us ({:.1}x weir) | best cap {} {:.0} MB/s (weir {:.2}x) | tokio-fs p99 \
         {:.0} us | qd32 weir-io-driven {:.2}x raw, {:.2}x tokio-fs; weir-io (loop thread) \
         {:.2}x raw, {:.2}x tokio-fs",
        args.goal_us,
        solo_p99,
        limit,
        f(&weir, "read_p99_us"),
        f(&weir, "write_mb_s"),
        f(&none, "read_p99_us"),
        f(&targets, "none_read_p99_over_weir"),
        best_cap
            .as_ref()
            .and_then(|b| b["name"].as_str())
            .unwrap_or("none-within-limit"),
        best_write,
        f(&targets, "weir_write_vs_best_cap"),
        f(&by("tokio-fs"), "read_p99_us"),
        f(&targets, "qd32_weir_io_driven_over_raw"),
        f(&targets, "qd32_weir_io_driven_over_tokio_fs"),
        f(&targets, "qd32_weir_io_over_raw"),
        f(&targets, "qd32_weir_io_over_tokio_fs"),
    );
}

/// 4 KiB random reads at 32 in flight on a weir-io local shard, no scheduler: driven by the
/// calling thread (`LocalShard::block_on`, thread-per-core) or, `from_tokio`, by a tokio
/// current-thread runtime on it (`LocalShard::drive`), the lanes being tokio tasks.
fn qd32_local(args: &Args, model: &DiskModel, secs: u64, from_tokio: bool) -> (f64, f64) {
    let mut policy = Policy::builder(model.clone()).unlimited(true);
    let query = policy.class(ClassSpec::new("query", 1000)).expect("class");
    let disk = Disk::builder(&policy.build().expect("policy"))
        .loops(0)
        .local_shards(1)
        .build()
        .expect("disk");
    let reads = disk
        .open(args.dir.join("reads.dat"), FileOptions::new())
        .expect("open");
    let shard = Rc::new(disk.local_shard().expect("local shard"));
    let done = Rc::new(Cell::new(0u64));
    let (cpu0, t0) = (cpu_us(), Instant::now());
    let end = t0 + Duration::from_secs(secs);
    let lane = |lane: u64| {
        let (shard, reads, done) = (shard.clone(), reads.clone(), done.clone());
        async move {
            let mut buf = IoBuf::zeroed(BLOCK as usize);
            let mut x = 0x5555 + lane * 7919;
            while Instant::now() < end {
                let at = xorshift(&mut x) % (READ_FILE_BYTES / BLOCK) * BLOCK;
                let (r, b) = shard.read_at(&reads, query, buf, at).await;
                r.expect("read");
                buf = b;
                done.set(done.get() + 1);
            }
        }
    };
    if from_tokio {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio");
        let local = tokio::task::LocalSet::new();
        local
            .block_on(
                &rt,
                shard.drive(async {
                    let tasks: Vec<_> =
                        (0..32).map(|l| tokio::task::spawn_local(lane(l))).collect();
                    for t in tasks {
                        t.await.expect("qd32 lane");
                    }
                }),
            )
            .expect("drive");
    } else {
        let lanes = (0..32).map(|l| Some(Box::pin(lane(l)))).collect();
        shard.block_on(JoinAll(lanes));
    }
    let n = done.get();
    (
        n as f64 / t0.elapsed().as_secs_f64(),
        (cpu_us() - cpu0) / n as f64,
    )
}

/// Polls every lane until all are done (the bench's own join, to stay off extra crates).
struct JoinAll<F>(Vec<Option<Pin<Box<F>>>>);

impl<F: Future<Output = ()>> Future for JoinAll<F> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut pending = false;
        for lane in self.0.iter_mut() {
            if let Some(f) = lane {
                if f.as_mut().poll(cx).is_ready() {
                    *lane = None;
                } else {
                    pending = true;
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}
