//! Extent size hints (io_tester's `extent_allocation_size_hint`) on real filesystems: applied
//! and read back with FS_IOC_FSGETXATTR on loop-mounted XFS, reported as unsupported (naming
//! the filesystem) on ext4, where the file is still prepared. Root-only; skips otherwise.

mod common;

use common::{root_mount, Mount};
use weir_engine::extent::extent_size_hint;
use weir_engine::{ExtentHintOutcome, Prepare, PrepareOptions, PreparedFile};

const MIB: u64 = 1 << 20;

fn hinted(mode: Prepare, size_bytes: u64, hint_bytes: u32) -> PrepareOptions {
    PrepareOptions {
        extent_size_hint_bytes: Some(hint_bytes),
        ..PrepareOptions::new(mode, size_bytes)
    }
}

#[test]
fn xfs_applies_the_hint_before_preparing() {
    let Some(m) = root_mount("extent size hint on XFS", |root, what| {
        Mount::xfs(root, what, 4096, 320)
    }) else {
        return;
    };
    for mode in [Prepare::Pretruncate, Prepare::Overwrite, Prepare::Fallocate] {
        let file = PreparedFile::create(&m.dir, "hint", 0, &hinted(mode, 8 * MIB, 1 << 20))
            .expect("prepare");
        assert_eq!(
            file.extent_hint(),
            Some(&ExtentHintOutcome::Applied { bytes: 1 << 20 }),
            "{mode}"
        );
        assert_eq!(
            extent_size_hint(file.fd()),
            Ok(1 << 20),
            "{mode}: read back"
        );
        let len = std::fs::metadata(file.path()).expect("meta").len();
        assert_eq!(len, 8 * MIB, "{mode}: prepared to size");
    }
    // Not a multiple of the 4 KiB block size: refused, said so, and the run goes on.
    let file = PreparedFile::create(&m.dir, "odd", 0, &hinted(Prepare::Pretruncate, MIB, 6000))
        .expect("prepared without the hint");
    let outcome = file.extent_hint().expect("outcome").clone();
    assert!(
        matches!(
            outcome,
            ExtentHintOutcome::Refused {
                errno: libc::EINVAL,
                ..
            }
        ),
        "{outcome:?}"
    );
    let warning = outcome.warning(6000).expect("warning");
    assert!(
        warning.contains("xfs") && warning.contains("block size"),
        "{warning}"
    );
    assert_eq!(extent_size_hint(file.fd()), Ok(0));
}

#[test]
fn xfs_reuses_a_kept_file_only_with_the_same_hint() {
    let Some(m) = root_mount("extent size hint and --keep-files on XFS", |root, what| {
        Mount::xfs(root, what, 4096, 320)
    }) else {
        return;
    };
    let mut opts = hinted(Prepare::Overwrite, 4 * MIB, 256 << 10);
    opts.keep = true;
    opts.reuse_existing = true;
    let first = PreparedFile::create(&m.dir, "keep", 0, &opts).expect("first");
    assert!(first.prefilled());
    drop(first);
    let again = PreparedFile::create(&m.dir, "keep", 0, &opts).expect("again");
    assert!(!again.prefilled(), "same hint: the kept file is reused");
    drop(again);
    // A different hint cannot be set on a file with data: the file is written anew.
    opts.extent_size_hint_bytes = Some(1 << 20);
    opts.keep = false;
    let other = PreparedFile::create(&m.dir, "keep", 0, &opts).expect("other");
    assert!(other.prefilled(), "another hint: prepared from scratch");
    assert_eq!(extent_size_hint(other.fd()), Ok(1 << 20));
}

#[test]
fn ext4_says_it_has_no_hints_and_prepares_anyway() {
    let Some(m) = root_mount("extent size hint on ext4", |root, what| {
        Mount::ext4(root, what, 32)
    }) else {
        return;
    };
    let file = PreparedFile::create(
        &m.dir,
        "e",
        0,
        &hinted(Prepare::Overwrite, 4 * MIB, 1 << 20),
    )
    .expect("prepared without the hint");
    let outcome = file.extent_hint().expect("outcome").clone();
    let ExtentHintOutcome::Unsupported { filesystem, errno } = &outcome else {
        panic!("ext4 should not take an extent size hint: {outcome:?}");
    };
    assert_eq!(filesystem, "ext4");
    assert!(
        [libc::EOPNOTSUPP, libc::ENOTTY, 0].contains(errno),
        "{outcome:?}"
    );
    let warning = outcome.warning(1 << 20).expect("warning");
    assert!(
        warning.contains("ext4") && warning.contains("not applied"),
        "{warning}"
    );
    assert!(file.prefilled());
    assert_eq!(std::fs::metadata(file.path()).expect("meta").len(), 4 * MIB);
}
