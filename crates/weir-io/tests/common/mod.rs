//! What the weir-io test files share.

use std::path::PathBuf;

/// A directory on a real filesystem (O_DIRECT needs one; /tmp may be tmpfs).
pub fn real_dir() -> tempfile::TempDir {
    let base = PathBuf::from("/var/tmp");
    let base = if base.is_dir() {
        base
    } else {
        std::env::temp_dir()
    };
    tempfile::tempdir_in(base).expect("temp dir")
}
