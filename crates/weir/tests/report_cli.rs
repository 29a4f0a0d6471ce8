//! `weir report` and the `--plot` flags from the command line: Ctrl-C still writes the page
//! with the finished parts and names the rest; bad flags are usage errors; `weir run --plot`
//! writes its charts.

mod common;

use std::time::{Duration, Instant};

use common::{weir, Scratch};
use weir_report::page::embedded_doc;
use weir_report::{ReportDoc, SectionKind, Status};

/// `weir report --quick` interrupted `after` its start: its page and the document in it.
fn interrupted_report(scratch: &Scratch, after: Duration) -> (String, ReportDoc) {
    let out = scratch.jobs.path().join("report.html");
    let child = weir()
        .args(["report", "--quick", "--dir"])
        .arg(scratch.dir())
        .arg("--out")
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn weir report");
    std::thread::sleep(after);
    // SAFETY: kill() with a live child's pid and SIGINT has no memory effects.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let start = Instant::now();
    let output = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    // Only a report that ignored the signal takes this long: it goes on to tune and align
    // (minutes); stopping itself takes seconds however loaded the machine.
    assert!(
        start.elapsed() < Duration::from_secs(120),
        "weir report took {:?} to stop after Ctrl-C",
        start.elapsed()
    );
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("not finished:"), "{stderr}");
    let html = std::fs::read_to_string(&out).expect("page written");
    let doc = embedded_doc(&html).expect("page embeds its document");
    (html, doc)
}

#[test]
#[cfg_attr(
    not(feature = "system-tests"),
    ignore = "system tier: cargo test --workspace --features weir/system-tests"
)]
fn ctrl_c_writes_the_page_with_what_finished() {
    let scratch = Scratch::new();
    // Doctor takes well under a second on a quiet machine, so at 6 s the interrupt lands in
    // qualify or tune. Nothing outside the report says when doctor is done (progress is for
    // terminals only), so on a machine too loaded for doctor to finish in time the report is
    // interrupted again, later; a report that drops finished sections fails all three.
    let mut attempts = Vec::new();
    let (html, doc) = loop {
        let after = Duration::from_secs(6 << attempts.len());
        let (html, doc) = interrupted_report(&scratch, after);
        let doctor = &doc.sections[0];
        if (doctor.kind, &doctor.status) == (SectionKind::Doctor, &Status::Done) {
            break (html, doc);
        }
        attempts.push(format!("after {after:?}: doctor {:?}", doctor.status));
        assert!(
            attempts.len() < 3,
            "doctor never shown finished: {attempts:?}"
        );
    };
    assert!(doc.meta.interrupted);
    assert_eq!(doc.sections.len(), SectionKind::ALL.len());
    let doctor = &doc.sections[0];
    assert_eq!(
        (doctor.kind, &doctor.status),
        (SectionKind::Doctor, &Status::Done)
    );
    let align = doc.sections.last().expect("sections");
    assert_eq!(align.kind, SectionKind::Align);
    assert!(
        matches!(&align.status, Status::NotRun(r) if r.contains("interrupted")),
        "{:?}",
        align.status
    );
    assert!(
        html.contains("Interrupted (Ctrl-C)"),
        "the page says it is partial"
    );
    // The test files are gone.
    let left: Vec<_> = std::fs::read_dir(scratch.dir()).expect("dir").collect();
    assert!(left.is_empty(), "files left behind: {left:?}");
}

#[test]
fn bad_dir_and_out_are_usage_errors_before_measuring() {
    let scratch = Scratch::new();
    let missing = scratch.dir().join("nope");
    let o = weir()
        .args(["report", "--dir"])
        .arg(&missing)
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("pass an existing directory"));
    let o = weir()
        .args(["report", "--dir"])
        .arg(scratch.dir())
        .arg("--out")
        .arg(scratch.dir().join("no/such/dir/report.html"))
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("pass a writable path"));
    let o = weir()
        .args(["report", "--quick", "--full"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2), "--quick and --full conflict");
}

#[test]
fn run_plot_draws_each_jobs_cdf_and_bandwidth() {
    let scratch = Scratch::new();
    let job = scratch.job(
        "mixed.yaml",
        "- name: reads\n  type: randread\n  shards: [0]\n  data_size: 16MB\n  shard_info:\n    parallelism: 2\n    reqsize: 4kB\n- name: writes\n  type: seqwrite\n  shards: [0]\n  data_size: 16MB\n  shard_info:\n    parallelism: 2\n    reqsize: 128kB\n",
    );
    let svg = scratch.jobs.path().join("run.svg");
    let o = weir()
        .arg("run")
        .arg(&job)
        .arg("--dir")
        .arg(scratch.dir())
        .args(["--duration", "1s", "--output", "json", "--plot"])
        .arg(&svg)
        .output()
        .expect("run");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(&svg).expect("plot written");
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    assert!(text.contains("Latency CDF per job") && text.contains("Bandwidth per job over time"));
    // One CDF and one timeline per job (1 s at 250 ms windows: at least 2 windows each).
    assert_eq!(text.matches("<polyline").count(), 4, "{text}");
    assert!(text.contains(">reads</text>") && text.contains(">writes</text>"));
}
