//! Every errno the engine can meet, by name, with a plain explanation.
//!
//! Operator-facing messages use [`describe_errno`] so a failure reads the same wherever it
//! happens ("ENOSPC: no space left on the device or filesystem").

/// The symbolic name of an errno value (`"ENOSPC"`), or `"E?"` for one weir does not know.
pub fn errno_name(errno: i32) -> &'static str {
    match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::ENODEV => "ENODEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::EMFILE => "EMFILE",
        libc::ENFILE => "ENFILE",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::ESPIPE => "ESPIPE",
        libc::EROFS => "EROFS",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::ENOSYS => "ENOSYS",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ETIME => "ETIME",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::ECANCELED => "ECANCELED",
        libc::EOVERFLOW => "EOVERFLOW",
        libc::EDQUOT => "EDQUOT",
        libc::ELOOP => "ELOOP",
        _ => "E?",
    }
}

/// What an errno means for weir's kind of I/O, in a phrase.
pub fn errno_meaning(errno: i32) -> &'static str {
    match errno {
        libc::EPERM => "operation not permitted (missing privilege, or an immutable file)",
        libc::ENOENT => "no such file or directory",
        libc::EINTR => "interrupted by a signal",
        libc::EIO => "input/output error reported by the device or filesystem (check dmesg)",
        libc::ENXIO => "no such device or address",
        libc::EBADF => "bad file descriptor (a bug in weir)",
        libc::EAGAIN => "resource temporarily unavailable (or would block under RWF_NOWAIT)",
        libc::ENOMEM => "out of memory (or locked-memory limit reached)",
        libc::EACCES => "permission denied",
        libc::EFAULT => "bad buffer address (a bug in weir)",
        libc::EBUSY => "device or resource busy",
        libc::EEXIST => "file exists",
        libc::ENODEV => "no such device",
        libc::ENOTDIR => "a path component is not a directory",
        libc::EISDIR => "is a directory",
        libc::EINVAL => {
            "invalid argument (often: direct I/O not supported here, or a misaligned offset, \
             length or buffer)"
        }
        libc::EMFILE => "too many open files in this process (raise ulimit -n)",
        libc::ENFILE => "too many open files in the system",
        libc::EFBIG => "file too large for this filesystem",
        libc::ENOSPC => "no space left on the device or filesystem",
        libc::ESPIPE => "illegal seek (not a file or block device)",
        libc::EROFS => "read-only filesystem",
        libc::ENAMETOOLONG => "file name too long",
        libc::ENOSYS => "system call not implemented by this kernel",
        libc::EOPNOTSUPP => "operation not supported by this kernel or filesystem",
        libc::ETIME | libc::ETIMEDOUT => "timed out",
        libc::ECANCELED => "operation canceled",
        libc::EOVERFLOW => "value too large (offset beyond what the file supports)",
        libc::EDQUOT => "disk quota exceeded",
        libc::ELOOP => "too many symbolic links",
        _ => "unknown error",
    }
}

/// `"ENOSPC (no space left on the device or filesystem)"`; unknown values keep their number.
pub fn describe_errno(errno: i32) -> String {
    let name = errno_name(errno);
    if name == "E?" {
        format!(
            "errno {errno} ({})",
            std::io::Error::from_raw_os_error(errno)
        )
    } else {
        format!("{name} ({})", errno_meaning(errno))
    }
}

/// The errno of the last failed libc call (EIO when the OS gave none, which it always does).
pub(crate) fn last_errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_errnos_roundtrip() {
        for e in [
            libc::ENOENT,
            libc::EACCES,
            libc::EROFS,
            libc::ENOSPC,
            libc::EDQUOT,
        ] {
            assert_ne!(errno_name(e), "E?");
            assert!(describe_errno(e).starts_with(errno_name(e)));
        }
        assert!(describe_errno(libc::ENOSPC).contains("no space"));
        assert!(describe_errno(9999).starts_with("errno 9999"));
    }
}
