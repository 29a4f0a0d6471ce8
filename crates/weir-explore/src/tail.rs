//! The p99 line: the share of reads a load may have over the goal, and how far over it a
//! share is a miss that measuring longer would not overturn. Used by a single measurement
//! (`point`), by the pooled verdict over all of a load's measurements (`pooled`) and by the
//! frontier's interpolation (`verify`).

/// p99: the share of reads a point may have over the goal.
pub const TAIL_SHARE: f64 = 0.01;

/// A share of reads over the goal this far over the line is a miss no longer measurement is
/// expected to overturn: a verifying measurement that has seen it over its first half stops
/// there (`SteadyRule::verify_min_windows`).
///
/// Only misses. A bad second adds reads over the goal; its absence adds none, so a short run
/// that met no stall says little (zero stalls in 4 s is likely at one or two per second, where
/// the line lies on a stalling disk), while a share 5x the line over 4 s needs five times the
/// stalls the line allows. Measured in simulation (the stalling disk, seed pairs
/// 41/42-53/54): ending a verification at 4 s on a clear pass (share <= 0.4%) too put 2 of 7
/// pairs over 5% (6.0%, 7.6%); skipping the verification of loads whose short measurement was
/// clear, 2 of 7 (6.6%, 5.5%); ending it on a clear miss only left every pair as it was (3.8,
/// 2.7, 4.3, 3.5, 4.2, 4.2, 5.0%) at 12% less simulated time. On a vda map made on an idle
/// machine, of 30 loads measured short and then for 8 s none whose 8 s share was 5% or more was a
/// pass.
pub const CLEAR_MISS_SHARE: f64 = 5.0 * TAIL_SHARE;

/// Whether a share of reads over the goal is far enough over the 1% line that measuring the
/// load longer would not make it a pass.
pub fn clear_miss(share_over_goal: f64) -> bool {
    share_over_goal >= CLEAR_MISS_SHARE
}
