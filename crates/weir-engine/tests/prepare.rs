//! File preparation on real filesystems: every mode, both backends, contents and sizes
//! checked; refusals (tmpfs, read-only, full disk) as typed errors. Root-only parts mount
//! tmpfs and loop-mounted ext4/XFS images, and skip with a printed reason otherwise.

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use common::{fill_pattern, for_each_backend, pattern_byte, root_mount, test_dir, Mount};
use weir_engine::{
    prefill_matches, Backend, DirectIo, DmaBufferPool, EngineDevice, FileError, Prepare,
    PrepareOptions, PreparedFile,
};
use weir_model::device::{Device, Direction, IoCompletion, IoFlags, IoOp};

const MIB: u64 = 1 << 20;
const WRITE_BYTES: u32 = 64 * 1024;

fn options(mode: Prepare, size: u64, backend: Backend) -> PrepareOptions {
    PrepareOptions {
        backend,
        ..PrepareOptions::new(mode, size)
    }
}

/// Writes `offsets` (WRITE_BYTES each, pattern seeded by offset) through the backend, four in
/// flight, announcing each write to the prepared file first.
fn write_all(file: &mut PreparedFile, backend: Backend, offsets: &[u64]) {
    let align = file.alignment();
    let mut pool = DmaBufferPool::new(4, WRITE_BYTES as usize, &align).expect("pool");
    let mut dev = EngineDevice::open(backend, 4).expect("backend");
    let mut done: Vec<IoCompletion> = Vec::new();
    let mut next = 0;
    let mut in_flight = 0;
    while next < offsets.len() || in_flight > 0 {
        while next < offsets.len() {
            let Some(b) = pool.acquire() else { break };
            let offset = offsets[next];
            fill_pattern(pool.slice_mut(b), 11, offset);
            file.before_write(offset, WRITE_BYTES)
                .expect("before_write");
            let op = IoOp {
                user_data: b as u64,
                direction: Direction::Write,
                fd: file.fd(),
                offset_bytes: offset,
                len_bytes: WRITE_BYTES,
                buf: pool.ptr(b),
                flags: IoFlags::default(),
                vectored: None,
            };
            push(&mut dev, op).expect("push");
            next += 1;
            in_flight += 1;
        }
        dev.submit_and_wait(1, None).expect("wait");
        done.clear();
        dev.reap(&mut done);
        for c in &done {
            assert_eq!(c.result, WRITE_BYTES as i32, "write result");
            pool.release(c.user_data as usize);
            in_flight -= 1;
        }
    }
}

fn allocated_bytes(path: &Path) -> u64 {
    std::fs::metadata(path).expect("metadata").blocks() * 512
}

/// Prepares a 4 MiB file in `dir` with `mode`, writes a known pattern, finishes, and checks
/// the size, the allocation the mode promises, and every byte.
fn exercise(dir: &Path, backend: Backend, mode: Prepare) {
    let size = 4 * MIB;
    let opts = options(mode, size, backend);
    let mut file = PreparedFile::create(dir, "prep", 0, &opts).expect("prepare");
    let path = file.path().to_path_buf();
    assert!(path.ends_with("weir-prep-0.data"));
    assert!(file.is_direct());
    let meta_len = std::fs::metadata(&path).expect("metadata").len();
    match mode {
        Prepare::Overwrite => {
            assert_eq!(meta_len, size);
            assert!(
                allocated_bytes(&path) >= size,
                "prefill allocates everything"
            );
            assert!(file.prefilled());
        }
        Prepare::Pretruncate => {
            assert_eq!(meta_len, size);
            assert_eq!(allocated_bytes(&path), 0, "pretruncate allocates nothing");
        }
        Prepare::Fallocate => {
            assert_eq!(meta_len, size);
            assert!(
                allocated_bytes(&path) >= size,
                "fallocate reserves everything"
            );
        }
        Prepare::Append | Prepare::Sloppy => assert_eq!(meta_len, 0),
    }
    // Appending modes write sequentially from 0 to 3 MiB; the others scatter 16 writes.
    let offsets: Vec<u64> = match mode {
        Prepare::Append | Prepare::Sloppy => (0..48).map(|i| i * u64::from(WRITE_BYTES)).collect(),
        _ => (0..16)
            .map(|i| (i * 5 % 64) * u64::from(WRITE_BYTES))
            .collect(),
    };
    write_all(&mut file, backend, &offsets);
    if mode == Prepare::Sloppy {
        // Grown ahead to 1 MiB, then doubled: 4 MiB covers 3 MiB of appends.
        assert_eq!(file.size_bytes(), 4 * MIB);
        assert_eq!(std::fs::metadata(&path).expect("metadata").len(), 4 * MIB);
    }
    file.finish().expect("finish");
    let expect_len = match mode {
        Prepare::Append | Prepare::Sloppy => 3 * MIB,
        _ => size,
    };
    let data = std::fs::read(&path).expect("read back");
    assert_eq!(data.len() as u64, expect_len, "{mode} final size");
    check_contents(&data, &offsets, mode);
    drop(file);
    assert!(!path.exists(), "the file is removed on drop");
}

fn check_contents(data: &[u8], offsets: &[u64], mode: Prepare) {
    let block = u64::from(WRITE_BYTES);
    for start in (0..data.len() as u64).step_by(block as usize) {
        let chunk = &data[start as usize..(start + block) as usize];
        if offsets.contains(&start) {
            let ok = chunk
                .iter()
                .enumerate()
                .all(|(i, &b)| b == pattern_byte(11, start + i as u64));
            assert!(ok, "{mode}: written block at {start} differs");
        } else if mode == Prepare::Overwrite {
            assert!(prefill_matches(chunk, start), "{mode}: prefill at {start}");
        } else {
            assert!(
                chunk.iter().all(|&b| b == 0),
                "{mode}: unwritten {start} not zero"
            );
        }
    }
}

#[test]
fn every_mode_on_the_root_filesystem() {
    for_each_backend(|backend| {
        for mode in Prepare::ALL {
            eprintln!("mode {mode}");
            let dir = test_dir();
            exercise(dir.path(), backend, mode);
        }
    });
}

#[test]
fn every_mode_on_xfs_with_1k_and_4k_blocks() {
    for block in ["1024", "4096"] {
        let what = format!("XFS with {block}-byte blocks");
        let block_bytes: u32 = block.parse().expect("block size");
        let Some(m) = root_mount(&what, |root, what| Mount::xfs(root, what, block_bytes, 320))
        else {
            return;
        };
        for_each_backend(|backend| {
            for mode in Prepare::ALL {
                eprintln!("{what}: mode {mode}");
                exercise(&m.dir, backend, mode);
            }
        });
    }
}

#[test]
fn keep_leaves_the_file_and_reuse_skips_prefill() {
    let dir = test_dir();
    let mut opts = options(Prepare::Overwrite, 2 * MIB, Backend::Uring);
    opts.keep = true;
    let first = PreparedFile::create(dir.path(), "keep", 1, &opts).expect("prepare");
    assert!(first.prefilled());
    let path = first.path().to_path_buf();
    drop(first);
    assert!(path.exists());
    opts.reuse_existing = true;
    let again = PreparedFile::create(dir.path(), "keep", 1, &opts).expect("reuse");
    assert!(
        !again.prefilled(),
        "a full file of the right size is reused"
    );
    let data = std::fs::read(&path).expect("read");
    assert!(prefill_matches(&data, 0));
}

#[test]
fn tmpfs_is_refused_with_the_fix_and_buffered_works() {
    let Some(m) = root_mount("tmpfs refusal", Mount::tmpfs) else {
        return;
    };
    let opts = options(Prepare::Pretruncate, MIB, Backend::Uring);
    let err = PreparedFile::create(&m.dir, "t", 0, &opts)
        .err()
        .expect("refused");
    assert!(
        matches!(err, FileError::DirectIoUnsupported { .. }),
        "{err}"
    );
    let msg = err.to_string();
    assert!(msg.contains("tmpfs") && msg.contains("--buffered"), "{msg}");
    let buffered = PrepareOptions {
        direct: DirectIo::Disabled,
        ..options(Prepare::Overwrite, MIB, Backend::Aio)
    };
    let file = PreparedFile::create(&m.dir, "t", 0, &buffered).expect("buffered run");
    assert!(!file.is_direct());
    assert_eq!(std::fs::metadata(file.path()).expect("meta").len(), MIB);
}

#[test]
fn read_only_filesystem_is_named() {
    let Some(m) = root_mount("read-only filesystem", |root, what| {
        Mount::ext4(root, what, 16)
    }) else {
        return;
    };
    m.remount_ro().expect("remount read-only");
    let opts = options(Prepare::Overwrite, MIB, Backend::Uring);
    let err = PreparedFile::create(&m.dir, "ro", 0, &opts)
        .err()
        .expect("EROFS");
    assert_eq!(err.errno(), Some(libc::EROFS), "{err}");
    assert!(err.to_string().contains("read-only"), "{err}");
}

#[test]
fn full_filesystem_during_prefill_is_enospc_and_cleans_up() {
    let Some(m) = root_mount("ENOSPC on a tiny filesystem", |root, what| {
        Mount::ext4(root, what, 16)
    }) else {
        return;
    };
    for_each_backend(|backend| {
        let opts = options(Prepare::Overwrite, 64 * MIB, backend);
        let err = PreparedFile::create(&m.dir, "full", 0, &opts)
            .err()
            .expect("full");
        let msg = err.to_string();
        let is_full = err.errno() == Some(libc::ENOSPC) || matches!(err, FileError::ShortIo { .. });
        assert!(is_full, "{msg}");
        assert!(msg.contains("full"), "{msg}");
        assert!(
            !m.dir.join("weir-full-0.data").exists(),
            "the partial file is removed"
        );
        // Fallocate beyond the free space fails up front.
        let opts = options(Prepare::Fallocate, 64 * MIB, backend);
        let err = PreparedFile::create(&m.dir, "full", 0, &opts)
            .err()
            .expect("full");
        assert_eq!(err.errno(), Some(libc::ENOSPC), "{err}");
    });
}

#[test]
fn missing_directory_and_misaligned_size() {
    let opts = options(Prepare::Overwrite, MIB, Backend::Uring);
    let err = PreparedFile::create(Path::new("/nonexistent-weir-dir"), "x", 0, &opts)
        .err()
        .expect("ENOENT");
    assert_eq!(err.errno(), Some(libc::ENOENT));
    let dir = test_dir();
    let opts = options(Prepare::Pretruncate, MIB + 100, Backend::Uring);
    let err = PreparedFile::create(dir.path(), "x", 0, &opts)
        .err()
        .expect("misaligned");
    assert!(matches!(err, FileError::MisalignedSize { .. }), "{err}");
    assert!(!dir.path().join("weir-x-0.data").exists());
}

/// Pushes one op. The tests keep every buffer alive until its completion is reaped (the
/// simulated disk never touches them at all), which is the contract of `Device::push`.
fn push<D: weir_model::device::Device>(
    device: &mut D,
    op: weir_model::device::IoOp,
) -> Result<(), weir_model::device::DeviceError> {
    // SAFETY: see above.
    unsafe { device.push(op) }
}

/// `sloppy_size_hint` (io_tester's option; weir's `prepare: sloppy`): the first append past
/// the size grows the file to the hint in one step, the next one past it doubles the size, and
/// the end of the run trims the file back to what was written.
#[test]
fn sloppy_grows_by_the_hint_then_doubles_and_trims_back() {
    const HINT_BYTES: u64 = 8 << 20;
    let dir = test_dir();
    let path = dir.path().join("sloppy");
    let opts = PrepareOptions {
        sloppy_size_hint_bytes: HINT_BYTES,
        ..PrepareOptions::new(Prepare::Sloppy, 0)
    };
    let mut file = PreparedFile::create_at(&path, &opts).expect("create a sloppy file");
    let on_disk = |p: &Path| std::fs::metadata(p).expect("stat").len();
    assert_eq!(on_disk(&path), 0, "a sloppy file starts empty");
    file.before_write(0, 4096).expect("first append");
    assert_eq!(
        on_disk(&path),
        HINT_BYTES,
        "the first append grows the file to the hint"
    );
    file.before_write(HINT_BYTES - 4096, 4096)
        .expect("an append inside the grown size");
    assert_eq!(
        on_disk(&path),
        HINT_BYTES,
        "appends inside the size do not grow it"
    );
    file.before_write(HINT_BYTES, 4096)
        .expect("append past the hint");
    assert_eq!(
        on_disk(&path),
        2 * HINT_BYTES,
        "past the size, the file doubles"
    );
    file.finish().expect("trim");
    assert_eq!(
        on_disk(&path),
        HINT_BYTES + 4096,
        "the run ends trimmed to what was written"
    );
}
