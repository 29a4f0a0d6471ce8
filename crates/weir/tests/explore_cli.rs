//! `weir explore`: Diskplorer import end to end, `--compare`, flag errors, and (root only) a
//! `--grid` run at a Diskplorer grid's loads and a quick map on a
//! loop-mounted XFS whose outputs must all be there and agree with each other.

mod common;

use common::*;
use serde_json::{json, Value};
use weir_model::io_properties::IoProperties;
use weir_testfs::{require_root_with, FsKind, TestFs, TestFsOptions};

/// A Diskplorer result for a half-duplex disk (80K reads/s, 2 GB/s): read p99 300 us while
/// x + y <= 0.8, 5 ms beyond, and the disk falls behind past x + y = 1. 5 x 5 grid plus the
/// calibration jobs Diskplorer also writes into the file.
fn diskplorer_result() -> Value {
    let mut jobs = vec![json!({"jobname": "prepare", "read": {}, "write": {}})];
    jobs.push(json!({"jobname": "max-write-bw", "read": {}, "write": {"bw_bytes": 2e9}}));
    for w_idx in 0..5 {
        for r_idx in 0..5 {
            let (x, y) = (f64::from(r_idx) / 4.0, f64::from(w_idx) / 4.0);
            let (r_iops, write_bw) = ((x * 80_000.0) as u64, (y * 2e9) as u64);
            let load = x + y;
            let p99_ns = if load <= 0.8 { 300_000 } else { 5_000_000 };
            let done = if load <= 1.0 { 1.0 } else { 1.0 / load };
            let pct = json!({"50.000000": 100_000, "95.000000": 200_000, "99.000000": p99_ns, "99.900000": p99_ns * 2});
            jobs.push(json!({
                "jobname": format!("job(r_idx={r_idx},w_idx={w_idx},write_bw={write_bw},r_iops={r_iops})"),
                "read": {"iops": (r_iops as f64).max(10.0) * done, "runtime": 10_000, "clat_ns": {"percentile": pct}},
                "write": {"bw_bytes": write_bw as f64 * done, "clat_ns": {"percentile": pct}},
            }));
        }
    }
    json!({"fio version": "fio-3.35", "jobs": jobs})
}

#[test]
fn import_of_a_diskplorer_grid_draws_fits_and_writes_a_usable_model() {
    let s = Scratch::new();
    let result = s.dir().join("result.json");
    std::fs::write(&result, diskplorer_result().to_string()).expect("write result");
    let out = s.dir().join("out");
    let o = weir_with(&[
        "explore",
        "--import",
        result.to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
        "--goal",
        "1ms",
    ]);
    assert_exit(&o, 0);
    let map: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("explore.json")).expect("json"))
            .expect("explore.json parses");
    assert_eq!(map["write_regime"], "overwrite");
    assert_eq!(map["points"].as_array().map(Vec::len), Some(25));
    // Frontier: at each read step the most writes with x + y <= 0.8 on the 0.25 grid.
    let frontier: Vec<(f64, f64)> = map["frontier"]
        .as_array()
        .expect("frontier")
        .iter()
        .map(|f| {
            (
                f["read_iops"].as_f64().unwrap_or(-1.0),
                f["write_bytes_per_s"].as_f64().unwrap_or(-1.0),
            )
        })
        .collect();
    assert_eq!(
        frontier,
        vec![
            (10.0, 1.5e9),
            (20_000.0, 1e9),
            (40_000.0, 0.5e9),
            (60_000.0, 0.0)
        ]
    );
    assert_eq!(map["fits"]["chosen"], "half_duplex", "{}", map["fits"]);
    let svg = std::fs::read_to_string(out.join("read-p99.svg")).expect("svg");
    assert_eq!(
        svg.matches("<title>").count(),
        25,
        "one cell per grid point"
    );
    for png in ["read-p99.png", "write-p99.png"] {
        let bytes = std::fs::read(out.join(png)).expect(png);
        assert_eq!(&bytes[1..4], b"PNG", "{png}");
    }
    let csv = std::fs::read_to_string(out.join("explore.csv")).expect("csv");
    assert_eq!(csv.lines().count(), 26);
    let props = IoProperties::load(&out.join("io-properties.yaml"))
        .expect("io-properties.yaml loads as is");
    let disk = &props.disks[0];
    assert_eq!(disk.read_iops, 60_000);
    assert_eq!(disk.write_bytes_per_sec, 1_500_000_000);
    assert!(!disk.duplex);
    let (stdout, _) = text(&o);
    assert!(stdout.contains("chosen: half_duplex"), "{stdout}");
}

#[test]
fn bad_flags_are_usage_errors_that_name_the_fix() {
    for (args, needle) in [
        (
            vec!["--write-regime", "sideways"],
            "write `fresh` or `overwrite`",
        ),
        (vec!["--goal", "0ms"], "--goal 0ms"),
        (vec!["--read-size", "1000"], "multiple of 512"),
        (vec!["--slice", "reads-x-writes"], "read-bw-write-iops"),
        (
            vec!["--import", "/nonexistent/result.json"],
            "cannot read /nonexistent/result.json",
        ),
    ] {
        let mut all = vec!["explore"];
        all.extend(args);
        let o = weir_with(&all);
        assert_exit(&o, 2);
        let (_, stderr) = text(&o);
        assert!(stderr.contains(needle), "{all:?}: {stderr}");
    }
}

#[test]
fn a_bad_dir_is_refused_before_anything_starts() {
    let s = Scratch::new();
    let file = s.dir().join("a-file");
    std::fs::write(&file, b"").expect("write");
    let missing = s.dir().join("nope");
    for (dir, needle) in [
        (&missing, "pass an existing directory on the disk to map"),
        (&file, "not a directory"),
    ] {
        let dir = dir.to_str().expect("utf-8");
        let o = weir_with(&["explore", "--dir", dir, "--budget", "1s"]);
        assert_exit(&o, 2);
        let (_, stderr) = text(&o);
        assert!(stderr.contains(&format!("--dir {dir}: ")), "{stderr}");
        assert!(stderr.contains(needle), "{stderr}");
        // Refused before the map starts and before the clean-up of its test files.
        assert!(!stderr.contains("calibrating"), "{stderr}");
        assert!(!stderr.contains("warning"), "{stderr}");
    }
}

/// The other slice on a real file: 128 KiB reads x 4 KiB writes by default, shown as read
/// bandwidth x write IOPS in explore.json, the CSV, the summary and the heatmap.
#[test]
#[cfg_attr(
    not(feature = "system-tests"),
    ignore = "system tier: cargo test --workspace --features weir/system-tests"
)]
fn quick_map_of_the_read_bandwidth_x_write_iops_slice_on_loop_xfs() {
    let test = "quick_map_of_the_read_bandwidth_x_write_iops_slice_on_loop_xfs";
    let Some(fs) = loop_xfs(test) else {
        return;
    };
    let s = Scratch::new();
    let out = s.dir().join("out");
    let (map, _) = quick_map(&fs, &out, &["--slice", "read-bw-write-iops"]);
    assert_eq!(map["slice"], "read-bw-write-iops");
    assert_eq!(
        (map["read_bytes"].as_u64(), map["write_bytes"].as_u64()),
        (Some(131_072), Some(4096))
    );
    assert_eq!(map["axes"]["read"]["unit"], "B/s");
    assert_eq!(map["axes"]["write"]["field"], "write_iops");
    let frontier = map["frontier"].as_array().expect("frontier");
    let in_axes = map["frontier_in_axes"]
        .as_array()
        .expect("frontier_in_axes");
    assert_eq!(frontier.len(), in_axes.len());
    for (f, a) in frontier.iter().zip(in_axes) {
        // The two figures come from one measurement by different float paths (the axis value
        // is derived before it is written), so they agree to rounding, not bit for bit.
        let read_iops = f["read_iops"].as_f64().expect("read_iops");
        let read_bytes_per_s = a["read"].as_f64().expect("read");
        let expected = read_iops * 131_072.0;
        assert!(
            (read_bytes_per_s - expected).abs() <= 1e-9 * expected.abs().max(1.0),
            "{f} vs {a}"
        );
    }
    let csv = std::fs::read_to_string(out.join("explore.csv")).expect("csv");
    assert!(csv
        .lines()
        .next()
        .expect("header")
        .ends_with("read_bytes_per_s,write_iops"));
    let summary = std::fs::read_to_string(out.join("summary.txt")).expect("summary");
    assert!(
        summary.contains("for each read bandwidth the highest write rate"),
        "{summary}"
    );
    let svg = std::fs::read_to_string(out.join("read-p99.svg")).expect("svg");
    assert!(svg.contains("read bandwidth"), "the heatmap's axis");
}

#[test]
#[cfg_attr(
    not(feature = "system-tests"),
    ignore = "system tier: cargo test --workspace --features weir/system-tests"
)]
fn quick_map_on_loop_xfs_writes_every_output() {
    let test = "quick_map_on_loop_xfs_writes_every_output";
    let Some(fs) = loop_xfs(test) else {
        return;
    };
    let s = Scratch::new();
    let out = s.dir().join("out");
    let (map, stderr) = quick_map(&fs, &out, &[]);
    assert_eq!(map["write_regime"], "fresh");
    // The calibration and two rays take longer than the 5 s budget: the run says so.
    let seconds = map["seconds"].as_f64().expect("seconds");
    assert!(seconds > 5.5, "a quick map in {seconds} s");
    assert!(
        stderr.contains(&format!(
            "note: the map took {seconds:.0} s, over the 5 s budget"
        )),
        "{stderr}"
    );
    let points = map["points"].as_array().expect("points");
    // Both pure axes always run: two rays of four bisection steps.
    assert!(points.len() >= 8, "{} points", points.len());
    for p in points {
        for key in [
            "read_iops",
            "write_bytes_per_s",
            "kept_up",
            "seconds",
            "steady",
        ] {
            assert!(!p[key].is_null(), "{key} missing in {p}");
        }
        assert!(
            p["read_latency_us"]["p99"].is_number() && p["write_latency_us"]["p99"].is_number()
        );
    }
    let cal = &map["calibration"];
    assert!(
        cal["fresh_write_bytes_per_s"].as_f64().unwrap_or(0.0) > 0.0,
        "{cal}"
    );
    assert!(
        cal["overwrite_write_bytes_per_s"].as_f64().unwrap_or(0.0) > 0.0,
        "{cal}"
    );
    let csv = std::fs::read_to_string(out.join("explore.csv")).expect("csv");
    assert_eq!(csv.lines().count(), points.len() + 1);
    for f in [
        "read-p99.svg",
        "write-p99.svg",
        "read-p99.png",
        "write-p99.png",
        "summary.txt",
    ] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    // The test files are gone.
    let left: Vec<_> = std::fs::read_dir(fs.path())
        .expect("read dir")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("weir-explore"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

fn map_file(dir: &std::path::Path, name: &str, regime: &str, frontier: &[(f64, f64)]) -> String {
    let path = dir.join(name);
    let map = json!({
        "write_regime": regime,
        "calibration": {"read_iops": 50_000.0, "fresh_write_bytes_per_s": 1e9,
                        "overwrite_write_bytes_per_s": 2e9},
        "frontier": frontier.iter()
            .map(|(r, w)| json!({"read_iops": r, "write_bytes_per_s": w}))
            .collect::<Vec<_>>(),
    });
    std::fs::write(&path, map.to_string()).expect("write map");
    path.to_str().expect("utf-8").to_owned()
}

#[test]
fn compare_prints_the_frontier_spread_beside_the_pure_loads() {
    let s = Scratch::new();
    let a = map_file(
        s.dir(),
        "a.json",
        "overwrite",
        &[(0.0, 2e9), (20_000.0, 1e9)],
    );
    let b = map_file(
        s.dir(),
        "b.json",
        "overwrite",
        &[(0.0, 2.06e9), (20_000.0, 1.03e9)],
    );
    let o = weir_with(&["explore", "--compare", &a, &b]);
    assert_exit(&o, 0);
    let (stdout, _) = text(&o);
    assert!(
        stdout.contains("largest |B vs A| 3.0% over 2 read rates (within the 5% target)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("pure-load spread of the same runs: reads +0.0%"),
        "{stdout}"
    );
    let fresh = map_file(s.dir(), "c.json", "fresh", &[(0.0, 1e9)]);
    let o = weir_with(&["explore", "--compare", &a, &fresh]);
    assert_exit(&o, 2);
    let (_, stderr) = text(&o);
    assert!(stderr.contains("compare maps of one regime"), "{stderr}");
}

#[test]
#[cfg_attr(
    not(feature = "system-tests"),
    ignore = "system tier: cargo test --workspace --features weir/system-tests"
)]
fn grid_on_loop_xfs_measures_diskplorers_loads() {
    let test = "grid_on_loop_xfs_measures_diskplorers_loads";
    let Some(fs) = loop_xfs(test) else {
        return;
    };
    let s = Scratch::new();
    // Two light loads: 200 reads/s alone, and beside 20 MB/s of writes.
    let pct = json!({"50.000000": 100_000, "99.000000": 300_000});
    let jobs: Vec<Value> = [(0, 0), (0, 20_000_000)]
        .iter()
        .enumerate()
        .map(|(w_idx, &(_, bw))| {
            json!({
                "jobname": format!("job(r_idx=1,w_idx={w_idx},write_bw={bw},r_iops=200)"),
                "read": {"iops": 200.0, "clat_ns": {"percentile": pct}},
                "write": {"bw_bytes": bw as f64},
            })
        })
        .collect();
    let result = s.dir().join("result.json");
    std::fs::write(&result, json!({"jobs": jobs}).to_string()).expect("write result");
    let out = s.dir().join("out");
    let o = weir_with(&[
        "explore",
        "--dir",
        fs.path().to_str().expect("utf-8"),
        "--write-regime",
        "overwrite",
        "--grid",
        result.to_str().expect("utf-8"),
        "--shards",
        "1",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert_exit(&o, 0);
    let rows: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("grid.json")).expect("grid.json"))
            .expect("grid.json parses");
    let rows = rows.as_array().expect("rows");
    assert_eq!(rows.len(), 2);
    for (row, bw) in rows.iter().zip([0.0, 2e7]) {
        let weir = &row["weir"];
        assert_eq!(weir["read_iops"], 200.0);
        assert_eq!(weir["write_bytes_per_s"], bw);
        assert!(
            weir["read_latency_us"]["p99"].as_f64().unwrap_or(0.0) > 0.0,
            "{weir}"
        );
        assert_eq!(row["diskplorer"]["read_latency_us"]["p99"], 300.0);
    }
    let md = std::fs::read_to_string(out.join("grid.md")).expect("grid.md");
    assert!(md.contains("| 200 | 20 | 300 |"), "{md}");
    assert!(md.contains("verdicts agree at"), "{md}");
}

/// A `--quick` one-shard map on `fs` into `out` with `extra` flags and a 5 s budget; it must
/// exit 0, and its explore.json is returned parsed, with what it printed on stderr.
fn quick_map(fs: &TestFs, out: &std::path::Path, extra: &[&str]) -> (Value, String) {
    let dir = fs.path().to_str().expect("utf-8");
    let out_arg = out.to_str().expect("utf-8");
    let mut args = vec![
        "explore", "--dir", dir, "--quick", "--budget", "5s", "--shards", "1", "--out", out_arg,
    ];
    args.extend_from_slice(extra);
    let o = weir_with(&args);
    assert_exit(&o, 0);
    let map =
        serde_json::from_str(&std::fs::read_to_string(out.join("explore.json")).expect("json"))
            .expect("explore.json parses");
    (map, text(&o).1)
}

/// A 1 GiB loop-mounted XFS (4 KiB blocks, direct I/O) for `test`, or None (skipped with the
/// printed reason) when not root or a tool is missing.
fn loop_xfs(test: &str) -> Option<TestFs> {
    let root = require_root_with(test, &["mkfs.xfs", "losetup", "mount"])?;
    let opts = TestFsOptions::new(FsKind::Xfs { block_bytes: 4096 })
        .direct_io(true)
        .size_bytes(1 << 30);
    Some(TestFs::create(&root, test, &opts).expect("loop XFS image"))
}
