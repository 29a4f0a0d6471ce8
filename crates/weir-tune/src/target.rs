//! One shard's test file: where each kind of load puts its next request, and which bytes hold
//! data worth reading.

use crate::meter::{Load, Pattern};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::ops::Range;
use std::os::fd::RawFd;
use weir_model::device::Direction;

/// Sequential writes with at most this many requests in flight on a shard lay down the data
/// the sequential reads read back (fio's layout pass writes with a few in flight, and so does
/// a database writing a file). Data written by deeper queues is read only when there is too
/// little of the rest: on this project's VM it read back at 0.45-0.8x, because the host
/// places many concurrent writes to one file out of order.
pub const LAYOUT_DEPTH_MAX: u32 = 8;

/// The least layout data a shard needs before its sequential reads keep to it: less would be
/// re-read so often that a cache below the guest could answer it.
pub const LAYOUT_BYTES_MIN: u64 = 1 << 30;

/// The most data a shard's sequential reads read: the first this many bytes of the reads'
/// data, read from their start by every load and wrapping at their end, as fio reads a file
/// of this size (the cross-check's data per shard, and the bench's fio files). Every
/// sequential-read measurement then reads the same bytes in the same state: read by the
/// measurement before it. Reads that went on through more data read each step at a new place
/// in it, and on this project's VM the place set the rate: the first-written GiB read at 2.5
/// GB/s where the data after it read at 0.65-1.4, so a sweep compared places, not depths.
pub const SEQUENTIAL_READ_WINDOW_BYTES: u64 = 1 << 30;

/// Room a shard's file keeps past the data the sequential reads read, for sequential writes to
/// wrap around in once the file is full: past the end they start again here, never below, so
/// the data the reads read is written once and never overwritten. Why it matters: on XFS over
/// zram, 1 MiB reads of data overwritten once ran 1.38x faster than of the same data written
/// once into holes (3 rotated rounds, same meter, same minute: 19.4-20.1 against 14.2-14.5
/// GB/s), and a database reads files it wrote once.
pub const WRAP_ROOM_BYTES: u64 = 512 << 20;

/// The least written data a shard's random writes get to themselves, outside the data any read
/// reads: taken from the end of the reads' data when the sequential writes left less written
/// data outside it. Random 4 KiB writes over the reads' data would change what a later read
/// of it measures (the read-bandwidth second opinion runs after them, and on XFS over zram
/// overwritten data reads faster than data written once); Seastar's iotune measures its
/// sequential reads before its random writes for the same reason of order.
pub const RANDOM_WRITE_BYTES_MIN: u64 = 256 << 20;

/// The most written data a shard's random writes get: more is left out (the end of it), so
/// every run whose sequential writes left at least this much outside the reads' data writes
/// randomly over the same amount of the same kind of data (data this run wrote, then
/// overwrote on wrapping: on a 6 GiB zram XFS exactly this much, `WRAP_ROOM_BYTES`, in every
/// run on an idle machine, but the gaps of a layout that a busy run's sweep broke up
/// elsewhere). Random writes are always overwrites of data this run wrote, never fresh space
/// or holes; `TuneReport::random_write_bytes` says how much per shard.
pub const RANDOM_WRITE_BYTES_MAX: u64 = WRAP_ROOM_BYTES;

/// One shard's test file and where its sequential streams stand. Sequential writes only move
/// forward into space this run never wrote (fresh, pre-truncated), so every write measurement
/// allocates like a real append-free workload; reads stay inside what was written, because
/// reading a hole never reaches the disk.
#[derive(Debug)]
pub struct ShardTarget {
    pub fd: RawFd,
    pub file_bytes: u64,
    /// Offsets below this hold data written by this run.
    pub written_bytes: u64,
    pub seq_write_cursor: u64,
    pub seq_read_cursor: u64,
    /// Set when sequential writes reached the end of the file and started overwriting.
    pub wrapped: bool,
    /// Where sequential writes start again past the end of the file: the end of the data
    /// written first and shallow (the reads' data), fixed at the first wrap and capped so
    /// [`WRAP_ROOM_BYTES`] stay to wrap in; 0 when the file began with deep writes.
    wrap_to: u64,
    /// Writes issued so far: the sequence number stamped into each write's blocks.
    writes: u64,
    rng: SmallRng,
    /// Ranges written by sequential writes at most [`LAYOUT_DEPTH_MAX`] deep, in the order
    /// written (each 1 MiB-aligned when the writes were).
    layout: Vec<Range<u64>>,
    /// Bytes in `layout`.
    layout_bytes: u64,
    /// Whether the current load's writes extend `layout`.
    laying_out: bool,
    /// The ranges the sequential reads read (the first [`SEQUENTIAL_READ_WINDOW_BYTES`] of
    /// `layout`), set as each sequential read load begins.
    read_window: Vec<Range<u64>>,
    /// The `read_window` range the sequential reads are in.
    read_range: usize,
    /// Set when `layout` was made the reads' data by [`ShardTarget::begin_load`] with too
    /// little shallow data: it then holds everything written that random writes left alone.
    layout_forced: bool,
    /// Written data outside the reads' data, where random writes go; fixed before the first
    /// read or random write.
    random_write_ranges: Vec<Range<u64>>,
    /// Set once the random writes' data was split off the reads' (before the first read).
    split: bool,
    /// Set for a file prepared by the caller ([`ShardTarget::over_prepared`]): every load
    /// covers all of it, as fio's jobs cover their file.
    prepared: bool,
}

impl ShardTarget {
    pub fn new(fd: RawFd, file_bytes: u64, seed: u64) -> ShardTarget {
        ShardTarget {
            fd,
            file_bytes,
            written_bytes: 0,
            seq_write_cursor: 0,
            seq_read_cursor: 0,
            wrapped: false,
            wrap_to: 0,
            writes: 0,
            rng: SmallRng::seed_from_u64(seed),
            layout: Vec::new(),
            layout_bytes: 0,
            laying_out: false,
            read_window: Vec::new(),
            read_range: 0,
            layout_forced: false,
            random_write_ranges: Vec::new(),
            split: false,
            prepared: false,
        }
    }

    /// A target over a file the caller wrote (`data_bytes` of it): reads and random writes
    /// cover all of it, sequential writes start at 0 and stop at `limit_bytes`, as fio runs
    /// over its file (`examples/meter_point.rs` runs the meter at fio's shape this way).
    pub fn over_prepared(fd: RawFd, limit_bytes: u64, seed: u64, data_bytes: u64) -> ShardTarget {
        ShardTarget {
            written_bytes: data_bytes,
            prepared: true,
            ..ShardTarget::new(fd, limit_bytes, seed)
        }
    }

    /// Called as `load` starts with `depth` requests in flight on this shard.
    pub fn begin_load(&mut self, load: &Load, depth: u32) {
        self.laying_out = load.pattern == Pattern::Sequential
            && load.direction == Direction::Write
            && depth <= LAYOUT_DEPTH_MAX;
        if !self.prepared && self.written_bytes > 0 {
            let random_writes =
                load.pattern == Pattern::Random && load.direction == Direction::Write;
            if !self.split && (random_writes || load.direction == Direction::Read) {
                self.split_off_random_writes();
                self.split = true;
            }
        }
        if load.pattern == Pattern::Sequential && load.direction == Direction::Read {
            // Every sequential read load starts at the start of the same data, as a fio job
            // starts at the start of its file.
            self.read_window = self.read_ranges();
            self.read_range = 0;
            self.seq_read_cursor = self.read_window.first().map_or(0, |r| r.start);
        }
    }

    /// Before the first read (or random write): sets apart written data no read will read for
    /// the random writes, taking it from the end of the reads' data when there is less than
    /// [`RANDOM_WRITE_BYTES_MIN`] (at most half of it). Done before any read, so no read, earlier
    /// or later, reads what a random write wrote.
    fn split_off_random_writes(&mut self) {
        if !self.uses_layout() {
            // Too little shallow data: the reads' data becomes everything written, or, once
            // writes have wrapped, only the shallow data (the rest may be written twice).
            if !self.wrapped {
                let end = self.written_bytes & !((1 << 20) - 1);
                self.layout.clear();
                self.layout.extend((end > 0).then_some(0..end));
                self.layout_bytes = end;
            }
            self.layout_forced = !self.layout.is_empty();
            self.read_range = 0;
            self.seq_read_cursor = 0;
        }
        let have: u64 = self.unread_written().iter().map(|r| r.end - r.start).sum();
        let mut take = RANDOM_WRITE_BYTES_MIN
            .saturating_sub(have)
            .min(self.layout_bytes / 2)
            & !((1 << 20) - 1);
        while take > 0 {
            let Some(top) = self.layout.iter().max_by_key(|r| r.end).cloned() else {
                break;
            };
            let cut = take.min(top.end - top.start);
            self.forget_layout(top.end - cut..top.end);
            take -= cut;
        }
        // Fixed from here on: data the reads read and a later wrapping write dropped from
        // `layout` never becomes the random writes', so no read ever read what they write.
        self.random_write_ranges = keep_first_bytes(self.unread_written(), RANDOM_WRITE_BYTES_MAX);
    }

    /// Bytes the random writes write over (fixed before the first read or random write).
    pub fn random_write_bytes(&self) -> u64 {
        self.random_write_ranges
            .iter()
            .map(|r| r.end - r.start)
            .sum()
    }

    /// The ranges below `written_bytes` outside `layout`, in file order.
    fn unread_written(&self) -> Vec<Range<u64>> {
        let mut read = self.layout.clone();
        read.sort_by_key(|r| r.start);
        let mut out = Vec::new();
        let mut at = 0;
        for r in read
            .iter()
            .chain(std::iter::once(&(self.written_bytes..u64::MAX)))
        {
            if r.start > at {
                out.push(at..r.start.min(self.written_bytes));
            }
            at = at.max(r.end);
        }
        out.retain(|r| r.start < r.end);
        out
    }

    /// Counts one more write and returns its sequence number.
    pub fn count_write(&mut self) -> u64 {
        self.writes += 1;
        self.writes
    }

    /// Bytes the sequential reads read: the first [`SEQUENTIAL_READ_WINDOW_BYTES`] of the
    /// layout data, or of everything written when there is too little of it.
    pub fn sequential_read_bytes(&self) -> u64 {
        self.read_ranges().iter().map(|r| r.end - r.start).sum()
    }

    /// The ranges the sequential reads read, in the order they read them.
    pub fn read_ranges(&self) -> Vec<Range<u64>> {
        if self.uses_layout() {
            keep_first_bytes(self.layout.clone(), SEQUENTIAL_READ_WINDOW_BYTES)
        } else {
            std::iter::once(0..self.plain_read_end()).collect()
        }
    }

    /// Where reads of everything written wrap: at the end of the data or of the window.
    fn plain_read_end(&self) -> u64 {
        self.written_bytes.min(SEQUENTIAL_READ_WINDOW_BYTES)
    }

    fn uses_layout(&self) -> bool {
        self.layout_forced || self.layout_bytes >= LAYOUT_BYTES_MIN
    }

    /// The next offset of a random load in its own region: random writes in their ranges,
    /// random reads in the sequential reads' data (written once, never by a random write).
    /// `None` on a prepared file, or before either region is known: then the load covers
    /// everything written.
    fn random_offset(&mut self, direction: Direction, req: u64) -> Option<u64> {
        if self.prepared {
            return None;
        }
        let ranges = match direction {
            Direction::Write => &self.random_write_ranges,
            Direction::Read if self.uses_layout() => &self.layout,
            Direction::Read => return None,
        };
        pick_request(ranges, req, &mut self.rng)
    }

    /// The next offset for `load`; the request never crosses the end of its region.
    pub fn next_offset(&mut self, load: &Load) -> u64 {
        let req = u64::from(load.request_bytes);
        match (load.pattern, load.direction) {
            (Pattern::Random, direction) => {
                if let Some(offset) = self.random_offset(direction, req) {
                    return offset;
                }
                // Random writes overwrite written data, as fio's do after its layout pass; random
                // reads must hit written data or the filesystem answers without the disk.
                let region = if self.written_bytes >= req {
                    self.written_bytes
                } else {
                    self.file_bytes
                };
                self.rng.gen_range(0..(region / req).max(1)) * req
            }
            (Pattern::Sequential, Direction::Write) => self.next_write(req),
            (Pattern::Sequential, Direction::Read) => {
                if self.uses_layout() {
                    if let Some(offset) = self.next_layout_read(req) {
                        return offset;
                    }
                }
                self.next_plain_read(req)
            }
        }
    }

    fn next_write(&mut self, req: u64) -> u64 {
        // A stream may follow one of another size: start on this size's boundary.
        self.seq_write_cursor = self.seq_write_cursor.next_multiple_of(req);
        if self.seq_write_cursor + req > self.file_bytes {
            if !self.wrapped {
                self.wrap_to = self.kept_bytes();
                self.wrapped = true;
            }
            self.seq_write_cursor = self.wrap_to.next_multiple_of(req);
            if self.seq_write_cursor + req > self.file_bytes {
                self.seq_write_cursor = 0;
            }
        }
        let offset = self.seq_write_cursor;
        self.seq_write_cursor += req;
        self.written_bytes = self.written_bytes.max(self.seq_write_cursor);
        if self.wrapped {
            // Past the end once, writes replace earlier ones: what they overwrite leaves the
            // layout, and they never join it (the reads read data written once).
            self.forget_layout(offset..offset + req);
        } else if self.laying_out {
            self.layout_bytes += req;
            match self.layout.last_mut() {
                Some(last) if last.end == offset => last.end = offset + req,
                _ => self.layout.push(offset..offset + req),
            }
        }
        offset
    }

    /// The bytes from offset 0 that wrapping writes leave alone: the first layout range when
    /// it starts the file (the data the reads read), at most all but [`WRAP_ROOM_BYTES`].
    fn kept_bytes(&self) -> u64 {
        let first = self.layout.first().filter(|r| r.start == 0);
        let room_end = self.file_bytes.saturating_sub(WRAP_ROOM_BYTES);
        first.map_or(0, |r| r.end.min(room_end)) & !((1 << 20) - 1)
    }

    /// Drops the bytes of `cut` from the layout ranges, in place (no allocation per write).
    fn forget_layout(&mut self, cut: Range<u64>) {
        let mut split = None;
        let mut removed = 0;
        for r in self.layout.iter_mut() {
            let (start, end) = (r.start.max(cut.start), r.end.min(cut.end));
            if start >= end {
                continue;
            }
            removed += end - start;
            if r.start < cut.start && r.end > cut.end {
                split = Some(cut.end..r.end);
                r.end = cut.start;
            } else if r.start < cut.start {
                r.end = cut.start;
            } else {
                r.start = end;
            }
        }
        if removed == 0 {
            return;
        }
        self.layout.retain(|r| r.start < r.end);
        self.layout.extend(split);
        self.layout_bytes -= removed;
        self.read_window.clear();
        self.read_range = 0;
    }

    /// Reads everything written, in file order, wrapping at the end.
    fn next_plain_read(&mut self, req: u64) -> u64 {
        self.seq_read_cursor = self.seq_read_cursor.next_multiple_of(req);
        if self.seq_read_cursor + req > self.plain_read_end().max(req) {
            self.seq_read_cursor = 0;
        }
        let offset = self.seq_read_cursor;
        self.seq_read_cursor += req;
        offset
    }

    /// Reads the window's ranges one after another, wrapping after the last; `None` when no
    /// range holds a whole request.
    fn next_layout_read(&mut self, req: u64) -> Option<u64> {
        if self.read_window.is_empty() {
            self.read_window = self.read_ranges();
        }
        let n = self.read_window.len();
        if n == 0 {
            return None;
        }
        for _ in 0..=n {
            let range = self.read_window[self.read_range % n].clone();
            let start = self.seq_read_cursor.max(range.start).next_multiple_of(req);
            if start + req <= range.end {
                self.seq_read_cursor = start + req;
                return Some(start);
            }
            self.read_range = (self.read_range + 1) % n;
            self.seq_read_cursor = self.read_window[self.read_range].start;
        }
        None
    }
}

/// A uniformly drawn `req`-aligned request lying wholly inside one of `ranges`; `None` when
/// no range holds one.
/// The first `limit` bytes of `ranges`, in their order, cut to whole MiB.
fn keep_first_bytes(ranges: Vec<Range<u64>>, limit: u64) -> Vec<Range<u64>> {
    let mut left = limit & !((1 << 20) - 1);
    let mut out = Vec::new();
    for r in ranges {
        if left == 0 {
            break;
        }
        let take = (r.end - r.start).min(left);
        out.push(r.start..r.start + take);
        left -= take;
    }
    out
}

fn pick_request(ranges: &[Range<u64>], req: u64, rng: &mut SmallRng) -> Option<u64> {
    let slots = |r: &Range<u64>| r.end.saturating_sub(r.start.next_multiple_of(req)) / req;
    let total: u64 = ranges.iter().map(slots).sum();
    if total == 0 {
        return None;
    }
    let mut n = rng.gen_range(0..total);
    for r in ranges {
        let here = slots(r);
        if n < here {
            return Some(r.start.next_multiple_of(req) + n * req);
        }
        n -= here;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(direction: Direction, request_bytes: u32) -> Load {
        Load {
            direction,
            pattern: Pattern::Sequential,
            request_bytes,
            depth: 1,
        }
    }

    /// Writes `bytes` sequentially at `depth` per shard.
    fn write(t: &mut ShardTarget, bytes: u64, depth: u32) {
        let load = seq(Direction::Write, 1 << 20);
        t.begin_load(&load, depth);
        for _ in 0..bytes >> 20 {
            t.next_offset(&load);
        }
    }

    #[test]
    fn sequential_reads_keep_to_the_first_gib_written_shallow() {
        let mut t = ShardTarget::new(-1, 64 << 30, 1);
        write(&mut t, 512 << 20, 2); // 0 .. 0.5 GiB, shallow
        write(&mut t, 2 << 30, 128); // 0.5 .. 2.5 GiB, deep
        write(&mut t, 1 << 30, 8); // 2.5 .. 3.5 GiB, shallow: its first half is read
        assert_eq!(t.sequential_read_bytes(), SEQUENTIAL_READ_WINDOW_BYTES);
        let read = seq(Direction::Read, 1 << 20);
        t.begin_load(&read, 128);
        let offsets: Vec<u64> = (0..(3 << 10)).map(|_| t.next_offset(&read)).collect();
        let deep = (512u64 << 20)..(2560u64 << 20);
        assert!(offsets.iter().all(|o| !deep.contains(o)), "read deep data");
        // In order through the first range, then the window's part of the second, then
        // around again.
        assert_eq!(offsets[511], 511 << 20);
        assert_eq!(offsets[512], 2560 << 20);
        assert_eq!(offsets[1023], (3072 << 20) - (1 << 20));
        assert_eq!(offsets[1024], 0);
        // Smaller reads walk the same ranges.
        let small = seq(Direction::Read, 256 << 10);
        assert_eq!(t.next_offset(&small) % (256 << 10), 0);
    }

    /// Every sequential read load starts at the start of the reads' data, as fio's jobs start
    /// at the start of their files: two loads of any length read the same bytes first. Reads
    /// that went on from where the last load stopped fail this.
    #[test]
    fn each_sequential_read_load_starts_at_the_start_of_the_data() {
        let mut t = ShardTarget::new(-1, 64 << 30, 1);
        write(&mut t, 3 << 30, 2);
        for (req, n) in [
            (1u32 << 20, 700u64),
            (1 << 20, 1),
            (128 << 10, 5000),
            (1 << 20, 3),
        ] {
            let read = seq(Direction::Read, req);
            t.begin_load(&read, 4);
            assert_eq!(t.next_offset(&read), 0, "{req} B reads after {n}");
            for _ in 1..n {
                t.next_offset(&read);
            }
        }
    }

    /// On a small disk the writes reach the end of the file and start again, past the data
    /// the reads read: what was written first and shallow stays written once.
    #[test]
    fn writes_past_the_end_wrap_past_the_data_the_reads_read() {
        let mut t = ShardTarget::new(-1, 2 << 30, 1);
        write(&mut t, 1536 << 20, 2); // 0 .. 1.5 GiB, shallow
        write(&mut t, 1 << 30, 128); // 1.5 .. 2 GiB, then 1.5 .. 2 GiB again, deep
        assert!(t.wrapped);
        assert_eq!(t.sequential_read_bytes(), SEQUENTIAL_READ_WINDOW_BYTES);
        write(&mut t, 1 << 30, 2); // 1.5 .. 2 GiB twice more, shallow: rewritten, not read
        assert_eq!(t.sequential_read_bytes(), SEQUENTIAL_READ_WINDOW_BYTES);
        let read = seq(Direction::Read, 1 << 20);
        for _ in 0..(3 << 10) {
            let o = t.next_offset(&read);
            assert!(o < 1536 << 20, "read {o}, past the data written once");
        }
    }

    /// Seeded mixes of sequential writes (64 KiB-1 MiB, 1-256 deep, the first loads shallow
    /// as tune's sweep starts) over a file they wrap many times: every byte the sequential
    /// reads then read was written exactly once. Overwritten data reads faster on XFS over
    /// zram (1.38x at 1 MiB), so a read of it would flatter read bandwidth; writes that
    /// wrapped to 0 and let shallow rewrites rejoin the layout fail this.
    #[test]
    fn sequential_reads_read_only_data_written_once() {
        const CHUNK: u64 = 64 << 10;
        for seed in 1..=20u64 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let file_bytes = (1536 + 64 * rng.gen_range(0..16)) << 20;
            let mut t = ShardTarget::new(-1, file_bytes, seed);
            let mut times_written = vec![0u8; (file_bytes / CHUNK) as usize];
            for step in 0..12 {
                let load = seq(Direction::Write, 64 << (10 + rng.gen_range(0..5)));
                // Tune's sweep starts shallow and lays down its read data (1 GiB at least);
                // with less, the reads read everything written (`sequential_read_bytes`).
                let (depth, bytes) = match step {
                    0 | 1 => (2, 600 << 20),
                    _ => (1 << rng.gen_range(0..9), rng.gen_range(1..1536) << 20),
                };
                t.begin_load(&load, depth);
                for _ in 0..bytes / u64::from(load.request_bytes) {
                    let o = t.next_offset(&load);
                    for c in o / CHUNK..(o + u64::from(load.request_bytes)) / CHUNK {
                        let n = &mut times_written[c as usize];
                        *n = n.saturating_add(1);
                    }
                }
            }
            assert!(t.wrapped, "seed {seed}: the writes must wrap for this test");
            let read = seq(Direction::Read, 1 << 20);
            t.begin_load(&read, 4);
            for _ in 0..(4 << 10) {
                let o = t.next_offset(&read);
                for c in o / CHUNK..(o + (1 << 20)) / CHUNK {
                    let n = times_written[c as usize];
                    assert_eq!(
                        n, 1,
                        "seed {seed}: read at {o} covers a chunk written {n} times"
                    );
                }
            }
        }
    }

    /// Seeded mixes of sequential write loads (sizes 64 KiB-1 MiB, depths 1-256) over a small
    /// file, wrapping many times: the layout never counts a byte twice nor a byte outside the
    /// file, and its ranges never overlap.
    #[test]
    fn the_layout_stays_within_the_file_through_many_wraps() {
        for seed in 1..=20u64 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let file_bytes = 64u64 << 20;
            let mut t = ShardTarget::new(-1, file_bytes, seed);
            for _ in 0..40 {
                let load = seq(Direction::Write, 64 << (10 + rng.gen_range(0..5)));
                t.begin_load(&load, 1 << rng.gen_range(0..9));
                for _ in 0..rng.gen_range(1..200) {
                    t.next_offset(&load);
                }
                let mut ranges = t.layout.clone();
                ranges.sort_by_key(|r| r.start);
                let sum: u64 = ranges.iter().map(|r| r.end - r.start).sum();
                assert_eq!(sum, t.layout_bytes, "seed {seed}: layout count");
                assert!(t.layout_bytes <= file_bytes, "seed {seed}: beyond the file");
                for pair in ranges.windows(2) {
                    assert!(
                        pair[0].end <= pair[1].start,
                        "seed {seed}: overlap {pair:?}"
                    );
                }
            }
        }
    }

    fn rnd(direction: Direction, request_bytes: u32) -> Load {
        Load {
            pattern: Pattern::Random,
            ..seq(direction, request_bytes)
        }
    }

    /// Per 4 KiB chunk of one shard's file: how often sequential writes wrote it, whether a
    /// random write ever did, whether a read ever read it.
    struct Chunks {
        written: Vec<u8>,
        random_written: Vec<bool>,
        read: Vec<bool>,
    }

    impl Chunks {
        const BYTES: u64 = 4096;

        fn of(file_bytes: u64) -> Chunks {
            let n = (file_bytes / Chunks::BYTES) as usize;
            Chunks {
                written: vec![0; n],
                random_written: vec![false; n],
                read: vec![false; n],
            }
        }

        /// Runs `n` requests of `load` at `depth`; every read must, when issued, cover data
        /// written exactly once and never by a random write.
        fn run(&mut self, t: &mut ShardTarget, load: Load, depth: u32, n: u64, what: &str) {
            t.begin_load(&load, depth);
            let what = format!("{what}, {load:?} x{depth}");
            let req = u64::from(load.request_bytes);
            for _ in 0..n {
                let o = t.next_offset(&load);
                for c in (o / Chunks::BYTES..(o + req).div_ceil(Chunks::BYTES)).map(|c| c as usize)
                {
                    match (load.direction, load.pattern) {
                        (Direction::Read, _) => {
                            assert_eq!(
                                self.written[c], 1,
                                "{what}: read at {o} of data written {} times",
                                self.written[c]
                            );
                            assert!(
                                !self.random_written[c],
                                "{what}: read at {o} of randomly written data"
                            );
                            self.read[c] = true;
                        }
                        (Direction::Write, Pattern::Sequential) => {
                            self.written[c] = self.written[c].saturating_add(1);
                        }
                        (Direction::Write, Pattern::Random) => self.random_written[c] = true,
                    }
                }
            }
        }
    }

    /// Tune's order over seeded file sizes and write mixes, the wrapping small-disk case and
    /// the too-little-shallow-data case included: sequential writes (shallow, then deep),
    /// sequential reads, the saturation searches, random writes of 4 KiB and the sector
    /// sweep's 512 B-8 KiB, random reads, then the second opinions (sequential writes, reads
    /// of both kinds, random writes). No read ever reads a chunk a random write wrote, before
    /// or after it, nor one written more than once; random writes keep at least
    /// `RANDOM_WRITE_BYTES_MIN` (or half the reads' data) to themselves. Random writes over
    /// everything written fail this at the first read after them.
    #[test]
    fn no_read_reads_what_a_random_write_wrote() {
        for seed in 1..=16u64 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let file_bytes = (1536u64 + 256 * rng.gen_range(0..24)) << 20;
            let mut t = ShardTarget::new(-1, file_bytes, seed);
            let mut c = Chunks::of(file_bytes);
            let what = format!("seed {seed}, file {} MiB", file_bytes >> 20);
            // The sequential-write sweep: shallow steps (a few hundred MiB each, less than
            // LAYOUT_BYTES_MIN in all for some seeds), then deep ones.
            let shallow = rng.gen_range(1..4);
            for _ in 0..shallow {
                c.run(
                    &mut t,
                    seq(Direction::Write, 1 << 20),
                    1 << rng.gen_range(0..4),
                    rng.gen_range(200..700),
                    &what,
                );
            }
            for _ in 0..rng.gen_range(0..4) {
                c.run(
                    &mut t,
                    seq(Direction::Write, 1 << 20),
                    16 << rng.gen_range(0..5),
                    rng.gen_range(100..1500),
                    &what,
                );
            }
            let read_data_bytes = t.sequential_read_bytes();
            c.run(&mut t, seq(Direction::Read, 1 << 20), 4, 3000, &what);
            c.run(&mut t, seq(Direction::Read, 128 << 10), 4, 3000, &what);
            c.run(&mut t, seq(Direction::Write, 256 << 10), 2, 800, &what);
            c.run(&mut t, rnd(Direction::Write, 4096), 32, 200_000, &what);
            for bytes in [512, 1024, 2048, 4096, 8192] {
                c.run(&mut t, rnd(Direction::Write, bytes), 16, 20_000, &what);
            }
            c.run(&mut t, rnd(Direction::Read, 4096), 64, 200_000, &what);
            c.run(&mut t, seq(Direction::Write, 1 << 20), 2, 800, &what);
            c.run(&mut t, seq(Direction::Read, 1 << 20), 4, 3000, &what);
            c.run(&mut t, rnd(Direction::Write, 4096), 32, 100_000, &what);
            c.run(&mut t, rnd(Direction::Read, 4096), 64, 100_000, &what);
            let both = (0..c.read.len())
                .filter(|&i| c.read[i] && c.random_written[i])
                .count();
            assert_eq!(both, 0, "{what}: {both} chunks read and randomly written");
            let own = t.random_write_bytes();
            let floor = RANDOM_WRITE_BYTES_MIN.min(read_data_bytes / 2) - (1 << 20);
            assert!(
                own >= floor && own <= RANDOM_WRITE_BYTES_MAX,
                "{what}: random writes had {own} B to themselves"
            );
            assert!(t.layout_bytes > 0, "{what}: no data left to read");
        }
    }

    /// `read_ranges` (what tune reports as `sequential_read_ranges_bytes`, the bytes the bench
    /// has fio and the meter read beside it) is exactly what the sequential reads read: every
    /// read lies inside it and one pass covers all of it, with and without enough shallow data
    /// and after wraps: on zram the first 1 GiB of each file reads 1.3-1.4x costlier per GB
    /// than the rest of tune's data, so a bench must read exactly these ranges.
    #[test]
    fn read_ranges_are_exactly_what_the_sequential_reads_read() {
        for seed in 1..=12u64 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let file_bytes = (1536u64 + 256 * rng.gen_range(0..4)) << 20;
            let mut t = ShardTarget::new(-1, file_bytes, seed);
            for _ in 0..rng.gen_range(1..5) {
                let depth = 1 << rng.gen_range(0..6);
                write(&mut t, rng.gen_range(100..1200) << 20, depth);
            }
            let read = seq(Direction::Read, 1 << 20);
            t.begin_load(&read, 2);
            let ranges = t.read_ranges();
            let total: u64 = ranges.iter().map(|r| r.end - r.start).sum();
            assert_eq!(total, t.sequential_read_bytes(), "seed {seed}");
            let mut read_mib = std::collections::BTreeSet::new();
            for _ in 0..2 * (total >> 20) {
                let o = t.next_offset(&read);
                assert!(
                    ranges
                        .iter()
                        .any(|r| r.start <= o && o + (1 << 20) <= r.end),
                    "seed {seed}: read at {o} outside {ranges:?}"
                );
                read_mib.insert(o >> 20);
            }
            assert_eq!(
                read_mib.len() as u64,
                total >> 20,
                "seed {seed}: {ranges:?}"
            );
        }
    }

    #[test]
    fn too_little_shallow_data_reads_the_first_gib_written() {
        let mut t = ShardTarget::new(-1, 64 << 30, 1);
        write(&mut t, 256 << 20, 2);
        write(&mut t, 2 << 30, 128);
        assert_eq!(t.sequential_read_bytes(), SEQUENTIAL_READ_WINDOW_BYTES);
        let read = seq(Direction::Read, 1 << 20);
        let offsets: Vec<u64> = (0..(1 << 10) + 1).map(|_| t.next_offset(&read)).collect();
        assert_eq!(offsets[1000], 1000 << 20);
        assert_eq!(
            *offsets.last().unwrap_or(&1),
            0,
            "wraps at the end of the data"
        );
    }
}
