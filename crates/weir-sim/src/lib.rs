//! weir-sim (placeholder; the owning change replaces this).
