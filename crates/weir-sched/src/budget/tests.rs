use super::*;

/// A completion fed straight to the budget, as if its piece had been granted: these tests
/// steer the feedback with latencies of their choosing, whatever is in flight.
fn release(b: &SharedBudget, direction: Direction, cost_ps: u64, ahead_ps: u64, disk_ns: u64) {
    b.lane(direction).in_flight_ps.fetch_add(cost_ps, Relaxed);
    b.release(direction, cost_ps, ahead_ps, disk_ns);
}

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
    release(&b, Direction::Read, 1, 0, 100_000);
    // One write is far from filling the window: good reads must not widen it (anti-windup).
    for _ in 0..10_000 {
        release(&b, Direction::Read, 1, 0, 300_000);
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
            release(&b, Direction::Read, 1, 0, disk_ns);
        }
    }
    let low = guard(&b);
    assert!(low < 0.1, "guard {low} with 2% of reads over the goal");
    for _ in 0..2000 {
        for i in 0..200 {
            let disk_ns = if i < 1 { 1_000_000 } else { 300_000 };
            release(&b, Direction::Read, 1, 0, disk_ns);
        }
    }
    let high = guard(&b);
    assert!(high > 1.9, "guard {high} with 0.5% of reads over the goal");
    // The window follows the guard.
    let window = b.lane_stats(Direction::Write).window_sec;
    assert!((window - 2.0 * 750e-6).abs() < 1e-6, "window {window}");
}

/// A window cut to between 4/3 and 3/2 of a write holds one write (half of the next must
/// fit), which is under 3/4 of it: good reads must still grow it, or the writes go one at a
/// time for good (`bench/qos.sh`'s low rounds).
#[test]
fn the_tail_guard_grows_out_of_a_window_that_holds_one_write() {
    let b = budget(0.99);
    let write_cost = b.model().cost_ps(Direction::Write, 128 << 10);
    release(&b, Direction::Read, 1, 0, 100_000);
    b.try_acquire(Direction::Write, write_cost)
        .expect("empty disk");
    // Bad reads until the window holds less than 3/2 writes.
    while b.lane_stats(Direction::Write).window_sec * 1e12 >= 1.45 * write_cost as f64 {
        release(&b, Direction::Read, 1, 0, 2_000_000);
    }
    assert!(
        b.try_acquire(Direction::Write, write_cost).is_err(),
        "a second write fit"
    );
    // Good reads, with writes queued for every room the window makes.
    for _ in 0..20_000 {
        release(&b, Direction::Read, 1, 0, 300_000);
        let _ = b.try_acquire(Direction::Write, write_cost);
    }
    let window_ps = b.lane_stats(Direction::Write).window_sec * 1e12;
    assert!(
        window_ps > 3.0 * write_cost as f64,
        "window {:.1} us of {:.1} us writes",
        window_ps / 1e6,
        write_cost as f64 / 1e6
    );
}

#[test]
fn the_tail_guard_holds_still_without_writes_and_refuses_bad_quantiles() {
    let b = budget(0.99);
    release(&b, Direction::Read, 1, 0, 100_000);
    for _ in 0..1000 {
        release(&b, Direction::Read, 1, 0, 5_000_000);
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

/// Reads with no write in the disk may lift the drain speed above the model, up to
/// `max_read_speed_factor`, on the queue proper; a read beside a write brings it back to
/// `max_speed_factor` at once; a slow disk is followed down.
#[test]
fn reads_alone_lift_the_drain_speed_above_the_model_and_a_write_brings_it_back() {
    let b = budget(0.99);
    let speed = |b: &SharedBudget| b.lane_stats(Direction::Read).speed_factor;
    // The unloaded read latency: 100 us. Then reads that found 600 us of model time ahead
    // and waited 300 us beyond it: the queue proper (600 - 1.0 x 100 us) drained 1.67x as
    // fast as modelled, the plain sample (600 / 300) says 2x; both are capped at 1.25.
    release(&b, Direction::Read, 1, 0, 100_000);
    for _ in 0..200 {
        release(&b, Direction::Read, 1, 600_000_000, 400_000);
    }
    let fast = speed(&b);
    assert!((fast / 1.25 - 1.0).abs() < 0.01, "speed {fast}");
    // A write in the disk: the next read's sample is capped at the model, and so is the lane.
    let write_cost = b.model().cost_ps(Direction::Write, 128 << 10);
    b.try_acquire(Direction::Write, write_cost)
        .expect("empty disk");
    release(&b, Direction::Read, 1, 600_000_000, 400_000);
    let beside = speed(&b);
    assert!(beside <= 1.0, "speed {beside} beside a write");
    // A disk that waited 700 us behind the same queue: 600 / 700 of the model, as above.
    release(&b, Direction::Write, write_cost, 0, 200_000);
    for _ in 0..200 {
        release(&b, Direction::Read, 1, 600_000_000, 800_000);
    }
    let slow = speed(&b);
    assert!((slow / (600.0 / 700.0) - 1.0).abs() < 0.02, "speed {slow}");
}

#[test]
fn a_read_speed_cap_at_the_model_keeps_reads_at_it_and_bad_caps_are_refused() {
    let model = CostModel::new(50_000.0, 1e9, 40_000.0, 2e9, 1.0, true).expect("model");
    let config = SchedConfig {
        max_read_speed_factor: 1.0,
        ..SchedConfig::default()
    };
    let b = SharedBudget::new(model.clone(), config).expect("budget");
    release(&b, Direction::Read, 1, 0, 100_000);
    for _ in 0..200 {
        release(&b, Direction::Read, 1, 600_000_000, 400_000);
    }
    let speed = b.lane_stats(Direction::Read).speed_factor;
    assert!(speed <= 1.0, "speed {speed}");
    // A half-duplex disk whose one lane has carried a write: its reads stay at the model.
    let half = CostModel::new(50_000.0, 1e9, 40_000.0, 2e9, 1.0, false).expect("model");
    let b = SharedBudget::new(half.clone(), SchedConfig::default()).expect("budget");
    let write_cost = half.cost_ps(Direction::Write, 128 << 10);
    b.try_acquire(Direction::Write, write_cost)
        .expect("empty disk");
    release(&b, Direction::Write, write_cost, 0, 200_000);
    release(&b, Direction::Read, 1, 0, 100_000);
    for _ in 0..200 {
        release(&b, Direction::Read, 1, 600_000_000, 400_000);
    }
    let speed = b.lane_stats(Direction::Read).speed_factor;
    assert!(speed <= 1.0, "speed {speed} on a lane that carried a write");
    for bad in [0.5, 17.0, f64::NAN] {
        let config = SchedConfig {
            max_read_speed_factor: bad,
            ..SchedConfig::default()
        };
        let err = SharedBudget::new(model.clone(), config).expect_err("bad cap");
        assert!(err.to_string().contains("max_read_speed_factor"), "{err}");
    }
}

/// The lift is one rule for both directions: on a half-duplex disk (vda's shape) writes
/// alone lift the drain speed up to `max_write_speed_factor` (the share hold still divides
/// the window at the model's speed); the first read granted brings it back to
/// `max_speed_factor` at once, and from then on neither direction lifts.
#[test]
fn writes_alone_lift_the_drain_speed_and_the_first_read_ends_the_lift() {
    let half = CostModel::new(50_000.0, 1e9, 40_000.0, 2e9, 1.0, false).expect("model");
    // The write lift is on by default (1.25, `budget/config.rs`).
    let b = SharedBudget::new(half.clone(), SchedConfig::default()).expect("budget");
    let speed = |b: &SharedBudget| b.lane_stats(Direction::Write).speed_factor;
    let write_cost = half.cost_ps(Direction::Write, 128 << 10);
    b.try_acquire(Direction::Write, write_cost)
        .expect("empty disk");
    b.release(Direction::Write, write_cost, 0, 100_000);
    // Writes that found 600 us of model time ahead and waited 300 us beyond a lone one's
    // 100 us: the queue proper drained 1.67x as fast as modelled, capped at 1.25.
    let mut now_ns = 0;
    let mut one_write = |b: &SharedBudget| {
        // A millisecond between writes refills the bucket for the next.
        now_ns += 1_000_000;
        b.refill(now_ns);
        b.try_acquire(Direction::Write, write_cost)
            .expect("an empty disk and a full bucket");
        b.release(Direction::Write, write_cost, 600_000_000, 400_000);
    };
    for _ in 0..200 {
        one_write(&b);
    }
    let lifted = speed(&b);
    assert!((lifted / 1.25 - 1.0).abs() < 0.01, "speed {lifted}");
    // The share hold divides the window at the model's speed, not the lifted one
    // (judged against the lifted window, vda's 4 KiB writes lose the split).
    let window_ps = b.lane_stats(Direction::Write).window_sec * 1e12;
    let hold_ps = b.hold_window_ps(Direction::Write) as f64;
    assert!(
        (hold_ps * lifted / window_ps - 1.0).abs() < 0.01,
        "hold window {hold_ps} ps of a lifted window {window_ps} ps at speed {lifted}"
    );
    // One read granted: the lane is back at the model before any sample says so.
    b.try_acquire(Direction::Read, 1).expect("window");
    let clamped = speed(&b);
    assert!(clamped <= 1.0, "speed {clamped} after the first read");
    b.release(Direction::Read, 1, 0, 100_000);
    for _ in 0..200 {
        one_write(&b);
    }
    let mixed = speed(&b);
    assert!(
        mixed <= 1.0,
        "speed {mixed} on a disk that has carried a read"
    );
}
