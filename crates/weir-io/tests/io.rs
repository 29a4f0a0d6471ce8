//! The I/O side on real files: data written through the loops reads back, long requests are
//! split and reassembled, appends never overlap, and misuse is a typed error.

mod common;

use common::real_dir;

use weir_io::{block_on, ClassSpec, Disk, DiskModel, FileOptions, IoBuf, IoClass, Policy};

fn model() -> DiskModel {
    DiskModel::builder()
        .read_iops(20_000)
        .read_bytes_per_sec(500 << 20)
        .write_iops(20_000)
        .write_bytes_per_sec(500 << 20)
        .build()
        .expect("model")
}

fn disk(loops: usize, local: usize) -> (Disk, IoClass, IoClass) {
    let mut policy = Policy::builder(model());
    let fg = policy.class(ClassSpec::new("fg", 1000)).expect("class");
    let bg = policy.class(ClassSpec::new("bg", 100)).expect("class");
    let disk = Disk::builder(&policy.build().expect("policy"))
        .loops(loops)
        .local_shards(local)
        .build()
        .expect("disk");
    (disk, fg, bg)
}

fn pattern(len: usize, seed: u8) -> IoBuf {
    let mut b = IoBuf::zeroed(len);
    for (i, x) in b.iter_mut().enumerate() {
        *x = (i as u8).wrapping_mul(31).wrapping_add(seed);
    }
    b
}

#[test]
fn a_split_write_reads_back_byte_for_byte() {
    let (disk, fg, bg) = disk(2, 0);
    let dir = real_dir();
    let file = disk
        .open(dir.path().join("data"), FileOptions::new().create(true))
        .expect("open");
    // 8 MiB is several of the scheduler's pieces.
    let (n, written) = block_on(disk.write_at(&file, bg, pattern(8 << 20, 7), 0));
    assert_eq!(n.expect("write"), 8 << 20);
    let (n, read) = block_on(disk.read_at(&file, fg, IoBuf::zeroed(8 << 20), 0));
    assert_eq!(n.expect("read"), 8 << 20);
    assert!(read[..] == written[..], "read back differs");
    let (n, tail) = block_on(disk.read_at(&file, fg, IoBuf::zeroed(8192), (8 << 20) - 4096));
    assert_eq!(
        n.expect("read at the end"),
        4096,
        "a read past the end is short"
    );
    assert_eq!(tail.len(), 4096);
    let m = disk.metrics();
    // The scheduler counts the bytes asked (the short read asked for 8 KiB).
    assert_eq!(
        (m[0].read_bytes, m[1].write_bytes),
        ((8 << 20) + 8192, 8 << 20)
    );
}

#[test]
fn a_spinning_loop_reads_back_what_it_wrote() {
    let mut policy = Policy::builder(model());
    let fg = policy.class(ClassSpec::new("fg", 1000)).expect("class");
    let disk = Disk::builder(&policy.build().expect("policy"))
        .spin(std::time::Duration::from_micros(50))
        .build()
        .expect("disk");
    let dir = real_dir();
    let file = disk
        .open(dir.path().join("data"), FileOptions::new().create(true))
        .expect("open");
    let writes: Vec<_> = (0..16u8)
        .map(|i| disk.write_at(&file, fg, pattern(4096, i), u64::from(i) * 4096))
        .collect();
    for w in writes {
        assert_eq!(block_on(w).0.expect("write"), 4096);
    }
    let reads: Vec<_> = (0..16u64)
        .map(|i| disk.read_at(&file, fg, IoBuf::zeroed(4096), i * 4096))
        .collect();
    for (i, r) in reads.into_iter().enumerate() {
        let (n, buf) = block_on(r);
        assert_eq!(n.expect("read"), 4096);
        assert!(buf[..] == pattern(4096, i as u8)[..], "block {i} differs");
    }
    // The loop drains and stops with the disk, spinning or not.
    drop(disk);
}

#[test]
fn concurrent_appends_land_in_distinct_ranges() {
    let (disk, _, bg) = disk(1, 0);
    let dir = real_dir();
    let file = disk
        .open(dir.path().join("log"), FileOptions::new().create(true))
        .expect("open");
    let futures: Vec<_> = (0..32u8)
        .map(|i| disk.append(&file, bg, pattern(4096, i)))
        .collect();
    let mut offsets: Vec<u64> = futures
        .into_iter()
        .map(|f| block_on(f).0.expect("append"))
        .collect();
    offsets.sort_unstable();
    assert_eq!(offsets, (0..32).map(|i| i * 4096).collect::<Vec<u64>>());
    assert_eq!(
        std::fs::metadata(file.path()).expect("stat").len(),
        32 * 4096
    );
}

#[test]
fn misaligned_direct_io_is_refused_before_the_kernel() {
    let (disk, fg, _) = disk(1, 0);
    let dir = real_dir();
    let file = disk
        .open(dir.path().join("d"), FileOptions::new().create(true))
        .expect("open");
    if file.align_bytes() <= 1 {
        eprintln!(
            "skipped: {} takes unaligned direct I/O",
            dir.path().display()
        );
        return;
    }
    let (r, buf) = block_on(disk.read_at(&file, fg, IoBuf::zeroed(4096), 100));
    assert!(matches!(
        r,
        Err(weir_io::Error::Misaligned { what: "offset", .. })
    ));
    assert_eq!(buf.len(), 4096, "the buffer comes back");
    let (r, _) = block_on(disk.write_at(&file, fg, IoBuf::zeroed(100), 0));
    assert!(matches!(
        r,
        Err(weir_io::Error::Misaligned { what: "length", .. })
    ));
}

#[test]
fn local_shards_share_the_disk_budget_from_their_own_threads() {
    let (disk, fg, bg) = disk(0, 2);
    let dir = real_dir();
    let file = disk
        .open(dir.path().join("t"), FileOptions::new().create(true))
        .expect("open");
    file.set_len(1 << 20).expect("size");
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let (disk, file) = (disk.clone(), file.clone());
            s.spawn(move || {
                let shard = disk.local_shard().expect("a reserved shard");
                let base = t * (512 << 10);
                let (n, _) = shard.block_on(shard.write_at(&file, bg, pattern(512 << 10, 3), base));
                assert_eq!(n.expect("write"), 512 << 10);
                let (n, _) = shard.block_on(shard.read_at(&file, fg, IoBuf::zeroed(4096), base));
                assert_eq!(n.expect("read"), 4096);
                assert_eq!(shard.metrics()[0].read_ops, 1);
            });
        }
    });
    assert!(
        disk.local_shard().is_err(),
        "both reserved shards are taken"
    );
}

#[test]
fn adjacent_writes_released_together_go_to_the_kernel_merged_and_read_back() {
    let (disk, _fg, bg) = disk(0, 1);
    let dir = real_dir();
    let file = disk
        .open(dir.path().join("merged"), FileOptions::new().create(true))
        .expect("open");
    let shard = disk.local_shard().expect("a reserved shard");
    // A local shard queues what its thread submits until it next drives the ring, so the
    // first dispatch releases several of these 64 KiB writes at once: adjacent pieces of one
    // file, each shorter than the scheduler's longest request.
    let piece_bytes = 64 << 10;
    let futures: Vec<_> = (0..16u8)
        .map(|k| {
            let offset = u64::from(k) * piece_bytes as u64;
            shard.write_at(&file, bg, pattern(piece_bytes, k), offset)
        })
        .collect();
    for f in futures {
        let (n, _) = shard.block_on(f);
        assert_eq!(n.expect("write"), piece_bytes);
    }
    let merged = shard.shard_metrics().merged;
    assert!(
        merged.requests > 0 && merged.pieces >= 2 * merged.requests,
        "nothing went out merged: {merged:?}"
    );
    for k in 0..16u8 {
        let offset = u64::from(k) * piece_bytes as u64;
        let (n, read) =
            shard.block_on(shard.read_at(&file, bg, IoBuf::zeroed(piece_bytes), offset));
        assert_eq!(n.expect("read"), piece_bytes);
        assert!(
            read[..] == pattern(piece_bytes, k)[..],
            "write {k} read back differs"
        );
    }
}
