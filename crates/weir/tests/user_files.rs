//! The operator's files survive every command: a directory holding files by every name weir
//! uses for its data (and io_tester's names), a symlink by such a name pointing out of the
//! directory, and output files by the default output names. Commands that would need one of
//! them refuse and say why; commands that do not, run; afterwards every file holds what it
//! held, and nothing of weir's is left.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;

/// Every regular file under `dir` (not following symlinks) with its bytes, and every
/// symlink with its target.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir").flatten() {
            let path = e.path();
            let kind = e.file_type().expect("file type");
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_symlink() {
                let target = std::fs::read_link(&path).expect("read link");
                out.insert(path, target.to_string_lossy().as_bytes().to_vec());
            } else {
                out.insert(path.clone(), std::fs::read(&path).expect("read file"));
            }
        }
    }
    out
}

const USER_NAMES: &[&str] = &[
    "weir-w-0.data",
    "weir-w-1.data",
    "weir-u-shard-0-file-0.data",
    "test-w-0",
    "test-other-0",
    "test-u-shard-0-file-0",
    "io-properties.yaml",
    "report.html",
    "metrics.prom",
    "plot.svg",
];

fn user_dir(s: &Scratch) -> (PathBuf, PathBuf) {
    let dir = s.dir().join("data");
    std::fs::create_dir(&dir).expect("mkdir");
    for name in USER_NAMES {
        std::fs::write(dir.join(name), format!("the operator's {name}\n")).expect("user file");
    }
    // A symlink by a data file's name, pointing out of the directory.
    let outside = s.dir().join("outside.txt");
    std::fs::write(&outside, b"outside the directory\n").expect("outside file");
    std::os::unix::fs::symlink(&outside, dir.join("weir-r-0.data")).expect("symlink");
    let out = dir.join("explore-out");
    std::fs::create_dir(&out).expect("mkdir out");
    std::fs::write(out.join("explore.json"), b"{\"mine\": true}\n").expect("user output");
    (dir, outside)
}

fn job(s: &Scratch, name: &str, kind: &str) -> PathBuf {
    let extra = if kind == "unlink" {
        "  files_count: 2\n"
    } else {
        ""
    };
    s.job(
        &format!("{name}.yaml"),
        &format!(
            "- name: {name}\n  type: {kind}\n  shards: all\n  data_size: 2MB\n{extra}  \
             shard_info:\n    parallelism: 2\n    reqsize: 64kB\n"
        ),
    )
}

fn run_in(dir: &Path, job: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--duration", "200ms", "--shards", "2", "--backend", "aio"];
    args.extend_from_slice(extra);
    common::run(job, dir, &args)
}

#[test]
fn user_files_by_every_name_weir_uses_survive_every_command() {
    let s = Scratch::new();
    let (dir, outside) = user_dir(&s);
    let before = snapshot(s.dir());
    let d = dir.to_str().expect("utf-8");

    // Jobs whose files would take a user's name are refused, naming the file.
    for (name, kind, file) in [
        ("w", "seqwrite", "weir-w-0.data"),
        ("w", "randread", "weir-w-0.data"),
        ("r", "overwrite", "weir-r-0.data"),
        ("u", "unlink", "weir-u-shard-0-file-0.data"),
    ] {
        let o = run_in(&dir, &job(&s, name, kind), &[]);
        assert_exit(&o, 2);
        let err = stderr(&o);
        assert!(err.contains(file), "{name} {kind}: {err}");
        assert!(
            err.contains("did not create") || err.contains("symbolic link"),
            "{name} {kind}: {err}"
        );
    }
    // Jobs named like io_tester's files run beside them, without touching them.
    for (name, kind) in [("other", "seqwrite"), ("u2", "unlink"), ("x", "randwrite")] {
        let o = run_in(&dir, &job(&s, name, kind), &[]);
        assert_exit(&o, 0);
    }
    // Outputs by the names of the operator's files are refused, and --force is named.
    let w = job(&s, "ok", "seqwrite");
    for (flag, file) in [("--metrics", "metrics.prom"), ("--plot", "plot.svg")] {
        let path = dir.join(file);
        let o = run_in(&dir, &w, &[flag, path.to_str().expect("utf-8")]);
        assert_exit(&o, 2);
        assert!(stderr(&o).contains("--force"), "{flag}: {}", stderr(&o));
    }
    let props = dir.join("io-properties.yaml");
    let o = weir_with(&[
        "tune",
        "--dir",
        d,
        "--duration",
        "5s",
        "--properties-file",
        props.to_str().expect("utf-8"),
    ]);
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    let page = dir.join("report.html");
    let o = weir_with(&[
        "report",
        "--dir",
        d,
        "--out",
        page.to_str().expect("utf-8"),
        "--quick",
    ]);
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    let out = dir.join("explore-out");
    let o = weir_with(&[
        "explore",
        "--dir",
        d,
        "--out",
        out.to_str().expect("utf-8"),
        "--quick",
    ]);
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("explore.json"), "{}", stderr(&o));

    assert_eq!(snapshot(s.dir()), before, "a user file changed");
    assert_eq!(
        std::fs::read(&outside).expect("outside"),
        b"outside the directory\n"
    );
}
