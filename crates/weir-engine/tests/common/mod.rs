//! Helpers for the engine's real-file tests: fresh directories on a real filesystem, patterns,
//! and loop-mounted filesystems (root only) that are always unmounted and detached on drop.
#![allow(dead_code)] // Each test binary uses a different subset.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use weir_engine::Backend;

/// A fresh directory on the root filesystem (/var/tmp: /tmp may be tmpfs, which has no
/// O_DIRECT).
pub fn test_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("weir-engine-test-")
        .tempdir_in("/var/tmp")
        .expect("create a test directory under /var/tmp")
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

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Runs `f` once per backend, naming the backend when it fails.
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

static SEQ: AtomicU32 = AtomicU32::new(0);

fn unique(tag: &str) -> String {
    format!(
        "weir-engine-{tag}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

/// A mounted filesystem that goes away on drop: tmpfs, or an image file on a loop device.
pub struct Mount {
    pub dir: PathBuf,
    loop_dev: Option<String>,
    image: Option<PathBuf>,
}

impl Mount {
    /// A tmpfs of `size` (e.g. "16m"). Root only.
    pub fn tmpfs(size: &str) -> Result<Mount, String> {
        let dir = std::env::temp_dir().join(unique("tmpfs"));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let m = Mount {
            dir,
            loop_dev: None,
            image: None,
        };
        run(
            "mount",
            &[
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size}"),
                "tmpfs",
                m.path(),
            ],
        )?;
        Ok(m)
    }

    /// An image of `size_mib` MiB made by `mkfs` (with `mkfs_args`) on a direct-I/O loop
    /// device, mounted with `mount_opts`. Root only.
    pub fn loop_fs(
        fs: &str,
        size_mib: u64,
        mkfs_args: &[&str],
        mount_opts: &str,
    ) -> Result<Mount, String> {
        let name = unique(fs);
        let image = PathBuf::from("/var/tmp").join(format!("{name}.img"));
        let dir = PathBuf::from("/var/tmp").join(&name);
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let mut m = Mount {
            dir,
            loop_dev: None,
            image: Some(image.clone()),
        };
        let file = std::fs::File::create(&image).map_err(|e| e.to_string())?;
        file.set_len(size_mib << 20).map_err(|e| e.to_string())?;
        drop(file);
        let img = image.to_str().ok_or("non-UTF-8 image path")?;
        let dev = run("losetup", &["--find", "--show", "--direct-io=on", img])?;
        m.loop_dev = Some(dev.clone());
        let mkfs = format!("mkfs.{fs}");
        let mut args: Vec<&str> = mkfs_args.to_vec();
        if fs == "ext4" {
            args.push("-q");
        }
        args.push(&dev);
        run(&mkfs, &args)?;
        run("mount", &["-o", mount_opts, &dev, m.path()])?;
        Ok(m)
    }

    pub fn path(&self) -> &str {
        self.dir.to_str().unwrap_or("/nonexistent")
    }

    pub fn remount_ro(&self) -> Result<(), String> {
        run("mount", &["-o", "remount,ro", self.path()]).map(|_| ())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = run("umount", &[self.path()]);
        if let Some(dev) = &self.loop_dev {
            let _ = run("losetup", &["-d", dev]);
        }
        if let Some(image) = &self.image {
            let _ = std::fs::remove_file(image);
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// A root-only mount, or None after printing why the test is skipped.
pub fn root_mount(what: &str, make: impl FnOnce() -> Result<Mount, String>) -> Option<Mount> {
    if !is_root() {
        eprintln!("skip {what}: needs root to mount filesystems");
        return None;
    }
    match make() {
        Ok(m) => Some(m),
        Err(e) => panic!("{what}: could not set up the mount as root: {e}"),
    }
}

pub fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}
