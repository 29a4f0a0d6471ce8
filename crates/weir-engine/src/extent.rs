//! Extent size hints (io_tester's `extent_allocation_size_hint`), through the generic
//! `FS_IOC_FSGETXATTR` / `FS_IOC_FSSETXATTR` ioctls.
//!
//! XFS allocates a file with a hint in extents of (a multiple of) that size, which changes how
//! fragmented a file written by many small appends ends up, and so what a write benchmark on
//! it measures; Seastar sets the hint on the files it creates. The hint must be set while the
//! file has no extents (XFS answers EINVAL otherwise), so [`crate::PreparedFile`] sets it right
//! after creating the file, before any preparation writes or allocates.
//!
//! Filesystems without extent size hints differ in how they say so: ext4 answers
//! FS_IOC_FSSETXATTR with EOPNOTSUPP for the EXTSIZE flag, others answer ENOTTY for the
//! ioctl itself, and a filesystem could accept the call and ignore the value. So the hint
//! counts as applied only when FS_IOC_FSGETXATTR reads it back.

use std::os::fd::RawFd;

use crate::errno::last_errno;

/// `struct fsxattr` from `<linux/fs.h>`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct FsXattr {
    xflags: u32,
    extsize: u32,
    nextents: u32,
    projid: u32,
    cowextsize: u32,
    pad: [u8; 8],
}

/// `_IOR('X', 31, struct fsxattr)` and `_IOW('X', 32, struct fsxattr)`.
const FS_IOC_FSGETXATTR: libc::c_ulong = 0x801c_581f;
const FS_IOC_FSSETXATTR: libc::c_ulong = 0x401c_5820;
/// The xflag that makes `extsize` apply to a regular file.
const FS_XFLAG_EXTSIZE: u32 = 0x0000_0800;

/// What happened to a requested extent size hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtentHintOutcome {
    /// Set and read back.
    Applied { bytes: u32 },
    /// The filesystem has no extent size hints (or ignored this one): `errno` is what the
    /// set call returned, or 0 when it succeeded but the value did not read back.
    Unsupported { filesystem: String, errno: i32 },
    /// The filesystem refused this value or this file (EINVAL: not a multiple of the block
    /// size, or the file already has data).
    Refused { filesystem: String, errno: i32 },
}

impl ExtentHintOutcome {
    /// A one-line operator warning, or None when the hint was applied.
    pub fn warning(&self, hint_bytes: u64) -> Option<String> {
        match self {
            ExtentHintOutcome::Applied { .. } => None,
            ExtentHintOutcome::Unsupported { filesystem, errno } => Some(format!(
                "warning: extent_allocation_size_hint {hint_bytes} bytes not applied: {filesystem} \
                 has no extent size hints{}; running without it (XFS supports them)",
                errno_suffix(*errno)
            )),
            ExtentHintOutcome::Refused { filesystem, errno } => Some(format!(
                "warning: extent_allocation_size_hint {hint_bytes} bytes not applied: {filesystem} \
                 refused it{}; use a multiple of the filesystem block size, on a new file; \
                 running without it",
                errno_suffix(*errno)
            )),
        }
    }
}

fn errno_suffix(errno: i32) -> String {
    if errno == 0 {
        " (the value did not read back)".to_string()
    } else {
        format!(" ({})", crate::errno::errno_name(errno))
    }
}

/// The file's extent size hint in bytes (0: none), or the errno of FS_IOC_FSGETXATTR.
pub fn extent_size_hint(fd: RawFd) -> Result<u32, i32> {
    let mut attr = FsXattr::default();
    // SAFETY: FS_IOC_FSGETXATTR writes one struct fsxattr to the pointer.
    let rc = unsafe { libc::ioctl(fd, FS_IOC_FSGETXATTR as _, &mut attr as *mut FsXattr) };
    if rc != 0 {
        return Err(last_errno());
    }
    Ok(if attr.xflags & FS_XFLAG_EXTSIZE != 0 {
        attr.extsize
    } else {
        0
    })
}

/// Sets the extent size hint of the (empty) file `fd` to `bytes` and checks it reads back.
/// `filesystem` names the filesystem in the outcome.
pub fn set_extent_size_hint(fd: RawFd, bytes: u32, filesystem: &str) -> ExtentHintOutcome {
    let unsupported = |errno| ExtentHintOutcome::Unsupported {
        filesystem: filesystem.to_string(),
        errno,
    };
    let mut attr = FsXattr::default();
    // SAFETY: as in `extent_size_hint`.
    if unsafe { libc::ioctl(fd, FS_IOC_FSGETXATTR as _, &mut attr as *mut FsXattr) } != 0 {
        return unsupported(last_errno());
    }
    attr.xflags |= FS_XFLAG_EXTSIZE;
    attr.extsize = bytes;
    // SAFETY: FS_IOC_FSSETXATTR reads one struct fsxattr from the pointer.
    if unsafe { libc::ioctl(fd, FS_IOC_FSSETXATTR as _, &attr as *const FsXattr) } != 0 {
        let errno = last_errno();
        return match errno {
            libc::EINVAL => ExtentHintOutcome::Refused {
                filesystem: filesystem.to_string(),
                errno,
            },
            // ENOTTY/ENOIOCTLCMD: no such ioctl; EOPNOTSUPP: no EXTSIZE flag (ext4).
            _ => unsupported(errno),
        };
    }
    match extent_size_hint(fd) {
        Ok(read) if read == bytes => ExtentHintOutcome::Applied { bytes },
        Ok(_) => unsupported(0),
        Err(errno) => unsupported(errno),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioctl_numbers_match_the_struct() {
        assert_eq!(std::mem::size_of::<FsXattr>(), 28);
        // _IOC(dir, 'X', nr, size): size in bits 16..30.
        assert_eq!((FS_IOC_FSGETXATTR >> 16) & 0x3fff, 28);
        assert_eq!((FS_IOC_FSSETXATTR >> 16) & 0x3fff, 28);
        assert_eq!(FS_IOC_FSGETXATTR & 0xff, 31);
        assert_eq!(FS_IOC_FSSETXATTR & 0xff, 32);
    }

    #[test]
    fn warnings_name_the_filesystem() {
        let w = ExtentHintOutcome::Unsupported {
            filesystem: "ext4".into(),
            errno: libc::EOPNOTSUPP,
        }
        .warning(1 << 20)
        .expect("warning");
        assert!(w.contains("ext4") && w.contains("EOPNOTSUPP"), "{w}");
        assert!(ExtentHintOutcome::Applied { bytes: 4096 }
            .warning(4096)
            .is_none());
    }
}
