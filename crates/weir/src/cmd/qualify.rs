//! `weir qualify` (placeholder: replaced by the change that implements it).

use crate::error::{CliError, CliResult};

#[derive(clap::Args)]
pub struct QualifyArgs {}

pub fn run(_args: QualifyArgs) -> CliResult {
    Err(CliError::usage("`weir qualify` is not built yet"))
}
