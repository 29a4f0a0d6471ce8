use super::*;

fn refused(text: &str) -> DiskFileError {
    SimDiskFile::parse(text).expect_err("must be refused")
}

#[test]
fn a_raid0_array_with_a_lying_sector() {
    let f = SimDiskFile::parse(
        "preset: nvme_like\nseed: 9\nread_iops: 800k\nwrite_bandwidth: 3G\nchannels: 8\n\
         fixed_latency: 30us\nphysical_sector: 4096\nreported_physical_sector: 512\n\
         raid0:\n  members: 4\n  chunk_size: 1M\nslowdowns:\n  - at: 1s\n    duration: 100ms\n    factor: 2.5\n",
    )
    .expect("valid");
    let c = f.config;
    assert_eq!(c.seed, 9);
    assert_eq!(c.read.iops, 800.0 * 1024.0);
    assert_eq!(c.write.bytes_per_sec, (3u64 << 30) as f64);
    assert_eq!((c.channels, c.fixed_latency_ns), (8, 30_000));
    assert_eq!(
        (c.physical_sector_bytes, c.reported_physical_sector_bytes),
        (4096, 512)
    );
    assert_eq!((c.raid0_members, c.raid0_chunk_bytes), (4, 1 << 20));
    assert_eq!(c.slowdowns[0].factor, 2.5);
    assert_eq!(c.slowdowns[0].at_ns, 1_000_000_000);
}

#[test]
fn the_reported_sector_follows_the_true_one_unless_given() {
    let c = SimDiskFile::parse("physical_sector: 8192\n")
        .expect("valid")
        .config;
    assert_eq!(c.reported_physical_sector_bytes, 8192);
}

#[test]
fn bad_values_name_their_place_range_and_unit() {
    let e = refused("channels: 0\n");
    assert_eq!((e.line, e.column), (Some(1), Some(11)), "{e}");
    assert!(e.message.contains("give 1 to 4096"), "{e}");
    let e = refused("seed: 1\nraid0:\n  members: 4\n  chunk_size: 1000\n");
    assert_eq!(e.line, Some(4), "{e}");
    assert!(e.message.contains("bytes"), "{e}");
    let e = refused("physical_sector: 3000\n");
    assert!(e.message.contains("power of two"), "{e}");
    let e = refused("read_iops: -5\n");
    assert!(e.message.contains("negative"), "{e}");
    let e = refused("read_iops: .inf\n");
    assert!(e.message.contains("out of range"), "{e}");
    let e = refused("fixed_latency: 40\n");
    assert!(e.message.contains("unit"), "{e}");
    let e = refused("jitter: 2\n");
    assert!(e.message.contains("0 to 0.9"), "{e}");
    let e = refused("raid0:\n  members: 2\n");
    assert!(e.message.contains("chunk_size"), "{e}");
    let e = refused("members: 2\n");
    assert!(e.message.contains("unknown field"), "{e}");
    let e = refused("preset: ssd\n");
    assert!(e.message.contains("nvme_like"), "{e}");
    let e = refused("");
    assert!(e.message.contains("empty"), "{e}");
    let e = refused("- a\n- b\n");
    assert!(e.line.is_some(), "{e}");
}

#[test]
fn checks_across_fields_point_at_the_key() {
    let e = refused("logical_sector: 4096\nphysical_sector: 512\n");
    assert_eq!((e.line, e.column), (Some(2), Some(1)), "{e}");
    let e = refused("physical_sector: 8192\nraid0:\n  members: 2\n  chunk_size: 4k\n");
    assert_eq!((e.line, e.column), (Some(4), Some(3)), "{e}");
}
