//! Output files (reports, io-properties.yaml, maps, plots): weir replaces one only when it
//! wrote it, or when the operator says to (`--force`).
//!
//! What weir writes carries the extended attribute [`OUTPUT_XATTR`]; a later run may replace
//! such a file. Anything else already at the path (the operator's own file, a symlink, a file
//! from another tool) is refused unless forced. Where the filesystem has no user extended
//! attributes, every existing file needs `--force`.

use std::ffi::CString;
use std::fmt;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The extended attribute on files and directories weir wrote as output.
pub const OUTPUT_XATTR: &str = "user.weir.output";
const OUTPUT_VALUE: &[u8] = b"weir";

/// An output path holds something weir did not write.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OutputRefused {
    pub path: PathBuf,
    /// What is there: "a file weir did not write", "a symbolic link", ...
    pub what: &'static str,
}

impl fmt::Display for OutputRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} already exists and is {}: weir does not replace it; choose another output path, \
             move it away, or pass --force to overwrite it",
            self.path.display(),
            self.what
        )
    }
}

impl std::error::Error for OutputRefused {}

/// Whether weir may write `path`: nothing there, or a file (or, for `dir_ok`, a directory)
/// weir wrote before; `force` allows anything but a directory in place of a file.
pub fn check_replace(path: &Path, force: bool, dir_ok: bool) -> Result<(), OutputRefused> {
    let refuse = |what| {
        Err(OutputRefused {
            path: path.to_path_buf(),
            what,
        })
    };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(_) => return Ok(()),
    };
    let kind = meta.file_type();
    if kind.is_dir() && !dir_ok {
        return refuse("a directory");
    }
    if kind.is_dir() && dir_is_empty(path) {
        return Ok(());
    }
    if force || is_marked(path) {
        return Ok(());
    }
    if kind.is_symlink() {
        return refuse("a symbolic link");
    }
    if kind.is_dir() {
        return refuse("a directory weir did not write (it is not empty)");
    }
    refuse("a file weir did not write")
}

/// Marks `path` (a file or directory weir just wrote) as weir's output. Best effort: a
/// filesystem without user extended attributes keeps no mark, and the next run then needs
/// `--force` to replace it.
pub fn mark(path: &Path) {
    let (Ok(cpath), Ok(name)) = (
        CString::new(path.as_os_str().as_bytes()),
        CString::new(OUTPUT_XATTR),
    ) else {
        return;
    };
    // SAFETY: NUL-terminated path and name, value pointer/length pair; lsetxattr does not
    // follow a symlink.
    unsafe {
        libc::lsetxattr(
            cpath.as_ptr(),
            name.as_ptr(),
            OUTPUT_VALUE.as_ptr().cast(),
            OUTPUT_VALUE.len(),
            0,
        );
    }
}

/// Writes `bytes` to `path` after [`check_replace`], then marks it.
pub fn write(path: &Path, bytes: &[u8], force: bool) -> Result<(), WriteError> {
    check_replace(path, force, false).map_err(WriteError::Refused)?;
    std::fs::write(path, bytes).map_err(WriteError::Io)?;
    mark(path);
    Ok(())
}

/// [`write()`] failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum WriteError {
    Refused(OutputRefused),
    Io(io::Error),
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Refused(e) => e.fmt(f),
            WriteError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for WriteError {}

fn is_marked(path: &Path) -> bool {
    let (Ok(cpath), Ok(name)) = (
        CString::new(path.as_os_str().as_bytes()),
        CString::new(OUTPUT_XATTR),
    ) else {
        return false;
    };
    let mut buf = [0u8; 16];
    // SAFETY: NUL-terminated path and name, buffer pointer/length pair.
    let n = unsafe {
        libc::lgetxattr(
            cpath.as_ptr(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    n >= 0 && &buf[..n as usize] == OUTPUT_VALUE
}

fn dir_is_empty(path: &Path) -> bool {
    std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_path_and_a_file_weir_wrote_may_be_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("report.html");
        write(&path, b"one", false).expect("new path");
        write(&path, b"two", false).expect("weir wrote it");
        assert_eq!(std::fs::read(&path).expect("read"), b"two");
    }

    #[test]
    fn the_operators_file_is_refused_unless_forced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("io-properties.yaml");
        std::fs::write(&path, b"mine").expect("user file");
        let e = write(&path, b"weir", false).expect_err("refused");
        let text = e.to_string();
        assert!(
            text.contains("--force") && text.contains("did not write"),
            "{text}"
        );
        assert_eq!(std::fs::read(&path).expect("read"), b"mine");
        write(&path, b"weir", true).expect("forced");
        assert_eq!(std::fs::read(&path).expect("read"), b"weir");
    }

    #[test]
    fn a_symlink_and_a_directory_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("target");
        std::fs::write(&target, b"mine").expect("target");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let e = check_replace(&link, false, false).expect_err("symlink");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).expect("mkdir");
        assert!(check_replace(&sub, true, false).is_err());
        // An empty directory may take a directory of outputs; a full one needs the mark.
        check_replace(&sub, false, true).expect("empty dir");
        std::fs::write(sub.join("x"), b"mine").expect("user file");
        assert!(check_replace(&sub, false, true).is_err());
        mark(&sub);
        check_replace(&sub, false, true).expect("weir's dir");
    }
}
