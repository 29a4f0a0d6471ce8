//! `Judge::Pooled`'s end of a ray: the bracket verified by longer measurements.

use super::{Ray, Search};
use crate::error::ExploreError;
use crate::point::Load;
use crate::tail::TAIL_SHARE;

impl Search<'_> {
    /// `Judge::Pooled`'s end of a ray. The bracket is the lowest load judged outside and the
    /// highest judged inside below it, each on all its reads. Each side gets a verifying
    /// measurement (`Meter::measure_long`: 8 s, ended at 4 s only by a clear miss) until it has been measured
    /// twice; when that overturns a verdict the bracket widens to the loads measured beside it
    /// (or to the ray's end) and is bisected again down to the search's step, then verified in
    /// turn, within `max_verify_extra` measurements beyond the first bracket's two. The
    /// frontier entry goes where the pooled share of reads over the goal crosses 1%, linear
    /// between the pair.
    pub(super) fn verify(&mut self, ray: &mut Ray, tried: &[f64]) -> Result<(), ExploreError> {
        let mut ts = tried.to_vec();
        ts.sort_by(f64::total_cmp);
        ts.dedup();
        let step = 0.5f64.powi(self.settings.steps as i32);
        let first = self.bracket(ray.angle_deg, &ts);
        let mut extra = 0;
        let (lo, hi) = loop {
            let (lo, hi) = self.bracket(ray.angle_deg, &ts);
            let unverified = [lo, hi].into_iter().flatten().find(|&t| {
                let load = self.load(ray.angle_deg, t);
                !self.verified(load) && self.pooled(load).is_some_and(|p| p.kept_up)
            });
            let (bottom, top) = (lo.unwrap_or(0.0), hi.unwrap_or(1.0));
            let first_pair = |t| first.0 == Some(t) || first.1 == Some(t);
            let wide = top - bottom > step * 1.01;
            match unverified {
                // A verdict overturned: the bracket is wider than a step again, and is
                // bisected back to a step before its ends are verified.
                _ if wide && extra < self.settings.max_verify_extra => {
                    let t = (bottom + top) / 2.0;
                    ts.push(t);
                    ts.sort_by(f64::total_cmp);
                    extra += 1;
                    self.measure(self.load(ray.angle_deg, t))?;
                }
                Some(t) if first_pair(t) || extra < self.settings.max_verify_extra => {
                    extra += usize::from(!first_pair(t));
                    self.measure_long_once(self.load(ray.angle_deg, t))?;
                }
                _ => break (lo, hi),
            }
        };
        ray.inside = lo.map(|t| self.load(ray.angle_deg, t));
        ray.outside = hi.map(|t| self.load(ray.angle_deg, t));
        // Confirmed: the pass held on a verifying measurement (not when the extra
        // measurements ran out before it got one).
        ray.confirmed = ray.inside.map(|l| self.verdict(l) && self.verified(l));
        let pair = ray.inside.zip(ray.outside);
        let pooled = pair.and_then(|(i, o)| self.pooled(i).zip(self.pooled(o)));
        if let (Some((a, b)), Some((t_lo, t_hi))) = (pooled, lo.zip(hi)) {
            let (sa, sb) = (a.share_over_goal, b.share_over_goal);
            // Across a bracket left wider than a step (the extra measurements ran out) a
            // straight line says little: the entry stays on the pass.
            let narrow = t_hi - t_lo <= step * 1.01;
            if narrow && a.within_goal && b.kept_up && sb > TAIL_SHARE {
                let t = t_lo + (t_hi - t_lo) * (TAIL_SHARE - sa) / (sb - sa);
                ray.crossing = Some(self.load(ray.angle_deg, t));
            }
        }
        Ok(())
    }

    /// Whether `load` has a verifying measurement.
    fn verified(&self, load: Load) -> bool {
        self.measured_with_kind(load).iter().any(|m| m.1)
    }

    /// The lowest of `ts` judged outside, and the highest below it judged inside.
    fn bracket(&self, angle_deg: f64, ts: &[f64]) -> (Option<f64>, Option<f64>) {
        let hi = ts
            .iter()
            .copied()
            .find(|&t| !self.verdict(self.load(angle_deg, t)));
        let lo = ts
            .iter()
            .copied()
            .filter(|&t| hi.map_or(true, |h| t < h))
            .rev()
            .find(|&t| self.verdict(self.load(angle_deg, t)));
        (lo, hi)
    }
}
