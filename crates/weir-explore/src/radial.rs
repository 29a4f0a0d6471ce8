//! Two frontiers compared along rays from the origin, as explore searches and as the
//! simulation's truth is judged (`tests/sim_truth.rs`).
//!
//! Comparing writes at one read rate is ill-conditioned where the frontier falls steeply to
//! the read axis: on a half-duplex line `w = W (1 - r / R)`, a disk 2% faster in both
//! directions writes 2% more at zero reads but 12% more at 0.8 R and infinitely more at R
//! (a seeded simulated disk mapped twice, 2% apart, shows +12% at 0.8 R). Along
//! a ray the same two frontiers are 2% apart everywhere. Both frontiers are drawn in one
//! plane, normalised by the larger of the two maps' most reads and most writes, and each
//! vertex of either is compared with the other frontier along the ray through it.

use serde::Serialize;

/// One vertex of either frontier and the other frontier along the ray through it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RadialRow {
    /// The ray's angle from the write axis (0) to the read axis (90), in degrees.
    pub angle_deg: f64,
    /// Distance from the origin to A's and B's frontier along the ray (normalised plane).
    pub a_radius: f64,
    pub b_radius: f64,
    /// b / a - 1.
    pub difference: f64,
}

/// `a` and `b` (read IOPS, write B/s), sorted by reads, compared along the rays through
/// every vertex of either; rays that miss one of them (beyond its extent) are left out.
pub fn radial_rows(a: &[(f64, f64)], b: &[(f64, f64)]) -> Vec<RadialRow> {
    let most = |i: usize| {
        a.iter()
            .chain(b)
            .map(|p| if i == 0 { p.0 } else { p.1 })
            .fold(0.0, f64::max)
    };
    let (read_scale, write_scale) = (most(0), most(1));
    if !(read_scale > 0.0 && write_scale > 0.0) {
        return Vec::new();
    }
    let norm = |f: &[(f64, f64)]| -> Vec<(f64, f64)> {
        f.iter()
            .map(|&(r, w)| (r / read_scale, w / write_scale))
            .collect()
    };
    let (na, nb) = (norm(a), norm(b));
    let mut angles: Vec<f64> = na
        .iter()
        .chain(&nb)
        .filter(|p| p.0 > 0.0 || p.1 > 0.0)
        .map(|&(x, y)| x.atan2(y))
        .collect();
    angles.sort_by(f64::total_cmp);
    angles.dedup_by(|p, q| (*p - *q).abs() < 1e-9);
    angles
        .into_iter()
        .filter_map(|theta| {
            let (a_radius, b_radius) = (radius_at(&na, theta)?, radius_at(&nb, theta)?);
            (a_radius > 0.0).then(|| RadialRow {
                angle_deg: theta.to_degrees(),
                a_radius,
                b_radius,
                difference: b_radius / a_radius - 1.0,
            })
        })
        .collect()
}

/// Where the ray at `theta` (from the write axis, radians) meets the polyline `frontier`
/// (normalised; x = reads, y = writes): the largest distance over its segments, None when
/// it meets none.
fn radius_at(frontier: &[(f64, f64)], theta: f64) -> Option<f64> {
    let d = (theta.sin(), theta.cos());
    let cross = |p: (f64, f64), q: (f64, f64)| p.0 * q.1 - p.1 * q.0;
    let mut best: Option<f64> = None;
    let single = frontier.len() == 1;
    for i in 0..frontier.len() {
        let p = frontier[i];
        let q = match frontier.get(i + 1) {
            Some(&q) => q,
            None if single => p,
            None => break,
        };
        let e = (q.0 - p.0, q.1 - p.1);
        let denom = cross(d, e);
        let t = if denom.abs() < 1e-12 {
            // The ray runs along the segment (or the segment is a point): a vertex on it.
            let on_ray = cross(p, d).abs() < 1e-9 && p.0 * d.0 + p.1 * d.1 > 0.0;
            if !on_ray {
                continue;
            }
            (p.0 * p.0 + p.1 * p.1).sqrt()
        } else {
            let s = cross(d, p) / -denom;
            let s = if s.abs() < 1e-12 { 0.0 } else { s };
            if !(0.0..=1.0 + 1e-12).contains(&s) {
                continue;
            }
            let hit = (p.0 + s * e.0, p.1 + s * e.1);
            if hit.0 * d.0 + hit.1 * d.1 <= 0.0 {
                continue;
            }
            (hit.0 * hit.0 + hit.1 * hit.1).sqrt()
        };
        best = Some(best.map_or(t, |b: f64| b.max(t)));
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_two_percent_out_is_two_percent_out_along_every_ray() {
        // w = 500 (1 - r / 10_000) against the same disk 2% faster: at 8,000 reads/s the
        // writes differ by 12%, along the ray by 2%.
        let a = [
            (0.0, 500.0),
            (4_000.0, 300.0),
            (8_000.0, 100.0),
            (10_000.0, 0.0),
        ];
        let b: Vec<(f64, f64)> = a.iter().map(|&(r, w)| (r * 1.02, w * 1.02)).collect();
        let rows = radial_rows(&a, &b);
        // B's vertices lie on the rays through A's.
        assert_eq!(rows.len(), 4, "{rows:?}");
        for r in &rows {
            assert!((r.difference - 0.02).abs() < 1e-9, "{r:?}");
        }
        assert_eq!(rows[0].angle_deg, 0.0);
        assert!((rows[rows.len() - 1].angle_deg - 90.0).abs() < 1e-9);
    }

    #[test]
    fn a_ray_beyond_one_frontier_is_left_out() {
        // B ends at 5,000 reads/s with writes left: rays past it meet nothing of B.
        let a = [(0.0, 500.0), (10_000.0, 0.0)];
        let b = [(0.0, 500.0), (5_000.0, 250.0)];
        let rows = radial_rows(&a, &b);
        assert!(rows.iter().all(|r| r.angle_deg <= 45.0 + 1e-9), "{rows:?}");
        assert!(rows.iter().all(|r| r.difference.abs() < 1e-9), "{rows:?}");
    }
}
