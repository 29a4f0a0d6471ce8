//! Where a shard's device comes from: [`DeviceFactory`], and the real engine's
//! [`EngineFactory`] (callers bring their own for simulated disks).

use weir_engine::{Backend, BackendError, EngineDevice, NowaitRetry, ShardLoop};
use weir_model::device::Device;

use crate::eagain::EagainSpy;

/// Makes one device per shard. Implemented for the real engine ([`EngineFactory`]) and by
/// callers for simulated disks.
pub trait DeviceFactory: Sync {
    type Device: Device;
    /// A short name for reports ("uring", "aio", "sim").
    fn name(&self) -> String;
    /// Opens shard `shard`'s device for up to `depth` requests in flight.
    fn open(&self, shard: usize, depth: u32) -> Result<Self::Device, DeviceOpenError>;
    /// EAGAIN retries the device performed so far (0 when it does not retry).
    fn eagain_retries(&self, _device: &Self::Device) -> u64 {
        0
    }

    /// The same retries per file descriptor, when the device can tell (empty otherwise).
    fn eagain_retries_by_fd(&self, _device: &Self::Device) -> Vec<(i32, u64)> {
        Vec::new()
    }

    /// Registers the shard's buffers and files with the device where it can (io_uring's
    /// fixed buffers and files); nothing by default.
    fn register(&self, _lp: &mut ShardLoop<&mut Self::Device>, _fds: &[i32]) {}

    /// True when every device keeps simulated time (its clock moves only as its shard's loop
    /// runs, never with the wall clock) and no device waits for another shard's (one disk
    /// per shard, not a disk the shards share in lockstep, whose shards may wait for shard 0
    /// while it waits for the sampler). The sampler then waits for every shard to end each
    /// window, however long that takes on a loaded machine, so a seeded run gives the same
    /// windows whatever else the machine is doing. False (real devices): the sampler waits a
    /// bounded wall-clock time, since shard 0 issues nothing while it waits.
    fn simulated_clock(&self) -> bool {
        false
    }
}

/// Why a [`DeviceFactory`] could not open a shard's device.
#[derive(Debug)]
#[non_exhaustive]
pub enum DeviceOpenError {
    /// The engine's io_uring ring or AIO context could not be set up.
    Backend(BackendError),
    /// A caller's own device failed to open (a simulated disk, a test double), with its error.
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl DeviceOpenError {
    /// Wraps a caller's device error.
    pub fn other(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        DeviceOpenError::Other(e.into())
    }
}

impl std::fmt::Display for DeviceOpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceOpenError::Backend(e) => e.fmt(f),
            DeviceOpenError::Other(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for DeviceOpenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DeviceOpenError::Backend(e) => Some(e),
            DeviceOpenError::Other(e) => Some(e.as_ref()),
        }
    }
}

/// The real engine: io_uring or Linux AIO, wrapped to retry RWF_NOWAIT refusals.
pub struct EngineFactory {
    pub backend: Backend,
    pub nowait: bool,
}

impl DeviceFactory for EngineFactory {
    type Device = NowaitRetry<EagainSpy<EngineDevice>>;

    fn name(&self) -> String {
        self.backend.as_str().to_string()
    }

    fn open(&self, _shard: usize, depth: u32) -> Result<Self::Device, DeviceOpenError> {
        let device = EngineDevice::open(self.backend, depth).map_err(DeviceOpenError::Backend)?;
        Ok(NowaitRetry::new(EagainSpy::new(device), self.nowait))
    }

    fn eagain_retries(&self, device: &Self::Device) -> u64 {
        device.eagain_retries()
    }

    fn eagain_retries_by_fd(&self, device: &Self::Device) -> Vec<(i32, u64)> {
        device.inner().counts().to_vec()
    }

    /// Registered buffers save the kernel pinning pages on every request, registered files
    /// its file lookup: CPU per I/O that shows where the device is not the limit (zram).
    fn register(&self, lp: &mut ShardLoop<&mut Self::Device>, fds: &[i32]) {
        lp.register(fds);
    }
}
