//! FIEMAP: where a file's bytes live on its filesystem's block device.

use std::os::fd::RawFd;

use serde::Serialize;

/// One extent: file bytes `[logical, logical + length)` live at device bytes
/// `[physical, physical + length)` of the filesystem's block device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Extent {
    pub logical_bytes: u64,
    pub physical_bytes: u64,
    pub length_bytes: u64,
    /// `FIEMAP_EXTENT_*` flags (0x800 unwritten, 0x4 delayed allocation, ...).
    pub flags: u32,
}

pub const FIEMAP_EXTENT_LAST: u32 = 0x1;
pub const FIEMAP_EXTENT_UNKNOWN: u32 = 0x2;
pub const FIEMAP_EXTENT_DELALLOC: u32 = 0x4;
pub const FIEMAP_EXTENT_UNWRITTEN: u32 = 0x800;
const FIEMAP_FLAG_SYNC: u32 = 0x1;

const BATCH: usize = 256;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RawExtent {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

#[repr(C)]
struct RawFiemap {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
    fm_extents: [RawExtent; BATCH],
}

const _: () = assert!(std::mem::size_of::<RawExtent>() == 56);

/// `_IOWR('f', 11, struct fiemap)`; the size field is the 32-byte header.
const FS_IOC_FIEMAP: libc::c_ulong = (3 << 30) | (32 << 16) | ((b'f' as libc::c_ulong) << 8) | 11;

/// All extents of the open file `fd`, in file order. Syncs the file first so delayed
/// allocations have their final places. Errors are errnos (EOPNOTSUPP: no FIEMAP here).
pub fn fiemap(fd: RawFd) -> Result<Vec<Extent>, i32> {
    let mut out = Vec::new();
    let mut start = 0u64;
    loop {
        let mut req = Box::new(RawFiemap {
            fm_start: start,
            fm_length: u64::MAX - start,
            fm_flags: FIEMAP_FLAG_SYNC,
            fm_mapped_extents: 0,
            fm_extent_count: BATCH as u32,
            fm_reserved: 0,
            fm_extents: [RawExtent::default(); BATCH],
        });
        // SAFETY: the struct has room for fm_extent_count extents, as the ioctl requires.
        let rc = unsafe { libc::ioctl(fd, FS_IOC_FIEMAP, &mut *req as *mut RawFiemap) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO));
        }
        let n = (req.fm_mapped_extents as usize).min(BATCH);
        if n == 0 {
            return Ok(out);
        }
        let mut last = false;
        for e in &req.fm_extents[..n] {
            out.push(Extent {
                logical_bytes: e.fe_logical,
                physical_bytes: e.fe_physical,
                length_bytes: e.fe_length,
                flags: e.fe_flags,
            });
            last |= e.fe_flags & FIEMAP_EXTENT_LAST != 0;
        }
        let tail = &req.fm_extents[n - 1];
        start = tail.fe_logical + tail.fe_length;
        if last || tail.fe_length == 0 {
            return Ok(out);
        }
    }
}

/// The device byte ranges holding file bytes `[logical, logical + len)`: one piece per extent
/// touched. Bytes in holes are skipped (the returned pieces then cover less than `len`).
pub fn map_range(extents: &[Extent], logical: u64, len: u64) -> Vec<(u64, u64)> {
    let end = logical + len;
    let first = extents.partition_point(|e| e.logical_bytes + e.length_bytes <= logical);
    let mut pieces = Vec::new();
    for e in &extents[first..] {
        if e.logical_bytes >= end {
            break;
        }
        let from = logical.max(e.logical_bytes);
        let to = end.min(e.logical_bytes + e.length_bytes);
        if from < to {
            pieces.push((e.physical_bytes + (from - e.logical_bytes), to - from));
        }
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(logical: u64, physical: u64, length: u64) -> Extent {
        Extent {
            logical_bytes: logical,
            physical_bytes: physical,
            length_bytes: length,
            flags: 0,
        }
    }

    #[test]
    fn maps_within_and_across_extents() {
        let extents = [ext(0, 1 << 20, 8192), ext(8192, 5 << 20, 8192)];
        assert_eq!(
            map_range(&extents, 4096, 2048),
            vec![((1 << 20) + 4096, 2048)]
        );
        assert_eq!(
            map_range(&extents, 4096, 8192),
            vec![((1 << 20) + 4096, 4096), (5 << 20, 4096)]
        );
        assert!(
            map_range(&extents, 1 << 30, 4096).is_empty(),
            "beyond EOF is a hole"
        );
    }

    #[test]
    fn fiemap_of_a_written_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 64 << 10]).expect("write");
        let f = std::fs::File::open(&path).expect("open");
        use std::os::fd::AsRawFd;
        match fiemap(f.as_raw_fd()) {
            Ok(extents) => {
                let total: u64 = extents.iter().map(|e| e.length_bytes).sum();
                assert!(total >= 64 << 10, "{extents:?}");
                assert!(extents
                    .last()
                    .is_some_and(|e| e.flags & FIEMAP_EXTENT_LAST != 0));
            }
            Err(libc::EOPNOTSUPP) => {
                eprintln!("SKIP fiemap_of_a_written_file: no FIEMAP on this filesystem")
            }
            Err(e) => panic!("fiemap: errno {e}"),
        }
    }
}
