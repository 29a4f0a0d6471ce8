//! The submission entry of an op: a registered file goes out by its table index, a buffer
//! inside a registered pool as READ_FIXED/WRITE_FIXED, a file that punts with IOSQE_ASYNC
//! when the ring chose that.

use std::os::fd::RawFd;

use io_uring::{opcode, squeue, types};
use weir_model::device::{Direction, IoOp};

use super::UringDevice;

#[derive(Clone, Copy)]
pub(super) struct RegisteredFile {
    pub(super) fd: RawFd,
    /// Its index in the ring's file table.
    pub(super) index: u32,
    /// Send its requests with IOSQE_ASYNC (it refuses non-blocking requests).
    pub(super) force_async: bool,
}

#[derive(Clone, Copy)]
pub(super) struct FixedRegion {
    pub(super) base: usize,
    pub(super) buffer_bytes: usize,
    pub(super) count: usize,
    /// The ring's buffer index of this pool's first buffer.
    pub(super) first_index: usize,
}

impl UringDevice {
    /// The registered buffer index holding `[buf, buf + len)`, if any.
    pub(super) fn fixed_index(&self, buf: *mut u8, len: u32) -> Option<u16> {
        self.fixed.iter().find_map(|region| {
            let addr = (buf as usize).checked_sub(region.base)?;
            let index = addr / region.buffer_bytes;
            let within = addr % region.buffer_bytes + len as usize <= region.buffer_bytes;
            (index < region.count && within).then_some((region.first_index + index) as u16)
        })
    }

    pub(super) fn entry(&self, op: &IoOp) -> squeue::Entry {
        // A registered file goes out as its table index with IOSQE_FIXED_FILE: the same
        // submission entry `types::Fixed` builds.
        let registered = self.files.iter().find(|f| f.fd == op.fd);
        let fd = types::Fd(registered.map_or(op.fd, |f| f.index as RawFd));
        let entry = self.entry_on(fd, op);
        match registered {
            Some(f) if f.force_async => {
                entry.flags(squeue::Flags::FIXED_FILE | squeue::Flags::ASYNC)
            }
            Some(_) => entry.flags(squeue::Flags::FIXED_FILE),
            None => entry,
        }
    }

    fn entry_on(&self, fd: types::Fd, op: &IoOp) -> squeue::Entry {
        let flags = rw_flags(op);
        if let Some(v) = op.vectored {
            // Vectored requests cannot use a registered buffer (one index per request).
            let iov = v.ptr.cast::<libc::iovec>();
            let entry = match op.direction {
                Direction::Read => opcode::Readv::new(fd, iov, v.count)
                    .offset(op.offset_bytes)
                    .rw_flags(flags)
                    .build(),
                Direction::Write => opcode::Writev::new(fd, iov, v.count)
                    .offset(op.offset_bytes)
                    .rw_flags(flags)
                    .build(),
            };
            return entry.user_data(op.user_data);
        }
        let entry = match (op.direction, self.fixed_index(op.buf, op.len_bytes)) {
            (Direction::Read, Some(i)) => opcode::ReadFixed::new(fd, op.buf, op.len_bytes, i)
                .offset(op.offset_bytes)
                .rw_flags(flags)
                .build(),
            (Direction::Write, Some(i)) => opcode::WriteFixed::new(fd, op.buf, op.len_bytes, i)
                .offset(op.offset_bytes)
                .rw_flags(flags)
                .build(),
            (Direction::Read, None) => opcode::Read::new(fd, op.buf, op.len_bytes)
                .offset(op.offset_bytes)
                .rw_flags(flags)
                .build(),
            (Direction::Write, None) => opcode::Write::new(fd, op.buf, op.len_bytes)
                .offset(op.offset_bytes)
                .rw_flags(flags)
                .build(),
        };
        entry.user_data(op.user_data)
    }
}

/// The `RWF_*` flags of an op.
pub(crate) fn rw_flags(op: &IoOp) -> i32 {
    let mut flags = 0;
    if op.flags.nowait {
        flags |= libc::RWF_NOWAIT;
    }
    if op.flags.dsync {
        flags |= libc::RWF_DSYNC;
    }
    flags
}
