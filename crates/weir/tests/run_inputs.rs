//! `weir run` on io_tester inputs shaped like the ones users bring (Seastar's own job files and
//! their variants, written here in our own words): each ends in a run or in one clean error
//! with exit code 2, never a panic or minutes of preparing what cannot fit.

mod common;

use common::*;

fn assert_usage_error(o: &std::process::Output, needles: &[&str]) {
    assert_exit(o, 2);
    let err = stderr(o);
    assert!(err.starts_with("weir: error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "missing `{n}` in:\n{err}");
    }
}

/// A data_size no filesystem holds used to prefill until the disk filled (or a timeout
/// interrupted it); now it is refused before a file is made, naming the sizes and the fix.
#[test]
fn a_data_size_larger_than_the_free_space_is_refused_before_writing() {
    let s = Scratch::new();
    let job = s.job(
        "huge.yaml",
        "- name: huge\n  type: randread\n  shards: all\n  data_size: 100000TB\n",
    );
    let o = run(&job, s.dir(), &["--duration", "1s", "--shards", "1"]);
    assert_usage_error(&o, &["100000 TiB", "free", "lower data_size"]);
    assert!(files_in(s.dir()).is_empty(), "{:?}", files_in(s.dir()));
}

/// io_tester rounds each unlink file up to 1 MiB, so many small files take far more than
/// data_size: the check counts what will really be written.
#[test]
fn unlink_files_are_counted_at_their_rounded_size() {
    let s = Scratch::new();
    let job = s.job(
        "unlink.yaml",
        "- name: unlinking\n  shards: all\n  type: unlink\n  data_size: 1MB\n  \
         files_count: 10000000\n  shard_info:\n    parallelism: 1\n",
    );
    let o = run(&job, s.dir(), &["--duration", "1s", "--shards", "1"]);
    assert_usage_error(&o, &["9.5 TiB", "free"]);
    assert!(files_in(s.dir()).is_empty(), "{:?}", files_in(s.dir()));
}

/// `--latency-goal` sets the scheduler's goal; without `--io-properties` there is no
/// scheduler, so the flag is refused rather than ignored without a word.
#[test]
fn a_latency_goal_without_a_disk_model_is_refused() {
    let s = Scratch::new();
    let job = s.job(
        "r.yaml",
        "- name: r\n  type: randread\n  data_size: 2MB\n  shard_info:\n    parallelism: 1\n",
    );
    let o = run(
        &job,
        s.dir(),
        &["--duration", "100ms", "--latency-goal", "1ms"],
    );
    assert_usage_error(&o, &["--latency-goal needs --io-properties"]);
}

/// Seastar's example classes (a big overwrite on every shard, a latency-sensitive reader, a
/// CPU hog and an unlinker on shard 0) run as written, with sizes scaled down.
#[test]
fn an_io_tester_example_with_every_class_kind_runs() {
    let s = Scratch::new();
    let job = s.job(
        "conf.yaml",
        "- name: big_writes\n  shards: all\n  type: overwrite\n  data_size: 8MB\n  \
         shard_info:\n    parallelism: 4\n    reqsize: 256kB\n    shares: 10\n    \
         think_time: 0\n\n\
         - name: latency_reads\n  shards: [0]\n  type: randread\n  data_size: 8MB\n  \
         shard_info:\n    parallelism: 1\n    reqsize: 512\n    shares: 100\n    \
         think_time: 1000us\n\n\
         - name: cpu_hog\n  shards: [0]\n  type: cpu\n  shard_info:\n    parallelism: 1\n    \
         execution_time: 90us\n    think_time: 10us\n\n\
         - name: unlinking\n  shards: all\n  type: unlink\n  data_size: 8MB\n  \
         files_count: 8\n  shard_info:\n    parallelism: 2\n    think_time: 10us\n",
    );
    let o = run(&job, s.dir(), &["--duration", "200ms", "--shards", "2"]);
    assert_exit(&o, 0);
    let out = stdout(&o);
    for name in ["big_writes", "latency_reads", "cpu_hog", "unlinking"] {
        assert!(out.contains(name), "missing {name} in:\n{out}");
    }
    assert!(files_in(s.dir()).is_empty(), "{:?}", files_in(s.dir()));
}

/// Seastar refuses an io-properties file with two entries on one device; weir used to take
/// the first silently.
#[test]
fn two_io_properties_entries_on_one_device_are_refused() {
    let s = Scratch::new();
    let job = s.job(
        "r.yaml",
        "- name: r\n  type: randread\n  data_size: 2MB\n  shard_info:\n    parallelism: 1\n",
    );
    let rates = "    read_iops: 95000\n    read_bandwidth: 545165792\n    write_iops: 85000\n    \
                 write_bandwidth: 510709440\n";
    let dir = s.dir().display().to_string();
    let parent = s.dir().parent().expect("parent").display().to_string();
    let props = s.job(
        "io.yaml",
        &format!("disks:\n  - mountpoint: {dir}\n{rates}  - mountpoint: {parent}\n{rates}"),
    );
    let props = props.display().to_string();
    let o = run(
        &job,
        s.dir(),
        &["--duration", "100ms", "--io-properties", &props],
    );
    assert_usage_error(&o, &["are the same device", "keep one entry per device"]);
}

/// An empty job file (or one with only comments) says so, without naming an empty job.
#[test]
fn an_empty_job_file_says_it_lists_no_jobs() {
    let s = Scratch::new();
    for (name, text) in [("empty.yaml", ""), ("comment.yaml", "# nothing yet\n")] {
        let job = s.job(name, text);
        let o = run(&job, s.dir(), &["--duration", "100ms"]);
        assert_usage_error(&o, &["the job file lists no jobs", "- name: ..."]);
        assert!(!stderr(&o).contains("job ``"), "{}", stderr(&o));
    }
}
