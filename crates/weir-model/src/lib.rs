//! weir-model: units, the device contract, and (with the scheduler issue) the Seastar-compatible
//! disk model: io-properties.yaml and the cost of a request in seconds of disk time.

pub mod device;
pub mod units;
