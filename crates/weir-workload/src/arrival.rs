//! Open-loop arrival times.
//!
//! An open-loop job sends requests at times fixed in advance, whatever the disk does. Each
//! request's latency is measured from its *intended* send time, so when the disk stalls the
//! requests that should have gone out meanwhile count the stall in full (no coordinated
//! omission: io_tester measures from the actual send time and skips the missed sends).
//!
//! io_tester's `parallelism` fibers each send `batch` requests every 1/`rps` seconds, offset
//! from one another by 1/(`rps` x `parallelism`). Together they form one arrival stream at
//! `rps x parallelism` per second (a uniform comb, or the superposition of Poisson streams,
//! which is again Poisson), which is what [`Arrivals`] produces.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::job::PauseDistribution;

/// A stream of intended send times in nanoseconds on the device clock.
#[derive(Debug, Clone)]
pub struct Arrivals {
    start_ns: u64,
    interval_ns: f64,
    distribution: PauseDistribution,
    /// Uniform: the index of the next arrival (computing `start + k x interval` avoids drift).
    index: u64,
    /// Poisson: the next arrival time, accumulated in f64 to keep sub-nanosecond gaps.
    next_poisson_ns: f64,
    rng: SmallRng,
}

impl Arrivals {
    /// `rate_per_s` arrivals per second starting at `start_ns`. `seed` makes Poisson gaps
    /// reproducible.
    pub fn new(rate_per_s: f64, distribution: PauseDistribution, start_ns: u64, seed: u64) -> Self {
        let interval_ns = 1e9 / rate_per_s.max(1e-9);
        let mut rng = SmallRng::seed_from_u64(seed);
        let first = match distribution {
            PauseDistribution::Uniform => 0.0,
            PauseDistribution::Poisson => exponential(&mut rng, interval_ns),
        };
        Arrivals {
            start_ns,
            interval_ns,
            distribution,
            index: 0,
            next_poisson_ns: start_ns as f64 + first,
            rng,
        }
    }

    /// The next intended send time, without consuming it.
    pub fn peek_ns(&self) -> u64 {
        match self.distribution {
            PauseDistribution::Uniform => {
                self.start_ns + (self.index as f64 * self.interval_ns) as u64
            }
            PauseDistribution::Poisson => self.next_poisson_ns as u64,
        }
    }

    /// Consumes and returns the next intended send time.
    pub fn next_ns(&mut self) -> u64 {
        let t = self.peek_ns();
        match self.distribution {
            PauseDistribution::Uniform => self.index += 1,
            PauseDistribution::Poisson => {
                self.next_poisson_ns += exponential(&mut self.rng, self.interval_ns)
            }
        }
        t
    }
}

/// An exponentially distributed gap with the given mean.
fn exponential(rng: &mut SmallRng, mean_ns: f64) -> f64 {
    // 1 - u is in (0, 1], so the logarithm is finite.
    let u: f64 = rng.gen::<f64>();
    -(1.0 - u).ln() * mean_ns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_arrivals_do_not_drift() {
        // 3 per second does not divide a second evenly; after 3000 arrivals we are at 1000 s.
        let mut a = Arrivals::new(3.0, PauseDistribution::Uniform, 5, 0);
        assert_eq!(a.next_ns(), 5);
        let mut last = 0;
        for _ in 0..3000 {
            last = a.next_ns();
        }
        assert!((last as i64 - 1_000_000_000_005).abs() <= 1, "{last}");
    }

    #[test]
    fn poisson_arrivals_have_the_requested_rate_and_vary() {
        let seed = 42;
        let mut a = Arrivals::new(10_000.0, PauseDistribution::Poisson, 0, seed);
        let n = 100_000;
        let mut gaps = Vec::with_capacity(n);
        let mut prev = 0;
        for _ in 0..n {
            let t = a.next_ns();
            assert!(t >= prev, "seed {seed}: arrivals must not go back in time");
            gaps.push((t - prev) as f64);
            prev = t;
        }
        let mean = gaps.iter().sum::<f64>() / n as f64;
        assert!(
            (mean - 100_000.0).abs() < 2_000.0,
            "seed {seed}: mean gap {mean}"
        );
        // An exponential distribution's standard deviation equals its mean.
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64;
        let cv = var.sqrt() / mean;
        assert!(
            (cv - 1.0).abs() < 0.05,
            "seed {seed}: coefficient of variation {cv}"
        );
    }

    #[test]
    fn same_seed_same_stream() {
        let mut a = Arrivals::new(1000.0, PauseDistribution::Poisson, 0, 7);
        let mut b = Arrivals::new(1000.0, PauseDistribution::Poisson, 0, 7);
        for _ in 0..100 {
            assert_eq!(a.next_ns(), b.next_ns());
        }
    }
}
