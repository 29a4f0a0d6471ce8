//! weir-engine: the direct-I/O engine under weir's workloads.
//!
//! It performs I/O for one shard per core, without locks on the hot path:
//! - [`aio_sys`]: Linux AIO by raw syscalls (no libaio), also used by the probe crate's fsqual.
//! - [`align`]: how a file or device wants direct I/O aligned (statx, BLKSSZGET, sysfs).
//! - [`UringDevice`] and [`AioDevice`] implement [`weir_model::device::Device`]; [`Backend`]
//!   picks one and [`EngineDevice`] holds either without dynamic dispatch.
//! - [`buffers`]: aligned buffer pools allocated once per shard.
//! - [`errno`]: every errno by name with a plain explanation, for operator messages.
//!
//! Design notes live with each module; the user-facing summary is `docs/engine.md`.

pub mod aio;
pub mod aio_sys;
pub mod align;
pub mod backend;
pub mod buffers;
pub mod clock;
pub mod errno;
pub mod nowait;
pub mod uring;

pub use aio::AioDevice;
pub use align::{dio_alignment, dio_alignment_fd, AlignmentSource, DioAlignment};
pub use backend::{Backend, BackendError, EngineDevice};
pub use buffers::{BufferError, DmaBufferPool};
pub use clock::monotonic_ns;
pub use errno::{describe_errno, errno_meaning, errno_name};
pub use nowait::NowaitRetry;
pub use uring::UringDevice;
