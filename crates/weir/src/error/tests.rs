//! Each kind of failure maps to the README's exit code and prints the message operators saw
//! when the errors were strings (the strings below are those messages, byte for byte).

use std::path::PathBuf;

use super::*;
use weir_model::units::{parse_duration, parse_size};

fn not_found() -> std::io::Error {
    std::io::Error::from_raw_os_error(libc::ENOENT)
}

fn check(e: impl Into<CliError>, code: i32, message: &str) {
    let e = e.into();
    assert_eq!(e.exit_code(), code, "{e:?}");
    assert_eq!(e.to_string(), message, "{e:?}");
}

#[test]
fn flag_errors_exit_2_and_name_the_flag() {
    let error = parse_duration("xyz").unwrap_err();
    check(
        UsageError::Unit {
            flag: "--duration",
            value: None,
            error,
        },
        2,
        "--duration: `xyz` is not a duration: a number followed by ns, us (or µs), ms, s, m or \
         h, e.g. 500us, 0.75ms, 10s (a bare number means seconds)",
    );
    let error = parse_size("q").unwrap_err();
    check(
        UsageError::Unit {
            flag: "--write-size",
            value: Some("q".into()),
            error,
        },
        2,
        "--write-size q: `q` is not a size: a whole number with an optional binary suffix k, M, \
         G or T (optionally followed by i, iB or B), e.g. 4096, 4k, 128KiB, 1M",
    );
    check(
        UsageError::Zero {
            flags: "--shards",
            rule: "must be at least 1 (omit it for one per core)",
        },
        2,
        "--shards must be at least 1 (omit it for one per core)",
    );
    check(
        UsageError::FileSizeNotMultiple {
            file_size: "100k".into(),
            request_size: "128k".into(),
        },
        2,
        "--file-size 100k: must be a multiple of --request-size 128k",
    );
    check(
        UsageError::VerifyNullStorage,
        2,
        "--verify cannot check /dev/null, which stores nothing: drop --verify or use --dir",
    );
    let error = "bad".parse::<weir_engine::Backend>().unwrap_err();
    check(
        UsageError::Backend(error),
        2,
        "--backend: unknown I/O backend 'bad': expected 'uring' (io_uring, the default) or 'aio' \
         (Linux AIO)",
    );
}

#[test]
fn input_file_errors_exit_2_with_file_line_and_column() {
    check(
        InputError::Read {
            file: InputFile::JobFile,
            path: PathBuf::from("nofile.yaml"),
            error: not_found(),
        },
        2,
        "cannot read the job file nofile.yaml: No such file or directory (os error 2); pass the \
         path of an io_tester YAML job file (see examples/ and docs/reference/job-files.md)",
    );
    check(
        InputError::Read {
            file: InputFile::ExploreJson,
            path: PathBuf::from("a.json"),
            error: not_found(),
        },
        2,
        "cannot read a.json: No such file or directory (os error 2); pass the explore.json of a \
         weir explore run",
    );
    let bad_job = "- name: x\n  type: randread\n  shard_info:\n    paralelism: 1\n";
    let error = weir_workload::parse::parse_plan(bad_job).unwrap_err();
    let e = CliError::from(InputError::JobFile {
        path: PathBuf::from("bad.yaml"),
        error,
    });
    assert_eq!(e.exit_code(), 2);
    assert!(
        e.to_string()
            .starts_with("bad.yaml:4:5: job 1, shard_info: unknown field `paralelism`"),
        "{e}"
    );
    assert!(matches!(e, CliError::Input(InputError::JobFile { .. })));
}

#[test]
fn whole_file_errors_and_unreadable_models_still_name_the_file_and_the_fix() {
    // An error of the whole file has no line: the path is followed by ": ", not glued on.
    let error = weir_workload::parse::parse_plan("").unwrap_err();
    assert_eq!(error.line, None);
    let e = CliError::from(InputError::JobFile {
        path: PathBuf::from("empty.yaml"),
        error,
    });
    assert!(e.to_string().starts_with("empty.yaml: "), "{e}");
    check(
        InputError::Read {
            file: InputFile::IoProperties,
            path: PathBuf::from("io.yaml"),
            error: not_found(),
        },
        2,
        "cannot read the --io-properties file io.yaml: No such file or directory (os error 2); \
         pass the io-properties.yaml that `weir tune --dir DIR` wrote for the disk under --dir \
         (or Seastar's iotune)",
    );
    check(
        UsageError::DirFlag {
            dir: PathBuf::from("/nope"),
            error: not_found(),
            purpose: "map",
        },
        2,
        "--dir /nope: No such file or directory (os error 2); pass an existing directory on the \
         disk to map",
    );
    let fixture = CliError::from(ProbeError::Fixture {
        file: "/r/fs.json".into(),
        detail: "missing".into(),
    });
    assert!(matches!(
        fixture,
        CliError::Runtime(RuntimeError::Fixture(_))
    ));
    assert_eq!(fixture.exit_code(), 1);
    assert!(
        fixture.to_string().ends_with(
            "; pass as --root a tree recorded from a machine: ROOT/sys, \
             ROOT/proc/self/mountinfo and ROOT/fs.json (docs/reference/probe.md, \"Fixture trees\")"
        ),
        "{fixture}"
    );
}

#[test]
fn library_errors_keep_their_type_and_map_to_the_documented_code() {
    let tune_usage = CliError::from(weir_tune::TuneError::MemoryFilesystem {
        dir: "/x".into(),
        fs_type: "tmpfs".into(),
    });
    assert!(matches!(tune_usage, CliError::Usage(UsageError::Tune(_))));
    check(
        tune_usage,
        2,
        "/x: on tmpfs, which is memory, not a disk: there is nothing to tune and direct I/O is \
         refused; pass a --dir on the disk you want to measure",
    );
    check(
        weir_tune::TuneError::Interrupted,
        1,
        "interrupted: the load stopped and the test files were removed",
    );
    let missing = CliError::from(ProbeError::NotFound("/nonexistent".into()));
    assert!(matches!(
        missing,
        CliError::Usage(UsageError::Directory(ProbeError::NotFound(_)))
    ));
    check(
        missing,
        2,
        "/nonexistent: no such directory; pass an existing directory on the filesystem to check",
    );
    let probe_failed = CliError::from(ProbeError::Io {
        path: "/sys/block/vda".into(),
        detail: "EIO".into(),
    });
    assert_eq!(probe_failed.exit_code(), 1);
    let import = CliError::from(ExploreError::Import {
        file: "dp.json".into(),
        message: "not JSON".into(),
    });
    assert!(matches!(import, CliError::Input(InputError::Explore(_))));
    check(import, 2, "dp.json: not JSON");
    check(
        ExploreError::NoCompletions {
            read_iops: 0.0,
            write_bytes_per_s: 0.0,
        },
        1,
        "the calibration measured 0 reads/s and 0 write B/s: the disk did not complete \
         requests; check the directory with `weir doctor`",
    );
}

#[test]
fn runtime_failures_and_findings_exit_1() {
    check(
        RuntimeError::Write {
            file: OutputFile::Plot,
            path: PathBuf::from("/nonexistent/p.svg"),
            error: not_found(),
        },
        1,
        "cannot write the plot to /nonexistent/p.svg: No such file or directory (os error 2); \
         pass a writable --plot path",
    );
    check(
        RuntimeError::RunStopped {
            message: "interrupted".into(),
            interrupted: true,
            failure: None,
            files_kept: false,
        },
        1,
        "interrupted\nThe results above cover the time until the stop; the test files were \
         removed.",
    );
    check(
        Problem::Corruption {
            corruptions: 2,
            blocks_checked: 100,
            first: None,
        },
        1,
        "data corruption: 2 of 100 blocks checked did not hold what weir wrote. Check the device \
         (dmesg, SMART) and the filesystem (xfs_repair -n / fsck -n).",
    );
    check(
        Problem::QualifyBad {
            bad: 1,
            dir: PathBuf::from("/data"),
        },
        1,
        "1 test(s) BAD in /data: see each one's meaning above",
    );
}
