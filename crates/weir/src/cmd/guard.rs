//! The command-line side of weir-guard: what a sweep of a killed run's files removed, said on
//! stderr, and output paths checked before a command spends minutes measuring.

use std::path::{Path, PathBuf};

use crate::error::UsageError;

/// Removes the files a killed weir run left in `dir` (they carry weir's mark and name a
/// process that is gone) and says which. Errors reading `dir` are left to the command, which
/// reports them with its own fix.
pub fn sweep_leftovers(dir: &Path) {
    let Ok(removed) = weir_guard::owned::sweep(dir) else {
        return;
    };
    if removed.is_empty() {
        return;
    }
    let names: Vec<String> = removed
        .iter()
        .map(|p| {
            p.file_name()
                .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
        })
        .collect();
    eprintln!(
        "weir: removed {} file(s) an interrupted weir run left in {} (marked as weir's, their \
         run is gone): {}",
        removed.len(),
        dir.display(),
        names.join(", ")
    );
}

/// Refuses an output path that holds something weir did not write, unless `force`.
pub fn check_output(flag: &'static str, path: &Path, force: bool) -> Result<(), UsageError> {
    weir_guard::output::check_replace(path, force, false)
        .map_err(|refused| UsageError::OutputExists { flag, refused })
}

/// [`check_output`] for each of `names` inside the output directory `dir`, and `dir` itself.
pub fn check_output_dir(
    flag: &'static str,
    dir: &Path,
    names: &[&str],
    force: bool,
) -> Result<(), UsageError> {
    if std::fs::symlink_metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return check_output(flag, dir, force);
    }
    for name in names {
        check_output(flag, &dir.join(name), force)?;
    }
    Ok(())
}

/// Marks files weir just wrote as its output, so the next run may replace them.
pub fn mark_outputs<'a>(paths: impl IntoIterator<Item = &'a PathBuf>) {
    for path in paths {
        weir_guard::output::mark(path);
    }
}
