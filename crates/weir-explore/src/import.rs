//! Reading Diskplorer's result file (fio `--output-format=json+`, jobs concatenated) into a
//! weir map, so its grid gets weir's frontier, fits and heatmaps.
//!
//! Diskplorer names each grid point's job group
//! `job(r_idx=I,w_idx=J,write_bw=BYTES_PER_S,r_iops=IOPS)` (further jobs of the group get a
//! `.N` suffix; with `group_reporting` the group is one entry). It runs at least 10 reads/s
//! everywhere, so the offered read rate is `max(r_iops, 10)`. Its admissibility rule is
//! weir's kept-up rule: achieved >= 97% of offered. Latency is fio's `clat_ns`: from
//! submission to completion, which for rate-limited fio jobs leaves out the time a request
//! waited for its turn to be sent, unlike weir's arrival-to-completion.

use serde_json::Value;

use crate::error::ExploreError;
use crate::map::{FrontierPoint, Map, SCHEMA_VERSION};
use crate::meter::WriteRegime;
use crate::point::{Percentiles, PointResult, Steady, KEPT_UP_FRACTION};

/// Diskplorer's floor on the read rate.
const MIN_READ_IOPS: f64 = 10.0;

/// The grid indices and offered rates parsed from a job name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobName {
    pub r_idx: u32,
    pub w_idx: u32,
    pub write_bw: f64,
    pub r_iops: f64,
}

/// Parses `job(r_idx=..,w_idx=..,write_bw=..,r_iops=..)` (None for other jobs: prepare,
/// max-write-bw, max-read-iops-N).
pub fn parse_job_name(name: &str) -> Option<JobName> {
    let inner = name.strip_prefix("job(")?.split(')').next()?;
    let mut fields = [None; 4];
    for part in inner.split(',') {
        let (key, value) = part.split_once('=')?;
        let slot = ["r_idx", "w_idx", "write_bw", "r_iops"]
            .iter()
            .position(|k| *k == key.trim())?;
        fields[slot] = Some(value.trim().parse::<f64>().ok()?);
    }
    let [Some(r), Some(w), Some(bw), Some(iops)] = fields else {
        return None;
    };
    Some(JobName {
        r_idx: r as u32,
        w_idx: w as u32,
        write_bw: bw,
        r_iops: iops,
    })
}

fn percentiles(side: &Value) -> Percentiles {
    let get = |key: &str| {
        side.pointer(&format!("/clat_ns/percentile/{key}"))
            .and_then(Value::as_f64)
            .map_or(0.0, |ns| ns / 1e3)
    };
    Percentiles {
        p50: get("50.000000"),
        p95: get("95.000000"),
        p99: get("99.000000"),
        p999: get("99.900000"),
    }
}

/// Reads Diskplorer's JSON `text` (from `file`, for messages) into a map judged against
/// `goal_us`.
pub fn import(
    text: &str,
    file: &str,
    goal_us: f64,
    read_bytes: u32,
    write_bytes: u32,
) -> Result<Map, ExploreError> {
    let err = |message: String| ExploreError::Import {
        file: file.into(),
        message,
    };
    let root: Value = serde_json::from_str(text).map_err(|e| {
        err(format!(
            "not JSON (line {}, column {}): {e}; pass the file Diskplorer wrote with --result-file",
            e.line(),
            e.column()
        ))
    })?;
    let jobs = root
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or_else(|| err("no `jobs` array: this is not fio JSON output".into()))?;
    let mut cells: Vec<(JobName, PointResult)> = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let Some(name) = job.get("jobname").and_then(Value::as_str) else {
            return Err(err(format!("jobs[{i}] has no `jobname`")));
        };
        let Some(parsed) = parse_job_name(name) else {
            continue;
        };
        let (Some(read), Some(write)) = (job.get("read"), job.get("write")) else {
            return Err(err(format!(
                "jobs[{i}] ({name}) lacks the `read` or `write` section"
            )));
        };
        let offered_read = parsed.r_iops.max(MIN_READ_IOPS);
        let achieved_read = read.get("iops").and_then(Value::as_f64).unwrap_or(0.0);
        let achieved_write = write.get("bw_bytes").and_then(Value::as_f64).unwrap_or(0.0);
        let kept_up = achieved_read >= KEPT_UP_FRACTION * parsed.r_iops
            && achieved_write >= KEPT_UP_FRACTION * parsed.write_bw;
        let read_latency_us = percentiles(read);
        let runtime_ms = read
            .get("runtime")
            .or_else(|| job.get("job_runtime"))
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        let point = PointResult {
            read_iops: offered_read,
            write_bytes_per_s: parsed.write_bw,
            achieved_read_iops: achieved_read,
            achieved_write_bytes_per_s: achieved_write,
            read_latency_us,
            write_latency_us: percentiles(write),
            read_share_over_goal: None,
            kept_up,
            within_goal: kept_up && read_latency_us.p99 > 0.0 && read_latency_us.p99 <= goal_us,
            seconds: runtime_ms / 1e3,
            // A fixed duration with no steadiness check.
            steady: Steady::Capped,
            windows: 1,
        };
        cells.push((parsed, point));
    }
    if cells.is_empty() {
        return Err(err(
            "no job named job(r_idx=..,w_idx=..,write_bw=..,r_iops=..): not a Diskplorer result"
                .into(),
        ));
    }
    cells.sort_by_key(|(n, _)| (n.r_idx, n.w_idx));
    let (frontier, frontier_dominated) = crate::frontier::upper_envelope(grid_frontier(&cells));
    let seconds = cells.iter().map(|(_, p)| p.seconds).sum();
    let mut map = Map {
        schema_version: SCHEMA_VERSION,
        source: format!("diskplorer import ({file})"),
        // Diskplorer prefills the device and writes over it.
        write_regime: WriteRegime::Overwrite,
        goal_us,
        read_bytes,
        write_bytes,
        slice: crate::slice::Slice::default(),
        axes: crate::slice::Slice::default().axes(),
        frontier_in_axes: Vec::new(),
        calibration: None,
        drift: None,
        settling: Vec::new(),
        points: cells.into_iter().map(|(_, p)| p).collect(),
        rays: Vec::new(),
        frontier,
        frontier_dominated,
        scheduler_goal: None,
        fits: None,
        fits_missing: None,
        model: None,
        seconds,
        stopped_by_budget: false,
        interrupted: false,
    };
    map.fit();
    map.set_slice(crate::slice::Slice::default());
    Ok(map)
}

/// For each read rate of the grid, the most writes within the goal. Walks the read indices the
/// file holds, not every index up to the largest: an index is whatever the file says, and a
/// file naming `r_idx=4294967295` must not cost four billion passes.
fn grid_frontier(cells: &[(JobName, PointResult)]) -> Vec<FrontierPoint> {
    let mut read_indices: Vec<u32> = cells.iter().map(|(n, _)| n.r_idx).collect();
    read_indices.sort_unstable();
    read_indices.dedup();
    read_indices
        .into_iter()
        .filter_map(|r| {
            cells
                .iter()
                .filter(|(n, p)| n.r_idx == r && p.within_goal)
                .map(|(_, p)| p)
                .max_by(|a, b| a.write_bytes_per_s.total_cmp(&b.write_bytes_per_s))
                .map(|p| FrontierPoint {
                    read_iops: p.read_iops,
                    write_bytes_per_s: p.write_bytes_per_s,
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_names_parse_and_others_are_skipped() {
        assert_eq!(
            parse_job_name("job(r_idx=2,w_idx=3,write_bw=600000000,r_iops=20000)"),
            Some(JobName {
                r_idx: 2,
                w_idx: 3,
                write_bw: 6e8,
                r_iops: 2e4
            })
        );
        assert_eq!(
            parse_job_name("job(r_idx=0,w_idx=0,write_bw=0,r_iops=0).1").map(|n| n.r_iops),
            Some(0.0)
        );
        assert_eq!(parse_job_name("prepare"), None);
        assert_eq!(parse_job_name("max-read-iops-15-0"), None);
        assert_eq!(
            parse_job_name("job(r_idx=x,w_idx=0,write_bw=0,r_iops=0)"),
            None
        );
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let e = import("{", "r.json", 1000.0, 4096, 131072)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.starts_with("r.json: not JSON (line 1"), "{e}");
        let e = import(
            "{\"jobs\": [{\"jobname\": \"prepare\"}]}",
            "r.json",
            1000.0,
            4096,
            131072,
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(e.contains("not a Diskplorer result"), "{e}");
    }
}
