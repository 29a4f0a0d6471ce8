//! weir-guard: what weir checks before it writes anything.
//!
//! - [`signature`]: filesystems, partition tables, LVM, md RAID, LUKS, ZFS and swap found on a
//!   block device by their documented magic offsets, so a write to a device that holds data
//!   is refused unless the operator says to destroy it.
//! - [`owned`]: weir's data files, created exclusively and marked as weir's, so weir never
//!   truncates, writes or removes a file it did not make, and recognises what a killed run
//!   left behind.
//! - [`output`]: reports and other outputs replace only what weir wrote, unless forced.
//!
//! Nothing here prints or reads the environment; callers decide what to tell the operator.

pub mod output;
pub mod owned;
pub mod signature;

pub use output::OutputRefused;
pub use owned::{Foreign, Holder, Ownership};
pub use signature::{probe, probe_path, ProbeError, Signature, SignatureKind};
