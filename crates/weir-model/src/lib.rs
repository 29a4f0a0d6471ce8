//! weir-model: units, the device contract, and the Seastar-compatible disk model:
//! io-properties.yaml (`io_properties`) and the cost of a request in disk time (`cost`).

pub mod cost;
pub mod device;
pub mod io_properties;
pub mod units;
