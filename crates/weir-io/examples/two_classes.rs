//! Two classes on one file: 4 KiB reads with 10x the shares of 1 MiB background writes.
//! `cargo run -p weir-io --example two_classes [DIR]`
use std::time::{Duration, Instant};
use weir_io::{block_on, ClassSpec, Disk, DiskModel, FileOptions, IoBuf, Policy};

fn main() -> Result<(), weir_io::Error> {
    let dir =
        tempfile::tempdir_in(std::env::args().nth(1).unwrap_or("/var/tmp".into())).expect("dir");
    let model = DiskModel::builder()
        .read_iops(50_000)
        .read_bytes_per_sec(1 << 30)
        .write_iops(25_000)
        .write_bytes_per_sec(1 << 30)
        .build()?;
    let mut policy = Policy::builder(model).latency_goal(Duration::from_micros(1500));
    let (reads, writes) = (
        policy.class(ClassSpec::new("reads", 1000))?,
        policy.class(ClassSpec::new("writes", 100))?,
    );
    let disk = Disk::builder(&policy.build()?).build()?;
    let file = disk.open(dir.path().join("data"), FileOptions::new().create(true))?;
    file.set_len(64 << 20)?;
    let end = Instant::now() + Duration::from_secs(1);
    std::thread::scope(|s| {
        s.spawn(|| {
            (0u64..).take_while(|_| Instant::now() < end).for_each(|i| {
                let (r, _) =
                    block_on(disk.write_at(&file, writes, IoBuf::zeroed(1 << 20), (i % 64) << 20));
                r.expect("write");
            })
        });
        (0u64..).take_while(|_| Instant::now() < end).for_each(|i| {
            let (r, _) = block_on(disk.read_at(
                &file,
                reads,
                IoBuf::zeroed(4096),
                (i * 7919 % 16384) * 4096,
            ));
            r.expect("read");
        });
    });
    for m in disk.metrics() {
        println!(
            "{:>6}: {:>6} pieces, {:>5} MiB, disk p99 {:>6} us, queue p99 {:>6} us",
            m.name,
            m.read_ops + m.write_ops,
            (m.read_bytes + m.write_bytes) >> 20,
            m.disk_latency.percentile_ns(99.0) / 1000,
            m.queue_latency.percentile_ns(99.0) / 1000
        );
    }
    Ok(())
}
