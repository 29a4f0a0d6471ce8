//! Stalls of a simulated disk: the whole device freezes for a few milliseconds now and then,
//! more often the nearer the reads are to the read limit.
//!
//! On a two-vCPU guest where the "disk" is the CPU (zram), a read's tail is where its shard's
//! thread was descheduled (a kworker, the other shard): the mean rate moves under 1% between
//! seconds while one second's p99 is 3-20x the next one's, and the nearer the reads are to
//! what the CPU can do, the likelier. This module draws those freezes as a Poisson process
//! whose rate rises with the disk's read share, so a map can be tested against it seeded.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// When and how long a disk stalls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stalls {
    /// Below this read share (offered reads / the disk's read IOPS) the disk never stalls.
    pub onset_read_share: f64,
    /// Stalls per second at the read limit (read share 1); between the onset and the limit
    /// the rate rises as the cube of the way there (a CPU near saturation is preempted far
    /// more often than one at half load).
    pub per_s_at_read_limit: f64,
    /// A stall lasts uniformly between these, in nanoseconds.
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Stalls {
    /// Stalls per second at read share `x`.
    pub fn rate_per_s(&self, x: f64) -> f64 {
        let way = ((x - self.onset_read_share) / (1.0 - self.onset_read_share)).clamp(0.0, 1.0);
        self.per_s_at_read_limit * way.powi(3)
    }
}

/// Draws the stalls in time order (thinning: candidates at the highest rate, each kept with the
/// probability of the rate at its time over the highest).
#[derive(Debug)]
pub(crate) struct StallClock {
    stalls: Stalls,
    rng: SmallRng,
    next_candidate_ns: u64,
}

impl StallClock {
    pub(crate) fn new(stalls: Stalls, seed: u64) -> Self {
        // Its own stream, so a disk's service jitter is the same with and without stalls.
        let mut clock = StallClock {
            stalls,
            rng: SmallRng::seed_from_u64(seed ^ 0x5747_414c_4c53),
            next_candidate_ns: 0,
        };
        clock.next_candidate_ns = clock.gap_ns();
        clock
    }

    fn gap_ns(&mut self) -> u64 {
        let rate = self.stalls.per_s_at_read_limit;
        if rate <= 0.0 {
            return u64::MAX;
        }
        let u: f64 = self.rng.gen_range(f64::EPSILON..1.0);
        (-u.ln() / rate * 1e9) as u64
    }

    /// The next stall that starts by `until_ns`, as (start, length) in nanoseconds, given the
    /// read share at a time; None when no stall starts by then.
    pub(crate) fn next_before(
        &mut self,
        until_ns: u64,
        read_share_at: impl Fn(u64) -> f64,
    ) -> Option<(u64, u64)> {
        while self.next_candidate_ns <= until_ns {
            let at = self.next_candidate_ns;
            self.next_candidate_ns = at.saturating_add(self.gap_ns());
            let keep = self.stalls.rate_per_s(read_share_at(at)) / self.stalls.per_s_at_read_limit;
            if self.rng.gen_bool(keep.clamp(0.0, 1.0)) {
                let (lo, hi) = (
                    self.stalls.min_ns,
                    self.stalls.max_ns.max(self.stalls.min_ns),
                );
                return Some((at, self.rng.gen_range(lo..=hi)));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stalls() -> Stalls {
        Stalls {
            onset_read_share: 0.5,
            per_s_at_read_limit: 20.0,
            min_ns: 5_000_000,
            max_ns: 10_000_000,
        }
    }

    #[test]
    fn the_rate_rises_from_the_onset_to_the_limit() {
        let s = stalls();
        assert_eq!(s.rate_per_s(0.3), 0.0);
        assert_eq!(s.rate_per_s(0.5), 0.0);
        assert!((s.rate_per_s(0.75) - 20.0 / 8.0).abs() < 1e-9);
        assert_eq!(s.rate_per_s(1.0), 20.0);
        assert_eq!(s.rate_per_s(1.5), 20.0);
    }

    /// Over 100 simulated seconds the count matches the rate at a fixed share (seeded; the
    /// bounds are five standard deviations of the Poisson count).
    #[test]
    fn stalls_come_at_the_rate_of_the_read_share() {
        for (share, rate) in [(0.4, 0.0), (0.75, 2.5), (1.0, 20.0)] {
            let mut clock = StallClock::new(stalls(), 7);
            let (mut n, mut last) = (0u64, 0u64);
            while let Some((at, len)) = clock.next_before(100_000_000_000, |_| share) {
                assert!(at >= last && (5_000_000..=10_000_000).contains(&len));
                last = at;
                n += 1;
            }
            let want = rate * 100.0;
            assert!(
                (n as f64 - want).abs() <= 5.0 * want.sqrt() + 1e-9,
                "seed 7, share {share}: {n} stalls, want about {want}"
            );
        }
    }
}
