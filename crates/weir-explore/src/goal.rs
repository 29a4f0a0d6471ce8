//! The scheduler's in-disk goal that keeps reads within the map's goal.
//!
//! The map judges a read from its arrival to its completion. The scheduler's `--latency-goal`
//! bounds something else: the disk time in flight ahead of a request (its in-disk window,
//! docs/design/scheduler.md item 2). Run with the map's goal as its window, the scheduler lets a read
//! wait up to that goal behind work in the disk *and then* adds what the window leaves out:
//!
//! - the read's own service time and the queueing reads cause each other at that rate — the
//!   p99 of reads alone at that rate, which the map's pure-read ray measured;
//! - the wait for a place in the window: the window admits a request when half of it fits, so
//!   it runs over by up to half a write, and a read arriving at a full window waits for about
//!   half a write to complete — one write's modelled cost — while the model's rate binds the
//!   writes; once the written line lets the window bind instead (the fitted line, see
//!   `Fits::written_line`), the window is full whenever a read comes and the wait is about a
//!   second write: [`WRITES_WAITED`] in all. Measured in simulation (weir-sim `nvme_like`,
//!   qos mix, seeds 1-3): with one write's cost the fitted line's read p99 reached 1,047 us at
//!   7.2k reads/s under a 1 ms goal; with two, 967 us, and the writes did not move (1.05 of the
//!   frontier either way): the window is the reads' lever, the line the writes'.
//!
//! So the in-disk goal for read rate `r` is `aim - read_alone_p99(r) - 2 x write_cost`, never
//! less than two writes' cost (a smaller window cannot keep two writes in flight, the
//! scheduler's own floor; such an entry is marked `floored`: the map's goal cannot be promised
//! there).
//!
//! `aim` is the map's goal less a margin for the disk's own round-to-round noise: the target
//! is a read p99 within the goal in *every* round, and on vda a point measured twice in one
//! map moved by a median of 49% (max / min; 630 vs 1,314 us at 15.2k reads/s and 1 GB/s). With
//! the median round aimed at the goal, one round in three goes over (747 us median, one
//! round over 1 ms). So the median is aimed at
//! `goal / sqrt(1 + spread)`: a round half the map's typical pair spread (in log) above the
//! median still holds. The spread is the median over the map's repeated points (reads
//! present, kept up, not abandoned; [`MIN_REPEATED_POINTS`] or more, else no margin: a
//! `--quick` map or a seeded simulation, which repeats exactly, has none), capped at
//! [`MAX_SPREAD`] so one wild map cannot close the window.

use serde::Serialize;

use crate::frontier::FrontierPoint;
use crate::point::{PointResult, Steady};

/// Writes' modelled cost a read waits for beyond its in-disk window (module docs).
pub const WRITES_WAITED: f64 = 2.0;

/// Repeated points a map needs before its p99 spread sets the margin (module docs).
pub const MIN_REPEATED_POINTS: usize = 3;

/// The largest spread the margin takes (max / min - 1): at 1.0 the median is aimed at
/// 0.71 of the goal.
pub const MAX_SPREAD: f64 = 1.0;

/// How far one point's read p99 moved between measurements within the map.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct P99Spread {
    /// Points (read rate, write rate) measured more than once and usable.
    pub repeated_points: usize,
    /// The median over those points of max p99 / min p99 - 1, before the cap.
    pub median_spread: f64,
}

/// One frontier read rate and the in-disk goal derived for it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GoalAtRate {
    pub read_iops: f64,
    /// Reads alone at this rate: the pure-read ray's p99 (arrival to completion).
    pub read_alone_p99_us: f64,
    /// The frontier point's own read p99 (None where no measured point sits there).
    pub frontier_read_p99_us: Option<f64>,
    /// The scheduler's in-disk goal for this read rate.
    pub in_disk_goal_us: f64,
    /// The formula gave less than two writes' cost; this is that floor.
    pub floored: bool,
}

/// What explore derived for the scheduler (explore.json `scheduler_goal`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchedulerGoal {
    /// One modelled write's disk time, the window's overrun and a read's wait for a place.
    pub write_cost_us: f64,
    pub per_read_rate: Vec<GoalAtRate>,
    /// The read p99 from arrival the in-disk goals aim the median round at: the map's goal
    /// less the margin for the disk's noise (module docs).
    pub aimed_read_p99_us: f64,
    /// The map's repeated points' spread that set the margin (None: too few repeats, no margin).
    pub p99_spread: Option<P99Spread>,
    /// The goal written to io-properties.yaml (`weir_latency_goal_us`).
    pub in_disk_goal_us: f64,
    pub why: String,
}

/// The read p99's spread over the map's repeated points, or None below
/// [`MIN_REPEATED_POINTS`]. Only points with reads that kept up and were not abandoned count:
/// an abandoned point's p99 says only that it was far over the goal.
pub fn p99_spread(points: &[PointResult]) -> Option<P99Spread> {
    let mut groups: Vec<((u64, u64), Vec<f64>)> = Vec::new();
    let usable = points.iter().filter(|p| {
        p.read_iops > 0.0
            && p.kept_up
            && p.steady != Steady::Abandoned
            && p.read_latency_us.p99 > 0.0
    });
    for p in usable {
        let key = (p.read_iops.to_bits(), p.write_bytes_per_s.to_bits());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, p99s)) => p99s.push(p.read_latency_us.p99),
            None => groups.push((key, vec![p.read_latency_us.p99])),
        }
    }
    let mut spreads: Vec<f64> = groups
        .iter()
        .filter(|(_, p99s)| p99s.len() > 1)
        .map(|(_, p99s)| {
            let hi = p99s.iter().copied().fold(f64::MIN, f64::max);
            let lo = p99s.iter().copied().fold(f64::MAX, f64::min);
            hi / lo - 1.0
        })
        .collect();
    if spreads.len() < MIN_REPEATED_POINTS {
        return None;
    }
    spreads.sort_by(f64::total_cmp);
    let n = spreads.len();
    let median_spread = if n % 2 == 1 {
        spreads[n / 2]
    } else {
        (spreads[n / 2 - 1] + spreads[n / 2]) / 2.0
    };
    Some(P99Spread {
        repeated_points: n,
        median_spread,
    })
}

/// The read p99 the median round is aimed at: `goal / sqrt(1 + spread)`, spread capped.
fn aimed_p99_us(goal_us: f64, spread: Option<&P99Spread>) -> f64 {
    spread.map_or(goal_us, |s| {
        goal_us / (1.0 + s.median_spread.clamp(0.0, MAX_SPREAD)).sqrt()
    })
}

/// Reads alone, as (rate, p99) by rising rate with p99 made non-decreasing: a higher rate
/// never queues less, so a lower p99 above a higher one is noise and the higher one stands.
fn read_alone_curve(points: &[PointResult]) -> Vec<(f64, f64)> {
    let mut curve: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.write_bytes_per_s == 0.0 && p.read_iops > 0.0)
        .filter(|p| p.kept_up && p.steady != Steady::Abandoned)
        .map(|p| (p.read_iops, p.read_latency_us.p99))
        .collect();
    curve.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut highest = 0.0_f64;
    for c in &mut curve {
        highest = highest.max(c.1);
        c.1 = highest;
    }
    curve
}

/// The p99 of reads alone at `read_iops`: linear between measured rates; below the lowest,
/// the lowest's (an over-estimate, so the goal derived from it errs short); above the
/// highest, the highest's.
fn read_alone_p99_at(curve: &[(f64, f64)], read_iops: f64) -> Option<f64> {
    let (first, last) = (curve.first()?, curve.last()?);
    if read_iops <= first.0 {
        return Some(first.1);
    }
    if read_iops >= last.0 {
        return Some(last.1);
    }
    curve.windows(2).find_map(|w| {
        let ((r0, p0), (r1, p1)) = (w[0], w[1]);
        (r0..=r1)
            .contains(&read_iops)
            .then(|| p0 + (p1 - p0) * (read_iops - r0) / (r1 - r0).max(f64::MIN_POSITIVE))
    })
}

/// The in-disk goal for every mixed frontier entry (reads and writes both above zero), and the
/// one for io-properties.yaml: the smallest among the entries at up to half the most reads
/// (`max_read_iops`), so the scheduler meets the map's goal wherever a database mixes
/// compaction with a read load the disk has room beside; above that, reads alone take most of
/// the goal and the table's (smaller) entry is the one to pass as `--latency-goal`.
/// None when the map has no pure-read point or no mixed frontier entry.
pub fn derive(
    points: &[PointResult],
    frontier: &[FrontierPoint],
    goal_us: f64,
    write_cost_us: f64,
    max_read_iops: f64,
) -> Option<SchedulerGoal> {
    let curve = read_alone_curve(points);
    let floor_us = 2.0 * write_cost_us;
    let spread = p99_spread(points);
    let aim_us = aimed_p99_us(goal_us, spread.as_ref());
    let per_read_rate: Vec<GoalAtRate> = frontier
        .iter()
        .filter(|f| f.read_iops > 0.0 && f.write_bytes_per_s > 0.0)
        .filter_map(|f| {
            let alone = read_alone_p99_at(&curve, f.read_iops)?;
            let formula = aim_us - alone - WRITES_WAITED * write_cost_us;
            let frontier_read_p99_us = points
                .iter()
                .filter(|p| p.within_goal)
                .filter(|p| {
                    p.read_iops == f.read_iops && p.write_bytes_per_s == f.write_bytes_per_s
                })
                .map(|p| p.read_latency_us.p99)
                .reduce(f64::max);
            Some(GoalAtRate {
                read_iops: f.read_iops,
                read_alone_p99_us: alone,
                frontier_read_p99_us,
                in_disk_goal_us: formula.max(floor_us),
                floored: formula < floor_us,
            })
        })
        .collect();
    let lower_half: Vec<&GoalAtRate> = per_read_rate
        .iter()
        .filter(|g| g.read_iops <= max_read_iops / 2.0)
        .collect();
    let (pool, scope) = if lower_half.is_empty() {
        (per_read_rate.iter().collect(), "every mixed frontier entry")
    } else {
        (
            lower_half,
            "the mixed frontier entries at up to half the most reads",
        )
    };
    let chosen = pool
        .into_iter()
        .min_by(|a, b| a.in_disk_goal_us.total_cmp(&b.in_disk_goal_us))?;
    let aim = match &spread {
        Some(s) => format!(
            "aim {aim_us:.0} us (goal {goal_us:.0} us / sqrt(1 + {:.2}): the read p99 moved by a \
             median {:.0}% between measurements of {} repeated points{})",
            s.median_spread.clamp(0.0, MAX_SPREAD),
            s.median_spread * 100.0,
            s.repeated_points,
            if s.median_spread > MAX_SPREAD {
                ", capped"
            } else {
                ""
            }
        ),
        None => format!(
            "goal {goal_us:.0} us (no margin: fewer than {MIN_REPEATED_POINTS} repeated points \
             to measure the disk's noise by)"
        ),
    };
    let why = format!(
        "the smallest over {scope}: at {:.0} reads/s, {aim} - reads alone p99 {:.0} us - \
         {WRITES_WAITED:.0} writes x {write_cost_us:.0} us{}",
        chosen.read_iops,
        chosen.read_alone_p99_us,
        if chosen.floored {
            " is under two writes' cost, so the floor: the map's goal cannot be promised there"
        } else {
            ""
        }
    );
    Some(SchedulerGoal {
        write_cost_us,
        in_disk_goal_us: chosen.in_disk_goal_us.round(),
        aimed_read_p99_us: aim_us,
        p99_spread: spread,
        per_read_rate,
        why,
    })
}

#[cfg(test)]
#[path = "goal_tests.rs"]
mod tests;
