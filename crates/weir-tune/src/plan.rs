//! The tune itself: which loads, in which order, with how much of the time budget, and the
//! findings drawn from them. Pure orchestration over a [`Meter`].

use crate::error::TuneError;
use crate::meter::{Load, Measurement, Meter, Pattern, StopRule};
use crate::search::{
    detect_sector, find_knee, find_saturation, Budget, KneeResult, Phase, SaturationResult,
    SearchConfig, SectorResult,
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
        }
    }
}

/// One of the four numbers, with how it was found and how much it wobbled.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Figure {
    /// IOPS or bytes per second: the best step of the depth sweep (or the sustained rate).
    pub value: f64,
    /// The best step's rate before any sustained run (equal to `value` without `--sustained`).
    pub peak: f64,
    pub sustained: Option<f64>,
    pub request_bytes: u32,
    pub depth_knee: u32,
    pub depth_best: u32,
    pub latency_us_mean_at_knee: f64,
    /// Per-sample spread of the best step.
    pub spread: Spread,
}

impl Figure {
    fn from_knee(k: &KneeResult) -> Figure {
        let best = k.best();
        Figure {
            value: best.rate(),
            peak: best.rate(),
            sustained: None,
            request_bytes: best.load.request_bytes,
            depth_knee: k.knee().load.depth,
            depth_best: best.load.depth,
            latency_us_mean_at_knee: k.knee().latency_us_mean,
            spread: best.spread,
        }
    }

    /// Takes the best of `steps` when it beats this figure, with its own spread, depth and
    /// request size, so the summary never shows a value beside another measurement's samples.
    fn adopt_if_better(&mut self, steps: &[Measurement]) {
        let best = steps.iter().max_by(|a, b| a.rate().total_cmp(&b.rate()));
        if let Some(m) = best.filter(|m| m.rate() > self.value) {
            self.value = m.rate();
            self.peak = m.rate();
            self.spread = m.spread;
            self.depth_best = m.load.depth;
            self.request_bytes = m.load.request_bytes;
        }
    }
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
    pub sustained: Vec<Measurement>,
}

/// Phase weights: shares of the time budget, in the order the phases run.
const WEIGHTS: [f64; 7] = [3.0, 1.5, 3.0, 1.5, 3.5, 2.0, 3.5];

/// Phase `i`'s weight and the weight of it and all later phases.
fn share(i: usize) -> (f64, f64) {
    (WEIGHTS[i], WEIGHTS[i..].iter().sum())
}

/// Runs the whole tune. Order matters: sequential writes first fill fresh space, which the
/// reads then read (a hole would be answered without the disk); random writes overwrite that
/// data (like fio after its layout pass) and random reads come last.
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
    let s = &cfg.search;
    let depth_start = meter.shards().max(1);
    let req_min = meter.request_bytes_min().max(1);
    let seq = |direction| Load {
        direction,
        pattern: Pattern::Sequential,
        request_bytes: cfg.sequential_request_bytes,
        depth: depth_start,
    };
    let random_bytes = cfg.random_request_bytes.max(req_min);
    let rnd = |direction| Load {
        direction,
        pattern: Pattern::Random,
        request_bytes: random_bytes,
        depth: depth_start,
    };

    let (w, l) = share(0);
    let seq_write = find_knee(
        meter,
        seq(Direction::Write),
        depth_start,
        &mut Phase::new(&mut budget, s, w, l),
    )?;
    progress(&knee_line("sequential write", &seq_write));
    let (w, l) = share(1);
    let write_sat = find_saturation(
        meter,
        &seq_write,
        req_min.max(4096),
        &mut Phase::new(&mut budget, s, w, l),
    )?;
    progress(&saturation_line("write", &write_sat));
    let (w, l) = share(2);
    let seq_read = find_knee(
        meter,
        seq(Direction::Read),
        depth_start,
        &mut Phase::new(&mut budget, s, w, l),
    )?;
    progress(&knee_line("sequential read", &seq_read));
    let (w, l) = share(3);
    let read_sat = find_saturation(
        meter,
        &seq_read,
        req_min.max(4096),
        &mut Phase::new(&mut budget, s, w, l),
    )?;
    progress(&saturation_line("read", &read_sat));
    let (w, l) = share(4);
    let rand_write = find_knee(
        meter,
        rnd(Direction::Write),
        depth_start,
        &mut Phase::new(&mut budget, s, w, l),
    )?;
    progress(&knee_line("random write", &rand_write));
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
    let (w, l) = share(6);
    let rand_read = find_knee(
        meter,
        rnd(Direction::Read),
        depth_start,
        &mut Phase::new(&mut budget, s, w, l),
    )?;
    progress(&knee_line("random read", &rand_read));

    let mut read_bandwidth = Figure::from_knee(&seq_read);
    let mut write_bandwidth = Figure::from_knee(&seq_write);
    // A smaller request may have beaten the 1 MiB figure during the saturation sweep.
    read_bandwidth.adopt_if_better(&read_sat.steps);
    write_bandwidth.adopt_if_better(&write_sat.steps);
    let mut report = TuneReport {
        read_iops: Figure::from_knee(&rand_read),
        write_iops: Figure::from_knee(&rand_write),
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
            sustained: Vec::new(),
        },
        findings: Vec::new(),
        measuring_ns: 0,
    };
    if let Some(sus) = cfg.sustained {
        run_sustained(meter, cfg, &sus, &mut budget, &mut report)?;
    }
    report.findings = findings(&report, cfg);
    report.measuring_ns = budget.spent_ns;
    Ok(report)
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
    };
    let loads = [
        report.sweeps.sequential_write.best().load,
        report.sweeps.sequential_read.best().load,
        report.sweeps.random_write.best().load,
        report.sweeps.random_read.best().load,
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

fn findings(r: &TuneReport, cfg: &TuneConfig) -> Vec<Finding> {
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
        if k.budget_limited && k.best == k.steps.len() - 1 {
            out.push(Finding {
                what: format!(
                    "the {name} depth sweep ran out of time while throughput was still rising (last depth {})",
                    k.best().load.depth
                ),
                fix: "raise --duration so the sweep can reach the knee".to_string(),
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
    if r.sector.budget_limited {
        out.push(Finding {
            what: "the physical-sector sweep ran out of time before every size was measured"
                .to_string(),
            fix: "raise --duration".to_string(),
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
