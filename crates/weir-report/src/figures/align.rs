//! `weir align`'s picture: the alignment histogram, one bar per preparation mode in each
//! alignment bucket, at the deepest address level reached. Input: `weir align --json`.

use serde_json::Value;

use super::list;
use crate::chart::{color, Chart, ChartBody, GroupSpec};

/// A bucket's label from its lower bound: `512`, `4K`, `1M+` (the last bucket is open).
fn bucket_label(bytes: u64, last: bool) -> String {
    let s = if bytes >= 1 << 20 {
        format!("{}M", bytes >> 20)
    } else if bytes >= 1 << 10 {
        format!("{}K", bytes >> 10)
    } else {
        bytes.to_string()
    };
    if last {
        s + "+"
    } else {
        s
    }
}

/// The histogram chart, or None when no mode has a level.
pub fn chart(align: &Value) -> Option<Chart> {
    let buckets: Vec<u64> = list(align, "/buckets_bytes")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    let categories = buckets
        .iter()
        .enumerate()
        .map(|(i, b)| bucket_label(*b, i + 1 == buckets.len()))
        .collect();
    let mut device = String::from("the device");
    let mut series = Vec::new();
    for (i, mode) in list(align, "/modes").iter().enumerate() {
        let Some(level) = mode
            .get("levels")
            .and_then(Value::as_array)
            .and_then(|l| l.last())
        else {
            continue;
        };
        if let Some(d) = level.get("device").and_then(Value::as_str) {
            device = d.to_string();
        }
        let requests = level
            .pointer("/histogram/requests")
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        let values = list(level, "/histogram/counts")
            .iter()
            .filter_map(Value::as_f64)
            .map(|c| {
                if requests > 0.0 {
                    c * 100.0 / requests
                } else {
                    0.0
                }
            })
            .collect();
        series.push(GroupSpec {
            label: mode
                .get("mode")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .into(),
            color: color(i),
            values,
        });
    }
    if series.is_empty() {
        return None;
    }
    let text = |k: &str| {
        align.get(k).map_or_else(String::new, |v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    Some(Chart {
        id: "align-histogram".into(),
        title: format!(
            "Request alignment on {device}: {} with {} B blocks, {} KiB writes",
            text("fs_type"),
            text("fs_block_bytes"),
            align
                .get("request_bytes")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                >> 10
        ),
        subtitle:
            "share of requests by the largest power of two dividing the request's device address"
                .into(),
        body: ChartBody::Grouped {
            categories,
            category_label: "alignment of the request's device address (bytes)".into(),
            y_label: "share of requests".into(),
            y_unit: "%".into(),
            series,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_percent_of_the_deepest_level() {
        let align = serde_json::json!({
            "fs_type": "xfs", "fs_block_bytes": 4096, "request_bytes": 131072,
            "buckets_bytes": [512, 4096, 1048576],
            "modes": [{"mode": "append", "levels": [
                {"device": "loop0", "histogram": {"requests": 1, "counts": [1, 0, 0]}},
                {"device": "vda", "histogram": {"requests": 4, "counts": [1, 2, 1]}}]}]
        });
        let chart = chart(&align).unwrap_or_else(|| panic!("no chart"));
        let ChartBody::Grouped {
            categories, series, ..
        } = &chart.body
        else {
            panic!("not grouped");
        };
        assert_eq!(categories, &["512", "4K", "1M+"]);
        assert_eq!(series[0].values, vec![25.0, 50.0, 25.0]);
        assert!(chart.title.contains("vda"));
        assert!(super::chart(&serde_json::json!({})).is_none());
    }
}
