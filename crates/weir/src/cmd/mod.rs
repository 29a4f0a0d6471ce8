//! One module per subcommand: its flags (clap `Args`) and the glue that calls the libraries.

pub mod align;
pub mod completions;
pub mod doctor;
pub mod explore;
mod guard;
pub mod qualify;
pub mod report;
pub mod run;
mod run_groups;
mod run_sim;
pub mod tune;

use std::path::Path;

use crate::error::{CliError, OutputFile, RuntimeError, UsageError};

/// Whether `--dir` is an existing directory, checked before anything is measured or printed;
/// `purpose` finishes "pass an existing directory on the disk to ...".
fn check_dir_flag(dir: &Path, purpose: &'static str) -> Result<(), UsageError> {
    let meta = std::fs::metadata(dir).map_err(|error| UsageError::DirFlag {
        dir: dir.to_path_buf(),
        error,
        purpose,
    })?;
    if !meta.is_dir() {
        return Err(UsageError::DirFlagNotADirectory {
            dir: dir.to_path_buf(),
        });
    }
    Ok(())
}

/// Writes `charts` as one SVG page to `path` (the `--plot` of run and tune); a failed write
/// names the plot file so the operator knows which flag to change.
fn write_plot(path: &Path, charts: &[weir_report::Chart]) -> Result<(), CliError> {
    std::fs::write(path, weir_report::charts_svg(charts)).map_err(|error| {
        CliError::from(RuntimeError::Write {
            file: OutputFile::Plot,
            path: path.to_path_buf(),
            error,
        })
    })?;
    weir_guard::output::mark(path);
    Ok(())
}
