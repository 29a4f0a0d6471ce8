//! Merging the pieces one dispatch releases into fewer, larger requests.
//!
//! The queue splits a large request into pieces of at most its longest request (about half a
//! latency goal of disk time) so that no single request holds the disk past the goal. When a
//! class streams sequentially (a compaction writing 128 KiB at a time, 64 in flight), the
//! pieces one dispatch lets go often continue each other in the file. Alone at depth 64 such
//! writes wait in the kernel's queue and the block layer merges them into 1 MiB requests;
//! through the scheduler only a goal's worth is in the kernel, nothing waits there, and on a
//! file that must allocate (a write into a hole goes to an io_uring worker and is issued
//! outside the submitter's plug) nothing merges at all: the disk pays its per-request cost on
//! every piece. So the merge happens here, before the kernel: adjacent pieces of one file,
//! same direction and flags, go out as one request of at most the queue's longest request
//! ([`ShardQueue::max_request_bytes`](crate::ShardQueue::max_request_bytes)), so a merged
//! request never holds the disk longer than a single request the queue would have sent whole.
//!
//! The queue still books every piece: a merged request's completion fans out to each piece's
//! token with the piece's share of the result, and each piece's disk time is the merged
//! request's.
//!
//! [`Merger`] is sans-I/O like the queue: the caller says what a piece is ([`Piece`]), stages
//! each dispatched piece, and builds the device's request for each [`Outgoing`] (one piece as
//! it is, or a vectored request over several buffers).
//!
//! ```
//! use weir_model::device::{Direction, IoCompletion};
//! use weir_sched::merge::{Merger, Outgoing, Piece};
//!
//! // A piece as the caller's loop knows it: the queue's token, the file and the range.
//! #[derive(Debug)]
//! struct Write { token: u64, fd: i32, offset_bytes: u64, len_bytes: u64 }
//!
//! impl Piece for Write {
//!     fn tag(&self) -> u64 { self.token }
//!     fn direction(&self) -> Direction { Direction::Write }
//!     fn offset_bytes(&self) -> u64 { self.offset_bytes }
//!     fn len_bytes(&self) -> u64 { self.len_bytes }
//!     fn same_target(&self, other: &Self) -> bool { self.fd == other.fd }
//! }
//!
//! let mut merger = Merger::new(0, 1 << 20); // reads stay as they are; writes up to 1 MiB
//! for k in 0..4 {
//!     merger.add(Write { token: k, fd: 3, offset_bytes: k * 65536, len_bytes: 65536 });
//! }
//! let mut sent = Vec::new();
//! merger.flush(|out| -> Result<(), ()> {
//!     match out {
//!         Outgoing::One(piece) => sent.push((piece.token, piece.len_bytes)),
//!         Outgoing::Merged(run) => sent.push((run.tag(), run.len_bytes())),
//!     }
//!     Ok(())
//! }).unwrap();
//! assert_eq!(sent.len(), 1);
//! assert_eq!(sent[0].1, 4 * 65536);
//!
//! // The device completes the merged request: each piece gets its share.
//! let mut pieces = Vec::new();
//! merger.fan_out(&IoCompletion { user_data: sent[0].0, result: 4 * 65536, completed_at_ns: 9 }, &mut pieces);
//! assert_eq!(pieces.iter().map(|c| c.result).collect::<Vec<_>>(), vec![65536; 4]);
//! ```

use weir_model::device::{Direction, IoCompletion};

/// Pieces per merged request; far below IOV_MAX (1024) and the usual block queue limits.
pub const MAX_PIECES: usize = 64;

/// Marks a merged request's tag. The queue's tokens never set this bit, so a completion's
/// `user_data` says which kind it is.
pub const MERGED_TAG: u64 = 1 << 63;

/// What the merger needs to know of a dispatched piece.
pub trait Piece {
    /// The piece's token (the queue's [`Dispatched::token`](crate::Dispatched::token)); never
    /// has [`MERGED_TAG`] set.
    fn tag(&self) -> u64;
    /// Read or write.
    fn direction(&self) -> Direction;
    /// Where the piece starts in its file.
    fn offset_bytes(&self) -> u64;
    /// The piece's length.
    fn len_bytes(&self) -> u64;
    /// Whether `other` may share one request with this piece apart from adjacency: the same
    /// file and the same flags (a durable write never merges with a plain one).
    fn same_target(&self, other: &Self) -> bool;
}

/// How many pieces went out merged, and in how many requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeCounts {
    /// Pieces that went out as part of a merged request.
    pub pieces: u64,
    /// Merged requests sent (each carries two or more pieces).
    pub requests: u64,
}

impl MergeCounts {
    /// Adds `other`'s counts (another shard's, another run's).
    pub fn add(&mut self, other: MergeCounts) {
        self.pieces += other.pieces;
        self.requests += other.requests;
    }
}

/// One request to send, as [`Merger::flush`] hands it out.
pub enum Outgoing<'a, P> {
    /// A piece that continues no other: send it as it is, with its own tag.
    One(&'a P),
    /// Two or more pieces that continue each other: send one vectored request.
    Merged(MergedRun<'a, P>),
}

/// A merged request: its tag and range, and its pieces in file order.
pub struct MergedRun<'a, P> {
    tag: u64,
    offset_bytes: u64,
    len_bytes: u64,
    staged: &'a [P],
    order: &'a [usize],
}

impl<'a, P> MergedRun<'a, P> {
    /// The tag to send the request with; its completion goes to [`Merger::fan_out`].
    pub fn tag(&self) -> u64 {
        self.tag
    }

    /// Where the request starts in the file (the first piece's offset).
    pub fn offset_bytes(&self) -> u64 {
        self.offset_bytes
    }

    /// The request's length: the sum of its pieces'.
    pub fn len_bytes(&self) -> u64 {
        self.len_bytes
    }

    /// How many pieces the request carries (2..=[`MAX_PIECES`]).
    pub fn piece_count(&self) -> usize {
        self.order.len()
    }

    /// The pieces, in file order: their buffers are the request's segments in this order.
    pub fn pieces(&self) -> impl Iterator<Item = &'a P> + '_ {
        self.order.iter().map(|&i| &self.staged[i])
    }
}

/// A merged request in flight: its pieces' tokens and lengths, in file order.
#[derive(Default)]
struct InFlight {
    pieces: Vec<(u64, u64)>,
}

/// A run of staged pieces that continue each other: a linked list through `Merger::next`.
struct Run {
    head: usize,
    tail: usize,
    start_bytes: u64,
    end_bytes: u64,
    pieces: usize,
}

/// Stages one dispatch's pieces, merges adjacent ones, and fans merged completions out.
pub struct Merger<P> {
    /// The longest merged request per direction (index: read 0, write 1); 0 turns it off.
    max_bytes: [u64; 2],
    staged: Vec<P>,
    next: Vec<Option<usize>>,
    runs: Vec<Run>,
    order: Vec<usize>,
    in_flight: Vec<InFlight>,
    free: Vec<u32>,
    counts: MergeCounts,
}

impl<P: Piece> Merger<P> {
    /// A merger whose merged reads are at most `max_read_bytes` long and writes at most
    /// `max_write_bytes` (the queue's [`max_request_bytes`](crate::ShardQueue::max_request_bytes)
    /// per direction); 0 sends that direction's pieces as they are.
    pub fn new(max_read_bytes: u64, max_write_bytes: u64) -> Merger<P> {
        Merger {
            max_bytes: [max_read_bytes, max_write_bytes],
            staged: Vec::new(),
            next: Vec::new(),
            runs: Vec::new(),
            order: Vec::new(),
            in_flight: Vec::new(),
            free: Vec::new(),
            counts: MergeCounts::default(),
        }
    }

    /// A merger for `queue`'s pieces: merged requests are at most as long as the longest
    /// request the queue sends whole, per direction.
    pub fn for_queue(queue: &crate::ShardQueue) -> Merger<P> {
        Merger::new(
            queue.max_request_bytes(Direction::Read),
            queue.max_request_bytes(Direction::Write),
        )
    }

    /// How many pieces went out merged so far, and in how many requests.
    pub fn counts(&self) -> MergeCounts {
        self.counts
    }

    /// Merged requests sent whose completion has not come back yet.
    pub fn merged_in_flight(&self) -> usize {
        self.in_flight.len() - self.free.len()
    }

    /// Stages one piece; [`Merger::flush`] sends everything staged.
    ///
    /// # Panics
    /// When the piece's tag has [`MERGED_TAG`] set (the queue's tokens never do).
    pub fn add(&mut self, piece: P) {
        assert_eq!(piece.tag() & MERGED_TAG, 0, "a token with the merge tag");
        let i = self.staged.len();
        let (start_bytes, direction) = (piece.offset_bytes(), piece.direction());
        let end_bytes = start_bytes + piece.len_bytes();
        self.staged.push(piece);
        self.next.push(None);
        self.runs.push(Run {
            head: i,
            tail: i,
            start_bytes,
            end_bytes,
            pieces: 1,
        });
        if self.max_bytes[direction.index()] > 0 {
            self.join(self.runs.len() - 1);
        }
    }

    /// Joins run `r` with the runs that continue it on either side, while they fit. Pieces
    /// rarely arrive out of order, but a request split in pieces and its neighbour can.
    fn join(&mut self, mut r: usize) {
        loop {
            // Adjacency first: it is two compares, and random pieces are almost never
            // adjacent, so `joinable` runs only for a neighbour (checked the other way round,
            // every piece paid it against every run staged before it).
            let (start_bytes, end_bytes) = (self.runs[r].start_bytes, self.runs[r].end_bytes);
            let found = (0..self.runs.len()).find_map(|o| {
                let pair = if o == r {
                    None
                } else if end_bytes == self.runs[o].start_bytes {
                    Some((r, o))
                } else if self.runs[o].end_bytes == start_bytes {
                    Some((o, r))
                } else {
                    None
                };
                pair.filter(|_| self.joinable(r, o))
            });
            let Some((front, back)) = found else {
                return;
            };
            let b = &self.runs[back];
            let (back_head, back_tail, back_end, back_pieces) =
                (b.head, b.tail, b.end_bytes, b.pieces);
            self.next[self.runs[front].tail] = Some(back_head);
            let f = &mut self.runs[front];
            f.tail = back_tail;
            f.end_bytes = back_end;
            f.pieces += back_pieces;
            self.runs.swap_remove(back);
            // The joined run is `front`; swap_remove may have moved it into `back`'s place.
            r = if front == self.runs.len() {
                back
            } else {
                front
            };
        }
    }

    /// Whether runs `a` and `b` may become one request (adjacency is checked by the caller).
    fn joinable(&self, a: usize, b: usize) -> bool {
        let (ra, rb) = (&self.runs[a], &self.runs[b]);
        let (x, y) = (&self.staged[ra.head], &self.staged[rb.head]);
        let bytes = (ra.end_bytes - ra.start_bytes) + (rb.end_bytes - rb.start_bytes);
        x.direction() == y.direction()
            && x.same_target(y)
            && ra.pieces + rb.pieces <= MAX_PIECES
            && bytes <= self.max_bytes[x.direction().index()]
    }

    /// Hands every staged run to `send`: single pieces as they are, longer runs as one
    /// merged request. When `send` refuses one (a full device queue), that run and the runs
    /// after it stay staged for the next `flush`, and the error is returned.
    pub fn flush<E>(
        &mut self,
        mut send: impl FnMut(Outgoing<'_, P>) -> Result<(), E>,
    ) -> Result<(), E> {
        for r in 0..self.runs.len() {
            let run = &self.runs[r];
            let (head, pieces) = (run.head, run.pieces);
            let (start_bytes, end_bytes) = (run.start_bytes, run.end_bytes);
            let (sent, index) = if pieces == 1 {
                (send(Outgoing::One(&self.staged[head])), None)
            } else {
                let index = self.track(head);
                debug_assert_eq!(
                    self.order
                        .iter()
                        .map(|&i| self.staged[i].len_bytes())
                        .sum::<u64>(),
                    end_bytes - start_bytes,
                    "a merged request's pieces must cover it exactly"
                );
                let run = MergedRun {
                    tag: MERGED_TAG | u64::from(index),
                    offset_bytes: start_bytes,
                    len_bytes: end_bytes - start_bytes,
                    staged: &self.staged,
                    order: &self.order,
                };
                (send(Outgoing::Merged(run)), Some(index))
            };
            if let Err(e) = sent {
                if let Some(index) = index {
                    // Never sent: its entry is free again and it counts for nothing.
                    self.in_flight[index as usize].pieces.clear();
                    self.free.push(index);
                    self.counts.pieces -= pieces as u64;
                    self.counts.requests -= 1;
                }
                // The sent runs' pieces stay in `staged` unreferenced until a flush sends
                // everything and clears it.
                self.runs.drain(..r);
                return Err(e);
            }
        }
        // Cleared, not dropped: the vectors keep their capacity for the next dispatch.
        self.runs.clear();
        self.staged.clear();
        self.next.clear();
        Ok(())
    }

    /// Requests staged and not sent yet (each run of adjacent pieces counts once).
    pub fn staged_requests(&self) -> usize {
        self.runs.len()
    }

    /// Records the run starting at staged piece `head` as a merged request in flight, leaves
    /// its pieces' indices in file order in `self.order`, and returns its entry's index.
    fn track(&mut self, head: usize) -> u32 {
        let index = self.free.pop().unwrap_or_else(|| {
            self.in_flight.push(InFlight::default());
            (self.in_flight.len() - 1) as u32
        });
        let entry = &mut self.in_flight[index as usize];
        debug_assert!(
            entry.pieces.is_empty(),
            "a merged entry reused while in flight"
        );
        self.order.clear();
        let mut at = Some(head);
        while let Some(i) = at {
            let piece = &self.staged[i];
            entry.pieces.push((piece.tag(), piece.len_bytes()));
            self.order.push(i);
            at = self.next[i];
        }
        self.counts.pieces += self.order.len() as u64;
        self.counts.requests += 1;
        index
    }

    /// Appends `c`'s piece completions to `out`: `c` itself for a single piece; for a merged
    /// request, one per piece, the bytes done handed out in file order (a short transfer ends
    /// inside one piece; the pieces after it report 0 bytes; an error reaches every piece).
    pub fn fan_out(&mut self, c: &IoCompletion, out: &mut Vec<IoCompletion>) {
        if c.user_data & MERGED_TAG == 0 {
            out.push(*c);
            return;
        }
        let index = (c.user_data & !MERGED_TAG) as usize;
        let Some(merged) = self.in_flight.get_mut(index) else {
            debug_assert!(
                false,
                "a merged completion with no entry: {:#x}",
                c.user_data
            );
            return;
        };
        let mut left = c.result.max(0) as u64;
        for &(token, len) in &merged.pieces {
            let result = if c.result < 0 {
                c.result
            } else {
                let done = left.min(len);
                left -= done;
                done as i32
            };
            out.push(IoCompletion {
                user_data: token,
                result,
                completed_at_ns: c.completed_at_ns,
            });
        }
        merged.pieces.clear();
        self.free.push(index as u32);
    }
}

#[cfg(test)]
mod tests;
