//! Seeded simulation tier over `weir-sim`'s disk (the scheduler's simulated NVMe): the whole
//! tune finds its rates, and catches the disk when it lies about its physical sector. Each
//! assertion prints its seed.

use weir_sim::{SimConfig, SimDisk};
use weir_tune::drive::ShardTarget;
use weir_tune::meters::DeviceMeter;
use weir_tune::{tune, TuneConfig, TuneReport};

fn run(config: SimConfig) -> TuneReport {
    let seed = config.seed;
    let reported = config.reported_physical_sector_bytes;
    let logical = config.logical_sector_bytes;
    let disk = SimDisk::new(config);
    let target = ShardTarget::new(3, 64 << 30, seed);
    let mut meter = DeviceMeter::new(disk, target, logical);
    let mut cfg = TuneConfig::new(30_000_000_000);
    cfg.reported_physical_sector_bytes = Some(reported);
    match tune(&mut meter, &cfg) {
        Ok(r) => r,
        Err(e) => panic!("seed {seed}: tune failed: {e}"),
    }
}

fn near(got: f64, want: f64, tolerance: f64) -> bool {
    (got / want - 1.0).abs() <= tolerance
}

#[test]
fn the_nvme_like_disk_is_measured_near_its_configured_rates() {
    for seed in [1u64, 42] {
        let r = run(SimConfig::nvme_like(seed));
        assert!(
            near(r.read_iops.value, 85_000.0, 0.10),
            "seed {seed}: read IOPS {:?}",
            r.read_iops
        );
        assert!(
            near(r.write_iops.value, 60_000.0, 0.10),
            "seed {seed}: write IOPS {:?}",
            r.write_iops
        );
        assert!(
            near(r.read_bandwidth.value, 1.9e9, 0.10),
            "seed {seed}: read bw {:?}",
            r.read_bandwidth
        );
        assert!(
            near(r.write_bandwidth.value, 1.75e9, 0.10),
            "seed {seed}: write bw {:?}",
            r.write_bandwidth
        );
        assert_eq!(r.physical_sector_bytes, 4096, "seed {seed}: {:?}", r.sector);
        assert!(
            r.measuring_ns <= 30_000_000_000,
            "seed {seed}: {} ns",
            r.measuring_ns
        );
        // Little's law holds on a disk that is really kept busy.
        let knee = r.sweeps.random_read.knee();
        assert!(
            knee.depth_observed > 0.8 * f64::from(knee.load.depth),
            "seed {seed}: {knee:?}"
        );
    }
}

#[test]
fn the_simulated_disk_lying_about_its_sector_is_caught() {
    for seed in [3u64, 9] {
        let mut config = SimConfig::nvme_like(seed);
        config.reported_physical_sector_bytes = 512;
        let r = run(config);
        assert_eq!(r.physical_sector_bytes, 4096, "seed {seed}: {:?}", r.sector);
        assert_eq!(r.reported_physical_sector_bytes, Some(512), "seed {seed}");
        let finding = r
            .findings
            .iter()
            .find(|f| f.what.contains("reports a 512 B physical sector"));
        let Some(finding) = finding else {
            panic!("seed {seed}: no sector finding in {:?}", r.findings)
        };
        assert!(
            finding.what.contains("% fewer"),
            "seed {seed}: no cost in IOPS: {}",
            finding.what
        );
        let at_512 = r.sector.iops_at(512).unwrap_or(0.0);
        let at_4k = r.sector.iops_at(4096).unwrap_or(0.0);
        assert!(
            at_512 < 0.8 * at_4k,
            "seed {seed}: 512 B {at_512} vs 4 KiB {at_4k}"
        );
    }
}

#[test]
fn an_honest_disk_is_not_accused() {
    let r = run(SimConfig::nvme_like(5));
    assert!(
        !r.findings
            .iter()
            .any(|f| f.what.contains("physical sector")),
        "seed 5: {:?}",
        r.findings
    );
}

#[test]
fn sustained_mode_reports_the_rate_after_the_burst() {
    // Fast for the first 30 s (the searches and their confirmations end within their 30 s
    // budget, which is charged the device's time, drains included), then 25% slower for good:
    // a disk whose peak is not its sustained rate.
    let seed = 13;
    let config = SimConfig::nvme_like(seed).with_slowdown(30_000_000_000, 3_600_000_000_000, 1.25);
    let disk = SimDisk::new(config);
    let mut meter = DeviceMeter::new(disk, ShardTarget::new(3, 64 << 30, seed), 512);
    let mut cfg = TuneConfig::new(30_000_000_000);
    cfg.sustained = Some(weir_tune::plan::SustainedConfig {
        window_ns: 5_000_000_000,
        drift_max: 0.02,
        max_ns: 60_000_000_000,
    });
    let r = match tune(&mut meter, &cfg) {
        Ok(r) => r,
        Err(e) => panic!("seed {seed}: {e}"),
    };
    let sustained_ns: u64 = r
        .sweeps
        .sustained
        .iter()
        .map(|m| m.wall_ns.unwrap_or(m.elapsed_ns))
        .sum();
    let searches_ns = r.measuring_ns - sustained_ns;
    assert!(
        searches_ns <= 30_000_000_000,
        "seed {seed}: searches took {searches_ns} ns"
    );
    for (name, f) in [
        ("read IOPS", &r.read_iops),
        ("write IOPS", &r.write_iops),
        ("read bandwidth", &r.read_bandwidth),
        ("write bandwidth", &r.write_bandwidth),
    ] {
        let Some(sustained) = f.sustained else {
            panic!("seed {seed}: {name} has no sustained figure")
        };
        assert!(
            sustained < 0.9 * f.peak,
            "seed {seed}: {name} sustained {sustained} vs peak {}",
            f.peak
        );
        assert_eq!(
            f.value, sustained,
            "seed {seed}: {name}: the YAML must carry the sustained figure"
        );
    }
}
