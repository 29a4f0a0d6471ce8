//! One map point: the load offered, what was measured, and when the measurement is steady.

use std::time::Duration;

use serde::Serialize;
use weir_workload::hist::LatencyHistogram;

/// A load: reads per second and written bytes per second, offered open-loop.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Load {
    pub read_iops: f64,
    pub write_bytes_per_s: f64,
}

/// Latency percentiles in microseconds, from intended send time (arrival) to completion.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
}

impl Percentiles {
    pub fn of(hist: &LatencyHistogram) -> Self {
        let s = hist.summary_us();
        Percentiles {
            p50: s.p50,
            p95: s.p95,
            p99: s.p99,
            p999: s.p999,
        }
    }
}

/// How a point's measurement ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Steady {
    /// The last two windows agreed within the rule's tolerances.
    Agreed,
    /// The window cap came first: the point is reported, marked as not shown steady.
    Capped,
    /// A window was so far outside (read p99 or rates) that the point was ended early: it is
    /// outside the boundary whatever more windows would say.
    Abandoned,
    /// A verifying measurement stopped after its minimum windows because the share of its
    /// reads over the goal was already far from the 1% line (`tail::clear_miss`).
    Decided,
}

/// Everything measured at one point. JSON field names are the keys.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointResult {
    /// Offered rates (what the open-loop arrivals asked for).
    pub read_iops: f64,
    pub write_bytes_per_s: f64,
    /// Completed rates over the measured windows.
    pub achieved_read_iops: f64,
    pub achieved_write_bytes_per_s: f64,
    pub read_latency_us: Percentiles,
    pub write_latency_us: Percentiles,
    /// The share of the point's reads that took longer than the goal (p99 <= goal is this
    /// <= 1%). Shares add up over measurements weighted by their reads, so repeated
    /// measurements of one load are judged on all their reads at once (`search::Pooled`);
    /// None for points imported from Diskplorer, which carry percentiles only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_share_over_goal: Option<f64>,
    /// Achieved >= 97% of offered in both directions (Diskplorer's admissibility rule; reads
    /// are allowed three standard deviations of their Poisson arrival count on top).
    pub kept_up: bool,
    /// Kept up and read p99 <= goal: the point is inside the boundary.
    pub within_goal: bool,
    /// Measured time (after the warm-up), seconds.
    pub seconds: f64,
    pub steady: Steady,
    /// Windows measured after the warm-up.
    pub windows: u32,
}

impl PointResult {
    pub fn offered(&self) -> Load {
        Load {
            read_iops: self.read_iops,
            write_bytes_per_s: self.write_bytes_per_s,
        }
    }
}

/// Achieved must reach this share of offered for a point to count as kept up.
pub const KEPT_UP_FRACTION: f64 = 0.97;

/// When a point's measurement is steady.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyRule {
    /// Discarded at the start of every point (queues fill, the write-back settles).
    pub warmup: Duration,
    pub window: Duration,
    /// Measured windows before a point is reported as capped.
    pub max_windows: u32,
    /// Two windows agree when their read p99 differ by at most this share of the larger
    /// (or by `read_p99_floor_share` of the goal, for tails far below the goal where a few
    /// microseconds are a large share) ...
    pub read_p99_tolerance: f64,
    pub read_p99_floor_share: f64,
    /// ... and their write rates by at most this share.
    pub write_rate_tolerance: f64,
    /// A window whose read p99 exceeds this multiple of the goal, or whose completions fall
    /// below half of what was offered, ends the point as outside.
    pub abandon_p99_factor: f64,
    /// Windows of a verifying measurement (`Meter::measure_long`, a ray's last pass and first
    /// fail): a fixed run with no early agreement and no abandoning on one window's tail, so a
    /// bad second counts by its share of the reads rather than ending the point.
    pub verify_windows: u32,
    /// A verifying measurement may stop after this many windows when the share of its reads
    /// over the goal is already clear (`tail::clear_miss`); `verify_windows` or more: never.
    pub verify_min_windows: u32,
    /// Set by [`SteadyRule::verifying`]: stop on a clear miss from this many windows on.
    pub decide_after_windows: Option<u32>,
}

impl SteadyRule {
    /// The full map's rule: 1 s warm-up, 1 s windows, up to 5.
    pub fn full() -> Self {
        SteadyRule {
            warmup: Duration::from_secs(1),
            window: Duration::from_secs(1),
            max_windows: 5,
            read_p99_tolerance: 0.2,
            read_p99_floor_share: 0.1,
            write_rate_tolerance: 0.05,
            abandon_p99_factor: 5.0,
            verify_windows: 8,
            // Half the verification: 5% of the reads over the goal in four seconds is not a
            // load near the line (`pooled::CLEAR_MISS_SHARE`).
            verify_min_windows: 4,
            decide_after_windows: None,
        }
    }

    /// `--quick`: half-second warm-up and windows, up to 4.
    pub fn quick() -> Self {
        SteadyRule {
            warmup: Duration::from_millis(500),
            window: Duration::from_millis(500),
            max_windows: 4,
            ..SteadyRule::full()
        }
    }

    /// The longest a point can run.
    pub fn max_duration(&self) -> Duration {
        self.warmup + self.window * self.max_windows
    }

    /// The rule of a verifying measurement: `verify_windows` windows, every one measured
    /// unless the completions starve or, from `verify_min_windows` on, the share of the reads
    /// over the goal is a clear miss.
    pub fn verifying(&self) -> SteadyRule {
        let n = self.verify_windows.max(self.max_windows);
        SteadyRule {
            max_windows: n,
            decide_after_windows: (self.verify_min_windows < n).then_some(self.verify_min_windows),
            // Never agreed early, never abandoned on a tail: the point runs its n windows.
            read_p99_tolerance: -1.0,
            read_p99_floor_share: -1.0,
            abandon_p99_factor: f64::INFINITY,
            ..self.clone()
        }
    }
}

/// One window's measurement.
#[derive(Debug, Clone)]
pub struct Window {
    pub seconds: f64,
    pub reads: u64,
    pub written_bytes: u64,
    pub read_latency: LatencyHistogram,
    pub write_latency: LatencyHistogram,
}

impl Window {
    fn read_p99_us(&self) -> f64 {
        self.read_latency.quantile_ns(0.99) as f64 / 1e3
    }

    fn write_bytes_per_s(&self) -> f64 {
        self.written_bytes as f64 / self.seconds.max(1e-9)
    }
}

impl SteadyRule {
    /// The verdict after the measured `windows` (warm-up already dropped): None to go on.
    pub fn verdict(&self, windows: &[Window], offered: Load, goal_us: f64) -> Option<Steady> {
        let last = windows.last()?;
        let far_tail =
            last.read_latency.count() > 0 && last.read_p99_us() > self.abandon_p99_factor * goal_us;
        let starved = |done: f64, asked: f64| asked > 0.0 && done < 0.5 * asked;
        if far_tail
            || starved(last.reads as f64 / last.seconds, offered.read_iops)
            || starved(last.write_bytes_per_s(), offered.write_bytes_per_s)
        {
            return Some(Steady::Abandoned);
        }
        if self.decided(windows, goal_us) {
            return Some(Steady::Decided);
        }
        if let [.., a, b] = windows {
            let (pa, pb) = (a.read_p99_us(), b.read_p99_us());
            let read_ok = (pa - pb).abs()
                <= (self.read_p99_tolerance * pa.max(pb)).max(self.read_p99_floor_share * goal_us);
            let (wa, wb) = (a.write_bytes_per_s(), b.write_bytes_per_s());
            let write_ok = (wa - wb).abs() <= self.write_rate_tolerance * wa.max(wb);
            if read_ok && write_ok {
                return Some(Steady::Agreed);
            }
        }
        (windows.len() as u32 >= self.max_windows).then_some(Steady::Capped)
    }
}

impl SteadyRule {
    /// A verifying measurement's windows so far put the share of reads over the goal far
    /// over the line (and there were reads to judge).
    fn decided(&self, windows: &[Window], goal_us: f64) -> bool {
        let Some(after) = self.decide_after_windows else {
            return false;
        };
        if (windows.len() as u32) < after.max(1) {
            return false;
        }
        let mut read = LatencyHistogram::new();
        for w in windows {
            read.add(&w.read_latency);
        }
        read.count() > 0 && crate::tail::clear_miss(share_above(&read, goal_us))
    }
}

/// Whether achieved rates over `seconds` kept up with `offered` (Diskplorer's 97%).
pub fn kept_up_at(offered: Load, read_iops: f64, write_bytes_per_s: f64, seconds: f64) -> bool {
    let kept = |done: f64, asked: f64| asked <= 0.0 || done >= KEPT_UP_FRACTION * asked;
    // Poisson arrivals realise a count that differs from rate x time by about its square
    // root: three standard deviations are allowed on top of the 3%, so a short window at a
    // few thousand reads per second is not judged behind by chance (at 85K reads/s over 2 s
    // the allowance is 0.2%). Writes are evenly paced and get none.
    let poisson_slack = 3.0 * (offered.read_iops * seconds).sqrt() / f64::max(seconds, 1e-9);
    kept(read_iops + poisson_slack, offered.read_iops)
        && kept(write_bytes_per_s, offered.write_bytes_per_s)
}

/// Merges the measured windows into a point.
pub fn summarize(offered: Load, windows: &[Window], steady: Steady, goal_us: f64) -> PointResult {
    let mut read = LatencyHistogram::new();
    let mut write = LatencyHistogram::new();
    let (mut seconds, mut reads, mut written) = (0.0, 0u64, 0u64);
    for w in windows {
        read.add(&w.read_latency);
        write.add(&w.write_latency);
        seconds += w.seconds;
        reads += w.reads;
        written += w.written_bytes;
    }
    let achieved_read_iops = reads as f64 / f64::max(seconds, 1e-9);
    let achieved_write_bytes_per_s = written as f64 / f64::max(seconds, 1e-9);
    let kept_up = !windows.is_empty()
        && kept_up_at(
            offered,
            achieved_read_iops,
            achieved_write_bytes_per_s,
            seconds,
        );
    let read_latency_us = Percentiles::of(&read);
    let read_share_over_goal = (read.count() > 0).then(|| share_above(&read, goal_us));
    let within_goal = kept_up
        && steady != Steady::Abandoned
        && (read.count() == 0 || read_latency_us.p99 <= goal_us);
    PointResult {
        read_iops: offered.read_iops,
        write_bytes_per_s: offered.write_bytes_per_s,
        achieved_read_iops,
        achieved_write_bytes_per_s,
        read_latency_us,
        write_latency_us: Percentiles::of(&write),
        read_share_over_goal,
        kept_up,
        within_goal,
        seconds,
        steady,
        windows: windows.len() as u32,
    }
}

/// The share of `hist`'s values above `goal_us`, found by bisecting the quantile whose value
/// is the goal (the histogram exposes quantiles, not counts; 30 steps resolve 1e-9).
pub fn share_above(hist: &LatencyHistogram, goal_us: f64) -> f64 {
    let goal_ns = (goal_us * 1e3) as u64;
    if hist.count() == 0 || hist.quantile_ns(1.0) <= goal_ns {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..30 {
        let q = (lo + hi) / 2.0;
        if hist.quantile_ns(q) <= goal_ns {
            lo = q;
        } else {
            hi = q;
        }
    }
    1.0 - lo
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(read_p99_us: u64, reads: u64, written: u64) -> Window {
        let mut read_latency = LatencyHistogram::new();
        for _ in 0..100 {
            read_latency.record_ns(read_p99_us * 1000);
        }
        Window {
            seconds: 1.0,
            reads,
            written_bytes: written,
            read_latency,
            write_latency: LatencyHistogram::new(),
        }
    }

    const LOAD: Load = Load {
        read_iops: 1000.0,
        write_bytes_per_s: 1e9,
    };

    #[test]
    fn two_agreeing_windows_are_steady() {
        let rule = SteadyRule::full();
        let a = window(500, 1000, 1_000_000_000);
        let b = window(560, 1000, 1_020_000_000);
        assert_eq!(rule.verdict(std::slice::from_ref(&a), LOAD, 1000.0), None);
        assert_eq!(rule.verdict(&[a, b], LOAD, 1000.0), Some(Steady::Agreed));
    }

    #[test]
    fn drifting_windows_run_to_the_cap() {
        let rule = SteadyRule::full();
        let mut ws = Vec::new();
        for i in 0..5u64 {
            ws.push(window(
                500 * 3u64.pow(i as u32) / 2u64.pow(i as u32),
                1000,
                1_000_000_000,
            ));
            let v = rule.verdict(&ws, LOAD, 1000.0);
            if i < 4 {
                assert_eq!(v, None, "window {i}");
            } else {
                assert_eq!(v, Some(Steady::Capped));
            }
        }
    }

    #[test]
    fn a_far_tail_or_a_starved_window_abandons_the_point() {
        let rule = SteadyRule::full();
        assert_eq!(
            rule.verdict(&[window(6000, 1000, 1_000_000_000)], LOAD, 1000.0),
            Some(Steady::Abandoned)
        );
        assert_eq!(
            rule.verdict(&[window(500, 400, 1_000_000_000)], LOAD, 1000.0),
            Some(Steady::Abandoned)
        );
    }

    #[test]
    fn a_verifying_measurement_stops_early_only_on_a_clear_miss() {
        let rule = SteadyRule::full().verifying();
        assert_eq!((rule.max_windows, rule.decide_after_windows), (8, Some(4)));
        let good = window(500, 1000, 1_000_000_000);
        let bad = window(1500, 1000, 1_000_000_000);
        // One window in four over the goal: 25%, a clear miss at the fourth window, not
        // before.
        let ws = [good.clone(), bad.clone(), good.clone(), good.clone()];
        assert_eq!(rule.verdict(&ws[..3], LOAD, 1000.0), None);
        assert_eq!(rule.verdict(&ws, LOAD, 1000.0), Some(Steady::Decided));
        // All reads within the goal: a pass is never cut short.
        let ws = vec![good.clone(); 8];
        assert_eq!(rule.verdict(&ws[..7], LOAD, 1000.0), None);
        assert_eq!(rule.verdict(&ws, LOAD, 1000.0), Some(Steady::Capped));
        // Near the line (a 1% share): all eight windows run.
        let mut near = good.clone();
        near.read_latency = LatencyHistogram::new();
        for i in 0..100 {
            near.read_latency
                .record_ns(if i == 0 { 1_500_000 } else { 500_000 });
        }
        let ws = vec![near; 8];
        assert_eq!(rule.verdict(&ws[..7], LOAD, 1000.0), None);
        assert_eq!(rule.verdict(&ws, LOAD, 1000.0), Some(Steady::Capped));
        // A fixed rule: never before the eighth.
        let fixed = SteadyRule {
            verify_min_windows: 8,
            ..SteadyRule::full()
        }
        .verifying();
        assert_eq!(fixed.decide_after_windows, None);
        assert_eq!(
            fixed.verdict(
                &[good.clone(), good.clone(), good.clone(), good],
                LOAD,
                1000.0
            ),
            None
        );
        // The short rule never decides this way.
        assert_eq!(SteadyRule::full().decide_after_windows, None);
    }

    #[test]
    fn summary_judges_kept_up_and_goal() {
        let ws = [window(500, 990, 980_000_000), window(520, 980, 975_000_000)];
        let p = summarize(LOAD, &ws, Steady::Agreed, 1000.0);
        assert!(p.kept_up && p.within_goal, "{p:?}");
        assert!((p.achieved_read_iops - 985.0).abs() < 1e-9);
        assert_eq!(p.seconds, 2.0);
        // 900 reads of 1000 would be within three Poisson deviations (95) of 97%.
        let slow = [window(500, 850, 1_000_000_000)];
        assert!(!summarize(LOAD, &slow, Steady::Capped, 1000.0).kept_up);
        let late = [window(1500, 1000, 1_000_000_000)];
        let p = summarize(LOAD, &late, Steady::Capped, 1000.0);
        assert!(p.kept_up && !p.within_goal);
        assert_eq!(p.read_share_over_goal, Some(1.0));
        // One window of 100 reads at 1.5 ms among four of 500 us: 20% over the goal.
        let mixed = [
            window(500, 1000, 1_000_000_000),
            window(500, 1000, 1_000_000_000),
            window(1500, 1000, 1_000_000_000),
            window(500, 1000, 1_000_000_000),
            window(500, 1000, 1_000_000_000),
        ];
        let share = summarize(LOAD, &mixed, Steady::Capped, 1000.0).read_share_over_goal;
        assert!((share.expect("reads") - 0.2).abs() < 1e-6, "{share:?}");
    }
}
