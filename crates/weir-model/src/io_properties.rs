//! io-properties.yaml, read and written exactly as Seastar's iotune and ScyllaDB use it.
//!
//! ```yaml
//! disks:
//!   - mountpoint: /var/lib/scylla
//!     read_iops: 85000
//!     read_bandwidth: 1900000000
//!     write_iops: 60000
//!     write_bandwidth: 1750000000
//! ```
//!
//! Rules kept from Seastar: the only top-level key is `disks`; each disk names `mountpoint` (or
//! `mountpoints`, a list) and the four rates; `read_saturation_length`, `write_saturation_length`,
//! `physical_block_size`, `duplex` and `rate_factor` are optional. One weir field is optional
//! too: `weir_latency_goal_us`, the in-disk latency goal `weir explore` derived for the disk
//! (`weir run` uses it unless `--latency-goal` is given); Seastar reads only the keys it knows. Numbers may be written with a
//! binary suffix (`95k` IOPS is 97,280; an optional `i`, `iB` or `B` is ignored). Zero rates, a
//! device listed twice and more than eight disks are errors. weir also refuses keys it does not
//! know inside a disk entry, because a misspelt optional key would otherwise be silently ignored.
//! Every error names the file, the line and the field.

use crate::units::parse_size;
use serde_yaml::Value;
use std::fmt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Seastar accepts at most this many disks in one file.
pub const MAX_DISKS: usize = 8;

const KNOWN_KEYS: [&str; 12] = [
    "mountpoint",
    "mountpoints",
    "read_iops",
    "read_bandwidth",
    "write_iops",
    "write_bandwidth",
    "read_saturation_length",
    "write_saturation_length",
    "physical_block_size",
    "duplex",
    "rate_factor",
    "weir_latency_goal_us",
];

/// One disk's model.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskProperties {
    /// The mount points (or block devices) this model applies to; usually one.
    pub mountpoints: Vec<String>,
    /// Random 4 KiB reads per second (`read_iops`).
    pub read_iops: u64,
    /// Sequential read bandwidth (`read_bandwidth`).
    pub read_bytes_per_sec: u64,
    /// Random 4 KiB writes per second (`write_iops`).
    pub write_iops: u64,
    /// Sequential write bandwidth (`write_bandwidth`).
    pub write_bytes_per_sec: u64,
    /// The read length past which bandwidth stops growing, when measured.
    pub read_saturation_length_bytes: Option<u64>,
    /// The write length past which bandwidth stops growing, when measured.
    pub write_saturation_length_bytes: Option<u64>,
    /// The disk's physical block size, when known.
    pub physical_block_size_bytes: Option<u64>,
    /// Reads and writes do not interfere: each direction gets a full budget.
    pub duplex: bool,
    /// Multiplies all four rates (the model's K); 1.0 when absent.
    pub rate_factor: f64,
    /// weir field: the scheduler's in-disk latency goal that keeps reads' arrival-to-completion
    /// p99 within the goal of the map it came from (docs/design/explore.md); None when absent.
    pub latency_goal_us: Option<u64>,
}

impl DiskProperties {
    /// A disk entry for one mount point with the four rates and no optional keys.
    pub fn new(
        mountpoint: impl Into<String>,
        read_iops: u64,
        read_bytes_per_sec: u64,
        write_iops: u64,
        write_bytes_per_sec: u64,
    ) -> Self {
        DiskProperties {
            mountpoints: vec![mountpoint.into()],
            read_iops,
            read_bytes_per_sec,
            write_iops,
            write_bytes_per_sec,
            read_saturation_length_bytes: None,
            write_saturation_length_bytes: None,
            physical_block_size_bytes: None,
            duplex: false,
            rate_factor: 1.0,
            latency_goal_us: None,
        }
    }

    /// The cost model of this disk.
    pub fn cost_model(&self) -> Result<crate::cost::CostModel, crate::cost::CostModelError> {
        crate::cost::CostModel::new(
            self.read_iops as f64,
            self.read_bytes_per_sec as f64,
            self.write_iops as f64,
            self.write_bytes_per_sec as f64,
            self.rate_factor,
            self.duplex,
        )
    }
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IoProperties {
    /// One entry per disk, in file order.
    pub disks: Vec<DiskProperties>,
}

/// What was wrong with an io-properties file, where, and how to fix it.
#[derive(Debug, Clone, PartialEq)]
pub struct IoPropertiesError {
    /// The file name (or `<inline>`).
    pub source: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for IoPropertiesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.source, line, self.message),
            None => write!(f, "{}: {}", self.source, self.message),
        }
    }
}

impl std::error::Error for IoPropertiesError {}

/// Finds the lines that keys live on. serde_yaml's values carry no positions, so the parser
/// locates each disk entry (a `-` item under `disks:`) and each key inside it by scanning the
/// text; flow-style YAML falls back to the entry's own line.
struct LineIndex<'a> {
    lines: Vec<&'a str>,
    /// 0-based line of each disk item.
    item_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        let lines: Vec<&str> = text.lines().collect();
        let mut item_starts = Vec::new();
        let mut item_indent = None;
        let mut in_disks = false;
        for (i, line) in lines.iter().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let indent = line.len() - trimmed.len();
            if indent == 0 && !trimmed.starts_with('-') {
                in_disks = trimmed.starts_with("disks");
                continue;
            }
            if in_disks && (trimmed.starts_with("- ") || trimmed == "-") {
                match item_indent {
                    None => {
                        item_indent = Some(indent);
                        item_starts.push(i);
                    }
                    Some(expected) if expected == indent => item_starts.push(i),
                    Some(_) => {}
                }
            }
        }
        LineIndex { lines, item_starts }
    }

    fn top_key(&self, key: &str) -> Option<usize> {
        self.lines
            .iter()
            .position(|l| key_of(l) == Some(key) && !l.starts_with(' '))
            .map(|i| i + 1)
    }

    fn item(&self, index: usize) -> Option<usize> {
        self.item_starts.get(index).map(|i| i + 1)
    }

    fn key_in_item(&self, index: usize, key: &str) -> Option<usize> {
        let start = *self.item_starts.get(index)?;
        let end = self
            .item_starts
            .get(index + 1)
            .copied()
            .unwrap_or(self.lines.len());
        (start..end)
            .find(|&i| key_of(self.lines[i]) == Some(key))
            .map(|i| i + 1)
            .or(Some(start + 1))
    }
}

/// The key a `key: value` or `- key: value` line defines.
fn key_of(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    let trimmed = trimmed.strip_prefix("- ").unwrap_or(trimmed).trim_start();
    let colon = trimmed.find(':')?;
    Some(trimmed[..colon].trim())
}

struct Parser<'a> {
    source: &'a str,
    index: LineIndex<'a>,
}

impl Parser<'_> {
    fn err(&self, line: Option<usize>, message: impl Into<String>) -> IoPropertiesError {
        IoPropertiesError {
            source: self.source.to_string(),
            line,
            message: message.into(),
        }
    }

    fn disk(&self, i: usize, value: &Value) -> Result<DiskProperties, IoPropertiesError> {
        let at = |key: &str| self.index.key_in_item(i, key);
        let map = value.as_mapping().ok_or_else(|| {
            self.err(
                self.index.item(i),
                format!(
                    "disk entry {} is not a map; write `- mountpoint: /path` followed by \
                     read_iops, read_bandwidth, write_iops and write_bandwidth",
                    i + 1
                ),
            )
        })?;
        for key in map.keys() {
            let name = key.as_str().unwrap_or("");
            if !KNOWN_KEYS.contains(&name) {
                return Err(self.err(
                    at(name),
                    format!(
                        "unknown key `{}` in disk entry {}; the known keys are {}",
                        yaml_text(key),
                        i + 1,
                        KNOWN_KEYS.join(", ")
                    ),
                ));
            }
        }
        let mountpoints = self.mountpoints(i, map)?;
        let rate = |key: &str| self.rate(i, map, key);
        let optional_size = |key: &str| match map.get(key) {
            None => Ok(None),
            Some(v) => self.size(at(key), key, v).map(Some),
        };
        let duplex = match map.get("duplex") {
            None => false,
            Some(v) => v.as_bool().ok_or_else(|| {
                self.err(
                    at("duplex"),
                    format!("duplex is `{}`; write true or false", yaml_text(v)),
                )
            })?,
        };
        let rate_factor = match map.get("rate_factor") {
            None => 1.0,
            Some(v) => v
                .as_f64()
                .filter(|f| f.is_finite() && *f > 0.0)
                .ok_or_else(|| {
                    self.err(
                        at("rate_factor"),
                        format!(
                            "rate_factor is `{}`; write a positive number such as 1.0 \
                             (it multiplies all four rates)",
                            yaml_text(v)
                        ),
                    )
                })?,
        };
        let latency_goal_us = match map.get("weir_latency_goal_us") {
            None => None,
            Some(v) => Some(v.as_u64().filter(|us| *us > 0).ok_or_else(|| {
                self.err(
                    at("weir_latency_goal_us"),
                    format!(
                        "weir_latency_goal_us is `{}`; write a positive whole number of \
                         microseconds such as 750",
                        yaml_text(v)
                    ),
                )
            })?),
        };
        Ok(DiskProperties {
            mountpoints,
            read_iops: rate("read_iops")?,
            read_bytes_per_sec: rate("read_bandwidth")?,
            write_iops: rate("write_iops")?,
            write_bytes_per_sec: rate("write_bandwidth")?,
            read_saturation_length_bytes: optional_size("read_saturation_length")?,
            write_saturation_length_bytes: optional_size("write_saturation_length")?,
            physical_block_size_bytes: optional_size("physical_block_size")?,
            duplex,
            rate_factor,
            latency_goal_us,
        })
    }

    fn mountpoints(
        &self,
        i: usize,
        map: &serde_yaml::Mapping,
    ) -> Result<Vec<String>, IoPropertiesError> {
        let at = |key: &str| self.index.key_in_item(i, key);
        match (map.get("mountpoint"), map.get("mountpoints")) {
            (Some(_), Some(_)) => Err(self.err(
                at("mountpoints"),
                "both `mountpoint` and `mountpoints` are given; keep one",
            )),
            (Some(v), None) => match v.as_str() {
                Some(s) if !s.is_empty() => Ok(vec![s.to_string()]),
                _ => Err(self.err(
                    at("mountpoint"),
                    format!("mountpoint is `{}`; write a path", yaml_text(v)),
                )),
            },
            (None, Some(v)) => {
                let list = v.as_sequence().filter(|l| !l.is_empty()).ok_or_else(|| {
                    self.err(
                        at("mountpoints"),
                        "mountpoints must be a non-empty list of paths",
                    )
                })?;
                list.iter()
                    .map(|p| {
                        p.as_str().map(str::to_string).ok_or_else(|| {
                            self.err(
                                at("mountpoints"),
                                format!("mountpoints entry `{}` is not a path", yaml_text(p)),
                            )
                        })
                    })
                    .collect()
            }
            (None, None) => Err(self.err(
                self.index.item(i),
                format!(
                    "disk entry {} has no `mountpoint`; add `mountpoint: /path/of/the/data`",
                    i + 1
                ),
            )),
        }
    }

    fn rate(
        &self,
        i: usize,
        map: &serde_yaml::Mapping,
        key: &str,
    ) -> Result<u64, IoPropertiesError> {
        let at = self.index.key_in_item(i, key);
        let value = map.get(key).ok_or_else(|| {
            self.err(
                self.index.item(i),
                format!(
                    "disk entry {} has no `{key}`; measure the disk with `weir tune` or add it",
                    i + 1
                ),
            )
        })?;
        let rate = self.size(at, key, value)?;
        if rate == 0 {
            let unit = if key.ends_with("iops") {
                "operations per second"
            } else {
                "bytes per second"
            };
            return Err(self.err(
                at,
                format!("{key} is 0; it must be a positive number of {unit}"),
            ));
        }
        Ok(rate)
    }

    fn size(&self, at: Option<usize>, key: &str, value: &Value) -> Result<u64, IoPropertiesError> {
        let parsed = match value {
            Value::Number(n) => n.as_u64().ok_or(()),
            Value::String(s) => parse_size(s).map_err(|_| ()),
            _ => Err(()),
        };
        parsed.map_err(|()| {
            self.err(
                at,
                format!(
                    "{key} is `{}`; write a whole number, optionally with a binary suffix \
                     k, M, G or T (95k = 97280)",
                    yaml_text(value)
                ),
            )
        })
    }
}

fn yaml_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => serde_yaml::to_string(other)
            .map(|s| s.trim_end().to_string())
            .unwrap_or_else(|_| "?".to_string()),
    }
}

impl IoProperties {
    /// Parses the text of an io-properties file; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Self, IoPropertiesError> {
        let parser = Parser {
            source,
            index: LineIndex::new(text),
        };
        let root: Value = serde_yaml::from_str(text).map_err(|e| {
            parser.err(
                e.location().map(|l| l.line()),
                format!("not valid YAML: {e}"),
            )
        })?;
        let map = root.as_mapping().ok_or_else(|| {
            parser.err(
                Some(1),
                "expected a map with one key, `disks:` (a list of disks)",
            )
        })?;
        for key in map.keys() {
            if key.as_str() != Some("disks") {
                let name = yaml_text(key);
                return Err(parser.err(
                    parser.index.top_key(&name),
                    format!("unknown section `{name}`; the only top-level key is `disks`"),
                ));
            }
        }
        let disks = map
            .get("disks")
            .and_then(Value::as_sequence)
            .filter(|d| !d.is_empty())
            .ok_or_else(|| {
                parser.err(
                    parser.index.top_key("disks").or(Some(1)),
                    "`disks` must be a non-empty list of disk entries",
                )
            })?;
        if disks.len() > MAX_DISKS {
            return Err(parser.err(
                parser.index.item(MAX_DISKS),
                format!(
                    "{} disks listed; at most {MAX_DISKS} are supported",
                    disks.len()
                ),
            ));
        }
        let disks = disks
            .iter()
            .enumerate()
            .map(|(i, d)| parser.disk(i, d))
            .collect::<Result<Vec<_>, _>>()?;
        let mut seen: Vec<(&str, usize)> = Vec::new();
        for (i, disk) in disks.iter().enumerate() {
            for m in &disk.mountpoints {
                if let Some((_, first)) = seen.iter().find(|(s, _)| *s == m.as_str()) {
                    return Err(parser.err(
                        parser.index.key_in_item(i, "mountpoint"),
                        format!(
                            "`{m}` is listed twice (disk entries {} and {}); keep one entry \
                             per device",
                            first + 1,
                            i + 1
                        ),
                    ));
                }
                seen.push((m, i));
            }
        }
        Ok(IoProperties { disks })
    }

    /// Reads and parses a file.
    pub fn load(path: &Path) -> Result<Self, IoPropertiesError> {
        let text = std::fs::read_to_string(path).map_err(|e| IoPropertiesError {
            source: path.display().to_string(),
            line: None,
            message: format!("cannot read the io-properties file: {e}"),
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// The file's text in iotune's layout: keys in the order mountpoint, read_iops,
    /// read_bandwidth, write_iops, write_bandwidth, then the optional ones; integer values.
    pub fn to_yaml_string(&self) -> String {
        let mut out = String::from("disks:\n");
        for disk in &self.disks {
            match disk.mountpoints.as_slice() {
                [one] => out.push_str(&format!("  - mountpoint: {}\n", quote(one))),
                many => {
                    out.push_str("  - mountpoints:\n");
                    for m in many {
                        out.push_str(&format!("      - {}\n", quote(m)));
                    }
                }
            }
            out.push_str(&format!("    read_iops: {}\n", disk.read_iops));
            out.push_str(&format!(
                "    read_bandwidth: {}\n",
                disk.read_bytes_per_sec
            ));
            out.push_str(&format!("    write_iops: {}\n", disk.write_iops));
            out.push_str(&format!(
                "    write_bandwidth: {}\n",
                disk.write_bytes_per_sec
            ));
            let optional = [
                ("read_saturation_length", disk.read_saturation_length_bytes),
                (
                    "write_saturation_length",
                    disk.write_saturation_length_bytes,
                ),
                ("physical_block_size", disk.physical_block_size_bytes),
            ];
            for (key, value) in optional {
                if let Some(v) = value {
                    out.push_str(&format!("    {key}: {v}\n"));
                }
            }
            if disk.duplex {
                out.push_str("    duplex: true\n");
            }
            if disk.rate_factor != 1.0 {
                out.push_str(&format!("    rate_factor: {:?}\n", disk.rate_factor));
            }
            if let Some(us) = disk.latency_goal_us {
                out.push_str(&format!("    weir_latency_goal_us: {us}\n"));
            }
        }
        out
    }

    /// Writes the file (see `to_yaml_string`).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.to_yaml_string())
    }

    /// The disk whose mount point holds `path`, by device number as Seastar resolves it
    /// (`st_rdev` for block devices, else `st_dev`). With a single disk whose mount point
    /// cannot be resolved, that disk is returned: a model measured elsewhere still applies.
    pub fn disk_for_path(&self, path: &Path) -> Option<&DiskProperties> {
        let target = device_of(path);
        let found = self.disks.iter().find(|d| {
            d.mountpoints
                .iter()
                .any(|m| target.is_some() && device_of(Path::new(m)) == target)
        });
        match (found, self.disks.as_slice()) {
            (Some(d), _) => Some(d),
            (None, [only]) => Some(only),
            _ => None,
        }
    }

    /// Checks that no two disk entries resolve to the same device (Seastar refuses that).
    /// Mount points that do not exist are reported too.
    pub fn check_devices(&self, source: &str) -> Result<(), IoPropertiesError> {
        let mut seen: Vec<(u64, &str)> = Vec::new();
        for disk in &self.disks {
            for m in &disk.mountpoints {
                let dev = device_of(Path::new(m)).ok_or_else(|| IoPropertiesError {
                    source: source.to_string(),
                    line: None,
                    message: format!("mountpoint `{m}` does not exist; fix the path"),
                })?;
                if let Some((_, other)) = seen.iter().find(|(d, _)| *d == dev) {
                    return Err(IoPropertiesError {
                        source: source.to_string(),
                        line: None,
                        message: format!(
                            "`{m}` and `{other}` are the same device; keep one entry per device"
                        ),
                    });
                }
                seen.push((dev, m));
            }
        }
        Ok(())
    }
}

fn device_of(path: &Path) -> Option<u64> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.file_type().is_block_device() {
        Some(meta.rdev())
    } else {
        Some(meta.dev())
    }
}

/// Quotes a path only when YAML would misread it.
fn quote(path: &str) -> String {
    let plain = !path.is_empty()
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c));
    if plain {
        path.to_string()
    } else {
        format!("{:?}", path)
    }
}

/// Where the default io-properties file lives for ScyllaDB; kept for messages.
pub fn scylla_default_path() -> PathBuf {
    PathBuf::from("/etc/scylla.d/io_properties.yaml")
}

#[cfg(test)]
#[path = "io_properties_tests.rs"]
mod tests;
