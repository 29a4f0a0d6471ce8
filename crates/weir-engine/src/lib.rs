//! weir-engine (placeholder; the owning change replaces this).
