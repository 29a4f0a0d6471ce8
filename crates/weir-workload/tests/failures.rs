//! A run that starts and then fails hands back its cause as a value: a device whose every
//! write comes back ENOSPC ends the run with `Failure::DiskFull`, the message the CLI prints,
//! and the partial report.

use std::collections::HashSet;
use std::time::Duration;
use weir_workload::DeviceOpenError;

use weir_model::device::{Device, DeviceError, Direction, IoCompletion, IoOp};
use weir_workload::null_device::{NullDevice, NullFactory};
use weir_workload::{run_with, Control, DeviceFactory, Failure, Job, JobType, Plan, RunError};
use weir_workload::{RunOptions, SetupError};

/// The null device, but every write completes with -ENOSPC.
struct FullDevice {
    inner: NullDevice,
    writes: HashSet<u64>,
}

impl Device for FullDevice {
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }

    fn capacity(&self) -> u32 {
        self.inner.capacity()
    }

    unsafe fn push(&mut self, op: IoOp) -> Result<(), DeviceError> {
        if op.direction == Direction::Write {
            self.writes.insert(op.user_data);
        }
        // SAFETY: the caller's contract for `op` passes on unchanged.
        unsafe { self.inner.push(op) }
    }

    fn submit_and_wait(&mut self, min: u32, deadline: Option<u64>) -> Result<u32, DeviceError> {
        self.inner.submit_and_wait(min, deadline)
    }

    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        let before = out.len();
        let n = self.inner.reap(out);
        for c in &mut out[before..] {
            if self.writes.remove(&c.user_data) {
                c.result = -libc::ENOSPC;
            }
        }
        n
    }
}

struct FullFactory;

impl DeviceFactory for FullFactory {
    type Device = FullDevice;

    fn name(&self) -> String {
        "full".into()
    }

    fn open(&self, shard: usize, depth: u32) -> Result<FullDevice, DeviceOpenError> {
        Ok(FullDevice {
            inner: NullFactory.open(shard, depth)?,
            writes: HashSet::new(),
        })
    }
}

/// A factory whose devices cannot be opened.
struct BrokenFactory;

impl DeviceFactory for BrokenFactory {
    type Device = NullDevice;

    fn name(&self) -> String {
        "broken".into()
    }

    fn open(&self, _shard: usize, _depth: u32) -> Result<NullDevice, DeviceOpenError> {
        Err(DeviceOpenError::other("io_uring_setup: ENOMEM"))
    }
}

fn writes() -> Plan {
    let mut job = Job::new("writes", JobType::SeqWrite);
    job.request_bytes = 4096;
    job.data_size_bytes = Some(1 << 20);
    Plan::new(vec![job])
}

fn options() -> RunOptions {
    RunOptions {
        duration: Duration::from_millis(50),
        shards: 1,
        ..RunOptions::default()
    }
}

#[test]
fn a_full_disk_is_a_disk_full_failure_with_its_message() {
    let result = run_with(&writes(), &options(), &FullFactory, &mut |_| {
        Control::Continue
    });
    let Err(RunError::Failed {
        message,
        interrupted,
        failure,
        partial,
    }) = result
    else {
        panic!("expected a failed run, got {result:?}");
    };
    assert!(!interrupted);
    let Some(Failure::DiskFull { job, detail }) = failure else {
        panic!("expected a disk-full failure, got {failure:?}");
    };
    assert_eq!(job, "writes");
    assert!(detail.contains("ENOSPC"), "{detail}");
    assert!(
        message.starts_with("the disk filled up during job `writes`: write of 4096 bytes"),
        "{message}"
    );
    assert_eq!(partial.jobs[0].errors, 1, "the first failure stops the run");
    assert_eq!(partial.stopped_early.as_deref(), Some(message.as_str()));
}

#[test]
fn a_device_that_cannot_open_is_a_backend_setup_error() {
    let result = run_with(&writes(), &options(), &BrokenFactory, &mut |_| {
        Control::Continue
    });
    match result {
        Err(RunError::Setup(SetupError::Backend { error, .. })) => {
            assert_eq!(error.to_string(), "io_uring_setup: ENOMEM")
        }
        other => panic!("expected a backend setup error, got {other:?}"),
    }
}
