//! The JSON exporter: the document of SPEC §6 (docs/json-schema.md).

use crate::results::Report;

/// The report as pretty-printed JSON with a trailing newline, with its content's `sha256`,
/// its derived figures finite
/// ([`Report::with_finite_figures`]: a peak or an efficiency that is not a number is written
/// unknown, never as `null` where a reader expects a number).
pub fn render(report: &Report) -> Vec<u8> {
    let mut report = report.clone().with_finite_figures();
    // Each point below 90 % of its peak with its causes (worked out from the whole run).
    let diagnoses = super::diagnosis::of_report(&report);
    for (rec, d) in report.results.iter_mut().zip(diagnoses) {
        rec.diagnosis = d;
    }
    // The content's hash, for whoever imports it elsewhere.
    report.sha256 = Some(report.content_sha256());
    // Every field is a plain number, string, list or map: serialisation cannot fail, except for
    // non-finite floats, which serde_json writes as null.
    let mut out = serde_json::to_vec_pretty(&report).unwrap_or_else(|e| {
        format!("{{\"error\": \"could not serialise the report: {e}\"}}").into_bytes()
    });
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every recorded run, written out, reads back with its sha256 matching its content (the
    /// numbers, the facts and the records round-trip exactly) and its points off their peaks
    /// diagnosed; a changed figure does not.
    #[test]
    fn a_written_document_reads_back_with_its_hash() {
        for name in ["quick.json", "assignment.json", "points.json", "base.json"] {
            let path = format!(
                "{}/tests/fixtures/history/{name}",
                env!("CARGO_MANIFEST_DIR")
            );
            let report = Report::from_json(&std::fs::read(&path).unwrap()).unwrap();
            let written = render(&report);
            let back = Report::from_json(&written).unwrap();
            assert!(back.sha256.is_some(), "{name}");
            // Every point below 90 % of its peak or above 110 % is diagnosed, and none between.
            for r in &back.results {
                let off = r
                    .efficiency
                    .is_some_and(|e| e > 0.0 && !(0.9..=1.1).contains(&e));
                assert_eq!(r.diagnosis.is_some(), off, "{name}: {r:?}");
            }
            assert_eq!(back.check_sha256(), Ok(()), "{name}");
            let mut changed = back.clone();
            changed.results[0].summary.mean *= 1.5;
            assert!(changed.check_sha256().is_err(), "{name}");
        }
    }
}
