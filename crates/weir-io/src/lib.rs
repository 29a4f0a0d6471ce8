//! weir-io: scheduled storage I/O for Rust storage engines.
//!
//! Tag every I/O with a class — query reads, commit-log appends, memtable flushes,
//! compaction — give the classes shares of the disk, and weir keeps about one *latency
//! goal* of disk time in the disk: enough to keep it busy, little enough that a query read
//! waits at most about the goal behind background writes. What a request costs comes from a
//! measured disk model (`weir tune` writes it as io-properties.yaml), and completion
//! feedback follows the disk down when it runs slower than modelled, so there is no
//! bandwidth cap to tune by hand. Caps are there when you want one.
//!
//! Two ways in, on one scheduler:
//!
//! - **Admission** ([`Admission`]): your engine does its own I/O (pread/pwrite, a RocksDB
//!   Env, a foyer `IoEngine`). Ask before each I/O with [`Admission::acquire`] (a future for
//!   any runtime), [`Admission::acquire_blocking`] or [`Admission::try_acquire`] (answers how
//!   long to wait); drop the [`Grant`] when the I/O completes, which reports its service time.
//! - **I/O** ([`Disk`]): weir does the I/O on its io_uring (or Linux AIO) shard loops, with
//!   owned aligned buffers ([`IoBuf`]) and the class per operation: [`Disk::read_at`],
//!   [`Disk::write_at`], [`Disk::append`]. The futures are `Send` and runtime-agnostic, so a
//!   tokio application awaits them while the loops run on their own threads; a
//!   thread-per-core application instead takes one [`LocalShard`] per core thread and drives
//!   it there, with no extra thread and no runtime. With the `tokio` feature, a tokio
//!   runtime thread drives its own local shard with [`LocalShard::drive`]: requests go from
//!   the task to the ring with no thread between them, and the runtime's reactor watches the
//!   ring's completions.
//!
//! Both keep per-class metrics (operations, bytes, queue-wait and device-service
//! histograms) and render them as Prometheus text.
//!
//! # Example
//!
//! Two classes over one file: reads with 10x the shares of a background writer.
//!
//! ```
//! use std::time::Duration;
//! use weir_io::{block_on, ClassSpec, Disk, DiskModel, FileOptions, IoBuf, Policy};
//!
//! fn main() -> Result<(), weir_io::Error> {
//!     // The disk model: from `weir tune`'s file, or rates measured some other way.
//!     // let model = DiskModel::from_io_properties("io-properties.yaml".as_ref(), dir.as_ref())?;
//!     let model = DiskModel::builder()
//!         .read_iops(50_000).read_bytes_per_sec(1_600_000_000)
//!         .write_iops(25_000).write_bytes_per_sec(1_000_000_000)
//!         .build()?;
//!     let mut policy = Policy::builder(model).latency_goal(Duration::from_micros(1500));
//!     let query = policy.class(ClassSpec::new("query", 1000))?;
//!     let compaction = policy.class(ClassSpec::new("compaction", 100))?;
//!     let disk = Disk::builder(&policy.build()?).build()?;
//!
//!     // O_DIRECT by default: put the file on a real filesystem (not tmpfs).
//!     let path = std::env::current_dir().expect("a working directory").join("weir-io-example.data");
//!     let file = disk.open(&path, FileOptions::new().create(true).truncate(true))?;
//!     let (written, _) = block_on(disk.write_at(&file, compaction, IoBuf::zeroed(1 << 20), 0));
//!     assert_eq!(written?, 1 << 20);
//!     let (read, buf) = block_on(disk.read_at(&file, query, IoBuf::zeroed(4096), 8192));
//!     assert_eq!(read?, 4096);
//!     assert!(buf.iter().all(|&b| b == 0));
//!
//!     let metrics = disk.metrics();
//!     assert_eq!((metrics[0].read_ops, metrics[1].write_bytes), (1, 1 << 20));
//!     std::fs::remove_file(&path).expect("remove the example's file");
//!     Ok(())
//! }
//! ```
//!
//! The crate's `examples/` hold runnable programs: two classes, a tokio service with a
//! background writer, thread-per-core, and an LSM-shaped engine (commit log, flushes,
//! compaction and point reads, each in its class).
//!
//! # Design
//!
//! The scheduler ([`weir_sched`]) is sans-I/O: it is handed requests and the time, and says
//! which pieces may go to the disk now. A [`Disk`] runs one scheduler queue per loop over one
//! shared budget (per disk, lock-free), so shares hold across loops and cores. Requests
//! longer than the scheduler's piece size (128 KiB to 16 MiB, from the model) are split into
//! pieces, each submitted into the request's own buffer; the future resolves when the last
//! piece completes. Linux only (io_uring 5.11+, or AIO).

#![warn(missing_docs)]

mod admission;
mod block_on;
mod buf;
mod disk;
#[cfg(feature = "tokio")]
mod drive_tokio;
mod error;
mod file;
mod local;
mod model;
mod policy;
mod shard;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

pub use admission::{Acquire, Admission, Grant, TryAcquireError};
pub use block_on::block_on;
pub use buf::{IoBuf, IO_BUF_ALIGN_BYTES};
pub use disk::{Disk, DiskBuilder, AIO_INBOX_POLL};
pub use error::Error;
pub use file::{File, FileOptions};
pub use local::LocalShard;
pub use model::{DiskModel, DiskModelBuilder};
pub use policy::{ClassSpec, IoClass, IoGroup, Policy, PolicyBuilder};
pub use shard::{BufResult, IoFuture};

/// The kernel interface a [`Disk`] uses.
pub use weir_engine::Backend;
/// Per-class counters and histograms, per-shard metrics, and their Prometheus rendering.
pub use weir_sched::{render_prometheus, ClassMetrics, LatencyHistogram, ShardMetrics};

/// The scheduler underneath, for what this crate does not wrap.
pub use weir_sched;

/// What an I/O does to the disk: the scheduler prices reads and writes differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// A read.
    Read,
    /// A write (append, overwrite, flush, compaction output).
    Write,
}

impl Op {
    pub(crate) fn direction(self) -> weir_model::device::Direction {
        match self {
            Op::Read => weir_model::device::Direction::Read,
            Op::Write => weir_model::device::Direction::Write,
        }
    }
}

/// The future of an append: resolves to the offset the data landed at and the buffer.
#[must_use = "the result says whether the append happened"]
pub struct AppendFuture {
    write: IoFuture,
    offset_bytes: u64,
}

impl AppendFuture {
    pub(crate) fn new(write: IoFuture, offset_bytes: u64) -> AppendFuture {
        AppendFuture {
            write,
            offset_bytes,
        }
    }
}

impl Future for AppendFuture {
    type Output = BufResult<u64>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let offset = self.offset_bytes;
        Pin::new(&mut self.write).poll(cx).map(|(r, buf)| {
            let r = r.and_then(|n| {
                if n == buf.len() {
                    Ok(offset)
                } else {
                    Err(Error::Io {
                        op: "append",
                        offset_bytes: offset,
                        errno: libc::ENOSPC,
                    })
                }
            });
            (r, buf)
        })
    }
}
