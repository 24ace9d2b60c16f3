//! Snapshot tests of every exporter on a fixed report, and the JSON exporter against the schema.

mod common;

use peakbench::report;

#[test]
fn table_snapshot() {
    insta::assert_snapshot!(report::table::render(&common::shown(
        &common::fixed_report()
    )));
}

#[test]
fn system_table_snapshot() {
    insta::assert_snapshot!(report::table::render_system(&common::fixed_system()));
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

/// What came from another machine or a file (a host name, a workload name, a command line, a
/// peer's note) cannot drive the terminal or forge a line in any text exporter: control
/// characters are printed escaped.
#[test]
fn control_characters_from_outside_are_escaped() {
    let evil = "x\u{1b}[2J\r\nFORGED line\u{7}";
    let mut r = common::fixed_report();
    r.system.os.hostname.value = Some(evil.into());
    r.command_line.push(evil.into());
    r.results[0].workload = evil.into();
    r.results[0].peak_unknown_reason = Some(evil.into());
    let shown = common::shown(&r);
    for (name, text) in [
        ("table", report::table::render(&shown)),
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
