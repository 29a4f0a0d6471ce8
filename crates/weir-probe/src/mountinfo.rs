//! `/proc/self/mountinfo`: which mount holds a path, its source device and options.

use serde::Serialize;

use crate::sysroot::SysRoot;

/// One line of mountinfo (see proc(5)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MountEntry {
    pub major: u32,
    pub minor: u32,
    /// The mount point, octal escapes (`\040`) decoded.
    pub mount_point: String,
    /// Per-mount options (`rw,noatime`).
    pub mount_options: String,
    pub fs_type: String,
    /// The mount source, usually a device path (`/dev/vda`, `/dev/md0`).
    pub source: String,
    /// Per-superblock options (for XFS: `sunit=`, `swidth=` in 512 B units; `discard`).
    pub super_options: String,
}

impl MountEntry {
    /// Whether an option is set, per-mount or per-superblock.
    pub fn has_option(&self, name: &str) -> bool {
        self.options().any(|o| o == name)
    }

    /// The value of `name=value` in the options, if present.
    pub fn option_value(&self, name: &str) -> Option<String> {
        self.options().find_map(|o| {
            o.split_once('=')
                .filter(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    fn options(&self) -> impl Iterator<Item = &str> {
        self.mount_options
            .split(',')
            .chain(self.super_options.split(','))
    }
}

/// Decodes mountinfo's octal escapes (space, tab, newline, backslash).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 4 <= bytes.len() {
            let digits = std::str::from_utf8(&bytes[i + 1..i + 4]).unwrap_or("");
            if let Ok(v) = u8::from_str_radix(digits, 8) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses one mountinfo line; `None` for a malformed line (skipped, never fatal).
pub fn parse_line(line: &str) -> Option<MountEntry> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    if l.len() < 6 || r.len() < 3 {
        return None;
    }
    let (major, minor) = l[2].split_once(':')?;
    Some(MountEntry {
        major: major.parse().ok()?,
        minor: minor.parse().ok()?,
        mount_point: unescape(l[4]),
        mount_options: l[5].to_string(),
        fs_type: r[0].to_string(),
        source: unescape(r[1]),
        super_options: r[2].to_string(),
    })
}

/// All mounts under `root` (`/proc/self/mountinfo`).
pub fn read_mounts(root: &SysRoot) -> Vec<MountEntry> {
    root.read("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter_map(parse_line)
        .collect()
}

fn is_under(path: &str, mount_point: &str) -> bool {
    mount_point == "/"
        || path == mount_point
        || path
            .strip_prefix(mount_point)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The mount that holds `path` on device `major:minor`: among the entries for that device, the
/// one with the longest mount point containing the path (bind mounts and nested mounts), and
/// without a device match the longest containing mount point of any device. Later entries win
/// ties, since a later mount shadows an earlier one at the same point.
pub fn mount_for(mounts: &[MountEntry], path: &str, dev: Option<(u32, u32)>) -> Option<MountEntry> {
    let best = |candidates: Vec<&MountEntry>| -> Option<MountEntry> {
        candidates
            .into_iter()
            .filter(|m| is_under(path, &m.mount_point))
            .fold(None::<&MountEntry>, |acc, m| match acc {
                Some(a) if a.mount_point.len() > m.mount_point.len() => Some(a),
                _ => Some(m),
            })
            .cloned()
    };
    if let Some((major, minor)) = dev {
        let same_dev: Vec<&MountEntry> = mounts
            .iter()
            .filter(|m| m.major == major && m.minor == minor)
            .collect();
        if let Some(m) = best(same_dev) {
            return Some(m);
        }
    }
    best(mounts.iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
40 22 7:0 / /tmp/a\\040b rw,noatime shared:5 - xfs /dev/loop0 rw,attr2,inode64,logbufs=8,sunit=2048,swidth=8192,noquota
41 22 0:44 / /dev/shm rw,nosuid - tmpfs tmpfs rw,size=1024k
";

    #[test]
    fn parses_escaped_mount_point_and_options() {
        let mounts: Vec<MountEntry> = SAMPLE.lines().filter_map(parse_line).collect();
        assert_eq!(mounts.len(), 3);
        let xfs = &mounts[1];
        assert_eq!(xfs.mount_point, "/tmp/a b");
        assert_eq!((xfs.major, xfs.minor), (7, 0));
        assert_eq!(xfs.option_value("sunit").as_deref(), Some("2048"));
        assert!(xfs.has_option("noatime"));
        assert!(!xfs.has_option("discard"));
    }

    #[test]
    fn picks_longest_containing_mount() {
        let mounts: Vec<MountEntry> = SAMPLE.lines().filter_map(parse_line).collect();
        let m = mount_for(&mounts, "/tmp/a b/data", Some((7, 0))).expect("mount");
        assert_eq!(m.fs_type, "xfs");
        let m = mount_for(&mounts, "/tmp/a bc", None).expect("mount");
        assert_eq!(
            m.fs_type, "ext4",
            "a sibling with a common prefix is not inside"
        );
        assert!(parse_line("garbage").is_none());
    }
}
