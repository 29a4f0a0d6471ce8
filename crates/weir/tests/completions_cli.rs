//! `weir completions SHELL` and `weir man` come from the clap definitions: every subcommand and
//! its flags appear in them.

use std::process::Command;

fn weir(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(args)
        .output()
        .expect("the weir binary runs")
}

#[test]
fn bash_completions_name_every_subcommand_and_their_flags() {
    let out = weir(&["completions", "bash"]);
    assert!(out.status.success(), "{out:?}");
    let script = String::from_utf8(out.stdout).expect("utf-8");
    assert!(
        script.contains("complete -F _weir"),
        "not a bash completion script"
    );
    for word in [
        "tune",
        "run",
        "explore",
        "report",
        "--io-properties",
        "--properties-file",
    ] {
        assert!(script.contains(word), "completion script lacks {word}");
    }
}

#[test]
fn completions_for_an_unknown_shell_is_a_usage_error() {
    let out = weir(&["completions", "cmd.exe"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bash"), "the error lists the shells: {err}");
}

#[test]
fn man_writes_one_page_per_subcommand() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = weir(&["man", "--out-dir", &dir.path().display().to_string()]);
    assert!(out.status.success(), "{out:?}");
    for page in ["weir.1", "weir-tune.1", "weir-run.1", "weir-explore.1"] {
        let text = std::fs::read_to_string(dir.path().join(page)).expect(page);
        assert!(
            text.starts_with(".ie") || text.contains(".TH"),
            "{page} is not roff"
        );
    }
    let tune = std::fs::read_to_string(dir.path().join("weir-tune.1")).expect("tune page");
    assert!(
        tune.contains("properties\\-file"),
        "weir-tune.1 documents --properties-file"
    );
}

#[test]
fn man_without_a_directory_prints_the_top_page() {
    let out = weir(&["man"]);
    assert!(out.status.success(), "{out:?}");
    let page = String::from_utf8(out.stdout).expect("utf-8");
    assert!(
        page.contains(".TH weir 1"),
        "{}",
        &page[..page.len().min(200)]
    );
}

#[test]
fn man_into_an_unwritable_place_says_which_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").expect("write");
    let out = weir(&["man", "--out-dir", &file.join("sub").display().to_string()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a-file") && err.contains("--out-dir"), "{err}");
}
