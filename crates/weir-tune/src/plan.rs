//! The tune itself: which loads, in which order, with how much of the time budget, and the
//! findings drawn from them. Pure orchestration over a [`Meter`].

use crate::cache::{probe, CacheProbe};
use crate::confirm::{Confirmer, Pending};
use crate::crosscheck::report::CrossCheck;
use crate::error::TuneError;
use crate::meter::{Load, Measurement, Meter, Pattern, StopRule};
use crate::regime::Regime;
use crate::search::{
    detect_sector, find_knee, find_saturation, Budget, KneeResult, Phase, SaturationResult,
    SearchConfig, SectorResult, DEEP_STEP_MIN_STEPS,
};
use crate::steady::{Spread, SteadyRule};
use weir_model::device::Direction;

/// What to measure and how long it may take.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TuneConfig {
    pub search: SearchConfig,
    /// Time for all measurements together, on the meter's clock.
    pub budget_ns: u64,
    /// Charged per measurement beyond its run time (thread start, drain).
    pub step_overhead_ns: u64,
    pub random_request_bytes: u32,
    pub sequential_request_bytes: u32,
    /// Random-write sizes for the physical-sector sweep, ascending.
    pub sector_sizes: Vec<u32>,
    /// The physical sector the kernel reports for the device under the directory, if known.
    pub reported_physical_sector_bytes: Option<u32>,
    /// `--sustained`: re-measure each figure until steady over a long window.
    pub sustained: Option<SustainedConfig>,
    /// The random-read and random-write sweeps measure at least this many requests in flight
    /// per shard before they may stop (the write sweep only in a budget of 20 s or more): the
    /// depth weir's scheduler drives the disk at (io_tester's parallelism 32 per class, two
    /// classes). The IOPS figures price every small
    /// request the scheduler dispatches; priced from a sweep that stopped at 16 on one noisy
    /// step, reads were capped at 73k IOPS on a disk that gave 86k at 2 x 64, and a random-write
    /// sweep that ran out of its share at 2 x 16 reported 0.7x fio's best (at 64-128).
    pub random_depth_per_shard: u32,
    /// A figure whose confirmation falls more than `accuracy` under its sweep's best step is
    /// confirmed again after all sweeps (at the same depth on a flat top, else the best other
    /// depth), and the higher of the two is the figure ([`crate::confirm`]). Off: one confirmation per figure.
    pub second_opinions: bool,
    /// Bytes per shard the cache probe reads twice before the sequential reads
    /// ([`crate::cache::probe`]); 0: no probe (a simulated disk has no cache below it).
    pub cache_probe_bytes_per_shard: u64,
}

#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct SustainedConfig {
    pub window_ns: u64,
    pub drift_max: f64,
    /// Longest a single sustained measurement may run.
    pub max_ns: u64,
}

impl Default for SustainedConfig {
    fn default() -> Self {
        SustainedConfig {
            window_ns: 30_000_000_000,
            drift_max: 0.02,
            max_ns: 600_000_000_000,
        }
    }
}

impl TuneConfig {
    /// The default run: `budget_ns` of measuring split over seven phases.
    pub fn new(budget_ns: u64) -> TuneConfig {
        TuneConfig {
            search: SearchConfig::default(),
            budget_ns,
            step_overhead_ns: 20_000_000,
            random_request_bytes: 4096,
            sequential_request_bytes: 1 << 20,
            sector_sizes: vec![512, 1024, 2048, 4096, 8192],
            reported_physical_sector_bytes: None,
            sustained: None,
            random_depth_per_shard: 64,
            second_opinions: true,
            cache_probe_bytes_per_shard: 0,
        }
    }
}

/// One of the four numbers, with how it was found and how much it wobbled.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Figure {
    /// IOPS or bytes per second: the confirming measurement at the best load (or the
    /// sustained rate).
    pub value: f64,
    /// The figure before any sustained run (equal to `value` without `--sustained`).
    pub peak: f64,
    pub sustained: Option<f64>,
    /// The best short step of the sweeps. Being the luckiest of several noisy steps, it is
    /// usually a little above the confirmed figure; it only sets the bar the knee is judged by.
    pub sweep_best: f64,
    /// The depth of the sweep's best step. The first confirmation runs at
    /// [`KneeResult::confirm_index`] (IOPS: the depth to reach or the shallowest near the
    /// best; bandwidth: the deepest within the noise of it); `depth_best` is where the
    /// confirmed figure came from (that depth, or another when a second opinion there won).
    pub depth_sweep_best: u32,
    /// False when no time was left to confirm: then `peak` is the sweep's best step.
    pub confirmed: bool,
    pub request_bytes: u32,
    pub depth_knee: u32,
    /// The depth the figure was confirmed at.
    pub depth_best: u32,
    pub latency_us_mean_at_knee: f64,
    /// Per-sample spread inside the measurement the value comes from.
    pub spread: Spread,
    /// Where the figure's requests landed (fresh extents, overwrites, written data).
    pub regime: Regime,
}

impl Figure {
    /// The figure of a depth sweep, confirmed by `confirmed` when there was time for it.
    fn new(k: &KneeResult, confirmed: Option<&Measurement>) -> Figure {
        let best = k.best();
        let measured = confirmed.unwrap_or(best);
        Figure {
            value: measured.rate(),
            peak: measured.rate(),
            sustained: None,
            sweep_best: best.rate(),
            depth_sweep_best: best.load.depth,
            confirmed: confirmed.is_some(),
            request_bytes: best.load.request_bytes,
            depth_knee: k.knee().load.depth,
            depth_best: k.chosen().load.depth,
            latency_us_mean_at_knee: k.knee().latency_us_mean,
            spread: measured.spread,
            regime: Regime::of(&best.load),
        }
    }
}

/// One figure: the depth sweep (phase `index` of the budget's weights) up to at least
/// `depth_reach` in total, the confirming measurement at its best depth, and the knee judged
/// against the confirmed rate. A sweep with a `depth_reach` beyond its start keeps time for
/// one long step there, so even a sweep that runs out of its share measures that depth.
#[allow(clippy::too_many_arguments)]
fn figure_sweep(
    meter: &mut dyn Meter,
    load: Load,
    index: usize,
    depth_reach: u32,
    name: &str,
    budget: &mut Budget,
    confirmer: &mut Confirmer,
    progress: &mut dyn FnMut(&str),
) -> Result<(KneeResult, Option<Measurement>), TuneError> {
    let s = &{ *confirmer.cfg() };
    let depth_start = meter.shards().max(1);
    let (w, l) = share(index);
    // Sweeps with a depth to reach keep time for that step; bandwidth sweeps keep it for
    // their deepest-depth probe, which a share run out would otherwise skip: large requests
    // keep gaining from depth long after small ones stop (on this project's virtual disk
    // fio's 1 MiB reads ran 0.4-0.9 GB/s at 2-16 in flight and 1.0-2.4 GB/s at 128), and a
    // sweep that stopped at 16 without the probe reported 0.6x fio's best depth.
    // A short --duration (a measuring budget under 20 s) keeps that time for its other phases.
    let probes_deep = load.pattern == Pattern::Sequential && budget.total_ns >= DEEP_BUDGET_MIN_NS;
    let reserve_ns = if depth_reach > depth_start || probes_deep {
        s.step_min_ns * DEEP_STEP_MIN_STEPS + budget.overhead_ns
    } else {
        0
    };
    let mut phase = Phase::reserving(budget, s, w, l, reserve_ns);
    let mut k = find_knee(meter, load, depth_start, depth_reach, &mut phase)?;
    progress(&knee_line(name, &k));
    let confirmed = confirmer.confirm_first(meter, &mut k, budget)?;
    progress(&confirm_line(name, k.best(), confirmed.as_ref()));
    Ok((k, confirmed))
}

/// What smaller requests must reach to count as saturating: the confirmed rate, or the sweep's
/// best step when that was lower (a lucky best step would make every smaller size fail).
fn reference_rate(k: &KneeResult, confirmed: Option<&Measurement>) -> f64 {
    let best = k.best().rate();
    confirmed.map_or(best, |m| m.rate().min(best))
}

/// Something the operator should know, with its cost and the fix.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    pub what: String,
    pub fix: String,
}

/// Everything a tune measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TuneReport {
    pub read_iops: Figure,
    pub write_iops: Figure,
    pub read_bandwidth: Figure,
    pub write_bandwidth: Figure,
    pub read_saturation_bytes: u32,
    pub write_saturation_bytes: u32,
    pub physical_sector_bytes: u32,
    pub reported_physical_sector_bytes: Option<u32>,
    pub sector: SectorResult,
    pub sweeps: Sweeps,
    pub findings: Vec<Finding>,
    /// Time spent measuring on the meter's clock.
    pub measuring_ns: u64,
    /// Bytes of the test files holding data by the end (all shards): the region the random
    /// loads and the sequential reads ran over. Set by the real meter's driver; 0 otherwise.
    pub written_bytes: u64,
    /// The part of it the sequential reads read (all shards): data written sequentially with
    /// at most `weir_tune::target::LAYOUT_DEPTH_MAX` requests in flight per shard, or all of
    /// it when there was too little of that. Set by the real meter's driver; 0 otherwise.
    pub sequential_read_bytes: u64,
    /// Per shard, the byte ranges `[start, end)` of its file the sequential reads read, in the
    /// order read (real disk only; empty on a simulated one). the cross-check reads exactly
    /// these bytes with fio and the meter: the data a writer lays down on zram reads at a rate
    /// of its own, region by region (docs/tune-zram.md).
    pub sequential_read_ranges_bytes: Vec<Vec<[u64; 2]>>,
    /// Per shard, the bytes its random writes wrote over: data this run wrote (sequentially)
    /// outside the reads' data, at most `weir_tune::target::RANDOM_WRITE_BYTES_MAX`. Random
    /// writes are overwrites in every run (the regime repeated runs compare). Real
    /// disk only; empty on a simulated one.
    pub random_write_bytes: Vec<u64>,
    /// The cache probe's two passes, when it ran: a `cached` one makes the read-bandwidth
    /// figure's regime [`Regime::CachedBelow`].
    pub cache_probe: Option<CacheProbe>,
    /// `--cross-check`: the four figures measured again by weir's engine and by fio,
    /// alternately, at each figure's point. Set by the caller after the tune.
    pub cross_check: Option<CrossCheck>,
}

/// The raw sweeps, for `--format json` and for anyone checking the searches.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Sweeps {
    pub sequential_write: KneeResult,
    pub write_saturation: SaturationResult,
    pub sequential_read: KneeResult,
    pub read_saturation: SaturationResult,
    pub random_write: KneeResult,
    pub random_read: KneeResult,
    /// The confirming measurements, in the order they ran.
    pub confirms: Vec<Measurement>,
    pub sustained: Vec<Measurement>,
}

/// The measuring budget from which the bandwidth sweeps probe their deepest depth and the
/// random-write sweep reaches `TuneConfig::random_depth_per_shard`. Below it (a short
/// `--duration`) that time goes to the other phases: a 10 s tune whose write sweep jumped to
/// 64 in flight had none left for the random reads.
const DEEP_BUDGET_MIN_NS: u64 = 20_000_000_000;

/// Phase weights: shares of the time budget, in the order the phases run.
const WEIGHTS: [f64; 7] = [3.0, 3.0, 1.5, 1.5, 3.5, 2.0, 3.5];

/// Phase `i`'s weight and the weight of it and all later phases.
fn share(i: usize) -> (f64, f64) {
    (WEIGHTS[i], WEIGHTS[i..].iter().sum())
}

/// Runs the whole tune. Order matters: sequential writes first fill fresh space, which the
/// reads then read (a hole would be answered without the disk). The sequential reads and the
/// read-saturation search run before the write-saturation search, so they read data laid
/// down by 1 MiB writes, as a database reads files it wrote in large requests: on this
/// project's VM data written as smaller or deeper-queued requests read back at ~0.8x. Random
/// writes overwrite that data (like fio after its layout pass) and random reads come last.
pub fn tune(meter: &mut dyn Meter, cfg: &TuneConfig) -> Result<TuneReport, TuneError> {
    tune_with_progress(meter, cfg, &mut |_| {})
}

/// [`tune`], calling `progress` with one line as each phase ends.
pub fn tune_with_progress(
    meter: &mut dyn Meter,
    cfg: &TuneConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<TuneReport, TuneError> {
    let mut budget = Budget::new(cfg.budget_ns, cfg.step_overhead_ns);
    // The four confirming measurements are kept out of the sweeps' shares, but never take more
    // than a quarter of the budget: a short --duration shortens them rather than the sweeps.
    let search = SearchConfig {
        confirm_ns: cfg.search.confirm_ns.min(cfg.budget_ns / 16),
        ..cfg.search
    };
    let s = &search;
    // Second opinions double the confirmations' reserve: only when all eight fit in half the
    // budget (the default 30 s run), so a short --duration keeps its time for the sweeps.
    let second_opinions =
        cfg.second_opinions && 8 * (s.confirm_ns + cfg.step_overhead_ns) <= cfg.budget_ns / 2;
    let mut confirmer = Confirmer::reserving(&mut budget, s, 4, second_opinions);
    let req_min = meter.request_bytes_min().max(1);
    let seq = |direction| Load {
        direction,
        pattern: Pattern::Sequential,
        request_bytes: cfg.sequential_request_bytes,
        depth: 1,
    };
    let random_bytes = cfg.random_request_bytes.max(req_min);
    let rnd = |direction| Load {
        direction,
        pattern: Pattern::Random,
        request_bytes: random_bytes,
        depth: 1,
    };

    let (mut seq_write, mut write_bw_confirm) = figure_sweep(
        meter,
        seq(Direction::Write),
        0,
        1,
        "sequential write",
        &mut budget,
        &mut confirmer,
        progress,
    )?;
    let cache_probe = if cfg.cache_probe_bytes_per_shard > 0 {
        let load = Load {
            depth: meter.shards().max(1) * CACHE_PROBE_DEPTH_PER_SHARD,
            ..seq(Direction::Read)
        };
        let bytes = cfg.cache_probe_bytes_per_shard * u64::from(meter.shards().max(1));
        let p = probe(
            meter,
            &load,
            bytes,
            cfg.budget_ns / 30,
            CACHE_PROBE_SAMPLE_NS,
        )?;
        budget.spent_ns += p.wall_ns;
        progress(&cache_line(&p));
        Some(p)
    } else {
        None
    };
    let (mut seq_read, mut read_bw_confirm) = figure_sweep(
        meter,
        seq(Direction::Read),
        1,
        1,
        "sequential read",
        &mut budget,
        &mut confirmer,
        progress,
    )?;
    let (w, l) = share(2);
    let read_sat = find_saturation(
        meter,
        &seq_read,
        reference_rate(&seq_read, read_bw_confirm.as_ref()),
        req_min.max(4096),
        &mut Phase::new(&mut budget, s, w, l),
    )?;
    progress(&saturation_line("read", &read_sat));
    let (w, l) = share(3);
    let write_sat = find_saturation(
        meter,
        &seq_write,
        reference_rate(&seq_write, write_bw_confirm.as_ref()),
        req_min.max(4096),
        &mut Phase::new(&mut budget, s, w, l),
    )?;
    progress(&saturation_line("write", &write_sat));
    let random_depth_reach = meter
        .shards()
        .max(1)
        .saturating_mul(cfg.random_depth_per_shard);
    let write_depth_reach = if budget.total_ns >= DEEP_BUDGET_MIN_NS {
        random_depth_reach
    } else {
        1
    };
    let (mut rand_write, mut write_iops_confirm) = figure_sweep(
        meter,
        rnd(Direction::Write),
        4,
        write_depth_reach,
        "random write",
        &mut budget,
        &mut confirmer,
        progress,
    )?;
    let (w, l) = share(5);
    let sector = detect_sector(
        meter,
        &rand_write,
        &cfg.sector_sizes,
        cfg.reported_physical_sector_bytes,
        &mut Phase::new(&mut budget, s, w, l),
    )?;
    progress(&format!(
        "physical sector: random-write IOPS {}",
        sector
            .points
            .iter()
            .map(|(b, iops)| format!("{b} B {:.0}", iops))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let (mut rand_read, mut read_iops_confirm) = figure_sweep(
        meter,
        rnd(Direction::Read),
        6,
        random_depth_reach,
        "random read",
        &mut budget,
        &mut confirmer,
        progress,
    )?;

    let lines = confirmer.second_opinions(
        meter,
        &mut [
            Pending {
                name: "sequential write",
                sweep: &mut seq_write,
                confirmed: &mut write_bw_confirm,
            },
            Pending {
                name: "sequential read",
                sweep: &mut seq_read,
                confirmed: &mut read_bw_confirm,
            },
            Pending {
                name: "random write",
                sweep: &mut rand_write,
                confirmed: &mut write_iops_confirm,
            },
            Pending {
                name: "random read",
                sweep: &mut rand_read,
                confirmed: &mut read_iops_confirm,
            },
        ],
        &mut budget,
    )?;
    lines.iter().for_each(|line| progress(line));

    let mut read_bandwidth = Figure::new(&seq_read, read_bw_confirm.as_ref());
    if cache_probe.is_some_and(|p| p.cached()) {
        read_bandwidth.regime = Regime::CachedBelow;
    }
    let write_bandwidth = Figure::new(&seq_write, write_bw_confirm.as_ref());
    let read_iops = Figure::new(&rand_read, read_iops_confirm.as_ref());
    let write_iops = Figure::new(&rand_write, write_iops_confirm.as_ref());
    let mut report = TuneReport {
        read_iops,
        write_iops,
        read_bandwidth,
        write_bandwidth,
        read_saturation_bytes: read_sat.saturation_bytes,
        write_saturation_bytes: write_sat.saturation_bytes,
        physical_sector_bytes: sector.physical_bytes,
        reported_physical_sector_bytes: cfg.reported_physical_sector_bytes,
        sector,
        sweeps: Sweeps {
            sequential_write: seq_write,
            write_saturation: write_sat,
            sequential_read: seq_read,
            read_saturation: read_sat,
            random_write: rand_write,
            random_read: rand_read,
            confirms: confirmer.runs,
            sustained: Vec::new(),
        },
        findings: Vec::new(),
        measuring_ns: 0,
        written_bytes: 0,
        sequential_read_bytes: 0,
        sequential_read_ranges_bytes: Vec::new(),
        random_write_bytes: Vec::new(),
        cache_probe,
        cross_check: None,
    };
    if let Some(sus) = cfg.sustained {
        run_sustained(meter, cfg, &sus, &mut budget, &mut report)?;
    }
    report.findings = findings(&report, cfg);
    report.measuring_ns = budget.spent_ns;
    Ok(report)
}

/// Requests in flight per shard of the cache probe: enough to keep a virtual disk's 1 MiB reads
/// moving (the rates that differed by the host's cache were at 2-4 in flight in all).
const CACHE_PROBE_DEPTH_PER_SHARD: u32 = 4;

/// The cache probe's sample interval: a cached pass of 512 MiB takes ~0.2 s.
const CACHE_PROBE_SAMPLE_NS: u64 = 10_000_000;

fn cache_line(p: &CacheProbe) -> String {
    format!(
        "cache below the device: {} MiB read at {} KiB x{} ran {:.0} MB/s, read again {:.0} MB/s ({:.2}x): {}",
        p.bytes >> 20,
        p.load.request_bytes >> 10,
        p.load.depth,
        p.first_read_bytes_per_s / 1e6,
        p.re_read_bytes_per_s / 1e6,
        p.ratio,
        if p.cached() {
            "re-reads are cached below the device"
        } else {
            "no cache below the device answered the re-read"
        }
    )
}

fn rate_text(m: &Measurement) -> String {
    match m.load.metric() {
        crate::meter::Metric::Iops => format!("{:.0} IOPS", m.iops),
        crate::meter::Metric::Bandwidth => format!("{:.0} MB/s", m.bandwidth_bytes_per_s / 1e6),
    }
}

fn knee_line(name: &str, k: &KneeResult) -> String {
    let steps: Vec<String> = k
        .steps
        .iter()
        .map(|m| format!("{}: {}", m.load.depth, rate_text(m)))
        .collect();
    format!(
        "{name}: best {} at depth {}, knee depth {} (depth sweep {})",
        rate_text(k.best()),
        k.best().load.depth,
        k.knee().load.depth,
        steps.join(", ")
    )
}

fn confirm_line(name: &str, best: &Measurement, confirmed: Option<&Measurement>) -> String {
    match confirmed {
        Some(m) => format!(
            "{name}: {} over the last {} of {} samples at {} KiB x{} (sweep's best step {})",
            rate_text(m),
            m.window_samples,
            m.samples,
            m.load.request_bytes >> 10,
            m.load.depth,
            rate_text(best)
        ),
        None => format!(
            "{name}: no time left to confirm; the sweep's best step {} stands",
            rate_text(best)
        ),
    }
}

fn saturation_line(name: &str, r: &SaturationResult) -> String {
    let steps: Vec<String> = r
        .steps
        .iter()
        .map(|m| {
            format!(
                "{} KiB x{}: {}",
                m.load.request_bytes >> 10,
                m.load.depth,
                rate_text(m)
            )
        })
        .collect();
    format!(
        "{name} saturation length {} KiB ({})",
        r.saturation_bytes >> 10,
        steps.join(", ")
    )
}

/// Re-measures each figure at its best depth until the rate has been steady for a long window,
/// keeping the search's figure as the peak and reporting the sustained one as the value.
fn run_sustained(
    meter: &mut dyn Meter,
    cfg: &TuneConfig,
    sus: &SustainedConfig,
    budget: &mut Budget,
    report: &mut TuneReport,
) -> Result<(), TuneError> {
    let interval = cfg.search.sample_interval_ns.max(1);
    let window_samples = ((sus.window_ns / interval) as usize).max(2);
    let rule = StopRule {
        sample_interval_ns: interval,
        min_ns: sus.window_ns,
        max_ns: sus.max_ns.max(sus.window_ns),
        steady: SteadyRule {
            ramp_samples: cfg.search.steady.ramp_samples,
            window_samples,
            drift_max: sus.drift_max,
        },
        decided_above: None,
    };
    let loads = [
        report.sweeps.sequential_write.chosen().load,
        report.sweeps.sequential_read.chosen().load,
        report.sweeps.random_write.chosen().load,
        report.sweeps.random_read.chosen().load,
    ];
    for load in loads {
        let m = Phase::fixed(budget, &cfg.search, rule.max_ns).measure_with(meter, &load, &rule)?;
        let figure = match (load.pattern, load.direction) {
            (Pattern::Sequential, Direction::Write) => &mut report.write_bandwidth,
            (Pattern::Sequential, Direction::Read) => &mut report.read_bandwidth,
            (Pattern::Random, Direction::Write) => &mut report.write_iops,
            (Pattern::Random, Direction::Read) => &mut report.read_iops,
        };
        figure.sustained = Some(m.rate());
        figure.value = m.rate();
        figure.spread = m.spread;
        report.sweeps.sustained.push(m);
    }
    Ok(())
}

/// The findings of a finished tune, each drawn from what the run did: a sweep's recorded end,
/// the sizes the sector sweep left unmeasured, the drift it measured.
pub fn findings(r: &TuneReport, cfg: &TuneConfig) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(reported) = r.reported_physical_sector_bytes {
        sector_finding(r, reported, &mut out);
    }
    let sweeps = [
        ("sequential write", &r.sweeps.sequential_write),
        ("sequential read", &r.sweeps.sequential_read),
        ("random write", &r.sweeps.random_write),
        ("random read", &r.sweeps.random_read),
    ];
    for (name, k) in sweeps {
        if k.cut_while_rising(cfg.search.depth_gain_min) {
            let deepest = k.steps.iter().map(|m| m.load.depth).max().unwrap_or(0);
            out.push(Finding {
                what: format!(
                    "the {name} depth sweep ran out of time while throughput was still rising (last depth {deepest}, {})",
                    rate_text(k.best())
                ),
                fix: "raise --duration so the sweep can reach the knee".to_string(),
            });
        } else if k.cut_after_one_depth() {
            out.push(Finding {
                what: format!(
                    "the {name} depth sweep had time for one depth only ({}): whether more depth helps was not measured",
                    k.best().load.depth
                ),
                fix: "raise --duration so the sweep can compare depths".to_string(),
            });
        }
        let knee = k.knee();
        // Little's law: a disk kept busy at depth D sees about D requests in flight. Far fewer
        // means the submitting side, not the disk, set the pace.
        if knee.depth_observed < 0.5 * f64::from(knee.load.depth) && knee.load.depth > 1 {
            out.push(Finding {
                what: format!(
                    "{name}: {} requests were commanded in flight but the disk saw {:.1} on average (rate x latency)",
                    knee.load.depth, knee.depth_observed
                ),
                fix: "the CPU, not the disk, limited this figure: run on an idle machine".to_string(),
            });
        }
    }
    if !r.sector.sizes_unmeasured.is_empty() {
        let sizes: Vec<String> = r
            .sector
            .sizes_unmeasured
            .iter()
            .map(|b| format!("{b} B"))
            .collect();
        out.push(Finding {
            what: format!(
                "the physical-sector sweep ran out of time before measuring {}",
                sizes.join(", ")
            ),
            fix: "raise --duration".to_string(),
        });
    } else if !r.sector.drift_checked && !r.sector.points.is_empty() {
        out.push(Finding {
            what: format!(
                "the physical-sector sweep measured every size but had no time to measure {} B again at its end, so a drift of the disk during the sweep is not ruled out",
                r.write_iops.request_bytes
            ),
            fix: "raise --duration".to_string(),
        });
    }
    if let Some(p) = r.cache_probe.filter(CacheProbe::cached) {
        out.push(Finding {
            what: format!(
                "a cache below the device answers re-reads: {} MiB read again at {} KiB x{} ran {:.0} MB/s, {:.2}x its first read ({:.0} MB/s; a host's page cache under a virtual disk, a controller's cache). The read-bandwidth figure re-reads the first {} MiB per shard of its data in every measurement, as fio re-reads its file, so it is named cached below the device; data not read recently, or more of it than the cache holds, reads slower",
                p.bytes >> 20,
                p.load.request_bytes >> 10,
                p.load.depth,
                p.re_read_bytes_per_s / 1e6,
                p.ratio,
                p.first_read_bytes_per_s / 1e6,
                crate::target::SEQUENTIAL_READ_WINDOW_BYTES >> 20,
            ),
            fix: "price reads at the first-read rate when the workload's data is larger than the cache below the device, or measure on the host".to_string(),
        });
    }
    if r.sector.drift > cfg.search.sector_disagreement_min {
        out.push(Finding {
            what: format!(
                "random-write IOPS at {} B moved {:.0}% between the start and the end of the sector sweep: the disk was not steady (a host cache flushing, garbage collection), so the sweep is inconclusive and the kernel's sector is kept",
                r.write_iops.request_bytes,
                100.0 * r.sector.drift
            ),
            fix: "tune again on an idle disk, or with --sustained".to_string(),
        });
    }
    out
}

fn sector_finding(r: &TuneReport, reported: u32, out: &mut Vec<Finding>) {
    let measured = r.physical_sector_bytes;
    if measured == reported || measured == 0 {
        return;
    }
    let cost = match (r.sector.iops_at(reported), r.sector.iops_at(measured)) {
        (Some(at_reported), Some(at_measured)) if at_measured > 0.0 => {
            format!(
                "; writes of {reported} B reach {:.0} IOPS, {:.0}% fewer than {:.0} IOPS at {measured} B",
                at_reported,
                100.0 * (1.0 - at_reported / at_measured),
                at_measured
            )
        }
        _ => String::new(),
    };
    out.push(Finding {
        what: format!(
            "the kernel reports a {reported} B physical sector but random-write IOPS stop improving at {measured} B{cost}"
        ),
        fix: format!(
            "write in multiples of {measured} B (physical_block_size: {measured} in io-properties.yaml; mkfs.xfs -b size={})",
            measured.max(4096)
        ),
    });
}
