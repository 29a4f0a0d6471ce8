//! How much of a filesystem's free space a map's files may use: one rule for `weir explore`
//! and for `weir report`'s explore section.

/// The sizes a [`crate::meter::WorkloadMeter`] needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Regions {
    pub read_region_bytes: u64,
    pub overwrite_region_bytes: u64,
    pub fresh_file_cap_bytes: u64,
}

/// The read file and the overwrite region get an eighth of the free space each, up to
/// 2 + 4 GiB (quick) or 4 + 8 GiB: large enough that a host cache in front of a virtual disk
/// holds little of them. Fresh files share a third of what is left.
pub fn regions(free_bytes: u64, quick: bool) -> Regions {
    let (read_max, overwrite_max) = if quick {
        (2u64 << 30, 4u64 << 30)
    } else {
        (4 << 30, 8 << 30)
    };
    let read_region_bytes = (free_bytes / 8).min(read_max);
    let overwrite_region_bytes = (free_bytes / 8).min(overwrite_max);
    Regions {
        read_region_bytes,
        overwrite_region_bytes,
        fresh_file_cap_bytes: free_bytes.saturating_sub(read_region_bytes + overwrite_region_bytes)
            / 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_filesystems_get_eighths_large_ones_the_caps() {
        let r = regions(8 << 30, true);
        assert_eq!(
            (r.read_region_bytes, r.overwrite_region_bytes),
            (1 << 30, 1 << 30)
        );
        assert_eq!(r.fresh_file_cap_bytes, (6 << 30) / 3);
        let r = regions(1 << 40, false);
        assert_eq!(
            (r.read_region_bytes, r.overwrite_region_bytes),
            (4 << 30, 8 << 30)
        );
    }
}
