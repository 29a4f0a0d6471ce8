//! Absurd sizes, counts and durations get a clear usage error (exit 2) that names the flag or
//! the job file's line and key, before anything is allocated or created: the test directory
//! stays empty.

mod common;

use common::*;

fn job(kind: &str, data_size: &str, shard_info: &str, extra: &str) -> String {
    format!(
        "- name: a\n  type: {kind}\n  data_size: {data_size}\n{extra}  shard_info:\n{shard_info}"
    )
}

#[test]
fn absurd_sizes_counts_and_durations_are_refused_before_anything_is_created() {
    let s = Scratch::new();
    let plain = "    parallelism: 2\n    reqsize: 4kB\n";
    let cases: Vec<(&str, String, Vec<&str>, &str)> = vec![
        (
            "a petabyte file",
            job("seqwrite", "1024T", plain, ""),
            vec![],
            "free",
        ),
        (
            "a million shards",
            job("seqwrite", "1MB", plain, ""),
            vec!["--shards", "1000000"],
            "at most 4096 shards",
        ),
        (
            "a shard number past the run's",
            job("seqwrite", "1MB", plain, "  shards: [999999]\n"),
            vec![],
            "lists shard 999999",
        ),
        (
            "10^12 requests in flight",
            job(
                "randread",
                "1MB",
                "    parallelism: 1000000000000\n    reqsize: 4kB\n",
                "",
            ),
            vec![],
            "shard_info.parallelism",
        ),
        (
            "10^12 requests per second",
            job(
                "randread",
                "1MB",
                "    parallelism: 2\n    reqsize: 4kB\n    rps: 1000000000000\n",
                "",
            ),
            vec![],
            "shard_info.rps",
        ),
        (
            "buffers past the limit",
            job(
                "randread",
                "1MB",
                "    parallelism: 4000000000\n    reqsize: 4kB\n",
                "",
            ),
            vec![],
            "limit",
        ),
        (
            "10^12 files to unlink",
            job("unlink", "1MB", plain, "  files_count: 1000000000000\n"),
            vec![],
            "files_count",
        ),
        (
            "a request larger than the data",
            job(
                "seqwrite",
                "1MB",
                "    parallelism: 2\n    reqsize: 8MB\n",
                "",
            ),
            vec![],
            "smaller than one request",
        ),
        (
            "a negative think time",
            job(
                "seqwrite",
                "1MB",
                "    parallelism: 2\n    reqsize: 4kB\n    think_time: -1s\n",
                "",
            ),
            vec![],
            "think_time",
        ),
        (
            "a zero duration",
            job("seqwrite", "1MB", plain, ""),
            vec!["--duration", "0s"],
            "longer than zero",
        ),
        (
            "a negative duration",
            job("seqwrite", "1MB", plain, ""),
            vec!["--duration=-1s"],
            "not a duration",
        ),
        (
            "a duration of 11 000 years",
            job("seqwrite", "1MB", plain, ""),
            vec!["--duration", "100000000h"],
            "one year",
        ),
    ];
    for (what, text, flags, says) in cases {
        let path = s.job("absurd.yaml", &text);
        let mut args = flags.clone();
        if !flags.iter().any(|f| f.starts_with("--duration")) {
            args.extend(["--duration", "1s"]);
        }
        let o = run(&path, s.dir(), &args);
        assert_exit(&o, 2);
        let err = stderr(&o);
        assert!(err.contains(says), "{what}: expected {says:?} in: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
        assert_eq!(files_in(s.dir()), Vec::<String>::new(), "{what}");
    }
}
