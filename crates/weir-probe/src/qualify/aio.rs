//! The Linux AIO tests: context switches inside io_submit, and RWF_NOWAIT's EAGAIN rate.

use std::os::fd::AsRawFd;
use std::path::Path;

use weir_engine::aio_sys::{AioContext, IoEvent, Iocb, RWF_NOWAIT};

use super::file::{scratch_file, AlignedBuf};
use super::{
    error_result, thread_nvcsw, verdict, Measurements, QualifyError, QualifyOptions, TestResult,
    Verdict, Workload, EAGAIN_THRESHOLD_PER_1000, SWITCH_THRESHOLD,
};

/// The engine name every Linux AIO result carries.
const ENGINE: &str = "linux-aio";

/// The context-switch tests, in report order: (workload, depth, O_DSYNC).
const SWITCH_TESTS: &[(Workload, u32, bool)] = &[
    (Workload::Append, 1, false),
    (Workload::Append, 3, false),
    (Workload::PretruncateFill, 1, false),
    (Workload::PretruncateFill, 3, false),
    (Workload::PreallocFill, 1, false),
    (Workload::PreallocFill, 3, false),
    (Workload::Overwrite, 1, false),
    (Workload::Overwrite, 3, false),
    (Workload::Append, 1, true),
    (Workload::Overwrite, 1, true),
    (Workload::Read, 1, false),
    (Workload::Read, 3, false),
];

pub(super) fn run_all(dir: &Path, opts: &QualifyOptions) -> Vec<TestResult> {
    let mut out: Vec<TestResult> = SWITCH_TESTS
        .iter()
        .map(|&(w, depth, dsync)| switch_test(dir, opts, w, depth, dsync))
        .collect();
    out.push(nowait_test(dir, opts, Workload::Append));
    out.push(nowait_test(dir, opts, Workload::PretruncateFill));
    out.push(nowait_test(dir, opts, Workload::Overwrite));
    out
}

fn switch_test(
    dir: &Path,
    opts: &QualifyOptions,
    w: Workload,
    depth: u32,
    dsync: bool,
) -> TestResult {
    let id = format!(
        "aio.{}{}.depth{depth}",
        w.as_str(),
        if dsync { "_dsync" } else { "" }
    );
    let b = TestResult {
        dsync,
        ..TestResult::pending(
            ENGINE,
            id,
            w,
            depth,
            "context_switches_per_io",
            SWITCH_THRESHOLD,
        )
    };
    match measure_switches(dir, opts, w, depth, dsync) {
        Ok((ios, switches)) => {
            let value = switches as f64 / ios.max(1) as f64;
            let v = verdict(value, SWITCH_THRESHOLD, false);
            TestResult {
                value,
                verdict: v,
                measurements: Measurements {
                    ios,
                    submitter_switches: Some(switches),
                    ..Measurements::default()
                },
                meaning: switch_meaning(w, depth, dsync, v, value),
                ..b
            }
        }
        Err(e) => error_result(b, &e),
    }
}

fn switch_meaning(w: Workload, depth: u32, dsync: bool, v: Verdict, value: f64) -> String {
    let what = match (w, dsync) {
        (Workload::Append, false) => "appending writes",
        (Workload::Append, true) => "O_DSYNC appending writes",
        (Workload::PretruncateFill, _) => "writes into a pre-truncated file",
        (Workload::PreallocFill, _) => "writes into fallocated space",
        (Workload::Overwrite, false) => "overwrites",
        (Workload::Overwrite, true) => "O_DSYNC overwrites",
        (Workload::Read, _) => "reads",
    };
    match v {
        Verdict::Good => {
            format!("{what} at depth {depth} are asynchronous: io_submit returns without sleeping")
        }
        _ => {
            let advice = match w {
                Workload::Append => "pre-truncate or fallocate files to their final size (or grow them ahead, sloppy_size), keep appends to one in flight per file, or use XFS",
                Workload::PretruncateFill | Workload::PreallocFill => "block allocation blocks the submitter here: preallocate earlier, off the I/O path",
                Workload::Overwrite => "even overwrites block: this filesystem is unsuitable for thread-per-core direct I/O",
                Workload::Read => "reads block the submitter: the device or filesystem is not doing asynchronous direct reads",
            };
            format!(
                "{what} at depth {depth} block the submitting thread ({value:.2} sleeps per I/O): a thread-per-core engine stalls its whole core; {advice}"
            )
        }
    }
}

/// Runs `opts.ios` requests in batches of `depth`; returns (ios, voluntary switches inside
/// io_submit).
fn measure_switches(
    dir: &Path,
    opts: &QualifyOptions,
    w: Workload,
    depth: u32,
    dsync: bool,
) -> Result<(u64, u64), QualifyError> {
    let req = opts.request_bytes as u64;
    let batches = opts.ios.div_ceil(u64::from(depth));
    let ios = batches * u64::from(depth);
    let file = scratch_file(dir, w.layout(), ios * req, dsync)?;
    let ctx = AioContext::new(depth).map_err(aio_setup_error)?;
    let buf = AlignedBuf::new(req as usize * depth as usize)?;
    let fd = file.as_raw_fd();
    let mut switches = 0u64;
    let mut events = vec![IoEvent::default(); depth as usize];
    for batch in 0..batches {
        let mut iocbs: Vec<Iocb> = (0..depth as usize)
            .map(|j| {
                let offset = (batch * u64::from(depth) + j as u64) * req;
                let p = buf.at(j, req as usize);
                if w == Workload::Read {
                    Iocb::pread(fd, p, req as u32, offset, j as u64)
                } else {
                    Iocb::pwrite(fd, p, req as u32, offset, j as u64)
                }
            })
            .collect();
        let before = thread_nvcsw();
        submit_all(&ctx, &mut iocbs)?;
        switches += thread_nvcsw() - before;
        reap(&ctx, &mut events, depth, req)?;
    }
    Ok((ios, switches))
}

fn aio_setup_error(errno: i32) -> QualifyError {
    let name = weir_engine::errno_name(errno);
    match errno {
        libc::ENOSYS => QualifyError::Unsupported(format!("io_setup: {name}: this kernel has no Linux AIO (CONFIG_AIO=n)")),
        libc::EAGAIN => QualifyError::Unsupported(format!(
            "io_setup: {name}: the system-wide AIO limit is used up; raise it: sysctl fs.aio-max-nr=1048576"
        )),
        _ => QualifyError::Io(format!("io_setup: {}", weir_engine::describe_errno(errno))),
    }
}

/// Submits every iocb (one io_submit normally; resubmits the tail if the kernel took fewer).
fn submit_all(ctx: &AioContext, iocbs: &mut [Iocb]) -> Result<(), QualifyError> {
    submit_raw(ctx, iocbs)
        .map_err(|e| QualifyError::Io(format!("io_submit: {}", weir_engine::describe_errno(e))))
}

/// [`submit_all`] with the raw errno, for callers that expect EAGAIN.
fn submit_raw(ctx: &AioContext, iocbs: &mut [Iocb]) -> Result<(), i32> {
    let mut ptrs: Vec<*mut Iocb> = iocbs.iter_mut().map(|c| c as *mut Iocb).collect();
    let mut done = 0;
    while done < ptrs.len() {
        // SAFETY: the iocbs and their buffers live until `reap` collected every event
        // (the caller reaps before touching the buffer or dropping the iocbs).
        match unsafe { ctx.submit(&mut ptrs[done..]) } {
            // Zero accepted without an error does not happen for a valid batch; treat it as
            // the kernel's "try again" so the loop cannot spin silently.
            Ok(0) => return Err(libc::EAGAIN),
            Ok(n) => done += n,
            Err(libc::EINTR) => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Waits for `n` completions and checks each moved exactly `req` bytes.
fn reap(ctx: &AioContext, events: &mut [IoEvent], n: u32, req: u64) -> Result<(), QualifyError> {
    let mut got = 0usize;
    while got < n as usize {
        match ctx.get_events(1, &mut events[got..n as usize], None) {
            Ok(k) => got += k,
            Err(libc::EINTR) => continue,
            Err(e) => {
                return Err(QualifyError::Io(format!(
                    "io_getevents: {}",
                    weir_engine::describe_errno(e)
                )))
            }
        }
    }
    for ev in &events[..n as usize] {
        check_result(ev.res, req)?;
    }
    Ok(())
}

fn check_result(res: i64, req: u64) -> Result<(), QualifyError> {
    if res < 0 {
        let errno = (-res) as i32;
        return Err(match errno {
            libc::EINVAL => QualifyError::Unsupported(format!(
                "a {req} B direct request was refused ({}): the filesystem needs larger alignment or has no O_DIRECT",
                weir_engine::errno_name(errno)
            )),
            libc::ENOSPC => QualifyError::Io("no space left for the scratch file (ENOSPC): free space or lower --ios".into()),
            _ => QualifyError::Io(format!("request failed: {}", weir_engine::describe_errno(errno))),
        });
    }
    if res as u64 != req {
        return Err(QualifyError::Io(format!("short I/O: {res} of {req} bytes")));
    }
    Ok(())
}

fn nowait_test(dir: &Path, opts: &QualifyOptions, w: Workload) -> TestResult {
    let id = format!("aio.nowait.{}", w.as_str());
    let b = TestResult {
        nowait: true,
        ..TestResult::pending(
            ENGINE,
            id,
            w,
            1,
            "eagain_per_1000",
            EAGAIN_THRESHOLD_PER_1000,
        )
    };
    nowait_result(b, "Linux AIO", w, measure_nowait(dir, opts, w))
}

/// The verdict of a RWF_NOWAIT test from its (requests, EAGAIN refusals), for either engine.
pub(super) fn nowait_result(
    b: TestResult,
    engine: &str,
    w: Workload,
    measured: Result<(u64, u64), QualifyError>,
) -> TestResult {
    match measured {
        Ok((ios, eagain)) => {
            let value = eagain as f64 * 1000.0 / ios.max(1) as f64;
            let v = verdict(value, EAGAIN_THRESHOLD_PER_1000, true);
            TestResult {
                value,
                verdict: v,
                measurements: Measurements {
                    ios,
                    eagain: Some(eagain),
                    ..Measurements::default()
                },
                meaning: nowait_meaning(engine, w, v, value),
                ..b
            }
        }
        Err(e) => error_result(b, &e),
    }
}

pub(super) fn nowait_meaning(engine: &str, w: Workload, v: Verdict, value: f64) -> String {
    let what = match w {
        Workload::Append => "appending writes",
        Workload::PretruncateFill => "writes into a pre-truncated file",
        _ => "overwrites",
    };
    match v {
        Verdict::Good => format!("{engine} RWF_NOWAIT {what} go through without EAGAIN: the reactor can submit them directly"),
        _ => format!(
            "{engine} RWF_NOWAIT {what} got EAGAIN {value:.0} times per 1000: each one is retried from a helper thread \
             (extra context switches and latency); on kernels that return EAGAIN for timestamp (cmtime) updates, \
             do not rely on RWF_NOWAIT for writes"
        ),
    }
}

/// `nowait_ios` depth-1 writes with RWF_NOWAIT; an EAGAIN is retried without the flag so the
/// file keeps its shape. Returns (ios, EAGAIN count).
fn measure_nowait(
    dir: &Path,
    opts: &QualifyOptions,
    w: Workload,
) -> Result<(u64, u64), QualifyError> {
    let req = opts.request_bytes as u64;
    let ios = opts.nowait_ios;
    let file = scratch_file(dir, w.layout(), ios * req, false)?;
    let ctx = AioContext::new(1).map_err(aio_setup_error)?;
    let buf = AlignedBuf::new(req as usize)?;
    let fd = file.as_raw_fd();
    let mut events = [IoEvent::default(); 1];
    let mut eagain = 0u64;
    for i in 0..ios {
        let offset = i * req;
        let mut iocb =
            [Iocb::pwrite(fd, buf.ptr(), req as u32, offset, i).with_rw_flags(RWF_NOWAIT)];
        let res = match submit_raw(&ctx, &mut iocb) {
            Ok(()) => {
                reap_one(&ctx, &mut events)?;
                events[0].res
            }
            // Some kernels answer EAGAIN from io_submit itself rather than in the event.
            Err(e) => -i64::from(e),
        };
        if res == -(libc::EAGAIN as i64) {
            eagain += 1;
            let mut retry = [Iocb::pwrite(fd, buf.ptr(), req as u32, offset, i)];
            submit_all(&ctx, &mut retry)?;
            reap(&ctx, &mut events, 1, req)?;
        } else if res == -i64::from(libc::EOPNOTSUPP) || (res == -i64::from(libc::EINVAL) && i == 0)
        {
            return Err(QualifyError::Unsupported(format!(
                "RWF_NOWAIT refused ({}): this kernel or filesystem does not support it",
                weir_engine::errno_name((-res) as i32)
            )));
        } else {
            check_result(res, req)?;
        }
    }
    Ok((ios, eagain))
}

fn reap_one(ctx: &AioContext, events: &mut [IoEvent; 1]) -> Result<(), QualifyError> {
    loop {
        match ctx.get_events(1, events, None) {
            Ok(1) => return Ok(()),
            Ok(_) | Err(libc::EINTR) => continue,
            Err(e) => {
                return Err(QualifyError::Io(format!(
                    "io_getevents: {}",
                    weir_engine::describe_errno(e)
                )))
            }
        }
    }
}
