//! Registered ("fixed") buffers and files: devices that can pin a loop's pools and files in
//! the kernel once, so no request pays for page pinning or a file lookup (io_uring's
//! READ_FIXED/WRITE_FIXED and IOSQE_FIXED_FILE). Linux AIO has neither: it answers false.

use std::os::fd::RawFd;

use weir_model::device::Device;

use super::ShardLoop;
use crate::backend::EngineDevice;
use crate::buffers::DmaBufferPool;
use crate::nowait::NowaitRetry;

/// A device that can register buffers and files.
pub trait Registration {
    /// Registers every buffer of `pools`, in order. False when unsupported or refused.
    ///
    /// # Safety
    /// The pools must stay allocated until [`Registration::unregister`] is called.
    unsafe fn register_pools(&mut self, pools: &[DmaBufferPool]) -> bool;

    /// Registers `fds`. False when unsupported or refused.
    fn register_files(&mut self, fds: &[RawFd]) -> bool;

    /// Drops both registrations.
    fn unregister(&mut self);
}

impl Registration for EngineDevice {
    unsafe fn register_pools(&mut self, pools: &[DmaBufferPool]) -> bool {
        match self {
            // SAFETY: forwarded contract.
            EngineDevice::Uring(d) => unsafe { d.register_pools(pools) },
            EngineDevice::Aio(_) => false,
        }
    }

    fn register_files(&mut self, fds: &[RawFd]) -> bool {
        match self {
            EngineDevice::Uring(d) => d.register_files(fds),
            EngineDevice::Aio(_) => false,
        }
    }

    fn unregister(&mut self) {
        if let EngineDevice::Uring(d) = self {
            d.unregister_buffers();
            d.unregister_files();
        }
    }
}

impl<D: Device + Registration> Registration for NowaitRetry<D> {
    unsafe fn register_pools(&mut self, pools: &[DmaBufferPool]) -> bool {
        // SAFETY: forwarded contract.
        unsafe { self.inner_mut().register_pools(pools) }
    }

    fn register_files(&mut self, fds: &[RawFd]) -> bool {
        self.inner_mut().register_files(fds)
    }

    fn unregister(&mut self) {
        self.inner_mut().unregister();
    }
}

impl<D: Registration + ?Sized> Registration for &mut D {
    unsafe fn register_pools(&mut self, pools: &[DmaBufferPool]) -> bool {
        // SAFETY: forwarded contract.
        unsafe { (**self).register_pools(pools) }
    }

    fn register_files(&mut self, fds: &[RawFd]) -> bool {
        (**self).register_files(fds)
    }

    fn unregister(&mut self) {
        (**self).unregister();
    }
}

/// What was registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Registered {
    pub buffers: bool,
    pub files: bool,
}

impl<D: Device + Registration> ShardLoop<D> {
    /// Registers the loop's pools and `fds` with the device. Safe: the loop owns the pools
    /// and undoes the registration when it is dropped, after draining and before the pools
    /// are freed, even when the device itself lives on (a borrowed device).
    pub fn register(&mut self, fds: &[RawFd]) -> Registered {
        // SAFETY: the pools live in `self.buffers` until the loop drops, and `Drop` calls
        // `unregister` first (through `self.unregister`).
        let buffers = unsafe { self.device.register_pools(self.buffers.pools()) };
        let files = self.device.register_files(fds);
        if buffers || files {
            self.unregister = Some(|d: &mut D| d.unregister());
        }
        Registered { buffers, files }
    }
}
