//! Admission against a slow modelled disk: grants follow the budget and the shares, a
//! withdrawn request gives its place back, and `try_acquire` answers instead of waiting.

use std::time::{Duration, Instant};

use weir_io::{Admission, ClassSpec, DiskModel, Op, Policy, TryAcquireError};

/// A disk of 2,000 IOPS each way: a 4 KiB request costs 0.5 ms of disk time.
fn slow_model() -> DiskModel {
    DiskModel::builder()
        .read_iops(2_000)
        .read_bytes_per_sec(100 << 20)
        .write_iops(2_000)
        .write_bytes_per_sec(100 << 20)
        .build()
        .expect("a valid model")
}

#[test]
fn shares_divide_grants_while_both_classes_wait() {
    let mut policy = Policy::builder(slow_model()).latency_goal(Duration::from_millis(2));
    let heavy = policy.class(ClassSpec::new("heavy", 800)).expect("class");
    let light = policy.class(ClassSpec::new("light", 200)).expect("class");
    let admission = Admission::new(&policy.build().expect("policy")).expect("admission");
    let deadline = Instant::now() + Duration::from_millis(600);
    std::thread::scope(|s| {
        for class in [heavy, light] {
            for _ in 0..4 {
                let admission = admission.clone();
                s.spawn(move || {
                    while Instant::now() < deadline {
                        let grant = admission
                            .acquire_blocking(class, Op::Read, 4096)
                            .expect("grant");
                        // The modelled service time: hold the grant as the disk would.
                        std::thread::sleep(Duration::from_micros(500));
                        grant.complete();
                    }
                });
            }
        }
    });
    let m = admission.metrics();
    let (h, l) = (m[0].read_ops as f64, m[1].read_ops as f64);
    assert!(l > 0.0, "the light class was starved: {m:?}");
    let ratio = h / l;
    assert!(
        (2.5..=6.0).contains(&ratio),
        "800:200 shares gave {h} and {l} grants (ratio {ratio:.2})"
    );
    assert!(m[0].queue_latency.count() > 0 && m[0].disk_latency.count() > 0);
    assert!(admission
        .prometheus("/data")
        .contains("weir_io_queue_total_ops"));
}

#[test]
fn try_acquire_says_how_long_to_wait_once_the_budget_is_spent() {
    let mut policy = Policy::builder(slow_model()).latency_goal(Duration::from_millis(1));
    let bulk = policy.class(ClassSpec::new("bulk", 100)).expect("class");
    let admission = Admission::new(&policy.build().expect("policy")).expect("admission");
    let mut held = Vec::new();
    let mut refused = None;
    for _ in 0..64 {
        match admission
            .try_acquire(bulk, Op::Write, 64 << 10)
            .expect("valid request")
        {
            Ok(grant) => held.push(grant),
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    let Some(TryAcquireError::WouldWait { retry_after }) = refused else {
        panic!("64 writes of 64 KiB fit a 1 ms window of a 2,000 IOPS disk: {held:?}");
    };
    assert!(!held.is_empty(), "the first request fits the empty window");
    assert!(
        retry_after <= Duration::from_millis(100),
        "retry after {retry_after:?}"
    );
    drop(held);
    // Released grants free the window; the token bucket refills by the advised time.
    let mut wait = retry_after;
    for _ in 0..20 {
        std::thread::sleep(wait);
        match admission
            .try_acquire(bulk, Op::Write, 64 << 10)
            .expect("valid")
        {
            Ok(_) => return,
            Err(TryAcquireError::WouldWait { retry_after }) => wait = retry_after,
            Err(e) => panic!("{e}"),
        }
    }
    panic!("no grant after 20 advised waits");
}

#[test]
fn a_dropped_acquire_withdraws_and_later_requests_are_granted() {
    let mut policy = Policy::builder(slow_model()).latency_goal(Duration::from_millis(1));
    let bulk = policy.class(ClassSpec::new("bulk", 100)).expect("class");
    let admission = Admission::new(&policy.build().expect("policy")).expect("admission");
    let first = admission
        .acquire_blocking(bulk, Op::Write, 1 << 20)
        .expect("grant");
    // The window is full: this one waits, and is dropped while waiting.
    let waiting = admission.acquire(bulk, Op::Write, 1 << 20);
    drop(waiting);
    drop(first);
    let t0 = Instant::now();
    let later = admission
        .acquire_blocking(bulk, Op::Read, 4096)
        .expect("grant");
    assert!(t0.elapsed() < Duration::from_secs(2));
    drop(later);
    assert_eq!(admission.metrics()[0].read_ops, 1);
}

#[test]
fn bad_requests_are_typed_errors() {
    let mut policy = Policy::builder(slow_model());
    let c = policy.class(ClassSpec::new("c", 1)).expect("class");
    assert!(
        policy.class(ClassSpec::new("c", 5)).is_err(),
        "duplicate name"
    );
    assert!(
        policy.class(ClassSpec::new("zero", 0)).is_err(),
        "zero shares"
    );
    let admission = Admission::new(&policy.build().expect("policy")).expect("admission");
    assert!(matches!(
        admission.acquire_blocking(c, Op::Read, 0),
        Err(weir_io::Error::EmptyRequest)
    ));
    assert!(admission.set_shares(c, 2_000_000).is_err());
    admission.set_shares(c, 500).expect("valid shares");
    assert_eq!(admission.metrics()[0].shares, 500);
}
