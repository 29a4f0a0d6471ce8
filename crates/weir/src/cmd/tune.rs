//! `weir tune` (placeholder: replaced by the change that implements it).

use crate::error::{CliError, CliResult};

#[derive(clap::Args)]
pub struct TuneArgs {}

pub fn run(_args: TuneArgs) -> CliResult {
    Err(CliError::usage("`weir tune` is not built yet"))
}
