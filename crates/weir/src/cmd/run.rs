//! `weir run` (placeholder: replaced by the change that implements it).

use crate::error::{CliError, CliResult};

#[derive(clap::Args)]
pub struct RunArgs {}

pub fn run(_args: RunArgs) -> CliResult {
    Err(CliError::usage("`weir run` is not built yet"))
}
