//! Facts only syscalls on the path can give: statfs (type, block size, space), stat (device
//! number), statx (direct-I/O alignment) and, on XFS, the geometry ioctl (sector size,
//! allocation groups, stripe unit and width).
//!
//! They are gathered into an [`FsSnapshot`], which is plain serializable data so that a fixture
//! tree can supply one as `fs.json` in place of a live filesystem.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::ProbeError;

pub const XFS_MAGIC: u64 = 0x5846_5342;
pub const EXT4_MAGIC: u64 = 0xEF53;
pub const TMPFS_MAGIC: u64 = 0x0102_1994;
pub const BTRFS_MAGIC: u64 = 0x9123_683E;
pub const NFS_MAGIC: u64 = 0x6969;
pub const OVERLAYFS_MAGIC: u64 = 0x794C_7630;
pub const F2FS_MAGIC: u64 = 0xF2F5_2010;
pub const ZFS_MAGIC: u64 = 0x2FC1_2FC1;
pub const FUSE_MAGIC: u64 = 0x6573_5546;

/// The filesystem name for a statfs `f_type`, or `None` for one weir does not know.
pub fn fs_name(magic: u64) -> Option<&'static str> {
    Some(match magic {
        XFS_MAGIC => "xfs",
        EXT4_MAGIC => "ext4",
        TMPFS_MAGIC => "tmpfs",
        BTRFS_MAGIC => "btrfs",
        NFS_MAGIC => "nfs",
        OVERLAYFS_MAGIC => "overlay",
        F2FS_MAGIC => "f2fs",
        ZFS_MAGIC => "zfs",
        FUSE_MAGIC => "fuse",
        _ => return None,
    })
}

/// The direct-I/O alignment the filesystem reports for a regular file in the directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DioFacts {
    pub mem_align_bytes: u32,
    pub offset_align_bytes: u32,
    /// `statx` when the filesystem answered STATX_DIOALIGN (Linux 6.1+), else the fallback
    /// that answered (`BLKSSZGET`, `sysfs`, `default`).
    pub source: String,
}

/// XFS geometry from `XFS_IOC_FSGEOMETRY` (what `xfs_info` prints).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct XfsGeometry {
    pub block_bytes: u32,
    pub sector_bytes: u32,
    pub ag_count: u32,
    pub ag_blocks: u32,
    /// Stripe unit and width in filesystem blocks (0 when not set).
    pub sunit_blocks: u32,
    pub swidth_blocks: u32,
    pub log_sector_bytes: u32,
}

impl XfsGeometry {
    pub fn sunit_bytes(&self) -> u64 {
        u64::from(self.sunit_blocks) * u64::from(self.block_bytes)
    }
    pub fn swidth_bytes(&self) -> u64 {
        u64::from(self.swidth_blocks) * u64::from(self.block_bytes)
    }
}

/// Everything the syscalls said about a directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FsSnapshot {
    /// The canonical path probed.
    pub path: String,
    pub dev_major: u32,
    pub dev_minor: u32,
    /// statfs `f_type`.
    pub fs_magic: u64,
    /// statfs `f_bsize`: the filesystem block size.
    pub block_bytes: u64,
    pub total_bytes: u64,
    pub free_bytes: u64,
    /// Free space available to unprivileged users.
    pub avail_bytes: u64,
    pub dio: Option<DioFacts>,
    /// Why `dio` is missing (no permission to create a probe file, ...).
    pub dio_note: Option<String>,
    pub xfs: Option<XfsGeometry>,
}

/// Opens `dir` and takes the snapshot. Errors only when the path itself is unusable (missing,
/// not a directory, no permission to open it); anything narrower becomes a note.
pub fn snapshot(dir: &Path) -> Result<FsSnapshot, ProbeError> {
    let meta = std::fs::metadata(dir).map_err(|e| ProbeError::from_io(dir, &e))?;
    if !meta.is_dir() {
        return Err(ProbeError::NotADirectory(dir.display().to_string()));
    }
    let canonical = std::fs::canonicalize(dir).map_err(|e| ProbeError::from_io(dir, &e))?;
    let file = std::fs::File::open(&canonical).map_err(|e| ProbeError::from_io(dir, &e))?;
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: statfs is plain data; all-zero is valid; the fd is open for the call.
    let mut sfs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid fd and out-pointer.
    if unsafe { libc::fstatfs(fd, &mut sfs) } != 0 {
        return Err(ProbeError::from_io(dir, &std::io::Error::last_os_error()));
    }
    use std::os::unix::fs::MetadataExt;
    let dev = meta.dev();
    let frag = sfs.f_frsize as u64;
    let (dio, dio_note) = match probe_dio(&canonical) {
        Ok(d) => (Some(d), None),
        Err(note) => (None, Some(note)),
    };
    let magic = sfs.f_type as u64;
    Ok(FsSnapshot {
        path: canonical.display().to_string(),
        dev_major: libc::major(dev),
        dev_minor: libc::minor(dev),
        fs_magic: magic,
        block_bytes: sfs.f_bsize as u64,
        total_bytes: sfs.f_blocks as u64 * frag,
        free_bytes: sfs.f_bfree as u64 * frag,
        avail_bytes: sfs.f_bavail as u64 * frag,
        dio,
        dio_note,
        xfs: if magic == XFS_MAGIC {
            xfs_geometry(fd)
        } else {
            None
        },
    })
}

/// statx DIOALIGN is answered for regular files only, so create an unlinked one (O_TMPFILE,
/// or a named file removed at once where O_TMPFILE is unsupported) and ask the engine's
/// alignment discovery about it.
fn probe_dio(dir: &Path) -> Result<DioFacts, String> {
    let file = open_probe_file(dir)?;
    use std::os::fd::AsRawFd;
    let a = weir_engine::dio_alignment_fd(file.as_raw_fd());
    Ok(DioFacts {
        mem_align_bytes: a.mem_align_bytes,
        offset_align_bytes: a.offset_align_bytes,
        source: a.source.as_str().to_string(),
    })
}

/// An anonymous (already unlinked) file in `dir`, or a message saying why there is none.
fn open_probe_file(dir: &Path) -> Result<std::fs::File, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .mode(0o600)
        .open(dir);
    match tmp {
        Ok(f) => return Ok(f),
        Err(e)
            if e.raw_os_error() == Some(libc::EACCES) || e.raw_os_error() == Some(libc::EROFS) =>
        {
            return Err(format!(
                "cannot create a probe file in {}: {} ({})",
                dir.display(),
                weir_engine::errno_name(e.raw_os_error().unwrap_or(0)),
                e
            ));
        }
        Err(_) => {} // EOPNOTSUPP/EISDIR: no O_TMPFILE here; use a named file.
    }
    let name = dir.join(format!(".weir-probe-{}", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&name)
        .map_err(|e| format!("cannot create {}: {e}", name.display()))?;
    let _ = std::fs::remove_file(&name);
    Ok(f)
}

/// `struct xfs_fsop_geom` (v5, 256 bytes) from `xfs_fs.h`.
#[repr(C)]
struct XfsFsopGeom {
    blocksize: u32,
    rtextsize: u32,
    agblocks: u32,
    agcount: u32,
    logblocks: u32,
    sectsize: u32,
    inodesize: u32,
    imaxpct: u32,
    datablocks: u64,
    rtblocks: u64,
    rtextents: u64,
    logstart: u64,
    uuid: [u8; 16],
    sunit: u32,
    swidth: u32,
    version: i32,
    flags: u32,
    logsectsize: u32,
    rtsectsize: u32,
    dirblocksize: u32,
    logsunit: u32,
    sick: u32,
    checked: u32,
    reserved: [u64; 17],
}

const _: () = assert!(std::mem::size_of::<XfsFsopGeom>() == 256);

/// `_IOR('X', 126, struct xfs_fsop_geom)`.
const XFS_IOC_FSGEOMETRY: libc::c_ulong =
    (2 << 30) | (256 << 16) | ((b'X' as libc::c_ulong) << 8) | 126;

fn xfs_geometry(fd: i32) -> Option<XfsGeometry> {
    // SAFETY: plain data; zero is valid.
    let mut g: XfsFsopGeom = unsafe { std::mem::zeroed() };
    // SAFETY: the ioctl writes one struct of exactly this size to the pointer.
    let rc = unsafe { libc::ioctl(fd, XFS_IOC_FSGEOMETRY, &mut g as *mut XfsFsopGeom) };
    if rc != 0 {
        return None;
    }
    Some(XfsGeometry {
        block_bytes: g.blocksize,
        sector_bytes: g.sectsize,
        ag_count: g.agcount,
        ag_blocks: g.agblocks,
        sunit_blocks: g.sunit,
        swidth_blocks: g.swidth,
        log_sector_bytes: g.logsectsize,
    })
}

/// A path as a C string (for syscalls); paths with NUL bytes cannot exist on Linux.
pub fn c_path(p: &Path) -> Option<CString> {
    CString::new(p.as_os_str().as_bytes()).ok()
}
