use super::*;

fn budget(quantile: f64) -> SharedBudget {
    let model = CostModel::new(50_000.0, 1e9, 40_000.0, 2e9, 1.0, true).expect("model");
    let config = SchedConfig {
        tail_quantile: quantile,
        ..SchedConfig::default()
    };
    SharedBudget::new(model, config).expect("budget")
}

#[test]
fn the_tail_guard_settles_where_the_quantile_of_reads_is_over_the_goal() {
    let b = budget(0.99);
    let write_cost = b.model().cost_ps(Direction::Write, 128 << 10);
    b.try_acquire(Direction::Write, write_cost)
        .expect("empty disk");
    // The unloaded read latency: 100 us.
    b.release(Direction::Read, 1, 0, 100_000);
    // One write is far from filling the window: good reads must not widen it (anti-windup).
    for _ in 0..10_000 {
        b.release(Direction::Read, 1, 0, 300_000);
    }
    let guard = |b: &SharedBudget| b.lane_stats(Direction::Write).tail_guard;
    assert_eq!(
        guard(&b),
        1.0,
        "the guard grew under a window that did not bind"
    );
    // From here the writes fill the window (the disk time stays booked, so it binds).
    b.lane(Direction::Write)
        .in_flight_ps
        .store(b.goal_ps * 4, Relaxed);
    // 2% of reads over the goal: the guard must fall; 0.5%: it must rise.
    for _ in 0..2000 {
        for i in 0..100 {
            let disk_ns = if i < 2 { 1_000_000 } else { 300_000 };
            b.release(Direction::Read, 1, 0, disk_ns);
        }
    }
    let low = guard(&b);
    assert!(low < 0.1, "guard {low} with 2% of reads over the goal");
    for _ in 0..2000 {
        for i in 0..200 {
            let disk_ns = if i < 1 { 1_000_000 } else { 300_000 };
            b.release(Direction::Read, 1, 0, disk_ns);
        }
    }
    let high = guard(&b);
    assert!(high > 1.9, "guard {high} with 0.5% of reads over the goal");
    // The window follows the guard.
    let window = b.lane_stats(Direction::Write).window_sec;
    assert!((window - 2.0 * 750e-6).abs() < 1e-6, "window {window}");
}

#[test]
fn the_tail_guard_holds_still_without_writes_and_refuses_bad_quantiles() {
    let b = budget(0.99);
    b.release(Direction::Read, 1, 0, 100_000);
    for _ in 0..1000 {
        b.release(Direction::Read, 1, 0, 5_000_000);
    }
    assert_eq!(b.lane_stats(Direction::Write).tail_guard, 1.0);
    for q in [0.3, 1.0, f64::NAN] {
        let model = CostModel::new(50_000.0, 1e9, 40_000.0, 2e9, 1.0, true).expect("model");
        let config = SchedConfig {
            tail_quantile: q,
            ..SchedConfig::default()
        };
        let err = SharedBudget::new(model, config).expect_err("bad quantile");
        assert!(err.to_string().contains("tail_quantile"), "{err}");
    }
}
