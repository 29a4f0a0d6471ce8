//! Signatures of what a block device may hold, read at the magic offsets the formats document
//! (the same places libblkid and wipefs look).
//!
//! A device that holds a filesystem, a partition table, an LVM physical volume, an md RAID
//! member, a LUKS container, a ZFS pool member or swap is someone's data: weir refuses to write
//! to it unless the operator says to destroy it. Each [`Signature`] names what was found and the
//! byte offset of its magic, so the refusal can say "an ext4 filesystem at byte 1080" and the
//! operator can check with `wipefs --no-act`.
//!
//! Only the bytes at those offsets are read (a few KiB in all, through the page cache), never
//! written.

use std::fmt;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, FileTypeExt};
use std::path::{Path, PathBuf};

/// What a signature says the device holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SignatureKind {
    Ext2,
    Ext3,
    Ext4,
    Xfs,
    Btrfs,
    F2fs,
    Vfat,
    Exfat,
    Ntfs,
    Iso9660,
    ZfsMember,
    Mbr,
    Gpt,
    Lvm2Member,
    MdRaid090,
    MdRaid1,
    Luks1,
    Luks2,
    Swap,
    /// A swap area holding a hibernation image.
    SwapSuspend,
}

impl SignatureKind {
    /// What an operator would call it, with its article: "an ext4 filesystem".
    pub fn describe(self) -> &'static str {
        match self {
            SignatureKind::Ext2 => "an ext2 filesystem",
            SignatureKind::Ext3 => "an ext3 filesystem",
            SignatureKind::Ext4 => "an ext4 filesystem",
            SignatureKind::Xfs => "an XFS filesystem",
            SignatureKind::Btrfs => "a btrfs filesystem",
            SignatureKind::F2fs => "an F2FS filesystem",
            SignatureKind::Vfat => "a FAT (vfat) filesystem",
            SignatureKind::Exfat => "an exFAT filesystem",
            SignatureKind::Ntfs => "an NTFS filesystem",
            SignatureKind::Iso9660 => "an ISO 9660 filesystem",
            SignatureKind::ZfsMember => "a ZFS pool member (vdev label)",
            SignatureKind::Mbr => "an MBR (DOS) partition table",
            SignatureKind::Gpt => "a GPT partition table",
            SignatureKind::Lvm2Member => "an LVM2 physical volume",
            SignatureKind::MdRaid090 => "an md RAID member (superblock 0.90)",
            SignatureKind::MdRaid1 => "an md RAID member (superblock 1.x)",
            SignatureKind::Luks1 => "a LUKS1 encrypted volume",
            SignatureKind::Luks2 => "a LUKS2 encrypted volume",
            SignatureKind::Swap => "a swap area",
            SignatureKind::SwapSuspend => "a swap area holding a hibernation image",
        }
    }

    /// The short name blkid and wipefs print as TYPE.
    pub fn blkid_type(self) -> &'static str {
        match self {
            SignatureKind::Ext2 => "ext2",
            SignatureKind::Ext3 => "ext3",
            SignatureKind::Ext4 => "ext4",
            SignatureKind::Xfs => "xfs",
            SignatureKind::Btrfs => "btrfs",
            SignatureKind::F2fs => "f2fs",
            SignatureKind::Vfat => "vfat",
            SignatureKind::Exfat => "exfat",
            SignatureKind::Ntfs => "ntfs",
            SignatureKind::Iso9660 => "iso9660",
            SignatureKind::ZfsMember => "zfs_member",
            SignatureKind::Mbr => "dos",
            SignatureKind::Gpt => "gpt",
            SignatureKind::Lvm2Member => "LVM2_member",
            SignatureKind::MdRaid090 | SignatureKind::MdRaid1 => "linux_raid_member",
            SignatureKind::Luks1 | SignatureKind::Luks2 => "crypto_LUKS",
            SignatureKind::Swap => "swap",
            SignatureKind::SwapSuspend => "swsuspend",
        }
    }
}

/// One thing found on a device: what, where its magic is, and its label when it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub kind: SignatureKind,
    /// The byte offset of the magic from the start of the device.
    pub offset_bytes: u64,
    pub label: Option<String>,
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} magic at byte {}",
            self.kind.describe(),
            self.kind.blkid_type(),
            self.offset_bytes
        )?;
        if let Some(label) = &self.label {
            write!(f, ", label {label:?}")?;
        }
        f.write_str(")")
    }
}

/// Positional reads of an image: a device, a file, or bytes in memory (tests).
pub trait ReadAt {
    /// Fills as much of `buf` as the image holds from `offset_bytes`; returns the bytes read
    /// (short at the end of the image).
    fn read_at(&self, offset_bytes: u64, buf: &mut [u8]) -> std::io::Result<usize>;
}

impl ReadAt for [u8] {
    fn read_at(&self, offset_bytes: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let Ok(start) = usize::try_from(offset_bytes) else {
            return Ok(0);
        };
        if start >= self.len() {
            return Ok(0);
        }
        let n = buf.len().min(self.len() - start);
        buf[..n].copy_from_slice(&self[start..start + n]);
        Ok(n)
    }
}

impl ReadAt for File {
    fn read_at(&self, offset_bytes: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match FileExt::read_at(self, &mut buf[done..], offset_bytes + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }
}

/// A device could not be read for signatures.
#[derive(Debug)]
#[non_exhaustive]
pub enum ProbeError {
    /// Opening, sizing or reading `path` failed.
    Io {
        path: PathBuf,
        op: &'static str,
        error: std::io::Error,
    },
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::Io { path, op, error } => write!(
                f,
                "cannot {op} {} to look for filesystems and partition tables on it: {error}; \
                 weir does not write to a device it cannot inspect (check the permissions, or \
                 that the device is healthy: dmesg)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for ProbeError {}

/// Reads the signatures on the block device (or image file) at `path`, read-only.
pub fn probe_path(path: &Path) -> Result<Vec<Signature>, ProbeError> {
    let io = |op: &'static str, error: std::io::Error| ProbeError::Io {
        path: path.to_path_buf(),
        op,
        error,
    };
    let file = File::open(path).map_err(|e| io("open", e))?;
    let meta = file.metadata().map_err(|e| io("inspect", e))?;
    let size_bytes = if meta.file_type().is_block_device() {
        device_size_bytes(&file).map_err(|e| io("read the size of", e))?
    } else {
        meta.len()
    };
    probe(&file, size_bytes).map_err(|e| io("read", e))
}

/// `_IOR(0x12, 114, size_t)`: a block device's size in bytes.
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;

fn device_size_bytes(file: &File) -> std::io::Result<u64> {
    let mut size_bytes: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which is valid.
    let rc = unsafe {
        libc::ioctl(
            file.as_raw_fd(),
            BLKGETSIZE64 as _,
            &mut size_bytes as *mut u64,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(size_bytes)
}

/// Every signature on an image of `size_bytes`, in offset order. Reads only.
pub fn probe<R: ReadAt + ?Sized>(image: &R, size_bytes: u64) -> std::io::Result<Vec<Signature>> {
    let mut p = Prober {
        image,
        size_bytes,
        found: Vec::new(),
    };
    p.boot_sector()?;
    p.ext()?;
    p.xfs()?;
    p.btrfs()?;
    p.f2fs()?;
    p.iso9660()?;
    p.gpt()?;
    p.lvm2()?;
    p.md()?;
    p.luks()?;
    p.swap()?;
    p.zfs()?;
    let mut found = p.found;
    found.sort_by_key(|s| s.offset_bytes);
    found.dedup_by_key(|s| (s.kind, s.offset_bytes));
    Ok(found)
}

struct Prober<'a, R: ReadAt + ?Sized> {
    image: &'a R,
    size_bytes: u64,
    found: Vec<Signature>,
}

const MD_MAGIC: u32 = 0xa92b_4efc;
const ZFS_UBERBLOCK_MAGIC: u64 = 0x00ba_b10c;
const ZFS_LABEL_BYTES: u64 = 256 * 1024;

impl<R: ReadAt + ?Sized> Prober<'_, R> {
    /// `len` bytes at `offset`, or None when the image ends before them.
    fn bytes(&self, offset: u64, len: usize) -> std::io::Result<Option<Vec<u8>>> {
        match offset.checked_add(len as u64) {
            Some(end) if end <= self.size_bytes => {}
            _ => return Ok(None),
        }
        let mut buf = vec![0u8; len];
        let n = self.image.read_at(offset, &mut buf)?;
        Ok((n == len).then_some(buf))
    }

    fn has(&self, offset: u64, magic: &[u8]) -> std::io::Result<bool> {
        Ok(self.bytes(offset, magic.len())?.as_deref() == Some(magic))
    }

    fn push(&mut self, kind: SignatureKind, offset_bytes: u64, label: Option<String>) {
        self.found.push(Signature {
            kind,
            offset_bytes,
            label,
        });
    }

    /// A label field: the text up to the first NUL, trimmed; None when empty.
    fn label(&self, offset: u64, len: usize) -> std::io::Result<Option<String>> {
        Ok(self.bytes(offset, len)?.and_then(|b| text_label(&b)))
    }

    /// Sector 0: FAT, exFAT and NTFS boot sectors, else an MBR partition table.
    fn boot_sector(&mut self) -> std::io::Result<()> {
        let Some(s) = self.bytes(0, 512)? else {
            return Ok(());
        };
        if &s[3..11] == b"NTFS    " {
            self.push(SignatureKind::Ntfs, 3, None);
            return Ok(());
        }
        if &s[3..11] == b"EXFAT   " {
            self.push(SignatureKind::Exfat, 3, None);
            return Ok(());
        }
        let boot_mark = s[510] == 0x55 && s[511] == 0xAA;
        // The FAT type string lives in the extended BPB: at 54 for FAT12/16, at 82 for FAT32.
        if &s[82..87] == b"FAT32" {
            self.push(SignatureKind::Vfat, 82, text_label(&s[71..82]));
            return Ok(());
        }
        if matches!(&s[54..59], b"FAT12" | b"FAT16" | b"FAT  ") {
            self.push(SignatureKind::Vfat, 54, text_label(&s[43..54]));
            return Ok(());
        }
        if !boot_mark {
            return Ok(());
        }
        // An MBR: four 16-byte entries from byte 446, each a status of 0x00 or 0x80 and a type.
        let entries: Vec<&[u8]> = (0..4).map(|i| &s[446 + 16 * i..462 + 16 * i]).collect();
        let valid = entries.iter().all(|e| e[0] == 0 || e[0] == 0x80);
        let types: Vec<u8> = entries.iter().map(|e| e[4]).filter(|t| *t != 0).collect();
        if valid && !types.is_empty() {
            let listed = types
                .iter()
                .map(|t| format!("0x{t:02x}"))
                .collect::<Vec<_>>()
                .join(", ");
            self.push(
                SignatureKind::Mbr,
                510,
                Some(format!("partition types {listed}")),
            );
        }
        Ok(())
    }

    /// ext2/3/4: the superblock at 1024, magic 0xEF53 at its byte 0x38; features tell which.
    fn ext(&mut self) -> std::io::Result<()> {
        let Some(sb) = self.bytes(1024, 256)? else {
            return Ok(());
        };
        if u16::from_le_bytes([sb[0x38], sb[0x39]]) != 0xEF53 {
            return Ok(());
        }
        let compat = le32(&sb[0x5C..]);
        let incompat = le32(&sb[0x60..]);
        let ro_compat = le32(&sb[0x64..]);
        // ext4-only: extents, 64bit, flex_bg (incompat); huge_file, gdt_csum, dir_nlink,
        // extra_isize, metadata_csum (ro_compat). A journal without them is ext3.
        let kind = if incompat & (0x40 | 0x80 | 0x200) != 0
            || ro_compat & (0x8 | 0x10 | 0x20 | 0x40 | 0x400) != 0
        {
            SignatureKind::Ext4
        } else if compat & 0x4 != 0 {
            SignatureKind::Ext3
        } else {
            SignatureKind::Ext2
        };
        let label = text_label(&sb[0x78..0x88]);
        self.push(kind, 1024 + 0x38, label);
        Ok(())
    }

    fn xfs(&mut self) -> std::io::Result<()> {
        if self.has(0, b"XFSB")? {
            let label = self.label(108, 12)?;
            self.push(SignatureKind::Xfs, 0, label);
        }
        Ok(())
    }

    fn btrfs(&mut self) -> std::io::Result<()> {
        const SB: u64 = 0x10000;
        if self.has(SB + 0x40, b"_BHRfS_M")? {
            let label = self.label(SB + 0x12b, 256)?;
            self.push(SignatureKind::Btrfs, SB + 0x40, label);
        }
        Ok(())
    }

    fn f2fs(&mut self) -> std::io::Result<()> {
        if self.has(1024, &0xF2F5_2010u32.to_le_bytes())? {
            self.push(SignatureKind::F2fs, 1024, None);
        }
        Ok(())
    }

    fn iso9660(&mut self) -> std::io::Result<()> {
        if self.has(32769, b"CD001")? {
            let label = self.label(32808, 32)?;
            self.push(SignatureKind::Iso9660, 32769, label);
        }
        Ok(())
    }

    /// "EFI PART" at LBA 1 (512- or 4096-byte sectors), or the backup header at the last LBA.
    fn gpt(&mut self) -> std::io::Result<()> {
        for sector in [512u64, 4096] {
            if self.has(sector, b"EFI PART")? {
                self.push(SignatureKind::Gpt, sector, None);
                return Ok(());
            }
        }
        for sector in [512u64, 4096] {
            if let Some(at) = self.size_bytes.checked_sub(sector) {
                if at >= sector && self.has(at, b"EFI PART")? {
                    self.push(SignatureKind::Gpt, at, Some("backup header".into()));
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// "LABELONE" in one of the first four sectors, with "LVM2 001" 24 bytes in.
    fn lvm2(&mut self) -> std::io::Result<()> {
        for sector in 0..4u64 {
            let at = sector * 512;
            if self.has(at, b"LABELONE")? && self.has(at + 24, b"LVM2 001")? {
                self.push(SignatureKind::Lvm2Member, at, None);
                return Ok(());
            }
        }
        Ok(())
    }

    /// md superblocks: 0.90 in the last 64 KiB-aligned 64 KiB; 1.0 8 KiB from the end (4 KiB
    /// aligned), 1.1 at 0, 1.2 at 4 KiB. The magic is stored in the creating host's order.
    fn md(&mut self) -> std::io::Result<()> {
        let size = self.size_bytes;
        let md_at = |s: &Self, at: u64| -> std::io::Result<Option<u32>> {
            Ok(s.bytes(at, 8)?.and_then(|b| {
                let le = le32(&b);
                let be = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                match (le == MD_MAGIC, be == MD_MAGIC) {
                    (true, _) => Some(le32(&b[4..])),
                    (_, true) => Some(u32::from_be_bytes([b[4], b[5], b[6], b[7]])),
                    _ => None,
                }
            }))
        };
        if size >= 128 * 1024 {
            let at = (size & !(65536 - 1)) - 65536;
            if md_at(self, at)? == Some(0) {
                self.push(SignatureKind::MdRaid090, at, None);
            }
        }
        let mut v1 = vec![0u64, 4096];
        if size >= 16 * 512 {
            v1.push(((size / 512 - 16) & !7) * 512);
        }
        for at in v1 {
            if md_at(self, at)? == Some(1) {
                let label = self.label(at + 32, 32)?;
                self.push(SignatureKind::MdRaid1, at, label);
            }
        }
        Ok(())
    }

    /// LUKS headers: "LUKS\xba\xbe" at 0 (the version follows, big endian), and LUKS2's
    /// secondary header "SKUL\xba\xbe" at one of its documented offsets.
    fn luks(&mut self) -> std::io::Result<()> {
        if let Some(h) = self.bytes(0, 8)? {
            if &h[..6] == b"LUKS\xba\xbe" {
                let kind = match u16::from_be_bytes([h[6], h[7]]) {
                    2 => SignatureKind::Luks2,
                    _ => SignatureKind::Luks1,
                };
                self.push(kind, 0, None);
                return Ok(());
            }
        }
        for kib in [16u64, 32, 64, 128, 256, 512, 1024, 2048, 4096] {
            let at = kib * 1024;
            if self.has(at, b"SKUL\xba\xbe")? {
                self.push(SignatureKind::Luks2, at, Some("secondary header".into()));
                return Ok(());
            }
        }
        Ok(())
    }

    /// Swap: the magic in the last 10 bytes of the first page, for each page size Linux has.
    fn swap(&mut self) -> std::io::Result<()> {
        for page in [4096u64, 8192, 16384, 32768, 65536] {
            let Some(m) = self.bytes(page - 10, 10)? else {
                continue;
            };
            let kind = match &m[..] {
                b"SWAPSPACE2" | b"SWAP-SPACE" => SignatureKind::Swap,
                _ if m.starts_with(b"S1SUSPEND")
                    || m.starts_with(b"S2SUSPEND")
                    || m.starts_with(b"ULSUSPEND")
                    || &m[..] == b"LINHIB0001" =>
                {
                    SignatureKind::SwapSuspend
                }
                _ => continue,
            };
            // The version 1 header: label (16 bytes) after bootbits, version, last page,
            // bad-page count and UUID.
            let label = self.label(1024 + 12 + 16, 16)?;
            self.push(kind, page - 10, label);
            return Ok(());
        }
        Ok(())
    }

    /// ZFS: four 256 KiB vdev labels (two at the start, two at the end), each with an
    /// uberblock ring in its second half; any uberblock's magic marks a pool member.
    fn zfs(&mut self) -> std::io::Result<()> {
        let end = self.size_bytes & !(ZFS_LABEL_BYTES - 1);
        let mut labels = vec![0, ZFS_LABEL_BYTES];
        if end >= 4 * ZFS_LABEL_BYTES {
            labels.extend([end - 2 * ZFS_LABEL_BYTES, end - ZFS_LABEL_BYTES]);
        }
        for label in labels {
            let ring = label + 128 * 1024;
            let Some(bytes) = self.bytes(ring, 128 * 1024)? else {
                continue;
            };
            for (i, slot) in bytes.chunks_exact(1024).enumerate() {
                let v = u64::from_le_bytes(slot[..8].try_into().unwrap_or([0; 8]));
                if v == ZFS_UBERBLOCK_MAGIC || v.swap_bytes() == ZFS_UBERBLOCK_MAGIC {
                    self.push(SignatureKind::ZfsMember, ring + (i as u64) * 1024, None);
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// Printable text up to the first NUL, trimmed; None when nothing is left.
fn text_label(bytes: &[u8]) -> Option<String> {
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    let text: String = String::from_utf8_lossy(&bytes[..end])
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

#[cfg(test)]
#[path = "signature_tests.rs"]
mod tests;
