//! The time budget: what a ray costs, and the guard that keeps the whole run inside it.
//!
//! A check that prices a ray at 5 points lets a vda map take 646 s on a 600 s budget: a
//! verified ray takes 7-15 points (55-80 s), and the closing calibration comes after them. So a ray is priced at the mean of the rays run so far, and no point starts
//! that would end past the budget less the room kept for the closing calibration: a ray the
//! budget cannot finish is stopped and left out (its points stay in `points`).

use std::time::Duration;

use super::Search;
use crate::error::ExploreError;

impl Search<'_> {
    /// Time since the search started.
    pub(super) fn elapsed(&self) -> Duration {
        (self.clock)()
    }

    pub(super) fn average_point(&self) -> Duration {
        let n = self.points.len().max(1) as u32;
        self.elapsed() / n
    }

    /// What the next ray should cost: the mean of the rays run so far (bisection, retests and
    /// verification), and never less than its bisection steps at the mean point.
    pub(super) fn ray_estimate(&self) -> Duration {
        let by_points = self.average_point() * self.settings.steps;
        if self.ray_times.is_empty() {
            return by_points;
        }
        let mean = self.ray_times.iter().sum::<Duration>() / self.ray_times.len() as u32;
        mean.max(by_points)
    }

    /// Whether a whole ray fits before the budget, the closing calibration kept out of it.
    pub(super) fn ray_fits(&self) -> bool {
        self.points.is_empty()
            || self.elapsed() + self.ray_estimate() + self.reserve <= self.settings.budget
    }

    /// The longest point of this kind so far (a verifying one, or a short one), or of any
    /// kind when none of it was measured yet.
    fn point_estimate(&self, verifying: bool) -> Duration {
        let longest = |kind: Option<bool>| {
            self.point_times
                .iter()
                .zip(&self.verifying)
                .filter(|(_, &v)| kind.map_or(true, |k| k == v))
                .map(|(t, _)| *t)
                .max()
        };
        longest(Some(verifying))
            .or_else(|| longest(None))
            .unwrap_or_default()
    }

    /// Refuses a point that would end past the budget (less the closing calibration's room)
    /// while `guarded`; the axes run unguarded.
    pub(super) fn check_time(&self, verifying: bool) -> Result<(), ExploreError> {
        let ends = self.elapsed() + self.point_estimate(verifying) + self.reserve;
        if self.guarded && ends > self.settings.budget {
            return Err(ExploreError::BudgetSpent);
        }
        Ok(())
    }

    /// For the progress display: the points the run should end with, and the time left
    /// (never past the budget), from the rays run so far.
    pub(super) fn plan_left(&self) -> (usize, Duration) {
        let done = self.points.len();
        let rays_left = self.rays_planned.saturating_sub(self.ray_times.len());
        let per_ray = if self.ray_points.is_empty() {
            self.settings.steps as usize
        } else {
            self.ray_points
                .iter()
                .sum::<usize>()
                .div_ceil(self.ray_points.len())
        };
        let in_this_ray = done - self.ray_began.1;
        let planned = done + (rays_left * per_ray).saturating_sub(in_this_ray);
        let into_ray = self.elapsed().saturating_sub(self.ray_began.0);
        let rays = (self.ray_estimate() * rays_left as u32).saturating_sub(into_ray);
        let to_budget = self.settings.budget.saturating_sub(self.elapsed());
        (planned, (rays + self.reserve).min(to_budget))
    }
}
