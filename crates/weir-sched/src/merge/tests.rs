use super::*;

const PIECE: u64 = 128 << 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct P {
    token: u64,
    fd: i32,
    direction: Direction,
    offset_bytes: u64,
    len_bytes: u64,
    dsync: bool,
}

impl Piece for P {
    fn tag(&self) -> u64 {
        self.token
    }
    fn direction(&self) -> Direction {
        self.direction
    }
    fn offset_bytes(&self) -> u64 {
        self.offset_bytes
    }
    fn len_bytes(&self) -> u64 {
        self.len_bytes
    }
    fn same_target(&self, other: &Self) -> bool {
        self.fd == other.fd && self.dsync == other.dsync
    }
}

fn write(token: u64, fd: i32, offset_bytes: u64) -> P {
    P {
        token,
        fd,
        direction: Direction::Write,
        offset_bytes,
        len_bytes: PIECE,
        dsync: false,
    }
}

/// What `flush` sent: (tag, offset, length, the pieces' tokens in file order).
type Sent = (u64, u64, u64, Vec<u64>);

fn flush(m: &mut Merger<P>) -> Vec<Sent> {
    let mut sent = Vec::new();
    m.flush(|out| -> Result<(), ()> {
        sent.push(match out {
            Outgoing::One(p) => (p.token, p.offset_bytes, p.len_bytes, vec![p.token]),
            Outgoing::Merged(run) => {
                assert!(run.piece_count() >= 2);
                (
                    run.tag(),
                    run.offset_bytes(),
                    run.len_bytes(),
                    run.pieces().map(|p| p.token).collect(),
                )
            }
        });
        Ok(())
    })
    .expect("flush");
    sent
}

#[test]
fn adjacent_pieces_go_out_as_one_request_in_file_order() {
    let mut m = Merger::new(1 << 20, 1 << 20);
    // Arrival order 2, 0, 1, 3 (a prepend and an append); all continue each other.
    for k in [2u64, 0, 1, 3] {
        m.add(write(k, 5, k * PIECE));
    }
    let sent = flush(&mut m);
    assert_eq!(sent.len(), 1, "{sent:?}");
    let (tag, offset, len, tokens) = &sent[0];
    assert_eq!((*offset, *len), (0, 4 * PIECE));
    assert_eq!(
        tokens,
        &vec![0, 1, 2, 3],
        "pieces must follow the file, not arrival"
    );
    assert_eq!(
        m.counts(),
        MergeCounts {
            pieces: 4,
            requests: 1
        }
    );
    assert_eq!(m.merged_in_flight(), 1);
    let mut out = Vec::new();
    let done = IoCompletion {
        user_data: *tag,
        result: (4 * PIECE) as i32,
        completed_at_ns: 77,
    };
    m.fan_out(&done, &mut out);
    let got: Vec<(u64, i32, u64)> = out
        .iter()
        .map(|c| (c.user_data, c.result, c.completed_at_ns))
        .collect();
    let expect: Vec<(u64, i32, u64)> = (0..4).map(|k| (k, PIECE as i32, 77)).collect();
    assert_eq!(got, expect);
    assert_eq!(m.merged_in_flight(), 0);
}

#[test]
fn only_pieces_of_one_file_direction_and_flags_within_the_cap_merge() {
    let mut m = Merger::new(0, 2 * PIECE);
    m.add(write(0, 5, 0));
    m.add(write(1, 5, PIECE));
    // Would make the run 3 pieces: over the 2-piece cap.
    m.add(write(2, 5, 2 * PIECE));
    // Another file at the adjacent offset.
    m.add(write(3, 6, 3 * PIECE));
    // A gap of one piece.
    m.add(write(4, 5, 4 * PIECE));
    // dsync differs.
    m.add(P {
        dsync: true,
        ..write(5, 5, 5 * PIECE)
    });
    // Reads have merging off (cap 0).
    for (token, offset) in [(6, 0), (7, PIECE)] {
        m.add(P {
            direction: Direction::Read,
            ..write(token, 7, offset)
        });
    }
    let sent = flush(&mut m);
    let merged: Vec<&Sent> = sent.iter().filter(|s| s.3.len() > 1).collect();
    assert_eq!(merged.len(), 1, "{sent:?}");
    assert_eq!((merged[0].1, merged[0].2), (0, 2 * PIECE));
    let single: Vec<u64> = sent
        .iter()
        .filter(|s| s.3.len() == 1)
        .map(|s| s.0)
        .collect();
    assert_eq!(single, vec![2, 3, 4, 5, 6, 7]);
}

#[test]
fn no_merged_request_exceeds_the_piece_count_limit() {
    let mut m = Merger::new(0, u64::MAX);
    let count = MAX_PIECES as u64 * 2 + 3;
    for k in 0..count {
        m.add(P {
            len_bytes: 4096,
            ..write(k, 5, k * 4096)
        });
    }
    let sent = flush(&mut m);
    assert!(sent.iter().all(|s| s.3.len() <= MAX_PIECES), "{sent:?}");
    let total: usize = sent.iter().map(|s| s.3.len()).sum();
    assert_eq!(total as u64, count, "every piece goes out once");
}

#[test]
fn a_short_transfer_ends_inside_one_piece_and_an_error_reaches_all() {
    let mut m = Merger::new(0, 1 << 20);
    for k in 0..3u64 {
        m.add(write(10 + k, 5, k * PIECE));
    }
    let tag = flush(&mut m).remove(0).0;
    let mut out = Vec::new();
    let short = IoCompletion {
        user_data: tag,
        result: (PIECE + PIECE / 2) as i32,
        completed_at_ns: 1,
    };
    m.fan_out(&short, &mut out);
    let results: Vec<i32> = out.iter().map(|c| c.result).collect();
    assert_eq!(results, vec![PIECE as i32, (PIECE / 2) as i32, 0]);
    // The entry was freed and is reused by the next merge.
    for k in 0..2u64 {
        m.add(write(20 + k, 5, k * PIECE));
    }
    let again = flush(&mut m).remove(0).0;
    assert_eq!(again, tag);
    out.clear();
    let failed = IoCompletion {
        user_data: again,
        result: -5,
        completed_at_ns: 2,
    };
    m.fan_out(&failed, &mut out);
    assert_eq!(
        out.iter()
            .map(|c| (c.user_data, c.result))
            .collect::<Vec<_>>(),
        vec![(20, -5), (21, -5)]
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

#[test]
fn a_refused_send_keeps_that_run_and_the_later_ones_for_the_next_flush() {
    let mut m = Merger::new(0, 1 << 20);
    m.add(write(9, 6, 0));
    for k in 0..2u64 {
        m.add(write(k, 5, k * PIECE));
    }
    m.add(write(7, 8, 0));
    // The device takes one request, then is full.
    let mut taken = 0;
    let refused = m.flush(|_| {
        taken += 1;
        if taken > 1 {
            Err("queue full")
        } else {
            Ok(())
        }
    });
    assert_eq!(refused, Err("queue full"));
    assert_eq!(m.staged_requests(), 2);
    assert_eq!(m.merged_in_flight(), 0, "the refused merge holds no entry");
    assert_eq!(m.counts(), MergeCounts::default());
    // Pieces staged after the refusal still join the runs kept.
    m.add(write(2, 5, 2 * PIECE));
    let sent = flush(&mut m);
    let tokens: Vec<Vec<u64>> = sent.into_iter().map(|s| s.3).collect();
    assert_eq!(tokens, vec![vec![0, 1, 2], vec![7]]);
    assert_eq!(m.staged_requests(), 0);
    assert!(flush(&mut m).is_empty());
}
