//! weir-workload: io_tester-compatible jobs, arrivals, verification, exact histograms.

pub mod arrival;
pub mod hist;
pub mod job;
pub mod parse;
pub mod verify;
