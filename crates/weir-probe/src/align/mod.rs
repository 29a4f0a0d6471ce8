//! `weir align`: the blktrace alignment charts of ScyllaDB's disk articles without blktrace.
//!
//! We write files the way a database does (sequential 128 KiB requests, several files at
//! once) in each preparation mode, then ask the filesystem with FIEMAP where every request's
//! bytes went. A request's *alignment* is the largest power of two dividing the device byte
//! address of its first byte: a 1 KiB-aligned 128 KiB write on a 4 KiB-sector drive costs a
//! read-modify-write at its head and tail. Requests spanning two extents are split by the
//! filesystem; requests crossing a RAID chunk boundary are split by md.
//!
//! Address levels: FIEMAP gives addresses on the filesystem's block device. A partition adds
//! its start. A loop device is one more level: its addresses are offsets in the backing file,
//! which FIEMAP of that file maps to the device below (reading it needs permission to open the
//! backing file, usually root). Each level reached gets its own histogram.

mod error;
pub mod run;

pub use error::AlignError;

use serde::Serialize;

use crate::fiemap::{map_range, Extent};

/// Histogram buckets: 512 B .. 1 MiB; the last bucket holds 1 MiB and larger.
pub const BUCKETS_BYTES: [u64; 12] = [
    512,
    1 << 10,
    2 << 10,
    4 << 10,
    8 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
    128 << 10,
    256 << 10,
    512 << 10,
    1 << 20,
];

/// A bucket's label: `512`, `1K`, ..., `1M+`.
pub fn bucket_label(i: usize) -> String {
    let b = BUCKETS_BYTES[i];
    let s = if b >= 1 << 20 {
        format!("{}M", b >> 20)
    } else if b >= 1 << 10 {
        format!("{}K", b >> 10)
    } else {
        b.to_string()
    };
    if i + 1 == BUCKETS_BYTES.len() {
        format!("{s}+")
    } else {
        s
    }
}

/// The largest power of two dividing `addr` (address 0 counts as maximally aligned).
pub fn alignment_of(addr_bytes: u64) -> u64 {
    if addr_bytes == 0 {
        return 1 << 63;
    }
    1 << addr_bytes.trailing_zeros()
}

/// The bucket index of an address (sub-512 B alignments, impossible on sector devices, land in
/// the first bucket).
pub fn bucket_of(addr_bytes: u64) -> usize {
    let a = alignment_of(addr_bytes);
    BUCKETS_BYTES.iter().rposition(|&b| a >= b).unwrap_or(0)
}

/// Whether `[addr, addr + len)` crosses a multiple of `chunk`.
pub fn crosses_chunk(addr_bytes: u64, len_bytes: u64, chunk_bytes: u64) -> bool {
    chunk_bytes > 0
        && len_bytes > 0
        && addr_bytes / chunk_bytes != (addr_bytes + len_bytes - 1) / chunk_bytes
}

/// How one address level maps the level above it.
#[derive(Debug, Clone)]
pub enum LevelMap {
    /// Addresses shift by a constant (a partition's start).
    Offset(u64),
    /// Addresses are offsets in a file (a loop device's backing file, after its `offset`),
    /// mapped by that file's extents.
    File {
        offset_bytes: u64,
        extents: Vec<Extent>,
    },
}

/// One address level to report.
#[derive(Debug, Clone)]
pub struct Level {
    /// The device whose addresses this level gives (`loop0`, `vda`, `md0`).
    pub device: String,
    /// How it was reached, in words.
    pub how: String,
    pub map: LevelMap,
    /// RAID chunk to count crossings of at this level.
    pub chunk_bytes: Option<u64>,
}

/// The alignment distribution at one level.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Histogram {
    /// Requests per bucket of [`BUCKETS_BYTES`].
    pub counts: Vec<u64>,
    pub requests: u64,
    /// Requests the filesystem (or loop backing file) stores in more than one piece.
    pub split_requests: u64,
    /// Requests with bytes in a hole (not mapped at this level).
    pub unmapped_requests: u64,
    pub chunk_bytes: Option<u64>,
    /// Requests with a piece crossing a chunk boundary.
    pub chunk_crossing_requests: Option<u64>,
}

impl Histogram {
    fn new(chunk_bytes: Option<u64>) -> Self {
        Histogram {
            counts: vec![0; BUCKETS_BYTES.len()],
            chunk_bytes,
            chunk_crossing_requests: chunk_bytes.map(|_| 0),
            ..Histogram::default()
        }
    }

    /// Share (0..1) of requests aligned to at least `bytes`.
    pub fn share_aligned(&self, bytes: u64) -> f64 {
        if self.requests == 0 {
            return 0.0;
        }
        let n: u64 = BUCKETS_BYTES
            .iter()
            .zip(&self.counts)
            .filter(|(b, _)| **b >= bytes)
            .map(|(_, c)| *c)
            .sum();
        n as f64 / self.requests as f64
    }

    fn add(&mut self, pieces: &[(u64, u64)], expected_len: u64) {
        self.requests += 1;
        let mapped: u64 = pieces.iter().map(|p| p.1).sum();
        if pieces.is_empty() || mapped < expected_len {
            self.unmapped_requests += 1;
        }
        if let Some(&(addr, _)) = pieces.first() {
            self.counts[bucket_of(addr)] += 1;
        }
        let contiguous = pieces.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0);
        if !contiguous {
            self.split_requests += 1;
        }
        if let (Some(chunk), Some(c)) = (self.chunk_bytes, self.chunk_crossing_requests.as_mut()) {
            if pieces.iter().any(|&(a, l)| crosses_chunk(a, l, chunk)) {
                *c += 1;
            }
        }
    }
}

/// A level's histogram with its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LevelReport {
    pub device: String,
    pub how: String,
    pub histogram: Histogram,
}

/// Maps pieces at one level through the next.
fn map_pieces(pieces: &[(u64, u64)], map: &LevelMap) -> Vec<(u64, u64)> {
    match map {
        LevelMap::Offset(off) => pieces.iter().map(|&(a, l)| (a + off, l)).collect(),
        LevelMap::File {
            offset_bytes,
            extents,
        } => pieces
            .iter()
            .flat_map(|&(a, l)| map_range(extents, a + offset_bytes, l))
            .collect(),
    }
}

/// Builds one histogram per level for requests `(file offset, length)` of one file with
/// `extents`. Level 0 must be the filesystem's device (its map is usually `Offset(0)`).
pub fn analyse(
    requests: &[(u64, u64)],
    extents: &[Extent],
    levels: &[Level],
    into: &mut Vec<LevelReport>,
) {
    if into.is_empty() {
        into.extend(levels.iter().map(|l| LevelReport {
            device: l.device.clone(),
            how: l.how.clone(),
            histogram: Histogram::new(l.chunk_bytes),
        }));
    }
    for &(off, len) in requests {
        let mut pieces = map_range(extents, off, len);
        for (level, report) in levels.iter().zip(into.iter_mut()) {
            pieces = map_pieces(&pieces, &level.map);
            report.histogram.add(&pieces, len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_buckets() {
        assert_eq!(bucket_of(1024), 1);
        assert_eq!(bucket_of(3 * 1024), 1);
        assert_eq!(bucket_of(2048), 2);
        assert_eq!(bucket_of(4096 * 3), 3);
        assert_eq!(bucket_of(64 << 10), 7);
        assert_eq!(bucket_of(5 << 20), 11);
        assert_eq!(bucket_of(0), 11);
        assert_eq!(bucket_of(512 * 7), 0);
        assert_eq!(bucket_label(0), "512");
        assert_eq!(bucket_label(3), "4K");
        assert_eq!(bucket_label(11), "1M+");
    }

    #[test]
    fn chunk_crossing() {
        let mib = 1 << 20;
        assert!(!crosses_chunk(0, 128 << 10, mib));
        assert!(crosses_chunk(mib - 1024, 128 << 10, mib));
        assert!(!crosses_chunk(mib - (128 << 10), 128 << 10, mib));
        assert!(!crosses_chunk(5, 10, 0));
    }

    #[test]
    fn levels_compose_through_a_loop_backing_file() {
        // File on loop0: one extent at loop address 1 KiB + 1 MiB.
        let file = [Extent {
            logical_bytes: 0,
            physical_bytes: (1 << 20) + 1024,
            length_bytes: 4 << 20,
            flags: 0,
        }];
        // Backing file on vda: loop addresses 0..8 MiB at vda 64 MiB (4 KiB aligned).
        let backing = vec![Extent {
            logical_bytes: 0,
            physical_bytes: 64 << 20,
            length_bytes: 8 << 20,
            flags: 0,
        }];
        let levels = [
            Level {
                device: "loop0".into(),
                how: "FIEMAP".into(),
                map: LevelMap::Offset(0),
                chunk_bytes: None,
            },
            Level {
                device: "vda".into(),
                how: "backing file".into(),
                map: LevelMap::File {
                    offset_bytes: 0,
                    extents: backing,
                },
                chunk_bytes: Some(1 << 20),
            },
        ];
        let reqs: Vec<(u64, u64)> = (0..8).map(|i| (i * (128 << 10), 128 << 10)).collect();
        let mut out = Vec::new();
        analyse(&reqs, &file, &levels, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].histogram.counts[1], 8, "all 1 KiB aligned on loop0");
        assert_eq!(out[1].histogram.counts[1], 8, "still 1 KiB aligned on vda");
        assert!((out[1].histogram.share_aligned(4096) - 0.0).abs() < 1e-9);
        // 8 x 128 KiB starting 1 KiB past a MiB boundary: the last one crosses the next MiB.
        assert_eq!(out[1].histogram.chunk_crossing_requests, Some(1));
        assert_eq!(out[0].histogram.split_requests, 0);
    }
}
