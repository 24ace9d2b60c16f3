//! The JSON exporter: the document of SPEC §6 (docs/json-schema.md).

use crate::results::diagnosis::Diagnosis;
use crate::results::{Report, ResultRecord};
use serde::ser::{Serialize, SerializeSeq, SerializeStruct, Serializer};

/// The report as pretty-printed JSON with a trailing newline, with its content's `sha256`,
/// its derived figures finite
/// ([`ResultRecord::with_finite_figures`]: a peak or an efficiency that is not a number is
/// written unknown, never as `null` where a reader expects a number) and each point below 90 %
/// of its peak with its causes (worked out from the whole run). The report is written as it
/// stands, each record made so as it is written: no copy of the whole run (a multi-node run's
/// rank 0 holds every node's records) beside it.
pub fn render(report: &Report) -> Vec<u8> {
    let mut out = Vec::new();
    // A Vec takes every byte: only serialising could fail, and the document is plain numbers,
    // strings, lists and maps.
    if let Err(e) = write(report, &mut out) {
        return format!("{{\"error\": \"could not serialise the report: {e}\"}}\n").into_bytes();
    }
    out
}

/// [`render`] into `out` as it is made: the document is never whole in memory.
pub fn write(report: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let diagnoses = super::diagnosis::of_report(report);
    let mut document = Document {
        report,
        diagnoses: &diagnoses,
        sha256: None,
    };
    // The content's hash (its compact JSON without `sha256`, as `Report::content_sha256`
    // reads it back), for whoever imports it elsewhere.
    let hash = crate::results::integrity::sha256_of(&document);
    document.sha256 = Some(&hash);
    serde_json::to_writer_pretty(&mut *out, &document)?;
    out.write_all(b"\n")
}

/// The document of `report`: its fields in the order `Report` writes them, its records with
/// their `diagnoses`, and `sha256` where it is given.
struct Document<'a> {
    report: &'a Report,
    diagnoses: &'a [Option<Diagnosis>],
    sha256: Option<&'a str>,
}

impl Serialize for Document<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Every field named: a field added to `Report` and not here does not compile.
        let Report {
            schema_version,
            tool,
            started_at,
            command_line,
            system,
            results,
            fleet,
            verification,
            sha256: _,
        } = self.report;
        let mut st = s.serialize_struct("Report", 9)?;
        st.serialize_field("schema_version", schema_version)?;
        st.serialize_field("tool", tool)?;
        st.serialize_field("started_at", started_at)?;
        st.serialize_field("command_line", command_line)?;
        st.serialize_field("system", system)?;
        st.serialize_field(
            "results",
            &Records {
                results,
                diagnoses: self.diagnoses,
            },
        )?;
        match fleet {
            Some(f) => st.serialize_field("fleet", f)?,
            None => st.skip_field("fleet")?,
        }
        match verification {
            Some(v) => st.serialize_field("verification", v)?,
            None => st.skip_field("verification")?,
        }
        match self.sha256 {
            Some(h) => st.serialize_field("sha256", h)?,
            None => st.skip_field("sha256")?,
        }
        st.end()
    }
}

/// A run's records as written: each a copy with finite figures and its diagnosis, made as it
/// is written and dropped after.
struct Records<'a> {
    results: &'a [ResultRecord],
    diagnoses: &'a [Option<Diagnosis>],
}

impl Serialize for Records<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.results.len()))?;
        for (i, rec) in self.results.iter().enumerate() {
            let mut rec = rec.clone().with_finite_figures();
            rec.diagnosis = self.diagnoses.get(i).cloned().flatten();
            seq.serialize_element(&rec)?;
        }
        seq.end()
    }
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

    /// The document written record by record is the whole report copied, made finite,
    /// diagnosed, hashed and written at once, byte for byte (the fleet of a multi-node run and
    /// a verification's checks included).
    #[test]
    fn a_document_written_record_by_record_is_the_whole_reports() {
        use crate::results::fleet::{Fleet, OutlierRule, PairsSample};
        let dir = format!("{}/tests/fixtures/history", env!("CARGO_MANIFEST_DIR"));
        let names = [
            "quick.json",
            "assignment.json",
            "points.json",
            "base.json",
            "repeat.json",
        ];
        for (i, name) in names.iter().enumerate() {
            let mut report =
                Report::from_json(&std::fs::read(format!("{dir}/{name}")).unwrap()).unwrap();
            // A multi-node run's fleet and a verification's checks, on some of them.
            if i % 2 == 0 {
                report.fleet = Some(Fleet {
                    world_size: 2,
                    nodes: Vec::new(),
                    outliers: Vec::new(),
                    outlier_rule: OutlierRule::default(),
                    matrices: Vec::new(),
                    notes: vec!["rank 1 ended early".into()],
                    hpl: None,
                    pairs_sampled: Some(PairsSample {
                        ranks: 2,
                        rounds: 1,
                        measured_rounds: 1,
                        ordered_pairs: 2,
                        measured_pairs: 2,
                    }),
                });
                report.verification = Some(Default::default());
            }
            let mut whole = report.clone();
            whole.results = whole
                .results
                .into_iter()
                .map(ResultRecord::with_finite_figures)
                .collect();
            let diagnoses = crate::report::diagnosis::of_report(&whole);
            for (rec, d) in whole.results.iter_mut().zip(diagnoses) {
                rec.diagnosis = d;
            }
            whole.sha256 = Some(whole.content_sha256());
            let mut expected = serde_json::to_vec_pretty(&whole).unwrap();
            expected.push(b'\n');
            assert!(render(&report) == expected, "{name}");
        }
    }
}
