//! Address levels for `weir align`, built from recorded machines.

use std::path::{Path, PathBuf};

use weir_probe::align::run::build_levels;
use weir_probe::align::LevelMap;
use weir_probe::{probe_path_in, SysRoot};

fn facts(name: &str) -> weir_probe::PathFacts {
    let root = SysRoot::at(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    );
    probe_path_in(Path::new("/ignored"), &root).expect("probe")
}

#[test]
fn md_chunk_is_counted_at_the_md_level() {
    let (levels, notes) = build_levels(&facts("md-raid0-4nvme"), None);
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(levels.len(), 1);
    assert_eq!(levels[0].device, "md0");
    assert_eq!(levels[0].chunk_bytes, Some(1 << 20));
    let (levels, _) = build_levels(&facts("md-raid0-4nvme"), Some(512 << 10));
    assert_eq!(levels[0].chunk_bytes, Some(512 << 10), "--chunk overrides");
}

#[test]
fn a_partition_adds_its_start() {
    let (levels, _) = build_levels(&facts("nvme-512-physical"), None);
    assert_eq!(levels.len(), 2);
    assert_eq!(
        (levels[0].device.as_str(), levels[1].device.as_str()),
        ("nvme0n1p1", "nvme0n1")
    );
    assert!(matches!(levels[1].map, LevelMap::Offset(o) if o == 2048 * 512));
}

#[test]
fn an_unreadable_backing_file_stops_the_levels_with_a_note() {
    let (levels, notes) = build_levels(&facts("loop-on-partition"), None);
    assert_eq!(
        levels.len(),
        1,
        "only loop0: the recorded backing file is not on this machine"
    );
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0].contains("/srv/images/data.img") && notes[0].contains("ENOENT"),
        "{notes:?}"
    );
    assert!(
        !notes[0].contains("run as root"),
        "not a permission problem: {notes:?}"
    );
}
