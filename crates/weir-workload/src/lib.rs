//! weir-workload (placeholder; the owning change replaces this).
