use super::*;
use crate::point::Percentiles;

fn point(read_iops: f64, write_bytes_per_s: f64, p99: f64, goal_us: f64) -> PointResult {
    let pct = Percentiles {
        p50: p99 / 2.0,
        p95: p99 * 0.9,
        p99,
        p999: p99 * 1.2,
    };
    PointResult {
        read_iops,
        write_bytes_per_s,
        achieved_read_iops: read_iops,
        achieved_write_bytes_per_s: write_bytes_per_s,
        read_latency_us: pct,
        write_latency_us: pct,
        read_share_over_goal: None,
        kept_up: true,
        within_goal: p99 <= goal_us,
        seconds: 2.0,
        steady: Steady::Agreed,
        windows: 2,
    }
}

fn entry(read_iops: f64, write_bytes_per_s: f64) -> FrontierPoint {
    FrontierPoint {
        read_iops,
        write_bytes_per_s,
    }
}

#[test]
fn goal_is_the_maps_goal_less_reads_alone_and_two_writes() {
    // Pure reads: 10k/s p99 300 us, 20k/s 500 us (and a noisy 15k/s at 250 that cannot be
    // lower than 10k/s's: it counts as 300).
    let points = vec![
        point(10_000.0, 0.0, 300.0, 1000.0),
        point(15_000.0, 0.0, 250.0, 1000.0),
        point(20_000.0, 0.0, 500.0, 1000.0),
        point(40_000.0, 0.0, 950.0, 1000.0),
        point(12_500.0, 600e6, 900.0, 1000.0),
        point(30_000.0, 200e6, 990.0, 1000.0),
    ];
    let frontier = [
        entry(0.0, 2e9),
        entry(5_000.0, 800e6),
        entry(12_500.0, 600e6),
        entry(30_000.0, 200e6),
        entry(40_000.0, 0.0),
    ];
    let g = derive(&points, &frontier, 1000.0, 100.0, 40_000.0).expect("a goal");
    assert_eq!(g.per_read_rate.len(), 3, "{g:?}");
    // 5k: below the lowest pure-read rate, so that rate's 300 us.
    assert_eq!(g.per_read_rate[0].read_alone_p99_us, 300.0);
    // 1000 - 300 - two writes of 100.
    assert_eq!(g.per_read_rate[0].in_disk_goal_us, 500.0);
    assert_eq!(g.per_read_rate[0].frontier_read_p99_us, None);
    // 12.5k: between 10k (300) and 15k (300, the noise lifted): 300.
    assert_eq!(g.per_read_rate[1].read_alone_p99_us, 300.0);
    assert_eq!(g.per_read_rate[1].frontier_read_p99_us, Some(900.0));
    // 30k: 500 + (950 - 500) / 2 = 725; 1000 - 725 - 2 x 100 = 75 < 200: floored.
    assert_eq!(g.per_read_rate[2].read_alone_p99_us, 725.0);
    assert_eq!(g.per_read_rate[2].in_disk_goal_us, 200.0);
    assert!(g.per_read_rate[2].floored);
    // io-properties takes the lower half's smallest (30k is above 40k / 2).
    assert_eq!(g.in_disk_goal_us, 500.0, "{}", g.why);
    assert!(g.why.contains("half"), "{}", g.why);
}

#[test]
fn no_goal_without_pure_reads_or_mixed_entries() {
    let frontier = [entry(0.0, 2e9), entry(5_000.0, 800e6)];
    assert_eq!(derive(&[], &frontier, 1000.0, 100.0, 5_000.0), None);
    let reads = [point(10_000.0, 0.0, 300.0, 1000.0)];
    let axes_only = [entry(0.0, 2e9), entry(10_000.0, 0.0)];
    assert_eq!(derive(&reads, &axes_only, 1000.0, 100.0, 10_000.0), None);
}

/// The first test's map with `pairs` extra points each measured twice (p99 `a` and `b`).
fn map_with_repeats(pairs: &[(f64, f64)]) -> (Vec<PointResult>, [FrontierPoint; 3]) {
    let mut points = vec![
        point(10_000.0, 0.0, 300.0, 1000.0),
        point(40_000.0, 0.0, 950.0, 1000.0),
    ];
    for (i, &(a, b)) in pairs.iter().enumerate() {
        let write = 100e6 * (i + 1) as f64;
        points.push(point(12_000.0, write, a, 1000.0));
        points.push(point(12_000.0, write, b, 1000.0));
    }
    let frontier = [entry(0.0, 2e9), entry(5_000.0, 800e6), entry(40_000.0, 0.0)];
    (points, frontier)
}

#[test]
fn the_disks_own_p99_spread_takes_a_margin_off_the_goal() {
    // Spreads 0.21, 0.44 and 0.69: median 0.44, so the median round is aimed at
    // 1000 / sqrt(1.44) = 833 us, and the in-disk goal is 833 - 300 - 2 x 100.
    let (points, frontier) = map_with_repeats(&[(500.0, 605.0), (600.0, 864.0), (400.0, 676.0)]);
    let spread = p99_spread(&points).expect("three repeated points");
    assert_eq!(spread.repeated_points, 3);
    assert!((spread.median_spread - 0.44).abs() < 1e-9, "{spread:?}");
    let g = derive(&points, &frontier, 1000.0, 100.0, 40_000.0).expect("a goal");
    assert!((g.aimed_read_p99_us - 1000.0 / 1.2).abs() < 1e-6, "{g:?}");
    assert_eq!(
        g.in_disk_goal_us,
        (1000.0 / 1.2 - 300.0 - 200.0_f64).round()
    );
    assert!(g.why.contains("44%"), "{}", g.why);
}

#[test]
fn too_few_repeats_or_abandoned_ones_take_no_margin() {
    let (points, frontier) = map_with_repeats(&[(500.0, 605.0), (600.0, 864.0)]);
    assert_eq!(p99_spread(&points), None);
    let g = derive(&points, &frontier, 1000.0, 100.0, 40_000.0).expect("a goal");
    assert_eq!(g.aimed_read_p99_us, 1000.0);
    assert_eq!(g.in_disk_goal_us, 500.0);
    assert!(g.why.contains("no margin"), "{}", g.why);
    // A third pair whose second measurement was abandoned does not count.
    let (mut points, _) = map_with_repeats(&[(500.0, 605.0), (600.0, 864.0), (400.0, 40_000.0)]);
    points.last_mut().expect("a point").steady = Steady::Abandoned;
    assert_eq!(p99_spread(&points), None);
}

#[test]
fn a_wild_spread_is_capped() {
    // Every pair 4x apart: spread 3.0, capped at 1.0, so the aim is 1000 / sqrt(2).
    let (points, frontier) = map_with_repeats(&[(250.0, 1000.0); 3]);
    let g = derive(&points, &frontier, 1000.0, 100.0, 40_000.0).expect("a goal");
    assert!(
        (g.aimed_read_p99_us - 1000.0 / 2f64.sqrt()).abs() < 1e-6,
        "{g:?}"
    );
    assert!(g.why.contains("capped"), "{}", g.why);
}
