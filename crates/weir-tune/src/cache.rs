//! [`probe`]: whether a cache below the device answers re-reads (the host's page cache under a
//! virtual disk, a controller's cache). Two passes of the same sequential reads over the same
//! bytes, back to back: the first reads data not read since it was written, the second reads
//! it again. On this project's VM 1 MiB reads of data just read ran at 2.5-3.5 GB/s while the
//! host held it and at 0.8-1.7 GB/s once it did not, so a read figure that does not say which
//! of the two it measured cannot be repeated.

use crate::error::TuneError;
use crate::meter::{Control, Load, Meter, Sample};

/// A re-read at least this much faster than the first read of the same bytes is a cache
/// below the device answering it; run-to-run noise of 1 MiB reads on a shared virtual disk
/// stays within about 1.25x.
pub const CACHED_RATIO_MIN: f64 = 1.5;

/// What the two passes measured.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct CacheProbe {
    pub load: Load,
    /// Bytes the first pass read (all shards); the second reads as many from the same start.
    pub bytes: u64,
    pub first_read_bytes_per_s: f64,
    pub re_read_bytes_per_s: f64,
    /// Re-read rate over first-read rate.
    pub ratio: f64,
    /// Wall time of both passes, starts and drains included.
    pub wall_ns: u64,
}

impl CacheProbe {
    /// Whether the re-read ran fast enough to have come from a cache below the device.
    pub fn cached(&self) -> bool {
        self.ratio >= CACHED_RATIO_MIN
    }
}

/// One pass of `load` from the start of the reads' data until `bytes` were read or `max_ns`
/// passed: the bytes read and the rate, each counted from the load's start.
fn pass(
    meter: &mut dyn Meter,
    load: &Load,
    bytes: u64,
    max_ns: u64,
    sample_ns: u64,
) -> Result<(u64, f64, u64), TuneError> {
    let mut last = Sample::default();
    meter.run(load, sample_ns, &mut |s: &Sample| {
        last = *s;
        if s.bytes >= bytes || s.elapsed_ns >= max_ns {
            Control::Stop
        } else {
            Control::Continue
        }
    })?;
    if last.elapsed_ns == 0 || last.bytes == 0 {
        return Err(TuneError::NoSamples { load: *load });
    }
    let wall_ns = meter.last_run_wall_ns().unwrap_or(last.elapsed_ns);
    Ok((
        last.bytes,
        last.bytes as f64 / (last.elapsed_ns as f64 / 1e9),
        wall_ns,
    ))
}

/// Reads `bytes` (all shards) with `load`, a sequential read load, then the same bytes again:
/// each pass stops after `max_ns` at the latest, and the second reads as many bytes as the
/// first did. The meter's sequential reads start each load at the start of the same data, and
/// nothing may have read it since it was written.
pub fn probe(
    meter: &mut dyn Meter,
    load: &Load,
    bytes: u64,
    max_ns: u64,
    sample_ns: u64,
) -> Result<CacheProbe, TuneError> {
    let (read, first, first_wall_ns) = pass(meter, load, bytes, max_ns, sample_ns)?;
    let (_, again, again_wall_ns) = pass(meter, load, read, max_ns, sample_ns)?;
    Ok(CacheProbe {
        load: *load,
        bytes: read,
        first_read_bytes_per_s: first,
        re_read_bytes_per_s: again,
        ratio: if first > 0.0 { again / first } else { 0.0 },
        wall_ns: first_wall_ns + again_wall_ns,
    })
}
