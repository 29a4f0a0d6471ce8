use super::*;

#[test]
fn a_created_file_is_marked_as_held_by_this_process() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("weir-w-0.data");
    let (file, marked) = create_new(&path).expect("create");
    assert!(marked, "tmpfs and disk filesystems keep user xattrs");
    assert_eq!(read_mark(&file).expect("mark"), Some(Holder::current()));
    assert!(Holder::current().is_live());
    assert_eq!(
        inspect(&path).expect("inspect"),
        Ownership::Weirs(Holder::current())
    );
    let again = create_new(&path).expect_err("exclusive");
    assert_eq!(again.raw_os_error(), Some(libc::EEXIST));
}

#[test]
fn someone_elses_file_and_symlinks_are_foreign() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mine = dir.path().join("weir-w-0.data");
    std::fs::write(&mine, b"the operator's").expect("write");
    assert_eq!(
        inspect(&mine).expect("inspect"),
        Ownership::Foreign(Foreign::Unmarked)
    );
    let e = open_marked(&mine).expect_err("not weir's");
    assert_eq!(e.raw_os_error(), Some(libc::EPERM));
    let link = dir.path().join("weir-w-1.data");
    std::os::unix::fs::symlink(&mine, &link).expect("symlink");
    assert_eq!(
        inspect(&link).expect("inspect"),
        Ownership::Foreign(Foreign::Symlink)
    );
    assert!(create_new(&link).is_err(), "O_EXCL refuses a symlink");
    assert!(open_marked(&link).is_err(), "O_NOFOLLOW refuses a symlink");
    assert_eq!(
        inspect(dir.path()).expect("inspect"),
        Ownership::Foreign(Foreign::NotRegular)
    );
    assert_eq!(
        inspect(&dir.path().join("absent")).expect("inspect"),
        Ownership::Absent
    );
    assert_eq!(std::fs::read(&mine).expect("read"), b"the operator's");
}

#[test]
fn a_file_is_removed_only_while_its_path_names_the_opened_inode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("weir-w-0.data");
    let (file, _) = create_new(&path).expect("create");
    // Replaced behind weir's back: the new file is not removed.
    std::fs::remove_file(&path).expect("unlink");
    std::fs::write(&path, b"new").expect("replace");
    assert!(!remove_if_same(&path, &file));
    assert!(path.exists());
    std::fs::remove_file(&path).expect("unlink");
    let (file, _) = create_new(&path).expect("create");
    assert!(remove_if_same(&path, &file));
    assert!(!path.exists());
}

#[test]
fn sweep_removes_files_of_dead_processes_and_keeps_the_rest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    // A child that has exited: its pid names no live process with that start time.
    let mut child = std::process::Command::new("true").spawn().expect("spawn");
    let dead_pid = child.id();
    let dead_start = start_ticks_of(dead_pid).unwrap_or(1);
    child.wait().expect("wait");
    let dead = Holder::Process {
        pid: dead_pid,
        start_ticks: dead_start,
    };
    let (f, _) = create_new(&d.join("weir-a-0.data")).expect("create");
    set_mark(&f, dead).expect("mark");
    // The same pid with another start time is another process (pid reuse).
    let (f, _) = create_new(&d.join("weir-b-0.data")).expect("create");
    set_mark(
        &f,
        Holder::Process {
            pid: std::process::id(),
            start_ticks: 1,
        },
    )
    .expect("mark");
    let (f, _) = create_new(&d.join("weir-kept-0.data")).expect("create");
    set_mark(&f, Holder::Kept).expect("mark");
    let (_live, _) = create_new(&d.join("weir-live-0.data")).expect("create");
    std::fs::write(d.join(format!(".weir-dio-trial-{dead_pid}-0")), b"x").expect("trial");
    let live_trial = format!(".weir-dio-trial-{}-0", std::process::id());
    std::fs::write(d.join(&live_trial), b"x").expect("trial");
    std::fs::write(d.join("weir-user-0.data"), b"user").expect("user file");
    std::os::unix::fs::symlink(d.join("weir-user-0.data"), d.join("weir-link-0.data"))
        .expect("symlink");
    let removed = sweep(d).expect("sweep");
    let names: Vec<String> = removed
        .iter()
        .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    let dead_trial = format!(".weir-dio-trial-{dead_pid}-0");
    assert_eq!(
        names,
        [dead_trial.as_str(), "weir-a-0.data", "weir-b-0.data"]
    );
    assert!(d.join(&live_trial).exists());
    for stays in [
        "weir-kept-0.data",
        "weir-live-0.data",
        "weir-user-0.data",
        "weir-link-0.data",
    ] {
        assert!(d.join(stays).exists(), "{stays} must stay");
    }
}

#[test]
fn a_kept_or_abandoned_file_may_be_taken_over_but_not_a_live_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("weir-k-0.data");
    let (f, _) = create_new(&path).expect("create");
    set_mark(&f, Holder::Kept).expect("mark");
    drop(f);
    let f = open_marked(&path).expect("kept files are reused");
    assert_eq!(read_mark(&f).expect("mark"), Some(Holder::current()));
    // pid 1 is live and is not this process.
    set_mark(
        &f,
        Holder::Process {
            pid: 1,
            start_ticks: start_ticks_of(1).expect("init runs"),
        },
    )
    .expect("mark");
    let e = open_marked(&path).expect_err("a live run's file");
    assert_eq!(e.raw_os_error(), Some(libc::EPERM));
}

#[test]
fn marks_round_trip_and_garbage_is_no_mark() {
    for h in [
        Holder::Kept,
        Holder::Process {
            pid: 42,
            start_ticks: 123_456,
        },
    ] {
        assert_eq!(Holder::decode(h.encode().as_bytes()), Some(h));
    }
    for bad in [
        &b""[..],
        b"weir",
        b"weir pid=x start=1",
        b"other kept",
        b"\xff\xfe",
    ] {
        assert_eq!(Holder::decode(bad), None, "{bad:?}");
    }
}

#[test]
fn claim_creates_takes_over_or_refuses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("weir-c-0.data");
    let created = claim(&path).expect("absent");
    assert!(matches!(created, Claimed::Created { marked: true, .. }));
    match claim(&path).expect("this process's own file") {
        Claimed::Existing(_) => {}
        other => panic!("{other:?}"),
    }
    mark_path(&path, Holder::Kept).expect("mark kept");
    assert!(matches!(claim(&path), Ok(Claimed::Existing(_))));
    assert!(remove_if_held(&path));
    std::fs::write(&path, b"user").expect("user file");
    let e = claim(&path).expect_err("foreign");
    assert!(e.to_string().contains("did not create"), "{e}");
    assert!(!remove_if_held(&path));
    assert_eq!(std::fs::read(&path).expect("read"), b"user");
}
