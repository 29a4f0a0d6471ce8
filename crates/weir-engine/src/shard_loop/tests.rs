//! The loop over a scripted device: every op and completion is visible, results can be
//! forged, and the device can be told to fail.

use std::collections::VecDeque;

use weir_model::device::{Device, DeviceError, Direction, IoCompletion, IoOp};

use super::*;
use crate::align::{AlignmentSource, DioAlignment};

/// A device that completes everything submitted on the next wait, in order, with `result`
/// (default: the op's length) and can be told to fail its waits.
#[derive(Default)]
struct Scripted {
    capacity: u32,
    now_ns: u64,
    queued: Vec<IoOp>,
    at_device: VecDeque<IoOp>,
    done: Vec<IoCompletion>,
    pushed: u64,
    reaped: u64,
    /// Calls to submit_and_wait.
    calls: u64,
    /// Forged results by push order (None: the op's length).
    results: VecDeque<Option<i32>>,
    /// Every completion carries this token instead of its own.
    wrong_token: Option<u64>,
    fail_waits: bool,
}

impl Scripted {
    fn new(capacity: u32) -> Scripted {
        Scripted {
            capacity,
            ..Scripted::default()
        }
    }

    fn outstanding(&self) -> usize {
        self.queued.len() + self.at_device.len() + self.done.len()
    }
}

impl Device for Scripted {
    fn now_ns(&self) -> u64 {
        self.now_ns
    }

    fn capacity(&self) -> u32 {
        self.capacity
    }

    unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError> {
        if self.outstanding() >= self.capacity as usize {
            return Err(DeviceError::QueueFull);
        }
        assert!(!op.buf.is_null());
        self.pushed += 1;
        self.queued.push(op);
        Ok(())
    }

    fn submit_and_wait(&mut self, min: u32, _deadline: Option<u64>) -> Result<u32, DeviceError> {
        self.calls += 1;
        if self.fail_waits {
            return Err(DeviceError::Os {
                call: "io_uring_enter",
                errno: libc::EBADF,
            });
        }
        let n = self.queued.len() as u32;
        self.at_device.extend(self.queued.drain(..));
        if min > 0 {
            self.now_ns += 1000;
            while let Some(op) = self.at_device.pop_front() {
                let result = self
                    .results
                    .pop_front()
                    .flatten()
                    .unwrap_or(op.len_bytes as i32);
                self.done.push(IoCompletion {
                    user_data: self.wrong_token.unwrap_or(op.user_data),
                    result,
                    completed_at_ns: self.now_ns,
                });
            }
        }
        Ok(n)
    }

    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        let n = self.done.len();
        self.reaped += n as u64;
        out.append(&mut self.done);
        n
    }
}

/// A loop of four 4 KiB buffers over a scripted device, with one buffer held: what the
/// misuse tests start from.
fn with_held_buffer(f: impl FnOnce(&mut ShardLoop<&mut Scripted>, BufId)) {
    let mut dev = Scripted::new(4);
    let mut shard = ShardLoop::new(&mut dev, vec![pool(4, 4096)], LoopOptions::default());
    let buf = shard.buffers_mut().acquire(0).expect("buffer");
    f(&mut shard, buf);
}

/// The held buffer's first 4 KiB read at offset 0.
fn read_op(buf: BufId) -> Op {
    Op::new(0, Direction::Read, 3, 0, buf, 4096)
}

fn pool(count: usize, bytes: usize) -> DmaBufferPool {
    let align = DioAlignment {
        mem_align_bytes: 512,
        offset_align_bytes: 512,
        source: AlignmentSource::Default,
    };
    DmaBufferPool::new(count, bytes, &align).expect("pool")
}

/// Reads `total` 4 KiB blocks at depth `pool`'s count; remembers every completion.
struct Reads {
    total: u64,
    issued: u64,
    done: Vec<Done>,
    fail_on: Option<u64>,
}

impl Reads {
    fn new(total: u64) -> Reads {
        Reads {
            total,
            issued: 0,
            done: Vec::new(),
            fail_on: None,
        }
    }
}

impl OpSource for Reads {
    type Error = String;

    fn next_op(&mut self, _now: u64, buffers: &mut LoopBuffers) -> Result<Next, String> {
        if self.issued == self.total {
            return Ok(Next::Finished);
        }
        let Some(buf) = buffers.acquire(0) else {
            return Ok(Next::WaitForCompletion);
        };
        let op = Op::new(
            self.issued,
            Direction::Read,
            3,
            self.issued * 4096,
            buf,
            4096,
        );
        self.issued += 1;
        Ok(Next::Op(op))
    }

    fn on_done(&mut self, done: Done, buffers: &mut LoopBuffers) -> Result<Flow, String> {
        buffers.release(done.buf);
        let tag = done.tag;
        self.done.push(done);
        if self.fail_on == Some(tag) {
            return Err(format!("op {tag} failed"));
        }
        Ok(Flow::Continue)
    }
}

#[test]
fn a_source_runs_to_the_end_and_every_completion_matches_its_op() {
    let mut dev = Scripted::new(4);
    let mut shard = ShardLoop::new(&mut dev, vec![pool(4, 4096)], LoopOptions::default());
    let mut reads = Reads::new(50);
    shard.run(&mut reads).expect("run");
    assert_eq!(shard.in_flight(), 0);
    assert_eq!(shard.buffers().free_count(0), 4);
    assert_eq!(shard.stats().ops_completed, 50);
    drop(shard);
    assert_eq!((dev.pushed, dev.reaped), (50, 50));
    let mut tags: Vec<u64> = reads.done.iter().map(|d| d.tag).collect();
    tags.sort_unstable();
    assert_eq!(tags, (0..50).collect::<Vec<_>>());
    for d in &reads.done {
        assert_eq!(d.offset_bytes, d.tag * 4096, "{d:?}");
        assert_eq!(d.outcome, Outcome::Full);
    }
}

#[test]
fn dropping_a_loop_with_ops_in_flight_drains_them() {
    let mut dev = Scripted::new(8);
    let mut shard = ShardLoop::new(&mut dev, vec![pool(8, 4096)], LoopOptions::default());
    for i in 0..8 {
        let buf = shard.buffers_mut().acquire(0).expect("buffer");
        let op = Op::new(i, Direction::Write, 3, i * 4096, buf, 4096);
        shard.push(op).expect("push");
    }
    assert_eq!(shard.in_flight(), 8);
    drop(shard);
    assert_eq!(dev.pushed, 8);
    assert_eq!(dev.reaped, 8, "the drop must wait for every op");
    assert_eq!(dev.outstanding(), 0);
}

#[test]
fn a_source_error_stops_issuing_and_drains() {
    let mut dev = Scripted::new(4);
    let mut shard = ShardLoop::new(&mut dev, vec![pool(4, 4096)], LoopOptions::default());
    let mut reads = Reads::new(1000);
    reads.fail_on = Some(5);
    let err = shard.run(&mut reads).expect_err("the source failed");
    assert!(
        matches!(err, RunError::Source(ref s) if s == "op 5 failed"),
        "{err}"
    );
    assert_eq!(shard.in_flight(), 0);
    assert!(
        reads.issued < 20,
        "kept issuing after the error: {}",
        reads.issued
    );
    drop(shard);
    assert_eq!(dev.outstanding(), 0);
}

#[test]
fn a_device_that_cannot_be_waited_on_leaks_the_buffers_rather_than_free_them() {
    let mut dev = Scripted::new(4);
    {
        let mut shard = ShardLoop::new(&mut dev, vec![pool(4, 4096)], LoopOptions::default());
        let buf = shard.buffers_mut().acquire(0).expect("buffer");
        shard
            .push(Op::new(0, Direction::Read, 3, 0, buf, 4096))
            .expect("push");
        shard.device_mut().fail_waits = true;
        let err = shard.drain().expect_err("the device fails");
        assert!(err.to_string().contains("EBADF") || err.to_string().contains("Bad file"));
        // Dropping now must neither wait again nor free the pool.
    }
    assert_eq!(dev.reaped, 0);
}

#[test]
fn results_are_named_short_end_of_file_and_errno() {
    let mut dev = Scripted::new(4);
    dev.results = [Some(4096), Some(1024), Some(0), Some(-libc::EIO)]
        .into_iter()
        .collect();
    let mut shard = ShardLoop::new(&mut dev, vec![pool(4, 4096)], LoopOptions::default());
    let mut reads = Reads::new(4);
    shard.run(&mut reads).expect("run");
    reads.done.sort_by_key(|d| d.tag);
    let outcomes: Vec<Outcome> = reads.done.iter().map(|d| d.outcome).collect();
    assert_eq!(
        outcomes,
        vec![
            Outcome::Full,
            Outcome::Short { moved_bytes: 1024 },
            Outcome::EndOfFile,
            Outcome::Failed { errno: libc::EIO },
        ]
    );
}

#[test]
#[should_panic(expected = "not in flight")]
fn a_completion_with_an_unknown_token_stops_the_program() {
    let mut dev = Scripted::new(4);
    dev.wrong_token = Some(77);
    let mut shard = ShardLoop::new(&mut dev, vec![pool(4, 4096)], LoopOptions::default());
    let _ = shard.run(&mut Reads::new(1));
}

#[test]
#[should_panic(expected = "not aligned")]
fn a_misaligned_op_never_reaches_the_device() {
    with_held_buffer(|shard, buf| {
        let _ = shard.push(Op::new(0, Direction::Read, 3, 100, buf, 4096));
    });
}

#[test]
#[should_panic(expected = "overrun")]
fn an_op_longer_than_its_buffer_never_reaches_the_device() {
    with_held_buffer(|shard, buf| {
        let _ = shard.push(Op::new(0, Direction::Read, 3, 0, buf, 8192));
    });
}

#[test]
#[should_panic(expected = "in state InFlight")]
fn a_buffer_in_flight_cannot_be_touched() {
    with_held_buffer(|shard, buf| {
        shard.push(read_op(buf)).expect("push");
        shard.buffers_mut().bytes_mut(buf)[0] = 1;
    });
}

#[test]
#[should_panic(expected = "release of")]
fn a_buffer_in_flight_cannot_be_released() {
    with_held_buffer(|shard, buf| {
        shard.push(read_op(buf)).expect("push");
        shard.buffers_mut().release(buf);
    });
}

#[test]
fn pieces_and_vectored_ops_share_buffers_until_the_last_completes() {
    let mut dev = Scripted::new(4);
    let mut shard = ShardLoop::new(&mut dev, vec![pool(2, 8192)], LoopOptions::default());
    let a = shard.buffers_mut().acquire(0).expect("a");
    let b = shard.buffers_mut().acquire(0).expect("b");
    let piece = |tag, offset| Op {
        tag,
        direction: Direction::Write,
        fd: 3,
        offset_bytes: offset,
        segments: Segments::One(Span {
            buf: a,
            offset_bytes: offset as u32,
            len_bytes: 4096,
        }),
        flags: Default::default(),
    };
    shard.push(piece(1, 0)).expect("first piece");
    shard.push(piece(2, 4096)).expect("second piece");
    let merged = Op {
        tag: 3,
        direction: Direction::Write,
        fd: 3,
        offset_bytes: 65536,
        segments: Segments::Many(vec![Span::whole(b, 8192), Span::whole(b, 4096)]),
        flags: Default::default(),
    };
    shard.push(merged).expect("vectored");
    shard.wait(3, None).expect("wait");
    let mut lens = Vec::new();
    while let Some(d) = shard.next_done() {
        lens.push((d.tag, d.len_bytes, d.outcome));
        // The request buffer is the source's again only once all its pieces are back.
        let all_back = lens.len() >= 2;
        assert_eq!(shard.buffers().is_held(a), all_back || d.tag == 3);
    }
    assert_eq!(
        lens,
        vec![
            (1, 4096, Outcome::Full),
            (2, 4096, Outcome::Full),
            (3, 12288, Outcome::Full)
        ]
    );
    drop(shard);
    assert_eq!(dev.pushed, 3);
}

#[test]
fn batched_submission_takes_one_device_call_per_turn() {
    for (policy, most_calls) in [(SubmitPolicy::Batched, 40), (SubmitPolicy::Eager, 10_000)] {
        let mut dev = Scripted::new(32);
        let options = LoopOptions {
            submit: policy,
            ..LoopOptions::default()
        };
        let mut shard = ShardLoop::new(&mut dev, vec![pool(32, 4096)], options);
        shard.run(&mut Reads::new(320)).expect("run");
        let calls = shard.stats().device_calls;
        drop(shard);
        // Batched: each turn refills the depth and submits it with the wait (10 turns of 32,
        // plus the drain); eager: one submission per op pushed while others are in flight.
        assert!(calls <= most_calls, "{policy:?}: {calls} calls");
        if policy == SubmitPolicy::Eager {
            assert!(calls > 250, "eager submitted in batches: {calls} calls");
        }
    }
}

#[test]
fn submit_probes_count_the_ops_of_each_submission() {
    let mut dev = Scripted::new(4);
    let options = LoopOptions {
        submit: SubmitPolicy::Batched,
        probe_submits: true,
        ..LoopOptions::default()
    };
    let mut shard = ShardLoop::new(&mut dev, vec![pool(4, 4096)], options);
    shard.run(&mut Reads::new(8)).expect("run");
    let ops: Vec<u32> = shard.submit_facts().iter().map(|f| f.ops).collect();
    assert_eq!(ops, vec![4, 4]);
}

#[test]
fn into_pools_gives_back_every_buffer_free() {
    let mut dev = Scripted::new(4);
    let mut shard = ShardLoop::new(
        &mut dev,
        vec![pool(4, 4096), pool(2, 8192)],
        LoopOptions::default(),
    );
    let held = shard.buffers_mut().acquire(1).expect("held");
    let buf = shard.buffers_mut().acquire(0).expect("buffer");
    shard
        .push(Op::new(0, Direction::Read, 3, 0, buf, 4096))
        .expect("push");
    assert_eq!(held.pool(), 1);
    let pools = shard.into_pools().expect("drained");
    assert_eq!(pools[0].free_count(), 4);
    assert_eq!(pools[1].free_count(), 2);
}

#[test]
#[should_panic(expected = "never acquired or was released")]
fn an_op_on_a_released_buffer_never_reaches_the_device() {
    with_held_buffer(|shard, buf| {
        shard.buffers_mut().release(buf);
        let _ = shard.push(read_op(buf));
    });
}
