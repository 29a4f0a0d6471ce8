//! `weir run --device` on loop devices that hold a user's data (root tier): an ext4 and an XFS
//! filesystem, a GPT partition table and a swap signature are each refused for jobs that
//! write, with a message naming what was found and `--destroy-data`, and the device is left
//! byte for byte as it was; read-only jobs run without the flag; the flag overrides and the
//! run's output repeats it; a blank device needs no flag.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_exit, stderr, Scratch};

/// XFS refuses filesystems under 300 MiB; the image file is sparse.
const IMAGE_BYTES: u64 = 320 << 20;

const WRITE_JOB: &str = "\
- name: writer
  type: seqwrite
  shards: all
  data_size: 8MB
  shard_info:
    parallelism: 4
    reqsize: 64kB
";

const READ_JOB: &str = "\
- name: reader
  type: randread
  shards: all
  data_size: 8MB
  shard_info:
    parallelism: 4
    reqsize: 4kB
";

/// A loop device over an image file, detached on drop.
struct Loop {
    device: PathBuf,
    image: PathBuf,
}

impl Loop {
    fn new(dir: &Path, name: &str) -> Loop {
        let image = dir.join(format!("{name}.img"));
        let f = std::fs::File::create(&image).expect("image");
        f.set_len(IMAGE_BYTES).expect("size image");
        let out = tool("losetup")
            .args(["--find", "--show"])
            .arg(&image)
            .output()
            .expect("losetup");
        assert!(out.status.success(), "losetup: {out:?}");
        let device = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        Loop { device, image }
    }

    /// The bytes the jobs' region could reach (the first 16 MiB; the jobs use 8 MB) and the
    /// last MiB (a GPT's backup header), read through the loop device's backing file.
    fn contents(&self) -> Vec<u8> {
        use std::os::unix::fs::FileExt;
        let f = std::fs::File::open(&self.image).expect("open image");
        let mut head = vec![0u8; 16 << 20];
        f.read_exact_at(&mut head, 0).expect("read head");
        let mut tail = vec![0u8; 1 << 20];
        f.read_exact_at(&mut tail, IMAGE_BYTES - (1 << 20))
            .expect("read tail");
        head.extend_from_slice(&tail);
        head
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = tool("losetup").arg("-d").arg(&self.device).status();
    }
}

fn tool(name: &str) -> Command {
    Command::new(weir_testfs::find_tool(name).unwrap_or_else(|| PathBuf::from(name)))
}

fn make(kind: &str, device: &Path) {
    let dev = device.to_str().expect("utf-8 path");
    let status = match kind {
        "ext4" => tool("mkfs.ext4")
            .args(["-q", "-F", "-L", "userdata", dev])
            .status(),
        "xfs" => tool("mkfs.xfs")
            .args(["-q", "-f", "-L", "userdata", dev])
            .status(),
        "swap" => tool("mkswap").args(["-L", "userswap", dev]).status(),
        "gpt" => {
            let mut child = tool("sfdisk")
                .args([
                    "--quiet",
                    "--no-reread",
                    "--no-tell-kernel",
                    "--label",
                    "gpt",
                    dev,
                ])
                .stdin(std::process::Stdio::piped())
                .spawn()
                .expect("sfdisk");
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(b"size=16MiB, type=linux\n")
                .expect("sfdisk script");
            child.wait()
        }
        other => panic!("no maker for {other}"),
    }
    .expect("run mkfs");
    assert!(status.success(), "making {kind} on {dev} failed");
    // The signature must be on the medium, not only in the page cache of the loop device.
    let _ = tool("sync").status();
}

fn run_on(device: &Path, job: &Path, extra: &[&str]) -> std::process::Output {
    common::weir()
        .arg("run")
        .arg(job)
        .arg("--device")
        .arg(device)
        .args(["--duration", "300ms", "--shards", "1", "--backend", "aio"])
        .args(extra)
        .output()
        .expect("spawn weir")
}

#[test]
fn devices_holding_data_are_refused_for_writes_and_run_for_reads() {
    let name = "devices_holding_data_are_refused_for_writes_and_run_for_reads";
    let Some(_root) = weir_testfs::require_root_with(
        name,
        &["losetup", "mkfs.ext4", "mkfs.xfs", "mkswap", "sfdisk"],
    ) else {
        return;
    };
    let s = Scratch::new();
    let write = s.job("write.yaml", WRITE_JOB);
    let read = s.job("read.yaml", READ_JOB);
    for (kind, named) in [
        ("ext4", "ext4 filesystem"),
        ("xfs", "XFS filesystem"),
        ("gpt", "GPT partition table"),
        ("swap", "swap area"),
    ] {
        let lo = Loop::new(s.dir(), kind);
        make(kind, &lo.device);
        let before = lo.contents();

        let refused = run_on(&lo.device, &write, &[]);
        assert_exit(&refused, 2);
        let err = stderr(&refused);
        assert!(err.contains(named), "{kind}: {err}");
        assert!(err.contains("--destroy-data"), "{kind}: {err}");
        assert!(err.contains("magic at byte"), "{kind}: {err}");
        assert!(
            lo.contents() == before,
            "{kind}: a refused run changed the device"
        );

        let read_run = run_on(&lo.device, &read, &[]);
        assert_exit(&read_run, 0);
        assert!(
            lo.contents() == before,
            "{kind}: a read-only run changed the device"
        );

        let forced = run_on(&lo.device, &write, &["--destroy-data"]);
        assert_exit(&forced, 0);
        let err = stderr(&forced);
        assert!(
            err.contains("--destroy-data:") && err.contains(named),
            "{kind}: {err}"
        );
        assert!(
            lo.contents() != before,
            "{kind}: the forced run wrote nothing"
        );
    }
    // A device with nothing on it needs no flag.
    let blank = Loop::new(s.dir(), "blank");
    assert_exit(&run_on(&blank.device, &write, &[]), 0);
}
