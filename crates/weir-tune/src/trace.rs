//! An opt-in trace of every load a tune runs: one line per sample (the `weir` binary writes
//! it to stderr under `WEIR_TUNE_TRACE=1`), so a figure can be followed back to the 100 ms samples it was formed from and set
//! beside another meter's on the same bytes. It wraps any
//! [`Meter`] and changes nothing it measures.

use crate::error::TuneError;
use crate::load::{direction_name, pattern_name};
use crate::meter::{Control, Load, Meter, Sample};

/// A meter that writes each load's samples to `out` as it forwards them.
pub struct Traced<'m, W: std::io::Write> {
    inner: &'m mut dyn Meter,
    out: W,
    /// Loads run so far: the number each trace line starts with.
    loads: u32,
}

impl<'m, W: std::io::Write> Traced<'m, W> {
    pub fn new(inner: &'m mut dyn Meter, out: W) -> Self {
        Traced {
            inner,
            out,
            loads: 0,
        }
    }
}

/// One sample's line: load number, load, time since the load started (ms), the interval's
/// rate in MB/s (10^6 bytes) and IOPS, and the cumulative counters.
pub fn sample_line(load_no: u32, load: &Load, previous: &Sample, s: &Sample) -> String {
    let seconds = s.elapsed_ns.saturating_sub(previous.elapsed_ns).max(1) as f64 / 1e9;
    let bytes = s.bytes.saturating_sub(previous.bytes) as f64;
    let ops = s.ops.saturating_sub(previous.ops) as f64;
    format!(
        "trace {load_no} {} {} {}B x{} t_ms {} MBps {:.0} iops {:.0} ops {} bytes {}",
        pattern_name(load.pattern),
        direction_name(load.direction),
        load.request_bytes,
        load.depth,
        s.elapsed_ns / 1_000_000,
        bytes / seconds / 1e6,
        ops / seconds,
        s.ops,
        s.bytes,
    )
}

impl<W: std::io::Write> Meter for Traced<'_, W> {
    fn shards(&self) -> u32 {
        self.inner.shards()
    }

    fn depth_max(&self) -> u32 {
        self.inner.depth_max()
    }

    fn request_bytes_min(&self) -> u32 {
        self.inner.request_bytes_min()
    }

    fn last_run_wall_ns(&self) -> Option<u64> {
        self.inner.last_run_wall_ns()
    }

    fn run(
        &mut self,
        load: &Load,
        sample_interval_ns: u64,
        on_sample: &mut dyn FnMut(&Sample) -> Control,
    ) -> Result<(), TuneError> {
        self.loads += 1;
        let (load_no, out) = (self.loads, &mut self.out);
        let mut previous = Sample::default();
        self.inner
            .run(load, sample_interval_ns, &mut |s: &Sample| {
                // A trace that cannot be written must not stop the measurement.
                let _ = writeln!(out, "{}", sample_line(load_no, load, &previous, s));
                previous = *s;
                on_sample(s)
            })?;
        // The load's whole cost beside its last sample: where a run's time went.
        if let Some(wall_ns) = self.inner.last_run_wall_ns() {
            let _ = writeln!(
                self.out,
                "trace {load_no} done sampled_ms {} wall_ms {}",
                previous.elapsed_ns / 1_000_000,
                wall_ns / 1_000_000
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::Pattern;
    use weir_model::device::Direction;

    #[test]
    fn a_sample_line_gives_the_intervals_rate() {
        let load = Load {
            direction: Direction::Read,
            pattern: Pattern::Sequential,
            request_bytes: 1 << 20,
            depth: 4,
        };
        let a = Sample {
            elapsed_ns: 100_000_000,
            ops: 1000,
            bytes: 1000 << 20,
            latency_ns_sum: 0,
        };
        let b = Sample {
            elapsed_ns: 200_000_000,
            ops: 1500,
            bytes: 1500 << 20,
            latency_ns_sum: 0,
        };
        let line = sample_line(3, &load, &a, &b);
        // 500 MiB in 100 ms: 5242.88 MB/s, 5000 IOPS.
        assert!(line.contains("t_ms 200 MBps 5243 iops 5000"), "{line}");
        assert!(
            line.starts_with("trace 3 sequential read 1048576B x4"),
            "{line}"
        );
    }
}
