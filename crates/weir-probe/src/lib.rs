//! weir-probe (placeholder; the owning change replaces this).
