//! A local shard driven from a tokio runtime's thread (`LocalShard::drive`, feature `tokio`)
//! on real files: tasks of the runtime read back what they wrote, requests the scheduler
//! holds back go out when the budget refills (the runtime's timer wakes the driver), and
//! misuse is a typed error.
#![cfg(feature = "tokio")]

mod common;

use common::real_dir;
use std::rc::Rc;
use std::time::Duration;

use weir_io::{
    Backend, ClassSpec, Disk, DiskModel, Error, FileOptions, IoBuf, IoClass, LocalShard, Policy,
};

/// A disk priced at 2,000 writes per second: a burst of writes outruns the budget, so the
/// scheduler holds most of it until refills.
fn slow_disk(backend: Backend) -> (Disk, IoClass, IoClass) {
    let model = DiskModel::builder()
        .read_iops(20_000)
        .read_bytes_per_sec(500 << 20)
        .write_iops(2_000)
        .write_bytes_per_sec(100 << 20)
        .build()
        .expect("model");
    let mut policy = Policy::builder(model);
    let fg = policy.class(ClassSpec::new("fg", 1000)).expect("class");
    let bg = policy.class(ClassSpec::new("bg", 100)).expect("class");
    let disk = Disk::builder(&policy.build().expect("policy"))
        .loops(0)
        .local_shards(1)
        .backend(backend)
        .build()
        .expect("disk");
    (disk, fg, bg)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

#[test]
fn tasks_of_the_driving_runtime_read_back_a_held_burst_of_writes() {
    let (disk, fg, bg) = slow_disk(Backend::Uring);
    let dir = real_dir();
    let file = disk
        .open(dir.path().join("t"), FileOptions::new().create(true))
        .expect("open");
    let shard = Rc::new(disk.local_shard().expect("a reserved shard"));
    const WRITES: u64 = 64;
    let local = tokio::task::LocalSet::new();
    let rt = runtime();
    // The timeout's timer is made with the future, before block_on enters the runtime.
    let _inside = rt.enter();
    local
        .block_on(
            &rt,
            shard.drive(tokio::time::timeout(Duration::from_secs(30), async {
                let writers: Vec<_> = (0..WRITES)
                    .map(|i| {
                        let (shard, file) = (shard.clone(), file.clone());
                        tokio::task::spawn_local(async move {
                            let buf = IoBuf::from_slice(&[i as u8 + 1; 4096]);
                            shard.write_at(&file, bg, buf, i * 4096).await.0
                        })
                    })
                    .collect();
                for w in writers {
                    assert_eq!(w.await.expect("writer task").expect("write"), 4096);
                }
                for i in 0..WRITES {
                    let (n, buf) = shard
                        .read_at(&file, fg, IoBuf::zeroed(4096), i * 4096)
                        .await;
                    assert_eq!(n.expect("read"), 4096);
                    assert!(buf.iter().all(|&b| b == i as u8 + 1), "block {i}");
                }
            })),
        )
        .expect("drive")
        .expect("the burst completes within 30 s: a held request waits for the driver's timer");
    let metrics = shard.metrics();
    assert_eq!(
        (metrics[1].write_ops, metrics[0].read_ops),
        (WRITES, WRITES)
    );
    assert!(
        metrics[1].queue_latency.percentile_ns(99.0) > 0,
        "the scheduler held part of the burst, so the driver's refill timer had to wake it"
    );
}

#[test]
fn a_shard_can_be_driven_again_after_a_drive_ends() {
    let (disk, fg, _) = slow_disk(Backend::Uring);
    let dir = real_dir();
    let file = disk
        .open(dir.path().join("t"), FileOptions::new().create(true))
        .expect("open");
    let shard = disk.local_shard().expect("a reserved shard");
    let rt = runtime();
    for round in 0..3u8 {
        let got = rt
            .block_on(shard.drive(async {
                let buf = IoBuf::from_slice(&[round; 4096]);
                shard.write_at(&file, fg, buf, 0).await.0.expect("write");
                let (n, buf) = shard.read_at(&file, fg, IoBuf::zeroed(4096), 0).await;
                n.map(|_| buf[0])
            }))
            .expect("drive");
        assert_eq!(got.expect("read"), round);
    }
}

#[test]
fn driving_an_aio_shard_is_a_typed_error() {
    let (disk, _, _) = slow_disk(Backend::Aio);
    let shard = disk.local_shard().expect("a reserved shard");
    let err = runtime()
        .block_on(shard.drive(async {}))
        .expect_err("AIO has no completion eventfd to drive by");
    assert!(matches!(err, Error::DriveNeedsUring), "{err}");
    assert!(err.to_string().contains("Backend::Uring"), "{err}");
}

#[test]
fn driving_outside_a_tokio_runtime_is_an_error_that_says_where_to_call_it() {
    let (disk, _, _) = slow_disk(Backend::Uring);
    let shard: LocalShard = disk.local_shard().expect("a reserved shard");
    let err = weir_io::block_on(shard.drive(async {})).expect_err("no runtime");
    assert!(matches!(err, Error::DriveOutsideRuntime), "{err}");
    assert!(err.to_string().contains("inside a tokio runtime"), "{err}");
}
