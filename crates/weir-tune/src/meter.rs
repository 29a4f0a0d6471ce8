//! The one seam between the tuning algorithms and the disk: a [`Meter`] runs a closed-loop load
//! (direction, pattern, request size, total requests in flight) on the prepared test files and
//! reports cumulative counters every sample interval until the caller says stop.
//!
//! Everything above this trait (knee search, steady-state detection, saturation and sector
//! searches, the time budget) is pure arithmetic over samples, so it runs unchanged on the real
//! disk and on a simulated one.

use crate::error::TuneError;
pub use crate::load::{direction_name, pattern_name, Control, Load, Metric, Pattern, Sample};
use crate::steady::{interval_rates, is_steady, Spread, SteadyRule};

/// Runs loads on prepared files. Implementations: the real engine (threads, one ring per shard)
/// and the simulated disk (one thread, virtual clock).
pub trait Meter {
    /// Shards that issue I/O at once; loads are spread over all of them.
    fn shards(&self) -> u32;

    /// The most requests in flight the meter can sustain in total.
    fn depth_max(&self) -> u32;

    /// The smallest request (and offset alignment) direct I/O accepts on these files.
    fn request_bytes_min(&self) -> u32;

    /// Runs `load`, calling `on_sample` with cumulative counters every `sample_interval_ns` of
    /// the meter's clock, until it returns [`Control::Stop`]; then drains in-flight requests.
    fn run(
        &mut self,
        load: &Load,
        sample_interval_ns: u64,
        on_sample: &mut dyn FnMut(&Sample) -> Control,
    ) -> Result<(), TuneError>;

    /// Wall time the last [`Meter::run`] took from its call to its return: starting the load
    /// (threads, rings, buffers filled and registered) and draining it are in it as well as
    /// the sampled time. `None` for a meter without such costs on its clock (a simulated
    /// disk): the budget then charges its fixed per-measurement overhead.
    fn last_run_wall_ns(&self) -> Option<u64> {
        None
    }
}

/// When one measurement ends: not before `min_ns`, at `max_ns` at the latest, and as soon as the
/// last window of samples is steady.
#[derive(Debug, Clone, Copy)]
pub struct StopRule {
    pub sample_interval_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub steady: SteadyRule,
    /// A depth-sweep step only has to say whether more depth helped. Once the mean rate of
    /// [`DECIDED_SAMPLES`] samples after the ramp is above this, it clearly did, and more time
    /// would not change the decision: the step ends there, before `min_ns`.
    pub decided_above: Option<f64>,
}

/// Samples after the ramp that a step needs before it may end as decided.
pub const DECIDED_SAMPLES: usize = 2;

/// Why a measurement ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StopReason {
    /// The last window was steady.
    Steady,
    /// Clearly above the rate it was compared with (a depth-sweep step).
    Decided,
    /// Its time was up (a fixed-length measurement, or a rate that never settled).
    Time,
}

/// The result of one load: its rate over the final (steady) window and the spread of the
/// per-sample rates inside that window.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Measurement {
    pub load: Load,
    pub iops: f64,
    pub bandwidth_bytes_per_s: f64,
    pub latency_us_mean: f64,
    /// Little's law: rate x mean latency, the in-flight count the disk actually saw.
    pub depth_observed: f64,
    /// Spread of the judged metric across the window's samples.
    pub spread: Spread,
    /// The best single window of the run (equal to the figure unless the rate drifted down).
    pub peak_rate: f64,
    pub ended: StopReason,
    /// Whether the judged window drifted by at most the rule's limit.
    pub steady: bool,
    pub elapsed_ns: u64,
    /// The whole run's wall time, start-up and drain included, when the meter knows it
    /// ([`Meter::last_run_wall_ns`]): what the budget is charged.
    pub wall_ns: Option<u64>,
    pub samples: usize,
    /// Samples in the judged window (the last ones).
    pub window_samples: usize,
}

impl Measurement {
    /// This measurement with its rates taken as the middle half of its window's samples
    /// ([`Spread::middle_half_mean_of`]) rather than all of them: what a confirmation reports.
    /// IOPS and bandwidth are scaled alike (one request size per load), latency stays the
    /// window's. The plain window mean stays in `spread.mean`.
    pub fn judged_by_middle_half(mut self) -> Measurement {
        if self.spread.mean > 0.0 {
            let scale = self.spread.middle_half_mean / self.spread.mean;
            self.iops *= scale;
            self.bandwidth_bytes_per_s *= scale;
        }
        self
    }

    /// The judged figure: IOPS for random loads, bytes/s for sequential ones.
    pub fn rate(&self) -> f64 {
        match self.load.metric() {
            Metric::Iops => self.iops,
            Metric::Bandwidth => self.bandwidth_bytes_per_s,
        }
    }
}

/// Runs one load until the stop rule fires and condenses its samples.
pub fn measure(
    meter: &mut dyn Meter,
    load: &Load,
    rule: &StopRule,
) -> Result<Measurement, TuneError> {
    let mut samples: Vec<Sample> = vec![Sample::default()];
    let metric = load.metric();
    let mut ended = StopReason::Time;
    meter.run(load, rule.sample_interval_ns, &mut |s: &Sample| {
        samples.push(*s);
        if s.elapsed_ns >= rule.max_ns {
            return Control::Stop;
        }
        let rates = interval_rates(&samples, metric);
        let steady = queue_aware(&rule.steady, &samples, load.depth);
        if s.elapsed_ns >= rule.min_ns && is_steady(&rates, &steady) {
            ended = StopReason::Steady;
            return Control::Stop;
        }
        if is_decided(&rates, steady.ramp_samples, rule.decided_above) {
            ended = StopReason::Decided;
            return Control::Stop;
        }
        Control::Continue
    })?;
    let steady = queue_aware(&rule.steady, &samples, load.depth);
    let mut m = summarize(load, &samples, &steady, false)?;
    m.wall_ns = meter.last_run_wall_ns();
    m.ended = ended;
    m.steady = ended == StopReason::Steady || window_is_steady(&samples, &m, &rule.steady);
    Ok(m)
}

/// `rule` stretched to the queue: the ramp lasts until every request of the first wave has
/// completed, and the window covers at least `depth` completions (one turn of the queue).
///
/// A deep queue's first wave finishes as a burst: 256 requests of 1 MiB sent at once come back
/// together after ~200 ms, and a 100 ms sample that catches them reads several times the
/// steady rate. With a ramp of one fixed sample, depth-256 steps of 1 MiB reads on this
/// project's VM read 1.6-1.9 GB/s in 0.3 s, won their sweeps, and the 1.5 s confirmation at the
/// same depth then read 0.8-1.0 GB/s. Likewise a window shorter than one turn of the queue
/// samples the completion convoys, not the rate. `samples` starts with the zero sample.
fn queue_aware(rule: &SteadyRule, samples: &[Sample], depth: u32) -> SteadyRule {
    let intervals = samples.len().saturating_sub(1);
    let depth = u64::from(depth.max(1));
    // Interval j runs from sample j to sample j + 1: those starting at or after the sample
    // that saw the first wave complete are past the ramp.
    let first_wave = samples
        .iter()
        .position(|s| s.ops >= depth)
        .unwrap_or(intervals);
    let ramp_samples = rule.ramp_samples.max(first_wave);
    let mut window_samples = rule.window_samples;
    if window_samples != usize::MAX {
        let available = intervals.saturating_sub(ramp_samples);
        let last_ops = samples.last().map_or(0, |s| s.ops);
        let ops_in_last = |w: usize| last_ops - samples[intervals - w.min(intervals)].ops;
        while window_samples < available && ops_in_last(window_samples) < depth {
            window_samples += 1;
        }
        if window_samples >= available && ops_in_last(available) < depth {
            // Not one turn after the ramp yet: ask for one more sample than there is.
            window_samples = available + 1;
        }
    }
    SteadyRule {
        ramp_samples,
        window_samples,
        drift_max: rule.drift_max,
    }
}

/// True when the samples after the ramp already average above `threshold`.
fn is_decided(rates: &[f64], ramp_samples: usize, threshold: Option<f64>) -> bool {
    let Some(threshold) = threshold else {
        return false;
    };
    let after_ramp = rates.get(ramp_samples..).unwrap_or(&[]);
    if after_ramp.len() < DECIDED_SAMPLES {
        return false;
    }
    after_ramp.iter().sum::<f64>() / after_ramp.len() as f64 > threshold
}

/// Whether the window a measurement was judged on drifted by at most the rule's limit.
fn window_is_steady(samples: &[Sample], m: &Measurement, rule: &SteadyRule) -> bool {
    let rates = interval_rates(samples, m.load.metric());
    let window = SteadyRule {
        ramp_samples: rates.len().saturating_sub(m.window_samples),
        window_samples: m.window_samples,
        drift_max: rule.drift_max,
    };
    is_steady(&rates, &window)
}

/// Condenses cumulative samples (the first is the zero sample) into a [`Measurement`].
pub fn summarize(
    load: &Load,
    samples: &[Sample],
    rule: &SteadyRule,
    steady: bool,
) -> Result<Measurement, TuneError> {
    let metric = load.metric();
    let rates = interval_rates(samples, metric);
    // The window: the last `window_samples` intervals, or everything after the ramp-up when
    // the run was cut short.
    let intervals = rates.len();
    let window = rule
        .window_samples
        .min(intervals.saturating_sub(rule.ramp_samples))
        .max(1);
    if intervals == 0 || samples.len() < 2 {
        return Err(TuneError::NoSamples { load: *load });
    }
    let last = samples[samples.len() - 1];
    let first = samples[samples.len() - 1 - window];
    let seconds = (last.elapsed_ns - first.elapsed_ns) as f64 / 1e9;
    let ops = (last.ops - first.ops) as f64;
    let bytes = (last.bytes - first.bytes) as f64;
    let iops = if seconds > 0.0 { ops / seconds } else { 0.0 };
    let bandwidth = if seconds > 0.0 { bytes / seconds } else { 0.0 };
    let latency_us_mean = if ops > 0.0 {
        (last.latency_ns_sum - first.latency_ns_sum) as f64 / ops / 1e3
    } else {
        0.0
    };
    let window_rates = &rates[intervals - window..];
    let peak_rate = peak_window_rate(&rates[rule.ramp_samples.min(intervals - 1)..], window);
    Ok(Measurement {
        load: *load,
        iops,
        bandwidth_bytes_per_s: bandwidth,
        latency_us_mean,
        depth_observed: iops * latency_us_mean / 1e6,
        spread: Spread::of(window_rates),
        peak_rate,
        ended: if steady {
            StopReason::Steady
        } else {
            StopReason::Time
        },
        steady,
        elapsed_ns: last.elapsed_ns,
        wall_ns: None,
        samples: intervals,
        window_samples: window,
    })
}

/// The highest mean over any `window` consecutive rates.
fn peak_window_rate(rates: &[f64], window: usize) -> f64 {
    let window = window.clamp(1, rates.len().max(1));
    rates
        .windows(window)
        .map(|w| w.iter().sum::<f64>() / w.len() as f64)
        .fold(0.0, f64::max)
}
