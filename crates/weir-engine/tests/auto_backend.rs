//! `--backend auto` on real storage (root tier): a zram device refuses RWF_NOWAIT reads and
//! gets AIO; a file on ext4 (on a loop device) takes them and keeps io_uring.

mod common;

use std::path::{Path, PathBuf};

use weir_engine::auto::{choose_for_dir, choose_for_path, probe_fd, NowaitSupport};
use weir_engine::Backend;

/// A zram device of our own (never zram0, which may be swap), reset and removed on drop.
struct Zram {
    id: String,
    path: PathBuf,
}

impl Zram {
    fn new(test: &str) -> Option<Zram> {
        weir_testfs::require_root(test)?;
        let control = Path::new("/sys/class/zram-control/hot_add");
        if !control.exists() {
            // Loading the module is part of the setup, as for loop devices.
            let _ = std::process::Command::new("modprobe").arg("zram").status();
        }
        if !control.exists() {
            weir_testfs::skip(test, "no zram support (modprobe zram failed)");
            return None;
        }
        let id = std::fs::read_to_string(control)
            .expect("hot_add a zram device")
            .trim()
            .to_string();
        let zram = Zram {
            path: PathBuf::from(format!("/dev/zram{id}")),
            id,
        };
        std::fs::write(format!("/sys/block/zram{}/disksize", zram.id), "64M")
            .expect("size the zram device");
        Some(zram)
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        let _ = std::fs::write(format!("/sys/block/zram{}/reset", self.id), "1");
        let _ = std::fs::write("/sys/class/zram-control/hot_remove", &self.id);
    }
}

#[test]
fn zram_device_refuses_nowait_and_gets_aio() {
    let Some(zram) = Zram::new("zram_device_refuses_nowait_and_gets_aio") else {
        return;
    };
    let file = std::fs::File::open(&zram.path).expect("open the zram device");
    assert_eq!(probe_fd(&file), NowaitSupport::Unsupported);
    let chosen = choose_for_path(&zram.path).expect("probe the zram device");
    println!(
        "{}: {:?} ({})",
        zram.path.display(),
        chosen.backend,
        chosen.reason
    );
    assert_eq!(chosen.backend, Backend::Aio, "{}", chosen.reason);
    assert!(chosen.reason.contains("EOPNOTSUPP"), "{}", chosen.reason);
}

#[test]
fn file_on_ext4_takes_nowait_and_keeps_io_uring() {
    let name = "file_on_ext4_takes_nowait_and_keeps_io_uring";
    let Some(mount) = common::root_mount(name, |root, what| common::Mount::ext4(root, what, 64))
    else {
        return;
    };
    let chosen = choose_for_dir(&mount.dir).expect("probe the ext4 directory");
    println!(
        "{}: {:?} ({})",
        mount.dir.display(),
        chosen.backend,
        chosen.reason
    );
    assert_eq!(chosen.backend, Backend::Uring, "{}", chosen.reason);
    // The scratch file is gone.
    let left: Vec<_> = std::fs::read_dir(&mount.dir)
        .expect("list the mount")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains("backend-probe"))
        .collect();
    assert!(left.is_empty(), "probe file left behind: {left:?}");
}

#[test]
fn missing_target_is_a_clear_error() {
    let dir = common::test_dir();
    let missing = dir.path().join("absent");
    let e = choose_for_path(&missing).expect_err("no such file");
    let msg = e.to_string();
    assert!(msg.contains("absent") && msg.contains("ENOENT"), "{msg}");
    assert!(msg.contains("--backend uring or aio"), "{msg}");
}
