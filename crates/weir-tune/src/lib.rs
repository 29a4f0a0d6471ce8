//! weir-tune (placeholder; the owning change replaces this).
