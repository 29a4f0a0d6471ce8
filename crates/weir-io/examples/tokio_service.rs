//! A tokio service answering point reads while a background task writes, both through one
//! weir `Disk`. The loop thread does the I/O; the tasks only await `Send` futures.
//!
//! `cargo run -p weir-io --example tokio_service [DIR] [SECONDS]`

use std::sync::Arc;
use std::time::{Duration, Instant};

use weir_io::{ClassSpec, Disk, DiskModel, FileOptions, IoBuf, Policy};

const DATA_BYTES: u64 = 128 << 20;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let base = args.next().unwrap_or_else(|| "/var/tmp".into());
    let seconds: u64 = args.next().map_or(Ok(2), |s| s.parse())?;
    let dir = tempfile::tempdir_in(base)?;

    // The model `weir tune` wrote for this machine, if there is one beside the workspace.
    let model = match DiskModel::from_io_properties("io-properties.yaml".as_ref(), dir.path()) {
        Ok(m) => m,
        Err(_) => DiskModel::builder()
            .read_iops(50_000)
            .read_bytes_per_sec(1 << 30)
            .write_iops(25_000)
            .write_bytes_per_sec(1 << 30)
            .build()?,
    };
    let mut policy = Policy::builder(model).latency_goal(Duration::from_micros(1500));
    let query = policy.class(ClassSpec::new("query", 1000))?;
    let background = policy.class(ClassSpec::new("background", 100))?;
    let disk = Disk::builder(&policy.build()?).build()?;
    let file = disk.open(dir.path().join("data"), FileOptions::new().create(true))?;
    file.set_len(DATA_BYTES)?;

    let end = Instant::now() + Duration::from_secs(seconds);
    // Background: 1 MiB overwrites, 4 in flight, as fast as the scheduler lets them go.
    let writer = {
        let (disk, file) = (disk.clone(), file.clone());
        tokio::spawn(async move {
            let mut tasks = Vec::new();
            for lane in 0..4u64 {
                let (disk, file) = (disk.clone(), file.clone());
                tasks.push(tokio::spawn(async move {
                    let mut buf = IoBuf::zeroed(1 << 20);
                    let mut at = lane << 20;
                    while Instant::now() < end {
                        let (r, b) = disk.write_at(&file, background, buf, at).await;
                        r?;
                        buf = b;
                        at = (at + (4 << 20)) % DATA_BYTES;
                    }
                    Ok::<_, weir_io::Error>(())
                }));
            }
            for t in tasks {
                t.await.expect("writer task")?;
            }
            Ok::<_, weir_io::Error>(())
        })
    };
    // The service: 16 concurrent clients, each reading 4 KiB at a pseudo-random offset.
    let latencies = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut clients = Vec::new();
    for c in 0..16u64 {
        let (disk, file, latencies) = (disk.clone(), file.clone(), latencies.clone());
        clients.push(tokio::spawn(async move {
            let mut x = c * 2_654_435_761 + 1;
            let mut buf = IoBuf::zeroed(4096);
            while Instant::now() < end {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let offset = (x >> 33) % (DATA_BYTES / 4096) * 4096;
                let t0 = Instant::now();
                let (r, b) = disk.read_at(&file, query, buf, offset).await;
                r?;
                buf = b;
                latencies.lock().expect("lock").push(t0.elapsed());
            }
            Ok::<_, weir_io::Error>(())
        }));
    }
    for c in clients {
        c.await??;
    }
    writer.await??;

    let mut l = latencies.lock().expect("lock").clone();
    l.sort_unstable();
    let p = |q: f64| l.get(((l.len() as f64 * q) as usize).min(l.len().saturating_sub(1)));
    println!(
        "reads: {} in {seconds} s, p50 {:?}, p99 {:?}",
        l.len(),
        p(0.50).copied().unwrap_or_default(),
        p(0.99).copied().unwrap_or_default()
    );
    for m in disk.metrics() {
        println!(
            "{:>10}: {:>5} MiB, queue wait p99 {:>6} us, device p99 {:>6} us",
            m.name,
            (m.read_bytes + m.write_bytes) >> 20,
            m.queue_latency.percentile_ns(99.0) / 1000,
            m.disk_latency.percentile_ns(99.0) / 1000
        );
    }
    Ok(())
}
