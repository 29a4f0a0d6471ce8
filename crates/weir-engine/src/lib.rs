//! weir-engine: the direct-I/O engine under weir's workloads.
//!
//! It performs I/O for one shard per core, without locks on the hot path:
//! - [`aio_sys`]: Linux AIO by raw syscalls (no libaio), also used by the probe crate's fsqual.
//!
//! Design notes live with each module; the user-facing summary is `docs/engine.md`.

pub mod aio_sys;
pub mod align;
pub mod errno;

pub use align::{dio_alignment, dio_alignment_fd, AlignmentSource, DioAlignment};
pub use errno::{describe_errno, errno_meaning, errno_name};
