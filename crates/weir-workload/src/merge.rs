//! The shard loop's pieces for [`weir_sched::merge`]: an engine [`Op`] is a piece, and a
//! merged run becomes one vectored `Op` over the pieces' buffers, in file order.

use weir_engine::shard_loop::{Op, Segments, Span};
use weir_model::device::Direction;
use weir_sched::merge::{MergedRun, Outgoing, Piece};

/// An engine operation staged in the merger (a newtype: both the trait and `Op` live in
/// other crates).
pub(crate) struct Staged(pub(crate) Op);

impl Piece for Staged {
    fn tag(&self) -> u64 {
        self.0.tag
    }

    fn direction(&self) -> Direction {
        self.0.direction
    }

    fn offset_bytes(&self) -> u64 {
        self.0.offset_bytes
    }

    fn len_bytes(&self) -> u64 {
        self.0.segments.len_bytes()
    }

    fn same_target(&self, other: &Self) -> bool {
        self.0.fd == other.0.fd && self.0.flags == other.0.flags
    }
}

/// The engine operation that sends `out`: the piece itself, or one vectored request whose
/// segments are the pieces' spans in file order.
pub(crate) fn to_op(out: Outgoing<'_, Staged>) -> Op {
    match out {
        Outgoing::One(piece) => piece.0.clone(),
        Outgoing::Merged(run) => merged_op(&run),
    }
}

fn merged_op(run: &MergedRun<'_, Staged>) -> Op {
    let mut spans: Vec<Span> = Vec::with_capacity(run.piece_count());
    let mut first = None;
    for piece in run.pieces() {
        first.get_or_insert(&piece.0);
        spans.extend_from_slice(piece.0.segments.spans());
    }
    let first = first.expect("a merged run has pieces");
    assert_eq!(
        spans.iter().map(|v| u64::from(v.len_bytes)).sum::<u64>(),
        run.len_bytes(),
        "a merged request's segments must cover it exactly"
    );
    Op {
        tag: run.tag(),
        offset_bytes: run.offset_bytes(),
        segments: Segments::Many(spans),
        ..first.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_engine::shard_loop::{BufId, LoopBuffers};
    use weir_engine::{AlignmentSource, DioAlignment, DmaBufferPool};
    use weir_model::device::IoFlags;
    use weir_sched::merge::Merger;

    const PIECE: u32 = 128 << 10;

    /// One buffer per token (tokens 0..8), so segment order can be checked by buffer.
    fn buffers() -> Vec<BufId> {
        let align = DioAlignment {
            mem_align_bytes: 4096,
            offset_align_bytes: 4096,
            source: AlignmentSource::Default,
        };
        let pool = DmaBufferPool::new(8, PIECE as usize, &align).expect("pool");
        let mut bufs = LoopBuffers::new(vec![pool]);
        (0..8).map(|_| bufs.acquire(0).expect("buffer")).collect()
    }

    fn piece(ids: &[BufId], token: u64, offset_bytes: u64) -> Staged {
        Staged(Op {
            tag: token,
            direction: Direction::Write,
            fd: 5,
            offset_bytes,
            segments: Segments::One(Span::whole(ids[token as usize], PIECE)),
            flags: IoFlags::default(),
        })
    }

    #[test]
    fn a_merged_run_becomes_one_vectored_op_with_the_buffers_in_file_order() {
        let ids = buffers();
        let mut m = Merger::new(0, 1 << 20);
        let mut durable = piece(&ids, 3, 3 * u64::from(PIECE));
        durable.0.flags.dsync = true;
        for k in [1u64, 0, 2] {
            m.add(piece(&ids, k, k * u64::from(PIECE)));
        }
        m.add(durable);
        let mut sent = Vec::new();
        m.flush(|out| -> Result<(), ()> {
            sent.push(to_op(out));
            Ok(())
        })
        .expect("flush");
        assert_eq!(sent.len(), 2, "the dsync piece stays apart: {sent:?}");
        let merged = &sent[0];
        assert!(matches!(merged.segments, Segments::Many(_)));
        assert_eq!(
            (merged.offset_bytes, merged.segments.len_bytes()),
            (0, 3 * u64::from(PIECE))
        );
        let bufs: Vec<BufId> = merged.segments.spans().iter().map(|v| v.buf).collect();
        assert_eq!(bufs, ids[..3].to_vec());
        assert_eq!((sent[1].tag, sent[1].flags.dsync), (3, true));
    }
}
