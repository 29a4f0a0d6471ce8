//! Chart builders: each reads one command's JSON (never the typed structs), so the page can be
//! rebuilt from the JSON it embeds and a picture cannot show a number the JSON lacks. A field
//! that is missing or not a number leaves its point out rather than failing the page.

pub mod align;
pub mod qos;
pub mod run;
pub mod tune;

use serde_json::Value;

use crate::chart::{color, Series, SeriesKind};

/// `v[key]` as a number.
pub(crate) fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

/// The number at a JSON pointer (`/load/depth`).
pub(crate) fn at(v: &Value, pointer: &str) -> Option<f64> {
    v.pointer(pointer).and_then(Value::as_f64)
}

/// The array at a JSON pointer, or an empty slice.
pub(crate) fn list<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `[[x, y], ...]` at a pointer as points; malformed pairs are dropped.
pub(crate) fn pairs(v: &Value, pointer: &str) -> Vec<(f64, f64)> {
    list(v, pointer)
        .iter()
        .filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?)))
        .collect()
}

/// One line per item (a run, a job) that has points under `key`, labelled by its `name` and
/// coloured by its position, so the same item keeps its colour across a command's charts.
pub(crate) fn line_series(items: &[Value], key: &str) -> Vec<Series> {
    items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| {
            let points = pairs(item, &format!("/{key}"));
            (!points.is_empty()).then(|| Series {
                label: item
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .into(),
                kind: SeriesKind::Line,
                color: color(i),
                points,
            })
        })
        .collect()
}
