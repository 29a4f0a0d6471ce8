//! A load judged on every read measured at it, not on one measurement's p99.
//!
//! Near a CPU-bound device's limit (zram on two vCPUs) one second's read p99 is 3-20x the next
//! one's: it is where the shard's thread was descheduled, not what the load does. The same
//! point measured twice in one quiet map gave 445 and 7,451 us. A verdict on one measurement
//! then says which measurement was lucky, and the frontier moves by 20% between two maps.
//! Pooling makes the verdict a statement about the load: the reads of every measurement of it
//! are judged together, so a bad second counts by its share of the reads (what a user meeting
//! that load for that long sees), and the p99 is the p99 of all of them, as Diskplorer's p99
//! is of a whole 30 s point.

use crate::point::{kept_up_at, Load, PointResult, Steady};

pub use crate::tail::{clear_miss, CLEAR_MISS_SHARE, TAIL_SHARE};

/// What all the measurements of one load say together.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pooled {
    pub measurements: usize,
    /// Completed reads over all the measurements.
    pub reads: f64,
    /// The share of those reads that took longer than the goal: <= 1% is p99 <= goal.
    pub share_over_goal: f64,
    /// The rates summed over all the measured seconds kept up with the offered load.
    pub kept_up: bool,
    /// Kept up and the pooled p99 within the goal.
    pub within_goal: bool,
}

impl Pooled {
    /// Pools `points` (all measured at `offered`); None when there are none. A point without a
    /// share (imported percentiles only) counts all its reads over the goal or none, by p99.
    pub fn of(offered: Load, points: &[&PointResult], goal_us: f64) -> Option<Pooled> {
        if points.is_empty() {
            return None;
        }
        let (mut seconds, mut reads, mut written, mut over) = (0.0, 0.0, 0.0, 0.0);
        for p in points {
            let n = p.achieved_read_iops * p.seconds;
            let share = p
                .read_share_over_goal
                .unwrap_or(if p.read_latency_us.p99 <= goal_us {
                    0.0
                } else {
                    1.0
                });
            seconds += p.seconds;
            reads += n;
            written += p.achieved_write_bytes_per_s * p.seconds;
            over += share * n;
        }
        let per_s = |x: f64| x / f64::max(seconds, 1e-9);
        let share_over_goal = if reads > 0.0 { over / reads } else { 0.0 };
        // A measurement starved of completions (under half of the offered load in a window)
        // says the disk did not keep up, whatever the others' sums say.
        let starved = points
            .iter()
            .any(|p| p.steady == Steady::Abandoned && !p.kept_up);
        let kept_up = !starved && kept_up_at(offered, per_s(reads), per_s(written), seconds);
        Some(Pooled {
            measurements: points.len(),
            reads,
            share_over_goal,
            kept_up,
            within_goal: kept_up && share_over_goal <= TAIL_SHARE,
        })
    }
}

/// A miss one bad second can explain: the rates kept up and the typical read (p50) was within
/// the goal, only the tail was not, and the windows did not agree (one window's tail ended
/// the point, or they never settled). Such a miss is measured again, longer, before it cuts a
/// ray short; a load whose typical read is over the goal, that fell behind, or whose windows
/// agreed on a tail over the goal, is outside however often it is measured.
pub fn tail_miss(p: &PointResult, goal_us: f64) -> bool {
    !p.within_goal && p.kept_up && p.read_latency_us.p50 <= goal_us && p.steady != Steady::Agreed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::point::Percentiles;

    fn point(p99: f64, share: f64, seconds: f64, kept_up: bool, steady: Steady) -> PointResult {
        PointResult {
            read_iops: 1000.0,
            write_bytes_per_s: 1e8,
            achieved_read_iops: if kept_up { 1000.0 } else { 400.0 },
            achieved_write_bytes_per_s: 1e8,
            read_latency_us: Percentiles {
                p50: 100.0,
                p99,
                ..Default::default()
            },
            write_latency_us: Percentiles::default(),
            read_share_over_goal: Some(share),
            kept_up,
            within_goal: kept_up && p99 <= 1000.0,
            seconds,
            steady,
            windows: seconds as u32,
        }
    }

    const LOAD: Load = Load {
        read_iops: 1000.0,
        write_bytes_per_s: 1e8,
    };

    #[test]
    fn a_bad_second_counts_by_its_share_of_the_reads() {
        // 4% over the goal in 1 s, then 0.2% over 4 s: 0.96% of all reads, p99 within.
        let bad = point(7451.0, 0.04, 1.0, true, Steady::Abandoned);
        let good = point(445.0, 0.002, 4.0, true, Steady::Agreed);
        let p = Pooled::of(LOAD, &[&bad, &good], 1000.0).expect("two");
        assert!((p.share_over_goal - 0.0096).abs() < 1e-9, "{p:?}");
        assert!(p.kept_up && p.within_goal, "{p:?}");
        // The same bad second beside 2 s of good reads: 1.47%, outside.
        let short = point(445.0, 0.002, 2.0, true, Steady::Agreed);
        let p = Pooled::of(LOAD, &[&bad, &short], 1000.0).expect("two");
        assert!(!p.within_goal, "{p:?}");
        assert_eq!(Pooled::of(LOAD, &[], 1000.0), None);
    }

    #[test]
    fn a_starved_measurement_is_not_kept_up_pooled() {
        let starved = point(900.0, 0.0, 1.0, false, Steady::Abandoned);
        let good = point(500.0, 0.0, 5.0, true, Steady::Agreed);
        let p = Pooled::of(LOAD, &[&starved, &good], 1000.0).expect("two");
        assert!(!p.kept_up && !p.within_goal, "{p:?}");
    }

    #[test]
    fn only_a_share_far_over_the_line_is_a_clear_miss() {
        for (share, clear) in [
            (0.0, false),
            (0.01, false),
            (0.0499, false),
            (0.05, true),
            (1.0, true),
        ] {
            assert_eq!(clear_miss(share), clear, "{share}");
        }
    }

    #[test]
    fn only_a_tail_miss_is_worth_measuring_again() {
        assert!(tail_miss(
            &point(7451.0, 0.04, 1.0, true, Steady::Abandoned),
            1000.0
        ));
        assert!(!tail_miss(
            &point(500.0, 0.0, 1.0, true, Steady::Agreed),
            1000.0
        ));
        assert!(!tail_miss(
            &point(1500.0, 0.03, 2.0, true, Steady::Agreed),
            1000.0
        ));
        assert!(tail_miss(
            &point(1500.0, 0.03, 4.0, true, Steady::Capped),
            1000.0
        ));
        assert!(!tail_miss(
            &point(7451.0, 0.4, 1.0, false, Steady::Capped),
            1000.0
        ));
        let mut slow = point(3000.0, 0.6, 2.0, true, Steady::Capped);
        slow.read_latency_us.p50 = 1500.0;
        assert!(!tail_miss(&slow, 1000.0));
    }
}
