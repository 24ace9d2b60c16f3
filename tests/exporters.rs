//! Snapshot tests of every exporter on a fixed report, and the JSON exporter against the schema.

mod common;

use peakbench::report;

#[test]
fn table_snapshot() {
    insta::assert_snapshot!(report::table::render(
        &common::shown(&common::fixed_report()),
        1000
    ));
}

#[test]
fn system_table_snapshot() {
    insta::assert_snapshot!(report::table::render_system(&common::fixed_system(), 1000));
}

#[test]
fn markdown_snapshot() {
    let md = String::from_utf8(report::markdown::render(&common::shown(
        &common::fixed_report(),
    )))
    .unwrap();
    insta::assert_snapshot!(md);
}

#[test]
fn csv_snapshot() {
    let csv =
        String::from_utf8(report::csv::render(&common::shown(&common::fixed_report()))).unwrap();
    insta::assert_snapshot!(csv);
}

#[test]
fn json_snapshot_and_schema() {
    let bytes = report::json::render(&common::fixed_report());
    let doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    insta::assert_json_snapshot!(doc);
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
}

/// A point's phases are in the schema: two or more, each its start, end and figure.
#[test]
fn a_points_phases_are_in_the_schema() {
    let mut report = common::fixed_report();
    report.results[0].phases = Some(vec![
        peakbench::results::phases::Phase::new(0.0, 31.2, 3e9),
        peakbench::results::phases::Phase::new(31.2, 60.0, 1e8),
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&report::json::render(&report)).unwrap();
    assert_eq!(doc["results"][0]["phases"][1]["start_s"], 31.2);
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    let mut one = doc.clone();
    one["results"][0]["phases"].as_array_mut().unwrap().pop();
    assert!(!common::schema_errors(&one).is_empty());
    // Read back as written.
    let back = peakbench::results::Report::from_json(&report::json::render(&report)).unwrap();
    assert_eq!(back.results[0].phases, report.results[0].phases);
}

#[test]
fn schema_rejects_broken_documents() {
    let good: serde_json::Value =
        serde_json::from_slice(&report::json::render(&common::fixed_report())).unwrap();
    let mut no_unit = good.clone();
    no_unit["results"][0]
        .as_object_mut()
        .unwrap()
        .remove("unit");
    assert!(!common::schema_errors(&no_unit).is_empty());
    let mut unknown_without_reason = good.clone();
    unknown_without_reason["system"]["cpu"]["max_freq_ghz"]
        .as_object_mut()
        .unwrap()
        .remove("unknown_reason");
    assert!(!common::schema_errors(&unknown_without_reason).is_empty());
    let mut peak_without_efficiency = good;
    peak_without_efficiency["results"][0]["efficiency"] = serde_json::Value::Null;
    assert!(!common::schema_errors(&peak_without_efficiency).is_empty());
}

/// What came from another machine or a file (a host name, a point's warning, a command line, a
/// peer's note) cannot drive the terminal or forge a line in any text exporter: control
/// characters are printed escaped.
#[test]
fn control_characters_from_outside_are_escaped() {
    let evil = "x\u{1b}[2J\r\nFORGED line\u{7}";
    let mut r = common::fixed_report();
    r.system.os.hostname.value = Some(evil.into());
    r.command_line.push(evil.into());
    r.results[0].warnings.push(evil.into());
    r.results[0].peak_unknown_reason = Some(evil.into());
    let shown = common::shown(&r);
    for (name, text) in [
        ("table", report::table::render(&shown, 100)),
        ("summary", report::summary::render(&shown, 100)),
        (
            "csv",
            String::from_utf8(report::csv::render(&shown)).unwrap(),
        ),
        (
            "markdown",
            String::from_utf8(report::markdown::render(&shown)).unwrap(),
        ),
        (
            "html",
            String::from_utf8(report::html::render(&shown)).unwrap(),
        ),
    ] {
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{name}: a raw control character"
        );
        assert!(
            !text
                .lines()
                .any(|l| l.trim_start_matches(['|', ' ', '-']).starts_with("FORGED")),
            "{name}: a forged line"
        );
        assert!(text.contains("\\u{1b}"), "{name}: the escape is shown");
    }
}

/// Splits one CSV line into its fields (quoted fields with doubled quotes, as pandas reads them).
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(String::new()),
            (c, _) => out.last_mut().unwrap().push(c),
        }
    }
    out
}

/// CSV for pandas and R: every row as wide as the header, the header's names unique, each
/// parameter in its own column (the sweep parameters first), units in the `unit` column or the
/// parameter's name; `--csv-samples`: a row per repetition.
#[test]
fn csv_has_a_column_per_parameter_and_a_row_per_point_or_sample() {
    let shown = common::shown(&common::fixed_report());
    let text = String::from_utf8(report::csv::render(&shown)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let header = csv_fields(lines[0]);
    let unique: std::collections::BTreeSet<&String> = header.iter().collect();
    assert_eq!(unique.len(), header.len(), "{header:?}");
    assert_eq!(
        &header[..5],
        ["subsystem", "workload", "metric", "unit", "threads"]
    );
    for col in [
        "block_size_bytes",
        "isa",
        "repetitions",
        "mean",
        "peak_unit",
    ] {
        assert!(header.iter().any(|h| h == col), "{col} missing: {header:?}");
    }
    assert_eq!(lines.len() - 1, shown.results.len());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for (line, rec) in lines[1..].iter().zip(&shown.results) {
        let f = csv_fields(line);
        assert_eq!(f.len(), header.len(), "{line}");
        assert_eq!(f[col("threads")], rec.params.threads().to_string());
        assert_eq!(f[col("unit")], rec.unit.name());
        assert_eq!(f[col("repetitions")], rec.samples.len().to_string());
    }
    let rws = lines[1..]
        .iter()
        .map(|l| csv_fields(l))
        .find(|f| f[1] == "RWS")
        .unwrap();
    assert_eq!(rws[col("block_size_bytes")], "1000");

    let per_sample = String::from_utf8(report::csv::render_samples(&shown)).unwrap();
    let rows: Vec<Vec<String>> = per_sample.lines().map(csv_fields).collect();
    let total: usize = shown.results.iter().map(|r| r.samples.len()).sum();
    assert_eq!(rows.len() - 1, total);
    assert_eq!(rows[0][rows[0].len() - 2..], ["repetition", "value"]);
    assert_eq!(rows[1][rows[0].len() - 2], "1");
    assert!(rows.iter().all(|r| r.len() == rows[0].len()));
}

/// Network tables have a Protocol column, as the reports' do: the transport out of the
/// message column, in the terminal's, Markdown's and HTML's tables alike.
#[test]
fn network_tables_have_a_protocol_column() {
    let report = common::shown(&common::chart_report());
    let md = String::from_utf8(peakbench::report::markdown::render(&report)).unwrap();
    let net: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with("| Workload | Protocol |"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(net.len() > 2, "{md}");
    assert!(
        net[0].starts_with("| Workload | Protocol | Concurrency | Message |"),
        "{}",
        net[0]
    );
    for row in &net[2..] {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert!(matches!(cells[2], "TCP" | "UDP"), "{row}");
        assert!(
            !cells[4].contains("TCP") && !cells[4].contains("UDP"),
            "{row}"
        );
    }
    // Other subsystems' tables have none.
    assert_eq!(
        md.matches("| Protocol |").count(),
        md.matches("| Workload | Protocol |").count()
    );
    let text = peakbench::report::table::render(&report, 100);
    assert!(text.contains("Protocol"), "{text}");
    let html = String::from_utf8(peakbench::report::html::render(&report)).unwrap();
    assert!(
        html.contains("<th>Protocol</th>"),
        "no Protocol column in the page"
    );
}
