//! What goes into the loop (an [`Op`] on buffer handles) and what comes out (a [`Done`] with
//! its result already checked against the op and named: [`Outcome`]).

use std::os::fd::RawFd;

use weir_model::device::{Direction, IoFlags};

use super::buffers::BufId;

/// Segments one op may carry: the kernel's IOV_MAX.
pub const MAX_SEGMENTS: usize = 1024;

/// `len_bytes` of memory at `offset_bytes` into a buffer of the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub buf: BufId,
    pub offset_bytes: u32,
    pub len_bytes: u32,
}

impl Span {
    /// The first `len_bytes` of `buf`.
    pub fn whole(buf: BufId, len_bytes: u32) -> Span {
        Span {
            buf,
            offset_bytes: 0,
            len_bytes,
        }
    }
}

/// Where an op's bytes live: one span, or several moved as one request (vectored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segments {
    One(Span),
    /// At most [`MAX_SEGMENTS`] spans, in file order.
    Many(Vec<Span>),
}

impl Segments {
    /// The spans, in file order.
    pub fn spans(&self) -> &[Span] {
        match self {
            Segments::One(s) => std::slice::from_ref(s),
            Segments::Many(v) => v,
        }
    }

    /// The op's length: the spans' lengths added.
    pub fn len_bytes(&self) -> u64 {
        self.spans().iter().map(|s| u64::from(s.len_bytes)).sum()
    }
}

/// One request for the loop. The loop checks it before it leaves (offset and length aligned,
/// every span inside its buffer, every buffer held) and pins its buffers until it completes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    /// The source's key for the request, returned unchanged in its [`Done`].
    pub tag: u64,
    pub direction: Direction,
    pub fd: RawFd,
    pub offset_bytes: u64,
    pub segments: Segments,
    pub flags: IoFlags,
}

impl Op {
    /// A plain (one-buffer) request of `len_bytes` from the start of `buf`.
    pub fn new(
        tag: u64,
        direction: Direction,
        fd: RawFd,
        offset_bytes: u64,
        buf: BufId,
        len_bytes: u32,
    ) -> Op {
        Op {
            tag,
            direction,
            fd,
            offset_bytes,
            segments: Segments::One(Span::whole(buf, len_bytes)),
            flags: IoFlags::default(),
        }
    }

    /// The same op with `flags`.
    pub fn with_flags(mut self, flags: IoFlags) -> Op {
        self.flags = flags;
        self
    }

    /// The first span's buffer (the only one of a plain op).
    pub fn buf(&self) -> BufId {
        self.segments.spans()[0].buf
    }
}

/// What a completion means for its op, decided once, here, for every caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every byte moved.
    Full,
    /// A read that returned 0 bytes: the offset is at or past the end of the file. Valid on
    /// some storage io_tester runs on (`/dev/null` reads nothing, always).
    EndOfFile,
    /// Fewer bytes than asked, more than none: a read that reached the end of the file, or
    /// a write the filesystem could only partly place (it ran out of space).
    Short { moved_bytes: u32 },
    /// The kernel failed the request with this errno.
    Failed { errno: i32 },
}

/// A completed op, checked: its tag, where it went, and the named outcome. The op's buffers
/// are held by the source again (see [`super::LoopBuffers`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    pub tag: u64,
    pub direction: Direction,
    pub fd: RawFd,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// The op's first buffer (the only one of a plain op).
    pub buf: BufId,
    pub outcome: Outcome,
    /// The device clock when the op was pushed and when its completion was reaped.
    pub pushed_at_ns: u64,
    pub completed_at_ns: u64,
}

impl Done {
    /// Bytes moved: the length for [`Outcome::Full`], fewer for a short op, 0 otherwise.
    pub fn moved_bytes(&self) -> u64 {
        match self.outcome {
            Outcome::Full => self.len_bytes,
            Outcome::Short { moved_bytes } => u64::from(moved_bytes),
            Outcome::EndOfFile | Outcome::Failed { .. } => 0,
        }
    }

    /// The raw result again: bytes moved, or -errno (what [`Outcome::of`] names).
    pub fn result(&self) -> i32 {
        match self.outcome {
            Outcome::Failed { errno } => -errno,
            _ => self.moved_bytes() as i32,
        }
    }

    /// Completion time minus push time, in nanoseconds.
    pub fn latency_ns(&self) -> u64 {
        self.completed_at_ns.saturating_sub(self.pushed_at_ns)
    }
}

impl Outcome {
    /// Names a raw result (bytes moved, or -errno) against the op's length: for callers that
    /// add up pieces of one request themselves (the scheduler).
    pub fn of(direction: Direction, len_bytes: u64, result: i32) -> Outcome {
        outcome(direction, len_bytes, result)
    }
}

/// Names a completion's raw result against the op's length. A result longer than the op is
/// impossible (the kernel never moves more than asked): that is a bookkeeping bug, so it
/// stops the program in release builds too.
pub(crate) fn outcome(direction: Direction, len_bytes: u64, result: i32) -> Outcome {
    if result < 0 {
        return Outcome::Failed { errno: -result };
    }
    let moved = result as u64;
    assert!(
        moved <= len_bytes,
        "a completion moved {moved} bytes for an op of {len_bytes}: tokens are mixed up"
    );
    match (moved, direction) {
        (m, _) if m == len_bytes => Outcome::Full,
        (0, Direction::Read) => Outcome::EndOfFile,
        (m, _) => Outcome::Short {
            moved_bytes: m as u32,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_named() {
        assert_eq!(outcome(Direction::Read, 4096, 4096), Outcome::Full);
        assert_eq!(outcome(Direction::Read, 4096, 0), Outcome::EndOfFile);
        assert_eq!(
            outcome(Direction::Read, 4096, 512),
            Outcome::Short { moved_bytes: 512 }
        );
        assert_eq!(
            outcome(Direction::Write, 4096, 0),
            Outcome::Short { moved_bytes: 0 }
        );
        assert_eq!(
            outcome(Direction::Write, 4096, -libc::ENOSPC),
            Outcome::Failed {
                errno: libc::ENOSPC
            }
        );
        // A 0-byte op (nothing to move) is complete, not at end of file.
        assert_eq!(outcome(Direction::Read, 0, 0), Outcome::Full);
    }

    #[test]
    #[should_panic(expected = "tokens are mixed up")]
    fn a_result_longer_than_the_op_stops() {
        outcome(Direction::Read, 4096, 8192);
    }
}
