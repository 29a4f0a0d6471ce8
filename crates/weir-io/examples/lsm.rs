//! An LSM-shaped engine on weir-io: a commit log of small O_DIRECT appends (no fsync),
//! memtable flushes and compactions as large sequential writes, and point reads over the
//! sstables it wrote, each in its own class. Flush and compaction share a "maintenance"
//! supergroup, so together they get its shares however many of them run.
//!
//! Every 4 KiB block starts with its key; point reads check it, so the demo also proves that
//! what the engine wrote through the scheduler reads back.
//!
//! `cargo run -p weir-io --example lsm [DIR] [SECONDS]`

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use weir_io::{block_on, ClassSpec, Disk, DiskModel, File, FileOptions, IoBuf, IoClass, Policy};

const BLOCK: usize = 4096;
/// Blocks per memtable flush (4 MiB sstables).
const MEMTABLE_BLOCKS: u64 = 1024;
/// L0 sstables that trigger a compaction into one.
const COMPACT_FANIN: usize = 4;
const IO_BYTES: usize = 1 << 20;

struct Sstable {
    file: File,
    /// The key at the start of each block.
    keys: Vec<u64>,
}

struct Classes {
    query: IoClass,
    log: IoClass,
    flush: IoClass,
    compaction: IoClass,
}

type Levels = Mutex<Vec<Arc<Sstable>>>;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let base = args.next().unwrap_or_else(|| "/var/tmp".into());
    let seconds: u64 = args.next().map_or(Ok(3), |s| s.parse())?;
    let dir = tempfile::tempdir_in(base)?;

    let model =
        DiskModel::from_io_properties("io-properties.yaml".as_ref(), dir.path()).or_else(|_| {
            DiskModel::builder()
                .read_iops(50_000)
                .read_bytes_per_sec(1 << 30)
                .write_iops(25_000)
                .write_bytes_per_sec(1 << 30)
                .build()
        })?;
    let mut policy = Policy::builder(model).latency_goal(Duration::from_micros(1500));
    let maintenance = policy.group("maintenance", 200)?;
    let classes = Classes {
        query: policy.class(ClassSpec::new("query", 1000))?,
        log: policy.class(ClassSpec::new("commit_log", 500))?,
        flush: policy.class(ClassSpec::new("flush", 300).in_group(maintenance))?,
        compaction: policy.class(ClassSpec::new("compaction", 100).in_group(maintenance))?,
    };
    let disk = Disk::builder(&policy.build()?).build()?;
    let levels: Levels = Mutex::new(Vec::new());
    let next_file = AtomicU64::new(0);
    let end = Instant::now() + Duration::from_secs(seconds);
    let (flush_tx, flush_rx) = mpsc::channel::<u64>();

    let (reads, appends) = std::thread::scope(|s| {
        let (disk, classes, levels, dir) = (&disk, &classes, &levels, dir.path());
        let next_file = &next_file;
        // Commit log: one 4 KiB record per put; a full memtable goes to the flusher.
        let log = s.spawn(move || -> Result<Vec<Duration>, weir_io::Error> {
            let log = disk.open(dir.join("commit.log"), FileOptions::new().create(true))?;
            let mut latencies = Vec::new();
            let mut key = 0u64;
            while Instant::now() < end {
                let record = block(key);
                let t0 = Instant::now();
                disk_result(block_on(disk.append(&log, classes.log, record)))?;
                latencies.push(t0.elapsed());
                key += 1;
                if key % MEMTABLE_BLOCKS == 0 {
                    let _ = flush_tx.send(key - MEMTABLE_BLOCKS);
                }
            }
            Ok(latencies)
        });
        // Flusher: writes a memtable as a new sstable, 1 MiB at a time.
        s.spawn(move || -> Result<(), weir_io::Error> {
            for first_key in flush_rx {
                let keys: Vec<u64> = (first_key..first_key + MEMTABLE_BLOCKS).collect();
                let sst = write_sstable(disk, dir, next_file, classes.flush, keys, block)?;
                levels.lock().expect("levels").push(Arc::new(sst));
            }
            Ok(())
        });
        // Compactor: merges the oldest sstables into one when enough have piled up.
        s.spawn(move || -> Result<(), weir_io::Error> {
            while Instant::now() < end {
                let inputs: Vec<Arc<Sstable>> = {
                    let l = levels.lock().expect("levels");
                    if l.len() < COMPACT_FANIN {
                        drop(l);
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    }
                    l[..COMPACT_FANIN].to_vec()
                };
                let merged = compact(disk, dir, next_file, classes.compaction, &inputs)?;
                let mut l = levels.lock().expect("levels");
                l.retain(|t| !inputs.iter().any(|i| Arc::ptr_eq(i, t)));
                l.push(Arc::new(merged));
                for i in &inputs {
                    let _ = std::fs::remove_file(i.file.path());
                }
            }
            Ok(())
        });
        // Point reads: a random block of a random live sstable, checked against its key.
        let reader = s.spawn(move || -> Result<Vec<Duration>, weir_io::Error> {
            let mut latencies = Vec::new();
            let mut x = 0x9E37_79B9_7F4A_7C15u64;
            let mut buf = IoBuf::zeroed(BLOCK);
            while Instant::now() < end {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let sst = {
                    let l = levels.lock().expect("levels");
                    if l.is_empty() {
                        None
                    } else {
                        Some(l[(x % l.len() as u64) as usize].clone())
                    }
                };
                let Some(sst) = sst else {
                    std::thread::sleep(Duration::from_millis(1));
                    continue;
                };
                let b = (x >> 20) % sst.keys.len() as u64;
                let t0 = Instant::now();
                let (n, back) =
                    block_on(disk.read_at(&sst.file, classes.query, buf, b * BLOCK as u64));
                latencies.push(t0.elapsed());
                n?;
                let key = u64::from_le_bytes(back[..8].try_into().expect("8 bytes"));
                assert_eq!(
                    key,
                    sst.keys[b as usize],
                    "block {b} of {}",
                    sst.file.path().display()
                );
                buf = back;
            }
            Ok(latencies)
        });
        let appends = log.join().expect("log thread");
        let reads = reader.join().expect("reader thread");
        (reads, appends)
    });
    let (mut reads, mut appends) = (reads?, appends?);
    println!(
        "point reads: {} checked, p99 {:?}; commit-log appends: {}, p99 {:?}; sstables: {}",
        reads.len(),
        p99(&mut reads),
        appends.len(),
        p99(&mut appends),
        levels.lock().expect("levels").len()
    );
    for m in disk.metrics() {
        println!(
            "{:>11}: {:>6} MiB read, {:>6} MiB written, queue wait p99 {:>6} us, device p99 {:>6} us",
            m.name,
            m.read_bytes >> 20,
            m.write_bytes >> 20,
            m.queue_latency.percentile_ns(99.0) / 1000,
            m.disk_latency.percentile_ns(99.0) / 1000
        );
    }
    Ok(())
}

/// A 4 KiB block that starts with its key.
fn block(key: u64) -> IoBuf {
    let mut b = IoBuf::zeroed(BLOCK);
    b[..8].copy_from_slice(&key.to_le_bytes());
    b
}

fn disk_result<T>((r, _buf): weir_io::BufResult<T>) -> Result<T, weir_io::Error> {
    r
}

/// Writes `keys.len()` blocks made by `make` as a new sstable, in 1 MiB writes.
fn write_sstable(
    disk: &Disk,
    dir: &std::path::Path,
    next_file: &AtomicU64,
    class: IoClass,
    keys: Vec<u64>,
    make: impl Fn(u64) -> IoBuf,
) -> Result<Sstable, weir_io::Error> {
    let id = next_file.fetch_add(1, Ordering::Relaxed);
    let file = disk.open(
        dir.join(format!("sst-{id:06}")),
        FileOptions::new().create(true),
    )?;
    for (chunk_index, chunk) in keys.chunks(IO_BYTES / BLOCK).enumerate() {
        let mut buf = IoBuf::zeroed(chunk.len() * BLOCK);
        for (i, &k) in chunk.iter().enumerate() {
            buf[i * BLOCK..(i + 1) * BLOCK].copy_from_slice(&make(k));
        }
        let at = (chunk_index * IO_BYTES) as u64;
        disk_result(block_on(disk.write_at(&file, class, buf, at)))?;
    }
    Ok(Sstable { file, keys })
}

/// Reads the inputs 1 MiB at a time and writes them out as one sstable.
fn compact(
    disk: &Disk,
    dir: &std::path::Path,
    next_file: &AtomicU64,
    class: IoClass,
    inputs: &[Arc<Sstable>],
) -> Result<Sstable, weir_io::Error> {
    let mut keys: Vec<u64> = Vec::new();
    for sst in inputs {
        let bytes = sst.keys.len() * BLOCK;
        for at in (0..bytes).step_by(IO_BYTES) {
            let len = IO_BYTES.min(bytes - at);
            let (n, buf) = block_on(disk.read_at(&sst.file, class, IoBuf::zeroed(len), at as u64));
            n?;
            for b in buf.chunks(BLOCK) {
                keys.push(u64::from_le_bytes(b[..8].try_into().expect("8 bytes")));
            }
        }
    }
    write_sstable(disk, dir, next_file, class, keys, block)
}

fn p99(v: &mut [Duration]) -> Duration {
    v.sort_unstable();
    v.get(v.len() * 99 / 100).copied().unwrap_or_default()
}
