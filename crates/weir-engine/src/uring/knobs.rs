//! The ring's A/B switches, read from the environment when a ring is made: each names one
//! idea measured against the default (docs/engine.md), none is on by default.
//! - `WEIR_URING_RINGFD=on`: enter by the ring's registered index (`IORING_REGISTER_RING_FDS`).
//! - `WEIR_URING_IOWQ_MAX=<n>`: bound this thread's io-wq workers (bounded and unbounded).
//! - `WEIR_URING_IOWQ_CPUS=<list>` (e.g. `1` or `0,2-3`): the CPUs this thread's io-wq workers
//!   may run on (`IORING_REGISTER_IOWQ_AFF`); with the shard pinned elsewhere (`taskset`), the
//!   shard and the worker that runs its punted reads never share a CPU.
//! - `WEIR_URING_NOSQARRAY=on`: a ring without the submission index array
//!   (`IORING_SETUP_NO_SQARRAY`, Linux 6.6): the kernel reads each entry by its ring slot.

use super::UringDevice;

/// What the environment asked of one ring.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Knobs {
    pub(super) ring_fd: bool,
    pub(super) iowq_max: Option<u32>,
    pub(super) iowq_cpus: Option<Vec<usize>>,
    pub(super) no_sqarray: bool,
}

impl Knobs {
    pub(super) fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let iowq_cpus = var("WEIR_URING_IOWQ_CPUS").and_then(|v| {
            let cpus = parse_cpu_list(&v);
            if cpus.is_none() {
                eprintln!("weir: WEIR_URING_IOWQ_CPUS={v:?} is not a CPU list (e.g. 1 or 0,2-3)");
            }
            cpus
        });
        Knobs {
            ring_fd: var("WEIR_URING_RINGFD").is_some_and(|v| v == "on"),
            iowq_max: var("WEIR_URING_IOWQ_MAX").and_then(|v| v.parse().ok()),
            iowq_cpus,
            no_sqarray: var("WEIR_URING_NOSQARRAY").is_some_and(|v| v == "on"),
        }
    }
}

/// `1`, `0,2-3`: the CPUs named, or None when anything is not a CPU number or range.
pub(super) fn parse_cpu_list(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in list.split(',') {
        let (first, last) = part.split_once('-').unwrap_or((part, part));
        let (first, last): (usize, usize) = (first.trim().parse().ok()?, last.trim().parse().ok()?);
        if first > last || last >= libc::CPU_SETSIZE as usize {
            return None;
        }
        cpus.extend(first..=last);
    }
    Some(cpus)
}

impl UringDevice {
    /// Bounds this thread's io-wq workers as asked, before its first enter (the kernel keeps
    /// the bound on the ring until the thread's io-wq exists).
    pub(super) fn apply_iowq_max(&mut self) {
        if let Some(n) = self.knobs.iowq_max.take() {
            // Bounded and unbounded workers alike (block-device reads are unbounded work).
            let mut max = [n, n];
            let set = self.ring.submitter().register_iowq_max_workers(&mut max);
            eprintln!("weir: io-wq workers bounded to {n}: {set:?} (before: {max:?})");
        }
    }

    /// Sets this thread's io-wq worker CPUs as asked, after an enter that submitted (the
    /// kernel answers EINVAL until the thread's io-wq exists, which its first submit makes).
    pub(super) fn apply_iowq_cpus(&mut self) {
        let Some(cpus) = self.knobs.iowq_cpus.take() else {
            return;
        };
        // SAFETY: an all-zero cpu_set_t is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &cpu in &cpus {
            // SAFETY: `cpu` < CPU_SETSIZE (parse_cpu_list), within the set.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        let done = self.ring.submitter().register_iowq_aff(&set);
        eprintln!("weir: io-wq workers on CPUs {cpus:?}: {done:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_and_bad_ones_are_refused() {
        assert_eq!(parse_cpu_list("1"), Some(vec![1]));
        assert_eq!(parse_cpu_list("0,2-3"), Some(vec![0, 2, 3]));
        for bad in ["", "x", "3-1", "1,", "99999"] {
            assert_eq!(parse_cpu_list(bad), None, "{bad:?}");
        }
    }
}
