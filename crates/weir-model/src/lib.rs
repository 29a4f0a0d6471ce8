#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod cost;
pub mod device;
pub mod io_properties;
pub mod units;
