//! weir's own files in a directory it shares with the operator's.
//!
//! Every data file weir makes is created with `O_CREAT | O_EXCL | O_NOFOLLOW` (so it never
//! opens, truncates or writes a file that was already there, nor follows a symlink out of the
//! directory) and carries a mark: the extended attribute [`MARK_XATTR`], whose value says which
//! process uses it (`weir pid=<pid> start=<boot ticks>`) or that a run kept it on purpose
//! (`weir kept`, from `--keep-files`). weir reuses, truncates or removes an existing file only
//! when it carries the mark, and removes a file only while the path still names the inode it
//! opened.
//!
//! After a run killed with SIGKILL the mark still names the dead process: [`sweep`] finds such
//! files (the process is gone, or its pid now belongs to a process started at another time)
//! and removes them, returning their paths so the caller can say what it removed.
//!
//! On a filesystem without user extended attributes a file is still created exclusively and
//! removed by the run that made it, but cannot be marked: a later run will not reuse it and
//! a killed run's leftovers are not recognised.

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The extended attribute that marks a file as weir's.
pub const MARK_XATTR: &str = "user.weir.owner";

const MARK_PREFIX: &str = "weir ";
const KEPT: &str = "weir kept";

/// Who holds a marked file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// A weir process, identified by pid and start time (clock ticks since boot), uses it.
    Process { pid: u32, start_ticks: u64 },
    /// A run kept it (`--keep-files`); a later run may reuse it.
    Kept,
}

impl Holder {
    /// This process.
    pub fn current() -> Holder {
        let pid = std::process::id();
        Holder::Process {
            pid,
            start_ticks: start_ticks(pid).unwrap_or(0),
        }
    }

    /// Whether the holder is a running process (a kept file has none).
    pub fn is_live(self) -> bool {
        match self {
            Holder::Kept => false,
            Holder::Process { pid, start_ticks } => {
                start_ticks_of(pid).is_some_and(|now| now == start_ticks)
            }
        }
    }

    fn encode(self) -> String {
        match self {
            Holder::Kept => KEPT.to_string(),
            Holder::Process { pid, start_ticks } => {
                format!("{MARK_PREFIX}pid={pid} start={start_ticks}")
            }
        }
    }

    fn decode(value: &[u8]) -> Option<Holder> {
        let text = std::str::from_utf8(value).ok()?;
        if text == KEPT {
            return Some(Holder::Kept);
        }
        let rest = text.strip_prefix(MARK_PREFIX)?;
        let mut pid = None;
        let mut start = None;
        for field in rest.split(' ') {
            match field.split_once('=') {
                Some(("pid", v)) => pid = v.parse().ok(),
                Some(("start", v)) => start = v.parse().ok(),
                _ => {}
            }
        }
        Some(Holder::Process {
            pid: pid?,
            start_ticks: start?,
        })
    }
}

/// What is at a path weir wants for a file of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ownership {
    /// Nothing: weir may create it.
    Absent,
    /// A regular file carrying weir's mark.
    Weirs(Holder),
    /// Something weir must leave alone.
    Foreign(Foreign),
}

/// Why a path is not weir's to touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Foreign {
    /// A symbolic link (weir never follows one out of the directory).
    Symlink,
    /// A directory, device, socket or FIFO.
    NotRegular,
    /// A regular file without weir's mark: someone else's.
    Unmarked,
}

impl Foreign {
    /// Why, in a phrase: "is a symbolic link".
    pub fn describe(self) -> &'static str {
        match self {
            Foreign::Symlink => "is a symbolic link, which weir does not follow",
            Foreign::NotRegular => "is not a regular file",
            Foreign::Unmarked => "is a file weir did not create (it has no weir mark)",
        }
    }
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// What is at `path`, without following a symlink.
pub fn inspect(path: &Path) -> io::Result<Ownership> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Ownership::Absent),
        Err(e) => return Err(e),
    };
    if meta.file_type().is_symlink() {
        return Ok(Ownership::Foreign(Foreign::Symlink));
    }
    if !meta.file_type().is_file() {
        return Ok(Ownership::Foreign(Foreign::NotRegular));
    }
    Ok(match read_mark_path(path)? {
        Some(holder) => Ownership::Weirs(holder),
        None => Ownership::Foreign(Foreign::Unmarked),
    })
}

/// Creates `path` exclusively (`O_EXCL | O_NOFOLLOW`, mode 0644) and marks it as held by this
/// process. Returns the file and whether the mark took (false where the filesystem has no
/// user extended attributes). `EEXIST` when anything is already there.
pub fn create_new(path: &Path) -> io::Result<(File, bool)> {
    if let Some(file) = create_marked_tmpfile(path)? {
        return Ok((file, true));
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(0o644)
        .open(path)?;
    let marked = match set_mark(&file, Holder::current()) {
        Ok(()) => true,
        Err(e) if unsupported(&e) => false,
        Err(e) => {
            let _ = std::fs::remove_file(path);
            return Err(e);
        }
    };
    Ok((file, marked))
}

/// Creates the file unnamed (`O_TMPFILE`), marks it, and only then links it in at `path`
/// (`linkat`, which fails with `EEXIST` on anything there and never follows a symlink): a
/// file of weir's is never visible without its mark, even to a SIGKILL between the two steps.
/// None where the filesystem has no `O_TMPFILE` or no user extended attributes.
fn create_marked_tmpfile(path: &Path) -> io::Result<Option<File>> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let file = match OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
        .mode(0o644)
        .open(dir)
    {
        Ok(f) => f,
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
            ) =>
        {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    match set_mark(&file, Holder::current()) {
        Ok(()) => {}
        Err(e) if unsupported(&e) => return Ok(None),
        Err(e) => return Err(e),
    }
    let from = c_path(Path::new(&format!("/proc/self/fd/{}", file.as_raw_fd())))?;
    let to = c_path(path)?;
    // SAFETY: NUL-terminated paths; AT_FDCWD with absolute /proc path and the target path.
    let rc = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        // No /proc to name the open file by: fall back to create-then-mark.
        if e.raw_os_error() == Some(libc::ENOENT) && dir.exists() {
            return Ok(None);
        }
        return Err(e);
    }
    Ok(Some(file))
}

/// Opens an existing marked file (`O_NOFOLLOW`), checks the mark again on the open file and
/// takes it for this process. Refuses (`EPERM`) a file that is not weir's or is held by a live
/// weir process other than this one.
pub fn open_marked(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    let me = Holder::current();
    match read_mark(&file)? {
        Some(h) if h == me || !h.is_live() => {}
        _ => return Err(io::Error::from_raw_os_error(libc::EPERM)),
    }
    if !file.metadata()?.file_type().is_file() {
        return Err(io::Error::from_raw_os_error(libc::EPERM));
    }
    set_mark(&file, me)?;
    Ok(file)
}

/// A path weir may now use as its own file.
#[derive(Debug)]
pub enum Claimed {
    /// Nothing was there: weir created the file (empty) and marked it when it could.
    Created { file: File, marked: bool },
    /// A file weir marked before (kept, or left by a run that is gone), now held by this
    /// process: weir may reuse, truncate or remove it.
    Existing(File),
}

/// Why weir may not use a path for its file.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClaimError {
    /// Something weir did not create is there.
    Foreign { path: PathBuf, why: Foreign },
    /// Another weir process that is still running holds the file.
    InUse { path: PathBuf, pid: u32 },
    /// The system refused (permissions, read-only filesystem, ...).
    Io { path: PathBuf, error: io::Error },
}

impl ClaimError {
    /// The errno behind an `Io` error.
    pub fn errno(&self) -> Option<i32> {
        match self {
            ClaimError::Io { error, .. } => error.raw_os_error(),
            _ => None,
        }
    }
}

impl std::fmt::Display for ClaimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClaimError::Foreign { path, why } => write!(
                f,
                "{} {}: weir never truncates, writes or removes a file it did not create; \
                 move it away or pass another --dir",
                path.display(),
                why.describe()
            ),
            ClaimError::InUse { path, pid } => write!(
                f,
                "{} is in use by another weir run (pid {pid}); wait for it to end or pass \
                 another --dir",
                path.display()
            ),
            ClaimError::Io { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for ClaimError {}

/// Takes `path` for this process: creates it exclusively when nothing is there, takes over a
/// file weir marked (kept, or left by a dead run), and refuses anything else.
pub fn claim(path: &Path) -> Result<Claimed, ClaimError> {
    let io = |error: io::Error| ClaimError::Io {
        path: path.to_path_buf(),
        error,
    };
    // Twice at most: a file that appears between the look and the exclusive create is
    // looked at again.
    for _ in 0..2 {
        match inspect(path).map_err(io)? {
            Ownership::Absent => match create_new(path) {
                Ok((file, marked)) => return Ok(Claimed::Created { file, marked }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io(e)),
            },
            Ownership::Foreign(why) => {
                return Err(ClaimError::Foreign {
                    path: path.to_path_buf(),
                    why,
                })
            }
            Ownership::Weirs(holder) => {
                if let Holder::Process { pid, .. } = holder {
                    if holder != Holder::current() && holder.is_live() {
                        return Err(ClaimError::InUse {
                            path: path.to_path_buf(),
                            pid,
                        });
                    }
                }
                return match open_marked(path) {
                    Ok(file) => Ok(Claimed::Existing(file)),
                    Err(e) if e.raw_os_error() == Some(libc::EPERM) => Err(ClaimError::Foreign {
                        path: path.to_path_buf(),
                        why: Foreign::Unmarked,
                    }),
                    Err(e) if e.raw_os_error() == Some(libc::ELOOP) => Err(ClaimError::Foreign {
                        path: path.to_path_buf(),
                        why: Foreign::Symlink,
                    }),
                    Err(e) => Err(io(e)),
                };
            }
        }
    }
    Err(ClaimError::Foreign {
        path: path.to_path_buf(),
        why: Foreign::Unmarked,
    })
}

/// Marks the file at `path` (not following a symlink) as held by `holder`; for files whose
/// descriptor is already closed.
pub fn mark_path(path: &Path, holder: Holder) -> io::Result<()> {
    let name = c_path(Path::new(MARK_XATTR))?;
    let cpath = c_path(path)?;
    let value = holder.encode();
    // SAFETY: NUL-terminated path and name, value pointer/length pair.
    let rc = unsafe {
        libc::lsetxattr(
            cpath.as_ptr(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Removes `path` when it is weir's to remove: marked, and held by this process, kept, or
/// left by a run that is gone. Ok(false) when nothing was removed (absent, or not weir's).
pub fn remove_own(path: &Path) -> io::Result<bool> {
    match inspect(path)? {
        Ownership::Weirs(h) if h == Holder::current() || !h.is_live() => {
            std::fs::remove_file(path)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// Removes `path` when it carries the mark of this process (a file this run made or took).
pub fn remove_if_held(path: &Path) -> bool {
    inspect(path).is_ok_and(|o| o == Ownership::Weirs(Holder::current()))
        && std::fs::remove_file(path).is_ok()
}

/// Marks `file` as held by `holder`.
pub fn set_mark(file: &File, holder: Holder) -> io::Result<()> {
    let name = c_path(Path::new(MARK_XATTR))?;
    let value = holder.encode();
    // SAFETY: valid fd, NUL-terminated name, and a value pointer/length pair.
    let rc = unsafe {
        libc::fsetxattr(
            file.as_raw_fd(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The mark on an open file, if any.
pub fn read_mark(file: &File) -> io::Result<Option<Holder>> {
    let name = c_path(Path::new(MARK_XATTR))?;
    let mut buf = [0u8; 128];
    // SAFETY: valid fd, NUL-terminated name, buffer pointer/length pair.
    let n = unsafe {
        libc::fgetxattr(
            file.as_raw_fd(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    mark_result(n, &buf)
}

fn read_mark_path(path: &Path) -> io::Result<Option<Holder>> {
    let name = c_path(Path::new(MARK_XATTR))?;
    let cpath = c_path(path)?;
    let mut buf = [0u8; 128];
    // SAFETY: NUL-terminated path and name, buffer pointer/length pair; lgetxattr does not
    // follow a symlink.
    let n = unsafe {
        libc::lgetxattr(
            cpath.as_ptr(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    mark_result(n, &buf)
}

fn mark_result(n: isize, buf: &[u8]) -> io::Result<Option<Holder>> {
    if n < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENODATA) | Some(libc::ERANGE) => Ok(None),
            _ if unsupported(&e) => Ok(None),
            _ => Err(e),
        };
    }
    Ok(Holder::decode(&buf[..n as usize]))
}

fn unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOTSUP) | Some(libc::EPERM))
}

/// Whether `path` still names the inode `file` has open (not replaced or renamed away).
pub fn same_file(path: &Path, file: &File) -> bool {
    match (std::fs::symlink_metadata(path), file.metadata()) {
        (Ok(at_path), Ok(open)) => {
            at_path.file_type().is_file()
                && at_path.dev() == open.dev()
                && at_path.ino() == open.ino()
        }
        _ => false,
    }
}

/// Removes `path` only if it still names the inode `file` has open. Returns whether it did.
pub fn remove_if_same(path: &Path, file: &File) -> bool {
    same_file(path, file) && std::fs::remove_file(path).is_ok()
}

/// Removes what killed weir runs left in `dir`: regular files (not symlinks) whose mark names
/// a process that is gone. Kept files and the files of live runs stay. Returns the removed
/// paths, sorted.
pub fn sweep(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let Ok(entry) = entry else { continue };
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if !kind.is_file() {
            continue;
        }
        let path = entry.path();
        // The direct-I/O trial files (`.weir-dio-trial-<pid>-<n>`) live for one write and
        // carry no mark; the pid in the name tells whether their process is gone.
        if let Some(pid) = dio_trial_pid(&entry.file_name().to_string_lossy()) {
            if start_ticks_of(pid).is_none() && std::fs::remove_file(&path).is_ok() {
                removed.push(path);
            }
            continue;
        }
        let Ok(Some(holder)) = read_mark_path(&path) else {
            continue;
        };
        if holder == Holder::Kept || holder.is_live() {
            continue;
        }
        if std::fs::remove_file(&path).is_ok() {
            removed.push(path);
        }
    }
    removed.sort();
    Ok(removed)
}

/// The pid in a direct-I/O trial file's name, `.weir-dio-trial-<pid>-<n>`.
fn dio_trial_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(".weir-dio-trial-")?;
    let (pid, n) = rest.split_once('-')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// This process's start time in clock ticks since boot.
fn start_ticks(pid: u32) -> Option<u64> {
    start_ticks_of(pid)
}

/// Field 22 of `/proc/<pid>/stat` (after the parenthesised command name, which may hold
/// spaces): the process's start time; None when there is no such process.
fn start_ticks_of(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 1..];
    // After ")" come fields 3 onwards; the start time is field 22.
    after.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
#[path = "owned_tests.rs"]
mod tests;
