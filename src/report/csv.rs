//! The CSV exporter, for pandas and R: one row per point (or, with `--csv-samples`, one per
//! repetition), each parameter in its own column named with its unit where it has one
//! (`block_size_bytes`, `runtime_s`), the figures in the unit of the `unit` column.
//!
//! The parameter columns are the union of the run's points' parameters: the sweep parameters
//! first (threads, isa, block size, …, as `compare` names a point), then the others in
//! alphabetical order; a point without one leaves its cell empty. Lists are joined with `;`,
//! an object's fields get their own columns (`littles_law_ratio`). A latency point's
//! percentiles close its row, a column each of the run's (`percentile_min`, `percentile_p50`,
//! …, `percentile_max`: those `--percentiles` chose), in the row's unit.

use crate::results::{Report, ResultRecord};
use std::collections::BTreeMap;

/// The columns before the parameters.
const LEAD: [&str; 4] = ["subsystem", "workload", "metric", "unit"];

/// The figures of a point, after the parameters.
const FIGURES: [&str; 18] = [
    "repetitions",
    "mean",
    "stddev",
    "min",
    "max",
    "median",
    "cv",
    "noisy",
    "samples",
    "peak",
    "peak_unit",
    "efficiency",
    "reference_tool",
    "reference_mean",
    "reference_efficiency",
    "peak_formula",
    "peak_unknown_reason",
    "warnings",
];

/// A field, quoted where it must be; control characters (from a peer's host name or message)
/// escaped, so that a field never spans lines nor drives a terminal.
///
/// A text cell that a spreadsheet would read as a formula (it starts with `=`, `+`, `-`, `@`,
/// and is not a number) is given a leading `'`, as OWASP advises against CSV injection: a
/// host name or a reason from a file never runs in the reader's spreadsheet.
fn field(text: &str) -> String {
    let printable = crate::text::printable(text);
    let text = &if printable.starts_with(['=', '+', '-', '@']) && printable.parse::<f64>().is_err()
    {
        format!("'{printable}")
    } else {
        printable
    };
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(String::new, num)
}

/// A JSON scalar as a cell's text (a list of scalars joined with `;`).
fn scalar(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::Null => Some(String::new()),
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Array(items) => items
            .iter()
            .map(|i| match i {
                serde_json::Value::Object(_) | serde_json::Value::Array(_) => None,
                other => scalar(other),
            })
            .collect::<Option<Vec<_>>>()
            .map(|v| v.join(";")),
        serde_json::Value::Object(_) => None,
    }
}

/// A point's parameters as (column, cell): scalars and lists of scalars as they are, an
/// object's scalar fields as `key_field`; lists of objects (clock probes) are left to the JSON.
fn parameters(rec: &ResultRecord) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Ok(serde_json::Value::Object(map)) = serde_json::to_value(&rec.params) else {
        return out;
    };
    for (k, v) in map {
        match &v {
            serde_json::Value::Object(inner) => {
                for (f, fv) in inner {
                    if let Some(cell) = scalar(fv) {
                        out.insert(format!("{k}_{f}"), cell);
                    }
                }
            }
            other => {
                if let Some(cell) = scalar(other) {
                    out.insert(k, cell);
                }
            }
        }
    }
    out
}

/// The parameter columns of `report`: the parameters that name a point, in the order its
/// label gives them (first seen first), then the others alphabetically.
fn parameter_columns(records: &[ResultRecord], params: &[BTreeMap<String, String>]) -> Vec<String> {
    let mut cols: Vec<String> = Vec::new();
    for rec in records {
        for f in crate::results::point::fields(&rec.params) {
            if f.role.names() && !cols.iter().any(|c| c == f.key) {
                cols.push(f.key.to_string());
            }
        }
    }
    let mut rest: Vec<String> = Vec::new();
    for p in params {
        for k in p.keys() {
            if !cols.contains(k) && !rest.contains(k) {
                rest.push(k.clone());
            }
        }
    }
    cols.retain(|c| params.iter().any(|p| p.contains_key(c)));
    rest.sort();
    cols.extend(rest);
    cols
}

/// The report as CSV: a header line, then one row per point.
pub fn render(report: &Report) -> Vec<u8> {
    render_rows(report, false)
}

/// The report as CSV with one row per repetition (`repetition` from 1, its `value`), the
/// point's parameters repeated on each.
pub fn render_samples(report: &Report) -> Vec<u8> {
    render_rows(report, true)
}

/// The percentiles of the run's points, as their records name them: `min`, each percentile in
/// order, `max`.
fn percentile_columns(records: &[ResultRecord]) -> Vec<String> {
    use crate::measure::latency::Percentiles;
    let mut chosen: Vec<f64> = (records.iter())
        .flat_map(|r| {
            r.percentiles
                .iter()
                .flat_map(crate::measure::latency::chosen)
        })
        .map(|(q, _)| q)
        .collect();
    chosen.sort_by(f64::total_cmp);
    chosen.dedup();
    if chosen.is_empty() {
        return Vec::new();
    }
    std::iter::once("min".to_string())
        .chain(chosen.into_iter().map(Percentiles::key))
        .chain(["max".to_string()])
        .collect()
}

fn render_rows(report: &Report, per_sample: bool) -> Vec<u8> {
    let params: Vec<BTreeMap<String, String>> = report.results.iter().map(parameters).collect();
    let columns = parameter_columns(&report.results, &params);
    let percentiles = match per_sample {
        true => Vec::new(),
        false => percentile_columns(&report.results),
    };
    let mut header: Vec<String> = LEAD.iter().map(|s| s.to_string()).collect();
    header.extend(columns.iter().cloned());
    if per_sample {
        header.extend(["repetition".to_string(), "value".to_string()]);
    } else {
        header.extend(FIGURES.iter().map(|s| s.to_string()));
        header.extend(percentiles.iter().map(|k| format!("percentile_{k}")));
    }
    let mut out = header.join(",");
    out.push('\n');
    for (rec, p) in report.results.iter().zip(&params) {
        let mut lead: Vec<String> = vec![
            field(rec.subsystem.name()),
            field(rec.workload.name()),
            field(rec.metric.name()),
            field(rec.unit.name()),
        ];
        lead.extend(
            columns
                .iter()
                .map(|c| field(p.get(c).map_or("", String::as_str))),
        );
        if per_sample {
            for (i, v) in rec.samples.iter().enumerate() {
                let mut row = lead.clone();
                row.extend([(i + 1).to_string(), num(*v)]);
                out.push_str(&row.join(","));
                out.push('\n');
            }
            continue;
        }
        let s = &rec.summary;
        let mut row = lead;
        row.extend([
            rec.samples.len().to_string(),
            num(s.mean),
            num(s.stddev),
            num(s.min),
            num(s.max),
            num(s.median),
            num(s.cv),
            s.noisy.to_string(),
            field(
                &rec.samples
                    .iter()
                    .map(|v| num(*v))
                    .collect::<Vec<_>>()
                    .join(";"),
            ),
            opt(rec.peak.as_ref().map(|p| p.value)),
            field(rec.peak.as_ref().map_or("", |p| p.unit.name())),
            opt(rec.efficiency),
            field(rec.reference.as_ref().map_or("", |r| r.tool.as_str())),
            opt(rec.reference.as_ref().map(|r| r.mean)),
            opt(rec.reference.as_ref().and_then(|r| r.efficiency)),
            field(rec.peak.as_ref().map_or("", |p| p.formula.as_str())),
            field(rec.peak_unknown_reason.as_deref().unwrap_or("")),
            field(&rec.warnings.join("; ")),
        ]);
        row.extend(
            (percentiles.iter())
                .map(|k| opt(rec.percentiles.as_ref().and_then(|p| p.get(k).copied()))),
        );
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::field;

    /// A cell a spreadsheet would run is defused; numbers, negative ones too, stay numbers.
    #[test]
    fn formulas_are_defused_numbers_kept() {
        assert_eq!(field("=cmd|' /C calc'!A0"), "'=cmd|' /C calc'!A0");
        assert_eq!(field("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(field("+1+cmd"), "'+1+cmd");
        assert_eq!(field("-2.5"), "-2.5");
        assert_eq!(field("1e-3"), "1e-3");
        assert_eq!(field("=a,b"), "\"'=a,b\"");
        assert_eq!(field("host\u{1b}[2J"), "host\\u{1b}[2J");
    }
}
