//! weir-sched (placeholder; the owning change replaces this).
