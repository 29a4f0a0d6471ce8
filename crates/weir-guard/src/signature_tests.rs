//! Synthetic images: each writes a format's magic where the format documents it, on an
//! otherwise zeroed image, and checks the probe names it at that offset and nothing else.

use super::*;

const MIB: usize = 1 << 20;

fn image(size: usize) -> Vec<u8> {
    vec![0u8; size]
}

fn put(img: &mut [u8], at: usize, bytes: &[u8]) {
    img[at..at + bytes.len()].copy_from_slice(bytes);
}

fn found(img: &[u8]) -> Vec<Signature> {
    probe(img, img.len() as u64).expect("probing memory cannot fail")
}

fn only(img: &[u8]) -> Signature {
    let all = found(img);
    assert_eq!(all.len(), 1, "expected one signature, found {all:?}");
    all.into_iter().next().expect("one")
}

#[test]
fn a_zeroed_device_holds_nothing() {
    assert!(found(&image(8 * MIB)).is_empty());
    assert!(found(&image(0)).is_empty());
    assert!(found(&image(700)).is_empty());
}

#[test]
fn random_bytes_hold_nothing() {
    // weir's own payload is incompressible noise: a device it wrote before must not look like
    // a filesystem.
    let mut img = image(8 * MIB);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for chunk in img.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        chunk.copy_from_slice(&x.to_le_bytes());
    }
    assert!(found(&img).is_empty(), "{:?}", found(&img));
}

fn ext_image(compat: u32, incompat: u32, ro_compat: u32) -> Vec<u8> {
    let mut img = image(4 * MIB);
    put(&mut img, 1024 + 0x38, &0xEF53u16.to_le_bytes());
    put(&mut img, 1024 + 0x5C, &compat.to_le_bytes());
    put(&mut img, 1024 + 0x60, &incompat.to_le_bytes());
    put(&mut img, 1024 + 0x64, &ro_compat.to_le_bytes());
    put(&mut img, 1024 + 0x78, b"userdata");
    img
}

#[test]
fn ext2_ext3_and_ext4_are_told_apart_by_their_features() {
    let s = only(&ext_image(0, 0x2, 0));
    assert_eq!(s.kind, SignatureKind::Ext2);
    assert_eq!(s.offset_bytes, 1080);
    assert_eq!(s.label.as_deref(), Some("userdata"));
    assert_eq!(only(&ext_image(0x4, 0x2, 0)).kind, SignatureKind::Ext3);
    assert_eq!(
        only(&ext_image(0x4, 0x2 | 0x40, 0)).kind,
        SignatureKind::Ext4
    );
    assert_eq!(only(&ext_image(0x4, 0x2, 0x400)).kind, SignatureKind::Ext4);
    let text = only(&ext_image(0x4, 0x2c0, 0)).to_string();
    assert_eq!(
        text,
        "an ext4 filesystem (ext4 magic at byte 1080, label \"userdata\")"
    );
}

#[test]
fn xfs_btrfs_f2fs_and_iso9660_are_found_at_their_superblocks() {
    let mut img = image(4 * MIB);
    put(&mut img, 0, b"XFSB");
    put(&mut img, 108, b"scratch");
    let s = only(&img);
    assert_eq!(
        (s.kind, s.offset_bytes, s.label.as_deref()),
        (SignatureKind::Xfs, 0, Some("scratch"))
    );

    let mut img = image(4 * MIB);
    put(&mut img, 0x10040, b"_BHRfS_M");
    put(&mut img, 0x1012b, b"pool");
    let s = only(&img);
    assert_eq!(
        (s.kind, s.offset_bytes, s.label.as_deref()),
        (SignatureKind::Btrfs, 0x10040, Some("pool"))
    );

    let mut img = image(4 * MIB);
    put(&mut img, 1024, &0xF2F5_2010u32.to_le_bytes());
    let s = only(&img);
    assert_eq!((s.kind, s.offset_bytes), (SignatureKind::F2fs, 1024));

    let mut img = image(4 * MIB);
    put(&mut img, 32769, b"CD001");
    assert_eq!(only(&img).kind, SignatureKind::Iso9660);
}

#[test]
fn fat_exfat_and_ntfs_boot_sectors_are_filesystems_not_partition_tables() {
    for (at, text, label_at) in [(82, b"FAT32", 71), (54, b"FAT16", 43), (54, b"FAT12", 43)] {
        let mut img = image(4 * MIB);
        put(&mut img, 0, &[0xEB, 0x58, 0x90]);
        put(&mut img, at, text);
        put(&mut img, label_at, b"CAMERA     ");
        put(&mut img, 510, &[0x55, 0xAA]);
        let s = only(&img);
        assert_eq!(
            s.kind,
            SignatureKind::Vfat,
            "{}",
            String::from_utf8_lossy(text)
        );
        assert_eq!(s.offset_bytes, at as u64);
        assert_eq!(s.label.as_deref(), Some("CAMERA"));
    }
    for (magic, kind) in [
        (b"EXFAT   ", SignatureKind::Exfat),
        (b"NTFS    ", SignatureKind::Ntfs),
    ] {
        let mut img = image(4 * MIB);
        put(&mut img, 3, magic);
        put(&mut img, 510, &[0x55, 0xAA]);
        let s = only(&img);
        assert_eq!((s.kind, s.offset_bytes), (kind, 3));
    }
}

#[test]
fn an_mbr_needs_the_boot_mark_and_valid_entries() {
    let mut img = image(4 * MIB);
    put(&mut img, 510, &[0x55, 0xAA]);
    // The boot mark alone, with no partition, is not a table.
    assert!(found(&img).is_empty());
    put(&mut img, 446, &[0x80, 0, 0, 0, 0x83]);
    put(&mut img, 462 + 4, &[0x82]);
    let s = only(&img);
    assert_eq!((s.kind, s.offset_bytes), (SignatureKind::Mbr, 510));
    assert_eq!(s.label.as_deref(), Some("partition types 0x83, 0x82"));
    // A status byte other than 0x00 or 0x80 is not an MBR.
    put(&mut img, 478, &[0x12]);
    assert!(found(&img).is_empty());
}

#[test]
fn gpt_is_found_at_lba1_for_both_sector_sizes_and_by_its_backup_header() {
    for lba1 in [512usize, 4096] {
        let mut img = image(4 * MIB);
        put(&mut img, lba1, b"EFI PART");
        let s = only(&img);
        assert_eq!((s.kind, s.offset_bytes), (SignatureKind::Gpt, lba1 as u64));
    }
    // A protective MBR in front of the header is reported too: both are the user's.
    let mut img = image(4 * MIB);
    put(&mut img, 446 + 4, &[0xEE]);
    put(&mut img, 510, &[0x55, 0xAA]);
    put(&mut img, 512, b"EFI PART");
    let kinds: Vec<_> = found(&img).iter().map(|s| s.kind).collect();
    assert_eq!(kinds, [SignatureKind::Mbr, SignatureKind::Gpt]);
    // Only the backup header left (the start of the disk wiped).
    let mut img = image(4 * MIB);
    put(&mut img, 4 * MIB - 512, b"EFI PART");
    let s = only(&img);
    assert_eq!(
        (s.kind, s.offset_bytes),
        (SignatureKind::Gpt, (4 * MIB - 512) as u64)
    );
}

#[test]
fn lvm2_labels_are_found_in_any_of_the_first_four_sectors() {
    for sector in 0..4 {
        let mut img = image(4 * MIB);
        put(&mut img, sector * 512, b"LABELONE");
        put(&mut img, sector * 512 + 24, b"LVM2 001");
        let s = only(&img);
        assert_eq!(
            (s.kind, s.offset_bytes),
            (SignatureKind::Lvm2Member, (sector * 512) as u64)
        );
    }
}

#[test]
fn md_superblocks_of_every_version_are_found() {
    let size = 4 * MIB + 12345;
    let v090 = (size & !(65536 - 1)) - 65536;
    let v10 = ((size / 512 - 16) & !7) * 512;
    for (at, version, kind) in [
        (v090, 0u32, SignatureKind::MdRaid090),
        (v10, 1, SignatureKind::MdRaid1),
        (0, 1, SignatureKind::MdRaid1),
        (4096, 1, SignatureKind::MdRaid1),
    ] {
        let mut img = image(size);
        put(&mut img, at, &MD_MAGIC.to_le_bytes());
        put(&mut img, at + 4, &version.to_le_bytes());
        let s = only(&img);
        assert_eq!((s.kind, s.offset_bytes), (kind, at as u64));
    }
    // A big-endian host's 0.90 superblock.
    let mut img = image(size);
    put(&mut img, v090, &MD_MAGIC.to_be_bytes());
    assert_eq!(only(&img).kind, SignatureKind::MdRaid090);
}

#[test]
fn luks1_luks2_and_a_lone_luks2_secondary_header_are_found() {
    let mut img = image(8 * MIB);
    put(&mut img, 0, b"LUKS\xba\xbe\x00\x01");
    assert_eq!(only(&img).kind, SignatureKind::Luks1);
    put(&mut img, 0, b"LUKS\xba\xbe\x00\x02");
    assert_eq!(only(&img).kind, SignatureKind::Luks2);
    let mut img = image(8 * MIB);
    put(&mut img, 0x4000, b"SKUL\xba\xbe\x00\x02");
    let s = only(&img);
    assert_eq!((s.kind, s.offset_bytes), (SignatureKind::Luks2, 0x4000));
}

#[test]
fn swap_and_hibernation_images_are_found_for_each_page_size() {
    for page in [4096usize, 65536] {
        let mut img = image(4 * MIB);
        put(&mut img, page - 10, b"SWAPSPACE2");
        put(&mut img, 1024 + 28, b"swap0");
        let s = only(&img);
        assert_eq!(
            (s.kind, s.offset_bytes, s.label.as_deref()),
            (SignatureKind::Swap, (page - 10) as u64, Some("swap0"))
        );
    }
    let mut img = image(4 * MIB);
    put(&mut img, 4086, b"S1SUSPEND\0");
    assert_eq!(only(&img).kind, SignatureKind::SwapSuspend);
}

#[test]
fn a_zfs_member_is_found_by_an_uberblock_in_any_label() {
    let size = 4 * MIB;
    let label_bytes = ZFS_LABEL_BYTES as usize;
    for label in [0, label_bytes, size - 2 * label_bytes, size - label_bytes] {
        let mut img = image(size);
        let at = label + 128 * 1024 + 5 * 1024;
        put(&mut img, at, &ZFS_UBERBLOCK_MAGIC.to_le_bytes());
        let s = only(&img);
        assert_eq!(
            (s.kind, s.offset_bytes),
            (SignatureKind::ZfsMember, at as u64)
        );
    }
    let mut img = image(size);
    put(&mut img, 128 * 1024, &ZFS_UBERBLOCK_MAGIC.to_be_bytes());
    assert_eq!(only(&img).kind, SignatureKind::ZfsMember);
}

#[test]
fn an_image_file_is_probed_like_a_device() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("disk.img");
    std::fs::write(&path, ext_image(0x4, 0x2c0, 0)).expect("write image");
    let all = probe_path(&path).expect("probe");
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].kind, SignatureKind::Ext4);
    let missing = probe_path(&dir.path().join("absent")).expect_err("absent");
    assert!(missing.to_string().contains("cannot open"), "{missing}");
}
