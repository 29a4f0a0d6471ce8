//! Merging the pieces one dispatch releases into fewer, larger requests.
//!
//! When a class streams sequentially (a compaction writing 128 KiB at a time, 64 in flight),
//! the pieces the scheduler lets go together often continue each other in the file. Alone at
//! depth 64 such writes wait in the kernel's queue and the block layer merges them 8:1 into
//! 1 MiB requests; through the scheduler only a goal's worth is in the kernel, nothing waits
//! there, and on a file that must allocate (a write into a hole is handed to an io_uring
//! worker and issued outside the submitter's plug) nothing merges at all: the disk pays its
//! per-request cost on every 128 KiB (docs/design/scheduler.md, section 4.5, and
//! docs/design/scheduler-rate.md, section 6, measure this). So the merge happens
//! here, before the kernel: adjacent pieces of one file, same direction and flags, go out as
//! one vectored request of at most the scheduler's longest request (the length it splits
//! at, about half a latency goal of disk time), so a merged request never holds the disk
//! longer than a single request the scheduler would have sent whole.
//!
//! The scheduler still books every piece: a merged request's completion fans out to each
//! piece's token with the piece's share of the result, and each piece's disk time is the
//! merged request's.

use serde::Serialize;
use weir_engine::shard_loop::{Op, Segments, Span};
use weir_model::device::IoCompletion;

use crate::request::Failure;

/// Segments per merged request; far below IOV_MAX (1024) and the usual queue limits.
const MAX_SEGMENTS: usize = 64;
/// Marks a merged request's `user_data` (scheduler tokens never have this bit set).
const MERGED_TAG: u64 = 1 << 63;

/// How many pieces went out merged, and in how many requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MergeCounts {
    /// Pieces that went out as part of a merged request.
    pub pieces: u64,
    /// Merged requests sent (each carries two or more pieces).
    pub requests: u64,
}

impl MergeCounts {
    pub fn add(&mut self, other: MergeCounts) {
        self.pieces += other.pieces;
        self.requests += other.requests;
    }
}

/// A merged request in flight: its pieces' tokens and lengths, in file order (the shard
/// loop keeps the segments the kernel reads until the completion).
#[derive(Default)]
struct Merged {
    pieces: Vec<(u64, u32)>,
}

/// A run of staged pieces that continue each other: a linked list through `Merger::next`.
struct Run {
    head: usize,
    tail: usize,
    start_bytes: u64,
    end_bytes: u64,
    segments: usize,
}

/// Stages one dispatch's pieces, merges adjacent ones, and fans merged completions out.
pub(crate) struct Merger {
    /// The longest merged request per direction (index: read 0, write 1); 0 turns it off.
    max_bytes: [u64; 2],
    staged: Vec<Op>,
    next: Vec<Option<usize>>,
    runs: Vec<Run>,
    in_flight: Vec<Merged>,
    free: Vec<u32>,
    pub(crate) counts: MergeCounts,
}

impl Merger {
    pub(crate) fn new(max_bytes: [u64; 2]) -> Merger {
        Merger {
            max_bytes: max_bytes.map(|b| b.min(u64::from(u32::MAX))),
            staged: Vec::new(),
            next: Vec::new(),
            runs: Vec::new(),
            in_flight: Vec::new(),
            free: Vec::new(),
            counts: MergeCounts::default(),
        }
    }

    /// Stages one piece; `flush` sends everything staged.
    pub(crate) fn add(&mut self, op: Op) {
        assert_eq!(op.tag & MERGED_TAG, 0, "a token with the merge tag");
        let i = self.staged.len();
        let (start_bytes, direction) = (op.offset_bytes, op.direction);
        let end_bytes = start_bytes + op.segments.len_bytes();
        self.staged.push(op);
        self.next.push(None);
        self.runs.push(Run {
            head: i,
            tail: i,
            start_bytes,
            end_bytes,
            segments: 1,
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
            // adjacent, so `joinable` (the pieces' file, direction, flags and sizes) runs only
            // for a neighbour. Checked the other way round, every piece of a round paid
            // `joinable` against every run staged before it: the scheduled 4 KiB rows' largest
            // user-space cost, 1.6% of the process's CPU on zram (docs/benchmarks.md).
            // The same first neighbour is found either way.
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
            let (back_head, back_tail, back_end, back_segments) =
                (b.head, b.tail, b.end_bytes, b.segments);
            self.next[self.runs[front].tail] = Some(back_head);
            let f = &mut self.runs[front];
            f.tail = back_tail;
            f.end_bytes = back_end;
            f.segments += back_segments;
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
        x.fd == y.fd
            && x.direction == y.direction
            && x.flags == y.flags
            && ra.segments + rb.segments <= MAX_SEGMENTS
            && bytes <= self.max_bytes[x.direction.index()]
    }

    /// Sends every staged run through `push`: single pieces as they are, longer runs as one
    /// vectored request.
    pub(crate) fn flush(
        &mut self,
        mut push: impl FnMut(Op) -> Result<(), Failure>,
    ) -> Result<(), Failure> {
        let mut result = Ok(());
        for r in &self.runs {
            let first = &self.staged[r.head];
            let op = if r.segments == 1 {
                first.clone()
            } else {
                let index = self.free.pop().unwrap_or_else(|| {
                    self.in_flight.push(Merged::default());
                    (self.in_flight.len() - 1) as u32
                });
                let merged = &mut self.in_flight[index as usize];
                let mut spans: Vec<Span> = Vec::with_capacity(r.segments);
                let mut at = Some(r.head);
                while let Some(i) = at {
                    let piece = &self.staged[i];
                    let piece_spans = piece.segments.spans();
                    merged
                        .pieces
                        .push((piece.tag, piece.segments.len_bytes() as u32));
                    spans.extend_from_slice(piece_spans);
                    at = self.next[i];
                }
                assert_eq!(
                    spans.iter().map(|v| u64::from(v.len_bytes)).sum::<u64>(),
                    r.end_bytes - r.start_bytes,
                    "a merged request's segments must cover it exactly"
                );
                self.counts.pieces += r.segments as u64;
                self.counts.requests += 1;
                Op {
                    tag: MERGED_TAG | u64::from(index),
                    offset_bytes: r.start_bytes,
                    segments: Segments::Many(spans),
                    ..first.clone()
                }
            };
            // After a refusal the run is failing: the rest stays unsent.
            if let Err(e) = push(op) {
                result = Err(e);
                break;
            }
        }
        // Cleared, not dropped: the vectors keep their capacity for the next dispatch.
        self.runs.clear();
        self.staged.clear();
        self.next.clear();
        result
    }

    /// Appends `c`'s piece completions to `out`: `c` itself for a single piece; for a merged
    /// request, one per piece, the bytes done handed out in file order (a short transfer ends
    /// inside one piece; the pieces after it report 0 bytes, an error reaches every piece).
    pub(crate) fn fan_out(&mut self, c: &IoCompletion, out: &mut Vec<IoCompletion>) {
        if c.user_data & MERGED_TAG == 0 {
            out.push(*c);
            return;
        }
        let index = (c.user_data & !MERGED_TAG) as usize;
        let Some(merged) = self.in_flight.get_mut(index) else {
            return;
        };
        let mut left = c.result.max(0) as u32;
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
mod tests {
    use super::*;
    use weir_engine::shard_loop::{BufId, LoopBuffers};
    use weir_engine::{AlignmentSource, DioAlignment, DmaBufferPool};
    use weir_model::device::{Direction, IoFlags};

    const PIECE: u32 = 128 << 10;

    /// One buffer per token (tokens 0..32), so segment order can be checked by buffer.
    fn buffers() -> (LoopBuffers, Vec<BufId>) {
        let align = DioAlignment {
            mem_align_bytes: 4096,
            offset_align_bytes: 4096,
            source: AlignmentSource::Default,
        };
        let pool = DmaBufferPool::new(32, PIECE as usize, &align).expect("pool");
        let mut bufs = LoopBuffers::new(vec![pool]);
        let ids = (0..32).map(|_| bufs.acquire(0).expect("buffer")).collect();
        (bufs, ids)
    }

    fn piece(token: u64, fd: i32, offset_bytes: u64) -> Op {
        let ids = &buffers().1;
        Op {
            tag: token,
            direction: Direction::Write,
            fd,
            offset_bytes,
            segments: Segments::One(Span::whole(ids[token as usize], PIECE)),
            flags: IoFlags::default(),
        }
    }

    fn is_vectored(op: &Op) -> bool {
        matches!(op.segments, Segments::Many(_))
    }

    fn flush(m: &mut Merger) -> Vec<Op> {
        let mut sent = Vec::new();
        m.flush(|op| {
            sent.push(op);
            Ok(())
        })
        .expect("flush");
        sent
    }

    #[test]
    fn adjacent_pieces_go_out_as_one_request_in_file_order() {
        let mut m = Merger::new([1 << 20, 1 << 20]);
        // Arrival order 2, 0, 1, 3 (a prepend and an append); all continue each other.
        for k in [2u64, 0, 1, 3] {
            m.add(piece(k, 5, k * u64::from(PIECE)));
        }
        let sent = flush(&mut m);
        assert_eq!(sent.len(), 1, "{sent:?}");
        let op = &sent[0];
        assert_eq!(
            (op.offset_bytes, op.segments.len_bytes()),
            (0, 4 * u64::from(PIECE))
        );
        let bufs: Vec<BufId> = op.segments.spans().iter().map(|v| v.buf).collect();
        let ids = buffers().1;
        assert_eq!(
            bufs,
            ids[..4].to_vec(),
            "segments must follow the file, not arrival"
        );
        assert_eq!(
            m.counts,
            MergeCounts {
                pieces: 4,
                requests: 1
            }
        );
        let mut out = Vec::new();
        let done = IoCompletion {
            user_data: op.tag,
            result: (4 * PIECE) as i32,
            completed_at_ns: 77,
        };
        m.fan_out(&done, &mut out);
        let mut tokens: Vec<(u64, i32, u64)> = out
            .iter()
            .map(|c| (c.user_data, c.result, c.completed_at_ns))
            .collect();
        tokens.sort();
        let expect: Vec<(u64, i32, u64)> = (0..4).map(|k| (k, PIECE as i32, 77)).collect();
        assert_eq!(tokens, expect);
    }

    #[test]
    fn only_pieces_of_one_file_direction_and_flags_within_the_cap_merge() {
        let mut m = Merger::new([0, 2 * u64::from(PIECE)]);
        m.add(piece(0, 5, 0));
        m.add(piece(1, 5, u64::from(PIECE)));
        // Would make the run 3 pieces: over the 2-piece cap.
        m.add(piece(2, 5, 2 * u64::from(PIECE)));
        // Another file at the adjacent offset.
        m.add(piece(3, 6, 3 * u64::from(PIECE)));
        // A gap of one piece.
        m.add(piece(4, 5, 4 * u64::from(PIECE)));
        // dsync differs.
        let mut durable = piece(5, 5, 5 * u64::from(PIECE));
        durable.flags.dsync = true;
        m.add(durable);
        // Reads have merging off (cap 0).
        let mut r0 = piece(6, 7, 0);
        r0.direction = Direction::Read;
        let mut r1 = piece(7, 7, u64::from(PIECE));
        r1.direction = Direction::Read;
        m.add(r0);
        m.add(r1);
        let sent = flush(&mut m);
        let merged: Vec<&Op> = sent.iter().filter(|o| is_vectored(o)).collect();
        assert_eq!(merged.len(), 1, "{sent:?}");
        assert_eq!(
            (merged[0].offset_bytes, merged[0].segments.len_bytes()),
            (0, 2 * u64::from(PIECE))
        );
        let single: Vec<u64> = sent
            .iter()
            .filter(|o| !is_vectored(o))
            .map(|o| o.tag)
            .collect();
        assert_eq!(single, vec![2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn a_short_transfer_ends_inside_one_piece_and_an_error_reaches_all() {
        let mut m = Merger::new([0, 1 << 20]);
        for k in 0..3u64 {
            m.add(piece(10 + k, 5, k * u64::from(PIECE)));
        }
        let op = flush(&mut m).remove(0);
        let mut out = Vec::new();
        let short = IoCompletion {
            user_data: op.tag,
            result: (PIECE + PIECE / 2) as i32,
            completed_at_ns: 1,
        };
        m.fan_out(&short, &mut out);
        let results: Vec<i32> = out.iter().map(|c| c.result).collect();
        assert_eq!(results, vec![PIECE as i32, (PIECE / 2) as i32, 0]);
        // The entry was freed and is reused by the next merge.
        for k in 0..2u64 {
            m.add(piece(20 + k, 5, k * u64::from(PIECE)));
        }
        let again = flush(&mut m).remove(0);
        assert_eq!(again.tag, op.tag);
        out.clear();
        let failed = IoCompletion {
            user_data: again.tag,
            result: -libc::EIO,
            completed_at_ns: 2,
        };
        m.fan_out(&failed, &mut out);
        assert_eq!(
            out.iter()
                .map(|c| (c.user_data, c.result))
                .collect::<Vec<_>>(),
            vec![(20, -libc::EIO), (21, -libc::EIO)]
        );
        // A plain token passes through untouched.
        out.clear();
        let plain = IoCompletion {
            user_data: 3,
            result: 4096,
            completed_at_ns: 3,
        };
        m.fan_out(&plain, &mut out);
        assert_eq!(out, vec![plain]);
    }
}
