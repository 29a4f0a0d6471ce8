//! A RAM-backed block device of the test's own (`/sys/class/zram-control/hot_add`), reset and
//! removed when the guard drops.
//!
//! Never zram0, which a machine may use as swap. Removal is retried: right after a test closes
//! the device, udev may still hold it open for a probe, and the kernel then refuses `reset` and
//! `hot_remove` with EBUSY; giving up at once left one device behind per test run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::{skip, Root};

const CONTROL: &str = "/sys/class/zram-control/hot_add";

/// A zram device created for one test; dropping it resets and removes the device.
#[derive(Debug)]
pub struct Zram {
    id: String,
    path: PathBuf,
}

impl Zram {
    /// A new device of `size` (zram's own syntax, e.g. "64M"), or `None` with a printed skip
    /// reason when the kernel has no zram support even after `modprobe zram`.
    pub fn create(_root: &Root, test_name: &str, size: &str) -> Option<Zram> {
        if !Path::new(CONTROL).exists() {
            // Loading the module is part of the setup, as for loop devices.
            let _ = std::process::Command::new("modprobe").arg("zram").status();
        }
        if !Path::new(CONTROL).exists() {
            skip(test_name, "no zram support (modprobe zram failed)");
            return None;
        }
        let id = std::fs::read_to_string(CONTROL)
            .unwrap_or_else(|e| panic!("{test_name}: hot_add a zram device: {e}"))
            .trim()
            .to_string();
        let zram = Zram {
            path: PathBuf::from(format!("/dev/zram{id}")),
            id,
        };
        std::fs::write(format!("/sys/block/zram{}/disksize", zram.id), size)
            .unwrap_or_else(|e| panic!("{test_name}: size {} to {size}: {e}", zram.path.display()));
        Some(zram)
    }

    /// The device node, e.g. `/dev/zram3`.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Writes `value` to a sysfs control, retrying while the kernel answers EBUSY (up to ~2 s).
fn write_retrying_busy(control: &str, value: &str) -> std::io::Result<()> {
    let mut last = Ok(());
    for _ in 0..40 {
        last = std::fs::write(control, value);
        match &last {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(Duration::from_millis(50))
            }
            _ => return last,
        }
    }
    last
}

impl Drop for Zram {
    fn drop(&mut self) {
        let reset = format!("/sys/block/zram{}/reset", self.id);
        let removed = write_retrying_busy(&reset, "1")
            .and_then(|()| write_retrying_busy("/sys/class/zram-control/hot_remove", &self.id));
        if let Err(e) = removed {
            eprintln!(
                "weir-testfs: could not remove {} ({e}); remove it by hand: echo 1 > {reset}; \
                 echo {} > /sys/class/zram-control/hot_remove",
                self.path.display(),
                self.id
            );
        }
    }
}
