//! weir-engine: the direct-I/O engine under weir's workloads.
//!
//! It performs I/O for one shard per core, without locks on the hot path:
//! - [`aio_sys`]: Linux AIO by raw syscalls (no libaio), also used by the probe crate's fsqual.
//! - [`align`]: how a file or device wants direct I/O aligned (statx, BLKSSZGET, sysfs).
//! - [`UringDevice`] and [`AioDevice`] implement [`weir_model::device::Device`]; [`Backend`]
//!   picks one and [`EngineDevice`] holds either without dynamic dispatch.
//! - [`iowq`]: io_uring on files that refuse non-blocking requests (zram): IOSQE_ASYNC.
//! - [`uring_wait`]: how the io_uring backend waits (one enter; split, spin and no-defer
//!   switches for A/B runs) and its ring setup's fallback on EINVAL.
//! - [`auto`]: `--backend auto`, the backend a file wants (one RWF_NOWAIT read decides).
//! - [`blockdev`]: raw block devices, claimed exclusively and refused while mounted.
//! - [`buffers`]: aligned buffer pools allocated once per shard.
//! - [`errno`]: every errno by name with a plain explanation, for operator messages.
//! - [`extent`]: extent size hints (FS_IOC_FSSETXATTR), read back to know they took.
//! - [`mod@file`]: the O_DIRECT policy and typed file errors that say the fix.
//! - [`payload`]: incompressible, never-repeating data for benchmark writes.
//! - [`prepare`]: data files prepared as overwrite, append, pretruncate, fallocate or sloppy.
//! - [`NowaitRetry`]: RWF_NOWAIT with EAGAIN retried once and counted.
//! - [`options`]: the A/B switches as values the binary sets once ([`EngineOptions`]).
//! - [`nowait_probe`]: the one RWF_NOWAIT read that says whether a file takes non-blocking
//!   requests.
//! - [`ShardLoop`]: the one loop that keeps requests in flight, over any device, with
//!   buffer handles instead of pointers, checks at both ends of every op and a drain on drop.
//! - [`shards`]: one pinned thread per core; a shard's panic becomes an error.
//! - [`cancel`]: the token that stops long loops; the program that owns the process decides
//!   what cancels it.
//!
//! Design notes live with each module; the user-facing summary is `docs/design/engine.md`.

pub mod aio;
pub mod aio_sys;
pub mod align;
pub mod auto;
pub mod backend;
pub mod blockdev;
pub mod buffers;
pub mod cancel;
pub mod clock;
pub mod errno;
pub mod extent;
pub mod file;
pub mod iowq;
pub mod nowait;
pub mod nowait_probe;
pub mod options;
pub mod payload;
pub mod prepare;
pub mod shard_loop;
pub mod shards;
pub mod uring;
mod uring_ring_fd;
pub mod uring_wait;

pub use aio::AioDevice;
pub use align::{dio_alignment, dio_alignment_fd, AlignmentSource, DioAlignment};
pub use auto::{resolve as resolve_backend, BackendChoice, Chosen, NowaitSupport};
pub use backend::{Backend, BackendError, EngineDevice, UnknownBackend};
pub use blockdev::{BlockDevice, BlockDeviceError};
pub use buffers::{BufferError, DmaBufferPool};
pub use cancel::Cancel;
pub use clock::monotonic_ns;
pub use errno::{describe_errno, errno_meaning, errno_name};
pub use extent::ExtentHintOutcome;
pub use file::{filesystem_name, open_data_file, DirectIo, FileError, OpenSpec};
pub use nowait::NowaitRetry;
pub use options::{engine_options, set_engine_options, EngineOptions};
pub use prepare::{
    data_file_name, prefill_matches, prefill_pattern, Prepare, PrepareOptions, PreparedFile,
    UnknownPrepare,
};
pub use shard_loop::{
    BufId, Done, Flow, LoopBuffers, LoopError, LoopOptions, Next, Op, OpSource, Outcome,
    Registered, Registration, RunError, ShardLoop, SubmitPolicy,
};
pub use shards::{available_cores, spawn_shards, ShardPanic, ShardPlacement};
pub use uring::UringDevice;
pub use uring_wait::{PuntedWait, WaitPolicy, WaitPolicyError};
