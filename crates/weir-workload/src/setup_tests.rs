//! The setup checks name their cause as a variant a caller can match, and print the same
//! operator message they printed when the causes were strings.

use std::path::PathBuf;

use super::*;
use crate::job::{Job, JobType};

fn plan_of(request_bytes: u32, shards: ShardSet) -> Plan {
    let mut job = Job::new("reads", JobType::RandRead);
    job.request_bytes = request_bytes;
    job.shards = shards;
    Plan::new(vec![job])
}

fn options_in(dir: Option<PathBuf>) -> RunOptions {
    RunOptions {
        dir,
        ..RunOptions::default()
    }
}

fn usage_of(result: Result<Checked, RunError>) -> UsageError {
    match result {
        Err(RunError::Usage(e)) => e,
        Err(other) => panic!("expected a usage error, got {other}"),
        Ok(_) => panic!("expected a usage error, the check passed"),
    }
}

#[test]
fn a_shard_past_the_run_is_a_job_cause() {
    let plan = plan_of(4096, ShardSet::List(vec![3]));
    let e = usage_of(check(&plan, &options_in(None), 2));
    assert!(
        matches!(&e, UsageError::Job { job, .. } if job == "reads"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "job `reads` lists shard 3, but this run has 2 shard(s) (0..1); raise --shards or \
         change the job's `shards`"
    );
}

#[test]
fn verify_without_files_is_an_options_cause() {
    let plan = plan_of(4096, ShardSet::All);
    let options = RunOptions {
        verify: true,
        ..options_in(None)
    };
    let e = usage_of(check(&plan, &options, 1));
    assert!(
        matches!(e, UsageError::Options(OptionsError::VerifyWithoutFiles)),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "--verify needs real files: give a directory");
}

#[test]
fn a_missing_directory_names_itself() {
    let parent = tempfile::tempdir().expect("temp dir");
    let missing = parent.path().join("nowhere");
    let plan = plan_of(4096, ShardSet::All);
    let e = usage_of(check(&plan, &options_in(Some(missing.clone())), 1));
    assert!(
        matches!(&e, UsageError::Directory { dir, .. } if *dir == missing),
        "{e:?}"
    );
    let shown = missing.display();
    assert_eq!(
        e.to_string(),
        format!(
            "the directory {shown} does not exist: create it (mkdir -p {shown}) or pass \
             another --dir"
        )
    );
}

#[test]
fn a_misaligned_request_carries_its_sizes() {
    let alignment = DioAlignment {
        mem_align_bytes: 4096,
        offset_align_bytes: 4096,
        source: AlignmentSource::Default,
    };
    let plan = plan_of(6144, ShardSet::All);
    let e = match check_request_alignment(&plan, &alignment, "/mnt/x") {
        Err(RunError::Usage(e)) => e,
        other => panic!("expected a misaligned request, got {other:?}"),
    };
    assert!(
        matches!(
            e,
            UsageError::Misaligned {
                request_bytes: 6144,
                align_bytes: 4096,
                ..
            }
        ),
        "{e:?}"
    );
    let source = AlignmentSource::Default.as_str();
    assert_eq!(
        e.to_string(),
        format!(
            "job `reads`: shard_info.reqsize 6144 bytes is not a multiple of the direct-I/O \
             alignment of /mnt/x (4096 bytes, from {source}); use 4096 or 8192 bytes, or pass \
             --buffered to run through the page cache"
        )
    );
    // Below one alignment unit there is only the size above to suggest.
    let small = plan_of(512, ShardSet::All);
    let e = check_request_alignment(&small, &alignment, "/mnt/x").expect_err("misaligned");
    assert!(e.to_string().contains("use 4096 bytes, or pass"), "{e}");
}
