//! `weir doctor` (placeholder: replaced by the change that implements it).

use crate::error::{CliError, CliResult};

#[derive(clap::Args)]
pub struct DoctorArgs {}

pub fn run(_args: DoctorArgs) -> CliResult {
    Err(CliError::usage("`weir doctor` is not built yet"))
}
