//! Raw block devices as targets (io_tester's `--storage /dev/X`).
//!
//! A device is opened once, `O_RDWR | O_DIRECT | O_EXCL` (and `O_NOATIME` where the kernel
//! allows it, see `open_claimed`): on a block device O_EXCL is the
//! kernel's exclusive claim, which fails with EBUSY while a filesystem is mounted on it (or on
//! a partition of it) or LVM, md or swap holds it, so weir cannot write under a mounted
//! filesystem even in a race with `mount`. Before that, `/proc/self/mountinfo` is read so the
//! usual case gets a message naming the mount point. Callers place their jobs in disjoint
//! regions of the device ([`BlockDevice::capacity_bytes`] says how much room there is); there
//! is no preparation, so reads see whatever the device holds.

use std::fs::{File, OpenOptions};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::align::{dio_alignment_fd, DioAlignment};
use crate::errno::{describe_errno, last_errno};

/// `_IOR(0x12, 114, size_t)`: the device size in bytes.
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;

/// An open block device, claimed exclusively until dropped.
#[derive(Debug)]
pub struct BlockDevice {
    file: File,
    path: PathBuf,
    capacity_bytes: u64,
    alignment: DioAlignment,
}

/// Why a device cannot be used; the text says the fix. `usage` errors are the operator's
/// (not a block device, mounted, in use, no permission); the rest are system failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockDeviceError {
    pub message: String,
    pub usage: bool,
}

impl std::fmt::Display for BlockDeviceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BlockDeviceError {}

fn usage(message: String) -> BlockDeviceError {
    BlockDeviceError {
        message,
        usage: true,
    }
}

impl BlockDevice {
    /// Opens `path` for direct I/O after checking that it is an unmounted block device.
    pub fn open(path: &Path) -> Result<BlockDevice, BlockDeviceError> {
        let shown = path.display();
        let meta = std::fs::metadata(path).map_err(|e| {
            usage(format!(
                "cannot use --device {shown}: {e}; give the path of a block device such as \
                 /dev/nvme1n1 (lsblk lists them)"
            ))
        })?;
        if !meta.file_type().is_block_device() {
            return Err(usage(format!(
                "--device {shown} is not a block device; give one such as /dev/nvme1n1, or use \
                 --dir for a directory of test files"
            )));
        }
        if let Some(mount_point) = mounted_at(meta.rdev()) {
            return Err(usage(format!(
                "--device {shown} is mounted at {mount_point}: weir writes to the raw device and \
                 would corrupt that filesystem; unmount it first (umount {mount_point}) or run \
                 on the filesystem with --dir {mount_point}"
            )));
        }
        let file = open_claimed(path)?;
        let mut capacity_bytes: u64 = 0;
        // SAFETY: BLKGETSIZE64 writes one u64 to the pointer.
        let rc = unsafe {
            libc::ioctl(
                file.as_raw_fd(),
                BLKGETSIZE64 as _,
                &mut capacity_bytes as *mut u64,
            )
        };
        if rc != 0 {
            return Err(BlockDeviceError {
                message: format!(
                    "cannot read the size of {shown}: {}",
                    describe_errno(last_errno())
                ),
                usage: false,
            });
        }
        let alignment = dio_alignment_fd(file.as_raw_fd());
        Ok(BlockDevice {
            file,
            path: path.to_path_buf(),
            capacity_bytes,
            alignment,
        })
    }

    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    /// The device's direct-I/O alignment (its logical block size).
    pub fn alignment(&self) -> DioAlignment {
        self.alignment
    }
}

/// Opens the device `O_RDWR | O_DIRECT | O_EXCL`, with `O_NOATIME` where allowed.
///
/// Why `O_NOATIME`: every read of a block device opened without it calls `touch_atime` on
/// the device node (`blkdev_read_iter` -> `file_accessed`), in the thread that runs the read;
/// on zram that is the one io-wq worker every read goes through, the limit of a deep ring
/// (profiled: ~0.04 us of its ~2.7 us per read). fio opens every non-regular file
/// with it for the same reason. The kernel allows it only to the node's owner or a holder of
/// CAP_FOWNER: a `disk`-group user gets EPERM, and the device is then opened without it.
/// `WEIR_DEVICE_ATIME=on` leaves it off, for the A/B (bench/engine-vs-fio.sh row `uring_atime`).
fn open_claimed(path: &Path) -> Result<File, BlockDeviceError> {
    let open = |noatime: libc::c_int| {
        OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT | libc::O_EXCL | noatime)
            .open(path)
    };
    let keep_atime = crate::options::engine_options().keep_device_atime;
    open(if keep_atime { 0 } else { libc::O_NOATIME })
        .or_else(|e| match e.raw_os_error() {
            Some(libc::EPERM) => open(0),
            _ => Err(e),
        })
        .map_err(|e| open_error(path, e.raw_os_error().unwrap_or(libc::EIO)))
}

fn open_error(path: &Path, errno: i32) -> BlockDeviceError {
    let shown = path.display();
    match errno {
        libc::EBUSY => usage(format!(
            "--device {shown} is in use (EBUSY): a mounted filesystem on it or on one of its \
             partitions, LVM, md or swap holds it; release it first (lsblk {shown} shows \
             what), or pick another device"
        )),
        libc::EACCES | libc::EPERM => usage(format!(
            "no permission to open {shown} for writing ({}): run as root or as a member of \
             the device's group (usually `disk`)",
            crate::errno::errno_name(errno)
        )),
        libc::EROFS => usage(format!(
            "{shown} is read-only (EROFS): weir needs a writable device (blockdev --setrw \
             {shown}), or pick another"
        )),
        libc::EINVAL => usage(format!(
            "{shown} refuses O_DIRECT (EINVAL): weir measures devices without the page cache; \
             pick a device that supports direct I/O"
        )),
        _ => BlockDeviceError {
            message: format!("cannot open {shown}: {}", describe_errno(errno)),
            usage: false,
        },
    }
}

/// The mount point of the first filesystem mounted from device `rdev` (major:minor), if any.
fn mounted_at(rdev: u64) -> Option<String> {
    let wanted = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mount_point_of(&text, &wanted)
}

/// Field 3 of a mountinfo line is the device's major:minor, field 5 the mount point.
fn mount_point_of(mountinfo: &str, major_minor: &str) -> Option<String> {
    mountinfo.lines().find_map(|line| {
        let mut fields = line.split(' ');
        let dev = fields.nth(2)?;
        let mount_point = fields.nth(1)?;
        (dev == major_minor).then(|| mount_point.replace("\\040", " "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_mount_point_by_major_minor() {
        let info = "22 1 0:21 / /proc rw - proc proc rw\n\
                    30 1 253:0 / / rw - ext4 /dev/vda rw\n\
                    41 30 7:3 / /mnt/my\\040data rw - xfs /dev/loop3 rw\n";
        assert_eq!(mount_point_of(info, "7:3").as_deref(), Some("/mnt/my data"));
        assert_eq!(mount_point_of(info, "253:0").as_deref(), Some("/"));
        assert_eq!(mount_point_of(info, "7:4"), None);
    }

    #[test]
    fn a_regular_file_is_not_a_device() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("f");
        std::fs::write(&path, b"x").expect("write");
        let e = BlockDevice::open(&path).expect_err("not a device");
        assert!(e.usage && e.message.contains("not a block device"), "{e}");
        let missing = BlockDevice::open(&dir.path().join("nope")).expect_err("missing");
        assert!(missing.usage, "{missing}");
    }
}
