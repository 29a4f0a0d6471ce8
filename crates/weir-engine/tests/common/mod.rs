//! Helpers for the engine's real-file tests: fresh directories on a real filesystem, patterns,
//! and loop-mounted filesystems (root only) that are always unmounted and detached on drop.
#![allow(dead_code)] // Each test binary uses a different subset.

use std::path::PathBuf;
use std::process::Command;

use weir_engine::Backend;
use weir_testfs::{FsKind, Root, TestFs, TestFsOptions};

/// A fresh directory on the root filesystem (/var/tmp: /tmp may be tmpfs, which has no
/// O_DIRECT).
pub fn test_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("weir-engine-test-")
        .tempdir_in("/var/tmp")
        .expect("create a test directory under /var/tmp")
}

/// `dir/data`, opened read-write with O_DIRECT and sized to `size` bytes.
pub fn direct_file(dir: &std::path::Path, size: u64) -> std::fs::File {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(dir.join("data"))
        .expect("open O_DIRECT");
    f.set_len(size).expect("set_len");
    f
}

/// A byte pattern that differs per offset and per seed, so misplaced data is detected.
pub fn pattern_byte(seed: u64, offset: u64) -> u8 {
    let x = (offset / 8)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(seed.wrapping_mul(0xbf58_476d_1ce4_e5b9));
    (x >> (8 * (offset % 8))) as u8 ^ (x >> 56) as u8
}

pub fn fill_pattern(buf: &mut [u8], seed: u64, file_offset: u64) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = pattern_byte(seed, file_offset + i as u64);
    }
}

pub fn for_each_backend(mut f: impl FnMut(Backend)) {
    for backend in Backend::ALL {
        eprintln!("-- backend {backend}");
        f(backend);
    }
}

fn run(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "{cmd} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A root-only test filesystem from `weir-testfs` (whose Drop unmounts, waits for the loop
/// device to let go, detaches it and deletes the image), plus the remount the EROFS test needs.
pub struct Mount {
    pub dir: PathBuf,
    _fs: TestFs,
}

impl Mount {
    fn new(fs: TestFs) -> Mount {
        Mount {
            dir: fs.path().to_path_buf(),
            _fs: fs,
        }
    }

    /// A tmpfs (64 MiB).
    pub fn tmpfs(root: &Root, what: &str) -> Result<Mount, String> {
        TestFs::tmpfs(root, what)
            .map(Mount::new)
            .map_err(|e| e.to_string())
    }

    /// XFS with `block_bytes` blocks on a direct-I/O loop device of `size_mib` MiB.
    pub fn xfs(root: &Root, what: &str, block_bytes: u32, size_mib: u64) -> Result<Mount, String> {
        let opts = TestFsOptions::new(FsKind::Xfs { block_bytes })
            .size_bytes(size_mib << 20)
            .direct_io(true);
        TestFs::create(root, what, &opts)
            .map(Mount::new)
            .map_err(|e| e.to_string())
    }

    /// ext4 with 4 KiB blocks on a direct-I/O loop device of `size_mib` MiB.
    pub fn ext4(root: &Root, what: &str, size_mib: u64) -> Result<Mount, String> {
        let opts = TestFsOptions::new(FsKind::Ext4 { block_bytes: 4096 })
            .size_bytes(size_mib << 20)
            .direct_io(true);
        TestFs::create(root, what, &opts)
            .map(Mount::new)
            .map_err(|e| e.to_string())
    }

    pub fn remount_ro(&self) -> Result<(), String> {
        let path = self.dir.to_str().ok_or("non-UTF-8 mount path")?;
        run("mount", &["-o", "remount,ro", path]).map(|_| ())
    }
}

/// A root-only mount, or None after `weir-testfs` printed why the test is skipped.
pub fn root_mount(
    what: &str,
    make: impl FnOnce(&Root, &str) -> Result<Mount, String>,
) -> Option<Mount> {
    let root = weir_testfs::require_root_with(what, &["mkfs.xfs", "mkfs.ext4"])?;
    match make(&root, what) {
        Ok(m) => Some(m),
        Err(e) => panic!("{what}: could not set up the mount as root: {e}"),
    }
}
