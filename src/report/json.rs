//! The JSON exporter: the document of SPEC §6 (docs/json-schema.md).

use crate::results::Report;

/// The report as pretty-printed JSON with a trailing newline, its derived figures finite
/// ([`Report::with_finite_figures`]: a peak or an efficiency that is not a number is written
/// unknown, never as `null` where a reader expects a number).
pub fn render(report: &Report) -> Vec<u8> {
    let report = report.clone().with_finite_figures();
    // Every field is a plain number, string, list or map: serialisation cannot fail, except for
    // non-finite floats, which serde_json writes as null.
    let mut out = serde_json::to_vec_pretty(&report).unwrap_or_else(|e| {
        format!("{{\"error\": \"could not serialise the report: {e}\"}}").into_bytes()
    });
    out.push(b'\n');
    out
}
