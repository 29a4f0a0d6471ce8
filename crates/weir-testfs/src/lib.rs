//! weir-testfs: real filesystems for tests, created and destroyed by the test itself.
//!
//! A [`TestFs`] is a sparse image file in a fresh temporary directory, attached to a loop
//! device (`losetup`, optionally `--direct-io=on` and `--sector-size`), formatted (`mkfs.xfs`
//! with a chosen block size, or `mkfs.ext4`) and mounted read-write or read-only. A tmpfs mount
//! is offered too, for the "no O_DIRECT here" cases. Dropping the guard unmounts, detaches the
//! loop device and deletes the image, even when the test panicked, so a failed test leaves no
//! loop devices behind. Every name carries the test's name and a random suffix, so tests run in
//! parallel without colliding.
//!
//! All of this needs root. Tests call [`require_root`] first: when the process is not root or
//! a tool is missing it prints why the test is skipped and returns `None`, so a skip is visible
//! in the test output rather than a silent pass.
//!
//! The tools are driven as subprocesses (util-linux and the mkfs programs) rather than by
//! ioctls: their behaviour is what an operator reproducing a finding would type, and each
//! failure message below quotes the exact command that failed.

mod zram;

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

pub use zram::Zram;

/// Proof that the process may create loop devices and mounts (root, tools present).
/// Obtained from [`require_root`]; needed to build a [`TestFs`].
#[derive(Debug, Clone, Copy)]
pub struct Root {
    _private: (),
}

/// The filesystem to create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsKind {
    /// `mkfs.xfs -b size=<block_bytes>`.
    Xfs { block_bytes: u32 },
    /// `mkfs.ext4 -b <block_bytes>`.
    Ext4 { block_bytes: u32 },
    /// A tmpfs mount (no image, no loop device; tmpfs has no O_DIRECT).
    Tmpfs,
}

impl FsKind {
    /// The filesystem type name as `/proc/self/mountinfo` spells it.
    pub fn type_name(self) -> &'static str {
        match self {
            FsKind::Xfs { .. } => "xfs",
            FsKind::Ext4 { .. } => "ext4",
            FsKind::Tmpfs => "tmpfs",
        }
    }

    fn mkfs_tool(self) -> Option<&'static str> {
        match self {
            FsKind::Xfs { .. } => Some("mkfs.xfs"),
            FsKind::Ext4 { .. } => Some("mkfs.ext4"),
            FsKind::Tmpfs => None,
        }
    }
}

/// How to build a [`TestFs`]. Defaults: 512 MiB sparse image, buffered loop device with
/// 512-byte sectors, mounted read-write.
#[derive(Debug, Clone)]
pub struct TestFsOptions {
    pub kind: FsKind,
    /// Size of the sparse image (XFS refuses images under 300 MiB).
    pub size_bytes: u64,
    /// `losetup --direct-io=on`: the loop device writes the image with O_DIRECT, so requests
    /// reach the device under the image unchanged (same offsets, no page cache).
    pub direct_io: bool,
    /// `losetup --sector-size`: the loop device's logical (and physical) block size.
    pub sector_bytes: Option<u32>,
    /// Mount read-only (`mount -o ro`).
    pub read_only: bool,
    /// Extra `mkfs` arguments, e.g. `["-d", "su=64k,sw=4"]`.
    pub mkfs_args: Vec<String>,
}

impl TestFsOptions {
    pub fn new(kind: FsKind) -> Self {
        TestFsOptions {
            kind,
            size_bytes: 512 << 20,
            direct_io: false,
            sector_bytes: None,
            read_only: false,
            mkfs_args: Vec::new(),
        }
    }

    pub fn direct_io(mut self, on: bool) -> Self {
        self.direct_io = on;
        self
    }

    pub fn sector_bytes(mut self, bytes: u32) -> Self {
        self.sector_bytes = Some(bytes);
        self
    }

    pub fn read_only(mut self, ro: bool) -> Self {
        self.read_only = ro;
        self
    }

    pub fn size_bytes(mut self, bytes: u64) -> Self {
        self.size_bytes = bytes;
        self
    }

    pub fn mkfs_arg(mut self, arg: &str) -> Self {
        self.mkfs_args.push(arg.to_string());
        self
    }
}

/// Why a [`TestFs`] could not be built: the command that failed and what it printed.
#[derive(Debug)]
pub struct TestFsError {
    pub command: String,
    pub detail: String,
}

impl fmt::Display for TestFsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` failed: {}", self.command, self.detail)
    }
}

impl std::error::Error for TestFsError {}

/// A mounted test filesystem. Dropping it unmounts, detaches and deletes everything.
#[derive(Debug)]
pub struct TestFs {
    kind: FsKind,
    mount_point: PathBuf,
    loop_device: Option<PathBuf>,
    image: Option<PathBuf>,
    mounted: bool,
    // Declared last so it is deleted after the unmount and detach in Drop.
    dir: tempfile::TempDir,
}

/// Returns `Some(Root)` when this process can create loop-mounted filesystems: it runs as root
/// and `losetup`, `mount` and `umount` exist. When not root, prints `SKIP <test_name>: <reason>`
/// to stderr and returns `None`; the caller returns early. As root a missing tool or loop
/// device support panics instead (see [`skip`]).
pub fn require_root(test_name: &str) -> Option<Root> {
    require_root_with(test_name, &[])
}

/// Like [`require_root`], and also requires the named tools (e.g. `["mkfs.xfs"]`).
pub fn require_root_with(test_name: &str, tools: &[&str]) -> Option<Root> {
    if !is_root() {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let euid = unsafe { libc::geteuid() };
        skip(
            test_name,
            &format!("needs root to create loop devices and mounts (euid {euid})"),
        );
        return None;
    }
    for tool in ["losetup", "mount", "umount"].iter().chain(tools) {
        if find_tool(tool).is_none() {
            skip(
                test_name,
                &format!("`{tool}` is not installed (not found in PATH or /sbin, /usr/sbin)"),
            );
            return None;
        }
    }
    if !Path::new("/dev/loop-control").exists() && !tools.is_empty() {
        skip(
            test_name,
            "/dev/loop-control is missing (no loop device support)",
        );
        return None;
    }
    Some(Root { _private: () })
}

/// True when the tests run as root (as CI does).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Reports that `test_name` cannot run here. Not root: prints `SKIP <test_name>: <reason>`
/// and the caller returns early. Root: panics, because CI runs the tests as root and a root
/// tier that skipped there would pass without having run (a missing tool is a broken
/// machine, which `scripts/install-deps.sh` fixes, not a reason to pass).
pub fn skip(test_name: &str, reason: &str) {
    if is_root() {
        panic!(
            "{test_name} cannot run: {reason}. As root every tier must run (CI runs as root); \
             install what is missing (scripts/install-deps.sh)"
        );
    }
    eprintln!("SKIP {test_name}: {reason}");
}

/// The full path of a tool, looked up in PATH and the sbin directories (root's PATH may lack
/// them under `cargo test`).
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path_var).collect();
    for extra in ["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
        dirs.push(PathBuf::from(extra));
    }
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

fn run(tool: &str, args: &[&str]) -> Result<String, TestFsError> {
    let command = format!("{tool} {}", args.join(" "));
    let program = find_tool(tool).ok_or_else(|| TestFsError {
        command: command.clone(),
        detail: format!("`{tool}` is not installed"),
    })?;
    let output = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| TestFsError {
            command: command.clone(),
            detail: e.to_string(),
        })?;
    if !output.status.success() {
        return Err(TestFsError {
            command,
            detail: format!(
                "{}: {}{}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim(),
                String::from_utf8_lossy(&output.stdout).trim()
            ),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(40)
        .collect()
}

impl TestFs {
    /// XFS with the given block size on a direct-I/O loop device (the common test setup).
    pub fn xfs(root: &Root, test_name: &str, block_bytes: u32) -> Result<TestFs, TestFsError> {
        let opts = TestFsOptions::new(FsKind::Xfs { block_bytes }).direct_io(true);
        TestFs::create(root, test_name, &opts)
    }

    /// ext4 with 4 KiB blocks on a direct-I/O loop device.
    pub fn ext4(root: &Root, test_name: &str) -> Result<TestFs, TestFsError> {
        let opts = TestFsOptions::new(FsKind::Ext4 { block_bytes: 4096 }).direct_io(true);
        TestFs::create(root, test_name, &opts)
    }

    /// A 64 MiB tmpfs.
    pub fn tmpfs(root: &Root, test_name: &str) -> Result<TestFs, TestFsError> {
        let opts = TestFsOptions::new(FsKind::Tmpfs).size_bytes(64 << 20);
        TestFs::create(root, test_name, &opts)
    }

    /// Builds the filesystem described by `opts`. On error, whatever was set up is torn down.
    pub fn create(
        _root: &Root,
        test_name: &str,
        opts: &TestFsOptions,
    ) -> Result<TestFs, TestFsError> {
        let prefix = format!("weir-testfs-{}-", sanitize(test_name));
        let dir = tempfile::Builder::new()
            .prefix(&prefix)
            .tempdir()
            .map_err(|e| TestFsError {
                command: "mkdtemp".into(),
                detail: e.to_string(),
            })?;
        let mount_point = dir.path().join("mnt");
        std::fs::create_dir(&mount_point).map_err(|e| TestFsError {
            command: format!("mkdir {}", mount_point.display()),
            detail: e.to_string(),
        })?;
        let mut fs = TestFs {
            kind: opts.kind,
            mount_point,
            loop_device: None,
            image: None,
            mounted: false,
            dir,
        };
        // Any error below drops `fs`, whose Drop undoes the steps already taken.
        match opts.kind {
            FsKind::Tmpfs => fs.mount_tmpfs(opts)?,
            _ => fs.mount_image(opts)?,
        }
        Ok(fs)
    }

    fn mount_tmpfs(&mut self, opts: &TestFsOptions) -> Result<(), TestFsError> {
        let size = format!("size={}", opts.size_bytes);
        let mut options = size;
        if opts.read_only {
            options.push_str(",ro");
        }
        let mp = self.mount_point.to_string_lossy().into_owned();
        run("mount", &["-t", "tmpfs", "-o", &options, "tmpfs", &mp])?;
        self.mounted = true;
        Ok(())
    }

    fn mount_image(&mut self, opts: &TestFsOptions) -> Result<(), TestFsError> {
        let image = self.dir.path().join("image");
        let file = std::fs::File::create(&image).map_err(|e| TestFsError {
            command: format!("create {}", image.display()),
            detail: e.to_string(),
        })?;
        file.set_len(opts.size_bytes).map_err(|e| TestFsError {
            command: format!("truncate -s {} {}", opts.size_bytes, image.display()),
            detail: e.to_string(),
        })?;
        drop(file);
        self.image = Some(image.clone());
        let image_str = image.to_string_lossy().into_owned();
        let mut args: Vec<String> = vec!["--find".into(), "--show".into()];
        if opts.direct_io {
            args.push("--direct-io=on".into());
        }
        if let Some(sector) = opts.sector_bytes {
            args.push(format!("--sector-size={sector}"));
        }
        args.push(image_str);
        let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let dev = run("losetup", &arg_refs)?.trim().to_string();
        if !dev.starts_with("/dev/") {
            return Err(TestFsError {
                command: format!("losetup {}", args.join(" ")),
                detail: format!("printed `{dev}` instead of a device path"),
            });
        }
        self.loop_device = Some(PathBuf::from(&dev));
        self.mkfs(&dev, opts)?;
        let mp = self.mount_point.to_string_lossy().into_owned();
        let mode = if opts.read_only { "ro" } else { "rw" };
        run("mount", &["-o", mode, &dev, &mp])?;
        self.mounted = true;
        Ok(())
    }

    fn mkfs(&self, dev: &str, opts: &TestFsOptions) -> Result<(), TestFsError> {
        let tool = opts.kind.mkfs_tool().unwrap_or("mkfs");
        let mut args: Vec<String> = match opts.kind {
            FsKind::Xfs { block_bytes } => {
                vec![
                    "-f".into(),
                    "-q".into(),
                    "-b".into(),
                    format!("size={block_bytes}"),
                ]
            }
            FsKind::Ext4 { block_bytes } => vec![
                "-F".into(),
                "-q".into(),
                "-b".into(),
                block_bytes.to_string(),
                // Lazy init would keep writing in the background and skew measurements.
                "-E".into(),
                "lazy_itable_init=0,lazy_journal_init=0".into(),
            ],
            FsKind::Tmpfs => Vec::new(),
        };
        args.extend(opts.mkfs_args.iter().cloned());
        args.push(dev.to_string());
        let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
        run(tool, &arg_refs).map(|_| ())
    }

    /// The mounted directory.
    pub fn path(&self) -> &Path {
        &self.mount_point
    }

    /// The loop device (`/dev/loopN`), or `None` for tmpfs.
    pub fn loop_device(&self) -> Option<&Path> {
        self.loop_device.as_deref()
    }

    /// The image file behind the loop device, or `None` for tmpfs.
    pub fn image(&self) -> Option<&Path> {
        self.image.as_deref()
    }

    pub fn kind(&self) -> FsKind {
        self.kind
    }

    /// A fresh directory inside the mount, writable by anyone (for "no permission" tests run
    /// under a different uid).
    pub fn subdir(&self, name: &str) -> Result<PathBuf, TestFsError> {
        let p = self.mount_point.join(name);
        std::fs::create_dir_all(&p).map_err(|e| TestFsError {
            command: format!("mkdir {}", p.display()),
            detail: e.to_string(),
        })?;
        Ok(p)
    }

    fn teardown(&mut self) {
        let mp = self.mount_point.to_string_lossy().into_owned();
        if self.mounted {
            if let Err(e) = run("umount", &[&mp]) {
                // Busy (a test left a file open): detach lazily so the loop device can go.
                eprintln!("weir-testfs: {e}; retrying with umount -l");
                if let Err(e) = run("umount", &["-l", &mp]) {
                    eprintln!("weir-testfs: {e}");
                }
            }
            self.mounted = false;
        }
        if let Some(dev) = self.loop_device.take() {
            let dev = dev.to_string_lossy().into_owned();
            if let Err(e) = run("losetup", &["-d", &dev]) {
                eprintln!("weir-testfs: {e}");
            }
            self.wait_detached(&dev);
        }
    }

    /// `losetup -d` on a device someone still has open (udev's blkid probe after mkfs) only
    /// marks it for autoclear; wait until the kernel lets go of the image, so the next test
    /// sees a clean `losetup -a`.
    fn wait_detached(&self, dev: &str) {
        let name = dev.trim_start_matches("/dev/");
        let backing = format!("/sys/block/{name}/loop/backing_file");
        let image = self
            .image
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned());
        for _ in 0..100 {
            let current = std::fs::read_to_string(&backing).unwrap_or_default();
            let still = image
                .as_deref()
                .is_some_and(|img| current.trim().trim_end_matches(" (deleted)") == img);
            if !still {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        eprintln!("weir-testfs: {dev} still attached to its image after 2 s");
    }
}

impl Drop for TestFs {
    fn drop(&mut self) {
        self.teardown();
        // The TempDir field then deletes the image and the mount point directory.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mountinfo_has(path: &Path) -> bool {
        let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let p = path.to_string_lossy();
        text.lines()
            .any(|l| l.split(' ').nth(4).is_some_and(|m| m == p))
    }

    #[test]
    fn xfs_1k_is_created_mounted_and_removed() {
        let Some(root) = require_root_with("xfs_1k_is_created_mounted_and_removed", &["mkfs.xfs"])
        else {
            return;
        };
        let fs = TestFs::xfs(&root, "xfs1k", 1024).expect("create xfs");
        let mp = fs.path().to_path_buf();
        let image = fs.image().expect("image").to_path_buf();
        let dev = fs.loop_device().expect("loop").to_path_buf();
        assert!(mountinfo_has(&mp), "{} not in mountinfo", mp.display());
        std::fs::write(mp.join("f"), b"hello").expect("write");
        let name = dev
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let dio = std::fs::read_to_string(format!("/sys/block/{name}/loop/dio")).expect("dio");
        assert_eq!(dio.trim(), "1");
        drop(fs);
        assert!(!mountinfo_has(&mp));
        assert!(!image.exists());
        let backing = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file"));
        assert!(
            backing.map_or(true, |b| b.trim() != image.to_string_lossy()),
            "loop device still attached to the image"
        );
    }

    #[test]
    fn ext4_read_only_refuses_writes() {
        let Some(root) = require_root_with("ext4_read_only_refuses_writes", &["mkfs.ext4"]) else {
            return;
        };
        let opts = TestFsOptions::new(FsKind::Ext4 { block_bytes: 4096 }).read_only(true);
        let fs = TestFs::create(&root, "ext4ro", &opts).expect("create ext4");
        let err = std::fs::write(fs.path().join("f"), b"x").expect_err("read-only");
        assert_eq!(err.raw_os_error(), Some(libc::EROFS));
    }

    #[test]
    fn tmpfs_mounts() {
        let Some(root) = require_root("tmpfs_mounts") else {
            return;
        };
        let fs = TestFs::tmpfs(&root, "tmpfs").expect("tmpfs");
        assert!(mountinfo_has(fs.path()));
        assert!(fs.loop_device().is_none());
    }

    #[test]
    fn failing_mkfs_cleans_up() {
        let Some(root) = require_root_with("failing_mkfs_cleans_up", &["mkfs.xfs"]) else {
            return;
        };
        // 4 KiB sectors forbid a 1 KiB XFS block: mkfs refuses, and the loop must be detached.
        let opts = TestFsOptions::new(FsKind::Xfs { block_bytes: 1024 }).sector_bytes(4096);
        let err = TestFs::create(&root, "badmkfs", &opts).expect_err("mkfs must refuse");
        assert!(err.command.starts_with("mkfs.xfs"), "{err}");
        let list = run("losetup", &["-a"]).unwrap_or_default();
        assert!(!list.contains("weir-testfs-badmkfs"), "leaked: {list}");
    }
}
