//! `weir run --sched-groups FILE`: reading io_tester's scheduling-group file and checking the
//! jobs' `class` joins against it before anything runs.

use std::path::Path;

use weir_workload::sched_groups::SchedGroups;
use weir_workload::Plan;

use crate::error::{CliError, InputError, InputFile};

/// Reads and checks the group file, and every job's `class` against it. Without a disk
/// model the groups schedule nothing (`with_model` false): say so once on stderr.
pub fn load(path: &Path, plan: &Plan, with_model: bool) -> Result<SchedGroups, CliError> {
    let text = std::fs::read_to_string(path).map_err(|error| InputError::Read {
        file: InputFile::SchedGroups,
        path: path.to_path_buf(),
        error,
    })?;
    let groups = SchedGroups::parse(&text).map_err(|error| InputError::SchedGroups {
        path: path.to_path_buf(),
        error,
    })?;
    groups
        .place(plan, &path.display().to_string())
        .map_err(InputError::SchedGroupsPlacement)?;
    if !with_model {
        eprintln!(
            "weir run: note: --sched-groups without --io-properties: the groups and every \
             job's `class` were checked and the report names each job's class, but nothing \
             is scheduled by shares: with no disk model, requests go straight to the disk (as \
             io_tester's I/O queue does without io-properties). Pass --io-properties to apply \
             the shares."
        );
    }
    Ok(groups)
}
