//! The simulated-disk file of `weir run --simulate DISK.yaml`: a YAML map of the
//! [`SimConfig`] fields with units, starting from a preset.
//!
//! Every value is range-checked inside its deserializer, so serde_yaml attaches the value's
//! own line and column to the error; the checks that need two fields (the true sector at
//! least the logical one, chunks of whole sectors) find the key's line again in the text.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use weir_model::units::{parse_duration, parse_size};

use crate::{SimConfig, Slowdown};

/// Why a disk file was refused. `line` and `column` are 1-based when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskFileError {
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

impl fmt::Display for DiskFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "{l}:{c}: {}", self.message),
            (Some(l), None) => write!(f, "{l}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for DiskFileError {}

/// A parsed disk file.
#[derive(Debug, Clone, PartialEq)]
pub struct SimDiskFile {
    pub config: SimConfig,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDisk {
    preset: Option<Preset>,
    seed: Option<u64>,
    read_iops: Option<Rate>,
    read_bandwidth: Option<Rate>,
    write_iops: Option<Rate>,
    write_bandwidth: Option<Rate>,
    channels: Option<Int<1, 4096>>,
    channel_stripe: Option<Bytes<512, { 1 << 30 }>>,
    fixed_latency: Option<Time>,
    write_overhead: Option<Time>,
    /// Roundness of the IOPS/bandwidth knee (1 = additive, large = max()).
    shape: Option<Milli<1000, 64_000>>,
    jitter: Option<Milli<0, 900>>,
    read_write_interference: Option<Milli<1000, 100_000>>,
    logical_sector: Option<Sector>,
    physical_sector: Option<Sector>,
    reported_physical_sector: Option<Sector>,
    queue_depth: Option<Int<1, 65_536>>,
    raid0: Option<RawRaid>,
    #[serde(default)]
    slowdowns: Vec<RawSlowdown>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRaid {
    members: Int<1, 1024>,
    chunk_size: Bytes<4096, { 1 << 30 }>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSlowdown {
    at: Time,
    duration: Time,
    factor: Milli<10, 1_000_000>,
}

impl SimDiskFile {
    /// Parses a disk file's text.
    pub fn parse(text: &str) -> Result<SimDiskFile, DiskFileError> {
        let raw: RawDisk = match serde_yaml::from_str::<Option<RawDisk>>(text) {
            Ok(Some(raw)) => raw,
            Ok(None) => {
                return Err(DiskFileError {
                    line: None,
                    column: None,
                    message: "the disk file is empty: give at least `preset: nvme_like` (see \
                              docs/reference/job-files.md, `--simulate`)"
                        .into(),
                })
            }
            Err(e) => return Err(yaml_error(&e)),
        };
        let seed = raw.seed.unwrap_or(1);
        let mut c = match raw.preset.map_or("nvme_like", |p| p.0) {
            "slow_sata" => SimConfig::slow_sata(seed),
            "virtio_sparse_writes" => SimConfig::virtio_sparse_writes(seed),
            _ => SimConfig::nvme_like(seed),
        };
        set(&mut c.read.iops, raw.read_iops.map(|r| r.0));
        set(&mut c.read.bytes_per_sec, raw.read_bandwidth.map(|r| r.0));
        set(&mut c.write.iops, raw.write_iops.map(|r| r.0));
        set(&mut c.write.bytes_per_sec, raw.write_bandwidth.map(|r| r.0));
        set(&mut c.channels, raw.channels.map(|v| v.0 as u32));
        set(&mut c.channel_stripe_bytes, raw.channel_stripe.map(|v| v.0));
        set(&mut c.fixed_latency_ns, raw.fixed_latency.map(|t| t.0));
        set(&mut c.write_overhead_ns, raw.write_overhead.map(|t| t.0));
        set(&mut c.shape_p, raw.shape.map(|v| v.value()));
        set(&mut c.jitter, raw.jitter.map(|v| v.value()));
        set(
            &mut c.read_write_interference,
            raw.read_write_interference.map(|v| v.value()),
        );
        set(&mut c.logical_sector_bytes, raw.logical_sector.map(|s| s.0));
        if let Some(s) = raw.physical_sector {
            c.physical_sector_bytes = s.0;
            // A disk that says nothing else reports the truth.
            c.reported_physical_sector_bytes = s.0;
        }
        set(
            &mut c.reported_physical_sector_bytes,
            raw.reported_physical_sector.map(|s| s.0),
        );
        set(&mut c.queue_depth, raw.queue_depth.map(|v| v.0 as u32));
        if let Some(r) = raw.raid0 {
            c.raid0_members = r.members.0 as u32;
            c.raid0_chunk_bytes = r.chunk_size.0;
        }
        c.slowdowns = raw
            .slowdowns
            .iter()
            .map(|s| Slowdown {
                at_ns: s.at.0,
                duration_ns: s.duration.0,
                factor: s.factor.value(),
            })
            .collect();
        check_together(&c, text)?;
        Ok(SimDiskFile { config: c })
    }
}

fn set<T>(field: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *field = v;
    }
}

/// The checks that involve two fields.
fn check_together(c: &SimConfig, text: &str) -> Result<(), DiskFileError> {
    let fail = |key: &str, message: String| {
        let (line, column) = locate(text, key).map_or((None, None), |(l, c)| (Some(l), Some(c)));
        Err(DiskFileError {
            line,
            column,
            message: format!("{key}: {message}"),
        })
    };
    if c.physical_sector_bytes < c.logical_sector_bytes {
        return fail(
            "physical_sector",
            format!(
                "{} bytes is below the logical sector ({} bytes): a disk's true sector is at \
                 least its logical one; raise it or lower logical_sector",
                c.physical_sector_bytes, c.logical_sector_bytes
            ),
        );
    }
    if c.reported_physical_sector_bytes < c.logical_sector_bytes {
        return fail(
            "reported_physical_sector",
            format!(
                "{} bytes is below the logical sector ({} bytes): no disk reports that; \
                 raise it or lower logical_sector",
                c.reported_physical_sector_bytes, c.logical_sector_bytes
            ),
        );
    }
    if c.raid0_chunk_bytes % u64::from(c.physical_sector_bytes) != 0 {
        return fail(
            "chunk_size",
            format!(
                "{} bytes is not a whole number of physical sectors ({} bytes): use a power \
                 of two such as 512k or 1M",
                c.raid0_chunk_bytes, c.physical_sector_bytes
            ),
        );
    }
    Ok(())
}

/// The 1-based line and column of the first `key:` in `text`.
fn locate(text: &str, key: &str) -> Option<(usize, usize)> {
    text.lines().enumerate().find_map(|(i, line)| {
        let body = line.trim_start();
        let rest = body.strip_prefix(key)?;
        rest.trim_start()
            .starts_with(':')
            .then(|| (i + 1, line.len() - body.len() + 1))
    })
}

fn yaml_error(e: &serde_yaml::Error) -> DiskFileError {
    let location = e.location();
    let mut message = e.to_string();
    if let Some(at) = message.rfind(" at line ") {
        message.truncate(at);
    }
    if message.contains("expected struct RawDisk") || message.contains("invalid type") {
        message = message.replace("struct RawDisk", "a map of disk settings");
    }
    DiskFileError {
        line: location.as_ref().map(|l| l.line()),
        column: location.as_ref().map(|l| l.column()),
        message,
    }
}

/// A value-checking visitor: `check` turns the scalar into the value or an error message
/// that names the unit and the valid range.
struct Checked<T> {
    expecting: &'static str,
    check: fn(Scalar) -> Result<T, String>,
    _t: PhantomData<T>,
}

enum Scalar<'a> {
    Int(i128),
    Float(f64),
    Str(&'a str),
}

impl<T> Visitor<'_> for Checked<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        (self.check)(Scalar::Int(i128::from(v))).map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        (self.check)(Scalar::Int(i128::from(v))).map_err(E::custom)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        (self.check)(Scalar::Float(v)).map_err(E::custom)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.check)(Scalar::Str(v)).map_err(E::custom)
    }
}

fn checked<'de, D: Deserializer<'de>, T>(
    d: D,
    expecting: &'static str,
    check: fn(Scalar) -> Result<T, String>,
) -> Result<T, D::Error> {
    d.deserialize_any(Checked {
        expecting,
        check,
        _t: PhantomData,
    })
}

/// A whole number within MIN..=MAX (a size suffix is accepted: `64k`).
struct Int<const MIN: u64, const MAX: u64>(u64);

fn whole(s: Scalar) -> Result<u64, String> {
    match s {
        Scalar::Int(v) if v < 0 => Err(format!("{v} is negative")),
        Scalar::Int(v) => u64::try_from(v).map_err(|_| format!("{v} is too large")),
        Scalar::Float(v) => Err(format!("{v} is not a whole number")),
        Scalar::Str(v) => parse_size(v).map_err(|e| e.to_string()),
    }
}

fn in_range<const MIN: u64, const MAX: u64>(v: u64, unit: &str) -> Result<u64, String> {
    if (MIN..=MAX).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "{v}{unit} is out of range: give {MIN} to {MAX}{unit}"
        ))
    }
}

impl<'de, const MIN: u64, const MAX: u64> Deserialize<'de> for Int<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        checked(d, "a whole number", |s| {
            in_range::<MIN, MAX>(whole(s)?, "").map(Int)
        })
    }
}

/// A byte count within MIN..=MAX: `4096`, `128k`, `1MiB`.
struct Bytes<const MIN: u64, const MAX: u64>(u64);

impl<'de, const MIN: u64, const MAX: u64> Deserialize<'de> for Bytes<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        checked(d, "a size such as 4096, 128k or 1M", |s| {
            in_range::<MIN, MAX>(whole(s)?, " bytes").map(Bytes)
        })
    }
}

/// A sector size: a power of two from 512 B to 1 MiB.
struct Sector(u32);

impl<'de> Deserialize<'de> for Sector {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        checked(d, "a sector size such as 512 or 4096", |s| {
            let v = in_range::<512, { 1 << 20 }>(whole(s)?, " bytes")?;
            if v.is_power_of_two() {
                Ok(Sector(v as u32))
            } else {
                Err(format!(
                    "{v} bytes is not a power of two: sectors are 512, 1024, 2048, 4096, ..."
                ))
            }
        })
    }
}

/// A per-second rate (IOPS, or bytes per second): a positive number up to 1e13, with an
/// optional binary suffix (`800k`, `3G`).
struct Rate(f64);

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        checked(d, "a rate per second such as 800k or 3G", |s| {
            let v = match s {
                Scalar::Float(v) => v,
                other => whole(other)? as f64,
            };
            if v.is_finite() && (1.0..=1e13).contains(&v) {
                Ok(Rate(v))
            } else {
                Err(format!(
                    "{v} per second is out of range: give 1 to 10T per second"
                ))
            }
        })
    }
}

/// A number with three decimals within MIN/1000..=MAX/1000 (factors, fractions).
struct Milli<const MIN: u64, const MAX: u64>(u64);

impl<const MIN: u64, const MAX: u64> Milli<MIN, MAX> {
    fn value(&self) -> f64 {
        self.0 as f64 / 1000.0
    }
}

impl<'de, const MIN: u64, const MAX: u64> Deserialize<'de> for Milli<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        checked(d, "a number such as 1.5", |s| {
            let v = match s {
                Scalar::Int(v) => v as f64,
                Scalar::Float(v) => v,
                Scalar::Str(v) => v
                    .trim()
                    .parse::<f64>()
                    .map_err(|_| format!("`{v}` is not a number"))?,
            };
            let milli = v * 1000.0;
            if milli.is_finite() && (MIN as f64..=MAX as f64).contains(&milli) {
                Ok(Milli(milli.round() as u64))
            } else {
                Err(format!(
                    "{v} is out of range: give {} to {}",
                    MIN as f64 / 1000.0,
                    MAX as f64 / 1000.0
                ))
            }
        })
    }
}

/// A duration up to one hour, in nanoseconds: `40us`, `1ms`, `0`.
struct Time(u64);

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        checked(d, "a duration such as 40us or 2s", |s| {
            let t = match s {
                Scalar::Int(0) => return Ok(Time(0)),
                Scalar::Str(v) => parse_duration(v).map_err(|e| e.to_string())?,
                _ => {
                    return Err("a duration needs a unit (ns, us, ms or s), e.g. 40us".into());
                }
            };
            if t.as_secs() > 3600 {
                return Err(format!("{t:?} is out of range: give at most 1h"));
            }
            Ok(Time(t.as_nanos() as u64))
        })
    }
}

/// One of the presets of [`SimConfig`].
struct Preset(&'static str);

const PRESETS: &[&str] = &["nvme_like", "slow_sata", "virtio_sparse_writes"];

impl<'de> Deserialize<'de> for Preset {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        checked(d, "a preset name", |s| match s {
            Scalar::Str(v) => PRESETS
                .iter()
                .find(|p| **p == v)
                .map(|p| Preset(p))
                .ok_or_else(|| format!("unknown preset `{v}`: valid are {}", PRESETS.join(", "))),
            _ => Err(format!("a preset is a name: one of {}", PRESETS.join(", "))),
        })
    }
}

#[cfg(test)]
#[path = "disk_file_tests.rs"]
mod tests;
