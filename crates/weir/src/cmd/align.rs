//! `weir align` (placeholder: replaced by the change that implements it).

use crate::error::{CliError, CliResult};

#[derive(clap::Args)]
pub struct AlignArgs {}

pub fn run(_args: AlignArgs) -> CliResult {
    Err(CliError::usage("`weir align` is not built yet"))
}
