//! Fitting the boundary: four models, one chosen, and the Seastar model each one implies.
//!
//! The frontier is normalised by its own pure axes: `x = read_iops / Or`, `y = write / Bw`,
//! where `Or` is the most reads within the goal with no writes and `Bw` the most writes with
//! only probe reads. Each model is a boundary `N(x, y) = K`:
//!
//! | model | N(x, y) | parameters | Seastar |
//! |---|---|---|---|
//! | `half_duplex` (Seastar's line) | `x + y` | K | `rate_factor: K` |
//! | `duplex` | `max(x, y)` | K | `duplex: true`, `rate_factor: K` |
//! | `curve` | `(x^a + y^a)^(1/a)` | K, a | the fitted line (`half_duplex`'s K) where it lies above the largest line under the curve, `K * min(1, 2^(1 - 1/a))` |
//! | `capped` | `x + y <= K` and, with reads, `y <= C` | K, C | `write_bandwidth: Bw * C / K`, `rate_factor: K` |
//!
//! `a < 1` is a concave boundary (a mix costs more than its parts, Diskplorer's i3), `a = 1` the
//! line, large `a` approaches duplex. `capped` is Diskplorer's HDD: pure writes are fine, mixed
//! writes above `C` are not. A model's error at a frontier point is the log of the ratio of the
//! point's distance from the origin to the model boundary's along the same ray (a relative
//! radial error); K minimises the squared errors.
//!
//! The choice prefers fewer parameters: the line when it fits within
//! [`FIT_TOLERANCE`] (RMS), else duplex when it does, else whichever two-parameter model fits
//! better.

use serde::Serialize;

/// A model fits when its RMS relative error is at most this.
pub const FIT_TOLERANCE: f64 = 0.05;
/// Only a point with no reads at all is on the pure-write axis, where the `capped` model's
/// ceiling does not apply: a disk that fails mixed writes fails them beside probe reads too.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    HalfDuplex,
    Duplex,
    Curve,
    Capped,
}

impl ModelKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ModelKind::HalfDuplex => "half_duplex",
            ModelKind::Duplex => "duplex",
            ModelKind::Curve => "curve",
            ModelKind::Capped => "capped",
        }
    }
}

/// One fitted model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fit {
    pub model: ModelKind,
    /// K, in units of the pure axes.
    pub rate_factor: f64,
    /// `curve` only: a.
    pub exponent: Option<f64>,
    /// `capped` only: C, the mixed-load write ceiling as a share of Bw.
    pub mixed_write_ceiling: Option<f64>,
    /// RMS and largest relative radial error over the frontier.
    pub rms_error: f64,
    pub max_error: f64,
}

/// Every fit, the axes they are normalised by, and the choice.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fits {
    pub read_iops_axis: f64,
    pub write_bytes_per_s_axis: f64,
    pub half_duplex: Fit,
    pub duplex: Fit,
    pub curve: Fit,
    pub capped: Fit,
    pub chosen: ModelKind,
    pub why: String,
}

impl Fits {
    pub fn chosen_fit(&self) -> &Fit {
        match self.chosen {
            ModelKind::HalfDuplex => &self.half_duplex,
            ModelKind::Duplex => &self.duplex,
            ModelKind::Curve => &self.curve,
            ModelKind::Capped => &self.capped,
        }
    }
}

impl Fits {
    /// The linear model written to io-properties.yaml for the chosen fit, with write axis `bw`.
    ///
    /// A curve is not linear, and the largest line under it promises less than the frontier
    /// everywhere but where it touches: on a measured vda map with a concave frontier (a 0.71) that
    /// line was a tenth under the frontier at half the reads, and since the reads take their share
    /// of the budget first, the writes lost a fifth (0.79 of the frontier, read p99 655 of 1,000
    /// us). Nothing gives that back: run-time K holds while the tail guard binds, which it does in
    /// any mixed load. A line that promises too much is corrected by the scheduler's own feedback
    /// instead: the in-disk window and the tail guard hold the reads' tail whatever the model says.
    /// So the curve writes the least-squares line through the frontier (the `half_duplex` fit's K)
    /// when that is above the safe line.
    pub fn written_line(&self, bw: f64) -> SeastarLine {
        let line = self.chosen_fit().seastar_line(bw);
        if self.chosen != ModelKind::Curve {
            return line;
        }
        SeastarLine {
            rate_factor: line.rate_factor.max(self.half_duplex.rate_factor),
            ..line
        }
    }
}

/// The Seastar-readable linear model a fit implies (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SeastarLine {
    pub rate_factor: f64,
    pub duplex: bool,
    pub write_bytes_per_s: f64,
}

impl Fit {
    /// The boundary's radius (distance from the origin) along the unit direction (c, s).
    fn radius(&self, c: f64, s: f64, on_axis: bool) -> f64 {
        let k = self.rate_factor;
        match self.model {
            ModelKind::HalfDuplex => k / (c + s),
            ModelKind::Duplex => k / c.max(s),
            ModelKind::Curve => k / norm(c, s, self.exponent.unwrap_or(1.0)),
            ModelKind::Capped => {
                let line = k / (c + s);
                match self.mixed_write_ceiling {
                    Some(cap) if !on_axis && s > 0.0 => line.min(cap / s),
                    _ => line,
                }
            }
        }
    }

    /// The boundary as a polyline in normalised coordinates, from the read axis to the write
    /// axis (for plots).
    pub fn boundary(&self, samples: usize) -> Vec<(f64, f64)> {
        let n = samples.max(2);
        (0..n)
            .map(|i| {
                let angle = std::f64::consts::FRAC_PI_2 * i as f64 / (n - 1) as f64;
                let (s, c) = angle.sin_cos();
                let r = self.radius(c, s, i == n - 1);
                (r * c, r * s)
            })
            .collect()
    }

    /// The Seastar fields for this fit, given the write axis `bw`.
    pub fn seastar_line(&self, bw: f64) -> SeastarLine {
        let k = self.rate_factor;
        match self.model {
            ModelKind::HalfDuplex => SeastarLine {
                rate_factor: k,
                duplex: false,
                write_bytes_per_s: bw,
            },
            ModelKind::Duplex => SeastarLine {
                rate_factor: k,
                duplex: true,
                write_bytes_per_s: bw,
            },
            ModelKind::Curve => {
                let a = self.exponent.unwrap_or(1.0);
                SeastarLine {
                    rate_factor: k * f64::min(1.0, 2f64.powf(1.0 - 1.0 / a)),
                    duplex: false,
                    write_bytes_per_s: bw,
                }
            }
            ModelKind::Capped => {
                let cap = self.mixed_write_ceiling.unwrap_or(k).min(k);
                SeastarLine {
                    rate_factor: k,
                    duplex: false,
                    write_bytes_per_s: bw * cap / k,
                }
            }
        }
    }
}

fn norm(x: f64, y: f64, a: f64) -> f64 {
    (x.powf(a) + y.powf(a)).powf(1.0 / a)
}

/// A frontier point in normalised coordinates with its polar form.
#[derive(Debug, Clone, Copy)]
struct Polar {
    c: f64,
    s: f64,
    r: f64,
    on_axis: bool,
}

fn polar(points: &[(f64, f64)]) -> Vec<Polar> {
    points
        .iter()
        .filter_map(|&(x, y)| {
            let r = (x * x + y * y).sqrt();
            (r > 0.0 && r.is_finite()).then(|| Polar {
                c: x / r,
                s: y / r,
                r,
                on_axis: x <= 0.0,
            })
        })
        .collect()
}

/// Errors of `fit` over `points`: (rms, max).
fn errors(fit: &Fit, points: &[Polar]) -> (f64, f64) {
    let e: Vec<f64> = points
        .iter()
        .map(|p| (p.r / fit.radius(p.c, p.s, p.on_axis)).ln())
        .collect();
    let n = e.len().max(1) as f64;
    let rms = (e.iter().map(|v| v * v).sum::<f64>() / n).sqrt();
    let max = e.iter().map(|v| v.abs()).fold(0.0, f64::max);
    (rms, max)
}

/// The K minimising squared log errors for a homogeneous model: the geometric mean of N.
fn fit_homogeneous(model: ModelKind, exponent: Option<f64>, points: &[Polar]) -> Fit {
    let mut fit = Fit {
        model,
        rate_factor: 1.0,
        exponent,
        mixed_write_ceiling: None,
        rms_error: 0.0,
        max_error: 0.0,
    };
    let n = points.len().max(1) as f64;
    let log_mean = points
        .iter()
        .map(|p| (p.r / fit.radius(p.c, p.s, p.on_axis)).ln())
        .sum::<f64>()
        / n;
    fit.rate_factor = log_mean.exp();
    (fit.rms_error, fit.max_error) = errors(&fit, points);
    fit
}

fn fit_curve(points: &[Polar]) -> Fit {
    (0..=60)
        .map(|i| 0.25 * 32f64.powf(f64::from(i) / 60.0))
        .map(|a| fit_homogeneous(ModelKind::Curve, Some(a), points))
        .min_by(|a, b| a.rms_error.total_cmp(&b.rms_error))
        .unwrap_or_else(|| fit_homogeneous(ModelKind::Curve, Some(1.0), points))
}

fn fit_capped(points: &[Polar]) -> Fit {
    let mut best: Option<Fit> = None;
    for ki in 0..=340 {
        let k = 0.3 + 0.005 * f64::from(ki);
        for ci in 1..=100 {
            let cap = 0.01 * f64::from(ci);
            let mut fit = Fit {
                model: ModelKind::Capped,
                rate_factor: k,
                exponent: None,
                mixed_write_ceiling: Some(cap),
                rms_error: 0.0,
                max_error: 0.0,
            };
            (fit.rms_error, fit.max_error) = errors(&fit, points);
            if best.as_ref().map_or(true, |b| fit.rms_error < b.rms_error) {
                best = Some(fit);
            }
        }
    }
    best.unwrap_or_else(|| fit_homogeneous(ModelKind::HalfDuplex, None, points))
}

/// Fits the four models to a frontier given in absolute units, normalised by the axes.
pub fn fit(frontier: &[(f64, f64)], read_iops_axis: f64, write_bytes_per_s_axis: f64) -> Fits {
    let normalised: Vec<(f64, f64)> = frontier
        .iter()
        .map(|(r, w)| (r / read_iops_axis, w / write_bytes_per_s_axis))
        .collect();
    let points = polar(&normalised);
    let half_duplex = fit_homogeneous(ModelKind::HalfDuplex, None, &points);
    let duplex = fit_homogeneous(ModelKind::Duplex, None, &points);
    let curve = fit_curve(&points);
    let capped = fit_capped(&points);
    let pct = |f: &Fit| format!("{:.1}%", f.rms_error * 100.0);
    let (chosen, why) = if half_duplex.rms_error <= FIT_TOLERANCE {
        (ModelKind::HalfDuplex, format!(
            "the half-duplex line r/Or + w/Bw <= K fits within {:.0}% (rms {}); one parameter, and Seastar reads it as is",
            FIT_TOLERANCE * 100.0, pct(&half_duplex)))
    } else if duplex.rms_error <= FIT_TOLERANCE {
        (ModelKind::Duplex, format!(
            "reads and writes do not take from each other: max(r/Or, w/Bw) <= K fits within {:.0}% (rms {}), the line does not ({})",
            FIT_TOLERANCE * 100.0, pct(&duplex), pct(&half_duplex)))
    } else if curve.rms_error <= capped.rms_error {
        (ModelKind::Curve, format!(
            "neither one-parameter model fits within {:.0}% (line {}, duplex {}); the curve with exponent {:.2} does best ({}; capped {})",
            FIT_TOLERANCE * 100.0, pct(&half_duplex), pct(&duplex), curve.exponent.unwrap_or(1.0), pct(&curve), pct(&capped)))
    } else {
        (ModelKind::Capped, format!(
            "mixed loads fail above {:.0}% of the pure write rate although pure writes do not: the capped line fits best ({}; line {}, duplex {}, curve {})",
            capped.mixed_write_ceiling.unwrap_or(1.0) * 100.0, pct(&capped), pct(&half_duplex), pct(&duplex), pct(&curve)))
    };
    Fits {
        read_iops_axis,
        write_bytes_per_s_axis,
        half_duplex,
        duplex,
        curve,
        capped,
        chosen,
        why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frontier(f: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
        // Read rates 0..1 (probe on the write axis), the boundary's write share at each.
        let mut pts = vec![(0.0, f(0.0))];
        pts.extend((1..=9).map(|i| f64::from(i) / 10.0).map(|x| (x, f(x))));
        pts.push((1.0, 0.0));
        pts.iter().map(|(x, y)| (x * 20_000.0, y * 1e9)).collect()
    }

    #[test]
    fn each_shape_picks_its_model() {
        let line = fit(&frontier(|x| 0.95 * (1.0 - x)), 20_000.0, 1e9);
        assert_eq!(line.chosen, ModelKind::HalfDuplex, "{}", line.why);
        let duplex = fit(&frontier(|_| 1.0), 20_000.0, 1e9);
        assert_eq!(duplex.chosen, ModelKind::Duplex, "{}", duplex.why);
        assert!((duplex.duplex.rate_factor - 1.0).abs() < 0.01);
        let concave = fit(&frontier(|x| (1.0 - x.sqrt()).powi(2)), 20_000.0, 1e9);
        assert_eq!(concave.chosen, ModelKind::Curve, "{}", concave.why);
        let a = concave.curve.exponent.unwrap_or(0.0);
        assert!((a - 0.5).abs() < 0.05, "exponent {a}");
        let cliff = fit(
            &frontier(|x| if x > 0.0 { (1.0 - x).min(0.3) } else { 1.0 }),
            20_000.0,
            1e9,
        );
        assert_eq!(cliff.chosen, ModelKind::Capped, "{}", cliff.why);
        let cap = cliff.capped.mixed_write_ceiling.unwrap_or(0.0);
        assert!((cap - 0.3).abs() < 0.015, "ceiling {cap}");
    }

    #[test]
    fn seastar_lines_stay_under_their_curves() {
        let concave = fit(&frontier(|x| (1.0 - x.sqrt()).powi(2)), 20_000.0, 1e9);
        let line = concave.curve.seastar_line(1e9);
        // (sqrt x + sqrt y)^2 <= 1 holds x + y <= 0.5 everywhere.
        assert!((line.rate_factor - 0.5).abs() < 0.03, "{line:?}");
        let cliff = fit(
            &frontier(|x| if x > 0.0 { (1.0 - x).min(0.3) } else { 1.0 }),
            20_000.0,
            1e9,
        );
        let line = cliff.capped.seastar_line(1e9);
        // Its write axis is the ceiling.
        assert!(
            (line.write_bytes_per_s / line.rate_factor - 0.3e9).abs() < 0.02e9,
            "{line:?}"
        );
    }

    #[test]
    fn a_curve_writes_its_fitted_line_not_the_one_under_it() {
        let concave = fit(&frontier(|x| (1.0 - x.sqrt()).powi(2)), 20_000.0, 1e9);
        assert_eq!(concave.chosen, ModelKind::Curve, "{}", concave.why);
        let safe = concave.curve.seastar_line(1e9).rate_factor;
        let written = concave.written_line(1e9).rate_factor;
        assert_eq!(written, concave.half_duplex.rate_factor.max(safe));
        assert!(written > safe + 0.05, "written {written}, safe {safe}");
        // Other choices write their own line unchanged.
        let line = fit(&frontier(|x| 0.95 * (1.0 - x)), 20_000.0, 1e9);
        assert_eq!(line.written_line(1e9), line.half_duplex.seastar_line(1e9));
    }

    #[test]
    fn boundary_polyline_runs_axis_to_axis() {
        let line = fit(&frontier(|x| 1.0 - x), 20_000.0, 1e9);
        let b = line.half_duplex.boundary(11);
        assert!((b[0].0 - 1.0).abs() < 0.02 && b[0].1.abs() < 1e-9);
        assert!(b[10].0.abs() < 1e-9 && (b[10].1 - 1.0).abs() < 0.02);
    }
}
