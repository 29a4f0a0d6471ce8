//! Direct-I/O alignment discovery.
//!
//! O_DIRECT requires the buffer address, the file offset and the length to be multiples of
//! what the filesystem and device accept. The best source is `statx(STATX_DIOALIGN)` (Linux
//! 6.1+, answered by the filesystem itself); before that the device's logical block size is
//! the rule (BLKSSZGET for block devices, sysfs for the device under a file); 4096 is the
//! last resort, which every Linux device accepts.

use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;

/// Where a [`DioAlignment`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlignmentSource {
    /// `statx` with `STATX_DIOALIGN` (the filesystem's own answer).
    Statx,
    /// `BLKSSZGET` on a block device (its logical block size).
    BlockDeviceIoctl,
    /// `/sys/dev/block/<maj>:<min>/queue/logical_block_size` of the device holding the file.
    Sysfs,
    /// Nothing answered; 4096 bytes is safe on every Linux device.
    Default,
}

impl AlignmentSource {
    pub fn as_str(self) -> &'static str {
        match self {
            AlignmentSource::Statx => "statx",
            AlignmentSource::BlockDeviceIoctl => "BLKSSZGET",
            AlignmentSource::Sysfs => "sysfs",
            AlignmentSource::Default => "default",
        }
    }
}

/// The alignment direct I/O needs on one file or device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DioAlignment {
    /// Buffer addresses must be multiples of this.
    pub mem_align_bytes: u32,
    /// File offsets and lengths must be multiples of this.
    pub offset_align_bytes: u32,
    pub source: AlignmentSource,
}

/// The fallback when nothing answers.
pub const DEFAULT_ALIGN_BYTES: u32 = 4096;

impl DioAlignment {
    /// Alignment for buffers weir allocates: the larger of the memory alignment and a page,
    /// so buffers never straddle pages needlessly.
    pub fn buffer_align_bytes(&self) -> usize {
        (self.mem_align_bytes as usize).max(4096)
    }

    /// Whether an offset/length/buffer triple satisfies this alignment.
    pub fn accepts(&self, offset_bytes: u64, len_bytes: u64, buf: *const u8) -> bool {
        let off = u64::from(self.offset_align_bytes.max(1));
        let mem = self.mem_align_bytes.max(1) as usize;
        offset_bytes % off == 0 && len_bytes % off == 0 && (buf as usize) % mem == 0
    }

    fn uniform(bytes: u32, source: AlignmentSource) -> Self {
        DioAlignment {
            mem_align_bytes: bytes,
            offset_align_bytes: bytes,
            source,
        }
    }
}

/// The direct-I/O alignment of an open file or block device. Never fails: each source that
/// does not answer falls through to the next, down to 4096.
pub fn dio_alignment_fd(fd: RawFd) -> DioAlignment {
    let st = statx_fd(fd);
    if let Some(st) = &st {
        let has_dio = st.stx_mask & libc::STATX_DIOALIGN != 0;
        // Zero means "no direct I/O here" (e.g. tmpfs); fall through to the device's rule so
        // the caller still gets a usable alignment for --buffered runs.
        if has_dio && st.stx_dio_offset_align != 0 && st.stx_dio_mem_align != 0 {
            return DioAlignment {
                mem_align_bytes: st.stx_dio_mem_align,
                offset_align_bytes: st.stx_dio_offset_align,
                source: AlignmentSource::Statx,
            };
        }
    }
    if let Some(bytes) = blkssz(fd) {
        return DioAlignment::uniform(bytes, AlignmentSource::BlockDeviceIoctl);
    }
    if let Some(st) = &st {
        if let Some(bytes) = sysfs_logical_block(st.stx_dev_major, st.stx_dev_minor) {
            return DioAlignment::uniform(bytes, AlignmentSource::Sysfs);
        }
    }
    DioAlignment::uniform(DEFAULT_ALIGN_BYTES, AlignmentSource::Default)
}

/// The direct-I/O alignment of a path (file, directory or block device). Errors are errnos
/// from opening it (ENOENT, EACCES).
pub fn dio_alignment(path: &Path) -> Result<DioAlignment, i32> {
    let file = std::fs::File::open(path).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
    Ok(dio_alignment_fd(file.as_raw_fd()))
}

fn statx_fd(fd: RawFd) -> Option<libc::statx> {
    // SAFETY: statx is plain data; all-zero is a valid value.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    let empty = c"";
    let mask = libc::STATX_TYPE | libc::STATX_DIOALIGN;
    // SAFETY: the path is a valid C string and `st` is a valid out-pointer.
    let rc = unsafe { libc::statx(fd, empty.as_ptr(), libc::AT_EMPTY_PATH, mask, &mut st) };
    if rc == 0 {
        Some(st)
    } else {
        None
    }
}

fn blkssz(fd: RawFd) -> Option<u32> {
    let mut bytes: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int; on non-block files it fails with ENOTTY.
    let rc = unsafe { libc::ioctl(fd, libc::BLKSSZGET, &mut bytes) };
    (rc == 0 && bytes > 0).then_some(bytes as u32)
}

/// Reads the logical block size of the device `major:minor` from sysfs. Partitions have no
/// `queue/` of their own; their parent disk's applies.
fn sysfs_logical_block(major: u32, minor: u32) -> Option<u32> {
    let base = format!("/sys/dev/block/{major}:{minor}");
    for rel in ["queue/logical_block_size", "../queue/logical_block_size"] {
        if let Ok(text) = std::fs::read_to_string(format!("{base}/{rel}")) {
            if let Ok(bytes) = text.trim().parse::<u32>() {
                if bytes.is_power_of_two() {
                    return Some(bytes);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_of_tmp_is_power_of_two() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dio_alignment(dir.path()).expect("alignment");
        assert!(a.mem_align_bytes.is_power_of_two(), "{a:?}");
        assert!(a.offset_align_bytes.is_power_of_two(), "{a:?}");
        assert!(
            a.offset_align_bytes >= 512 && a.offset_align_bytes <= 65536,
            "{a:?}"
        );
        assert!(a.buffer_align_bytes() >= 4096);
    }

    #[test]
    fn missing_path_is_enoent() {
        assert_eq!(
            dio_alignment(Path::new("/nonexistent/weir")),
            Err(libc::ENOENT)
        );
    }

    #[test]
    fn accepts_checks_all_three() {
        let a = DioAlignment::uniform(512, AlignmentSource::Default);
        assert!(a.accepts(1024, 512, 4096 as *const u8));
        assert!(!a.accepts(1000, 512, 4096 as *const u8));
        assert!(!a.accepts(1024, 500, 4096 as *const u8));
        assert!(!a.accepts(1024, 512, 4097 as *const u8));
    }

    #[test]
    fn block_device_uses_ioctl_or_statx() {
        let Ok(a) = dio_alignment(Path::new("/dev/vda")) else {
            eprintln!("skip: /dev/vda not readable here");
            return;
        };
        assert_ne!(a.source, AlignmentSource::Default, "{a:?}");
        assert_eq!(a.offset_align_bytes, 512, "{a:?}");
    }
}
