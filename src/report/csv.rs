//! The CSV exporter: one row per point, raw samples included, units in the headers' values.

use crate::results::Report;

const HEADER: &str = "subsystem,workload,threads,variant,metric,unit,mean,stddev,min,max,median,cv,noisy,samples,peak,peak_unit,efficiency,reference_tool,reference_mean,reference_efficiency,peak_formula,peak_unknown_reason,warnings";

/// A field, quoted where it must be; control characters (from a peer's host name or message)
/// escaped, so that a field never spans lines nor drives a terminal.
fn field(text: &str) -> String {
    let text = &crate::text::printable(text);
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

/// The report as CSV with a header line.
pub fn render(report: &Report) -> Vec<u8> {
    let mut out = String::from(HEADER);
    out.push('\n');
    for rec in &report.results {
        let s = &rec.summary;
        let variant = super::row(rec).variant;
        let cells = [
            field(&rec.subsystem),
            field(&rec.workload),
            field(&rec.params.threads().to_string()),
            field(if variant == "—" { "" } else { &variant }),
            field(&rec.metric),
            field(&rec.unit),
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
            field(rec.peak.as_ref().map_or("", |p| p.unit.as_str())),
            opt(rec.efficiency),
            field(rec.reference.as_ref().map_or("", |r| r.tool.as_str())),
            opt(rec.reference.as_ref().map(|r| r.mean)),
            opt(rec.reference.as_ref().and_then(|r| r.efficiency)),
            field(rec.peak.as_ref().map_or("", |p| p.formula.as_str())),
            field(rec.peak_unknown_reason.as_deref().unwrap_or("")),
            field(&rec.warnings.join("; ")),
        ];
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out.into_bytes()
}
