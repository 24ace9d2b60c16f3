//! The HTML report: a `--json` document reads back into the same report; the page is
//! self-contained and survives odd reports; every chart exports as a PNG; a reference's runs are
//! shown folded and escaped.

mod common;

use common::html::{CHARTS, html_of, svgs};
use peakbench::report;
use peakbench::results::{ReadError, Report, Subsystem};
use serde_json::{Value, json};

#[test]
fn json_reads_back_into_the_same_report() {
    let mut odd = common::fixed_report();
    odd.results[0].summary.mean = f64::NAN;
    odd.results[0].samples.push(f64::INFINITY);
    odd.results[1].efficiency = Some(f64::NAN);
    for r in [common::fixed_report(), common::chart_report(), odd] {
        let first = report::json::render(&r);
        let back = Report::from_json(&first).unwrap();
        assert_eq!(
            String::from_utf8(report::json::render(&back)).unwrap(),
            String::from_utf8(first).unwrap()
        );
    }
}

#[test]
fn reading_refuses_what_is_not_a_report() {
    assert!(matches!(
        Report::from_json(b"not json"),
        Err(ReadError::Json(_))
    ));
    assert!(matches!(
        Report::from_json(b"{}"),
        Err(ReadError::NoVersion)
    ));
    let good: Value =
        serde_json::from_slice(&report::json::render(&common::fixed_report())).unwrap();
    let mut newer = good.clone();
    newer["schema_version"] = json!(99);
    let e = Report::from_json(&serde_json::to_vec(&newer).unwrap()).unwrap_err();
    assert!(e.to_string().contains("schema_version 99"), "{e}");
    let mut broken = good.clone();
    broken.as_object_mut().unwrap().remove("system");
    assert!(matches!(
        Report::from_json(&serde_json::to_vec(&broken).unwrap()),
        Err(ReadError::Shape(_))
    ));
    // A subsystem, metric or unit outside the schema's lists is refused, naming it.
    for (field, value) in [
        ("subsystem", "gpu"),
        ("metric", "speed"),
        ("unit", "furlong/s"),
    ] {
        let mut odd = good.clone();
        odd["results"][0][field] = json!(value);
        let e = Report::from_json(&serde_json::to_vec(&odd).unwrap()).unwrap_err();
        assert!(matches!(e, ReadError::Shape(_)), "{field}: {e}");
        assert!(e.to_string().contains(value), "{field}: {e}");
    }
    // Version 1 documents (before the network subsystem) are a subset: they read, in this
    // version's form (figures in base units).
    let mut v1 = good;
    v1["schema_version"] = json!(1);
    assert_eq!(
        Report::from_json(&serde_json::to_vec(&v1).unwrap())
            .unwrap()
            .schema_version,
        peakbench::results::SCHEMA_VERSION
    );
}

#[test]
fn the_page_is_self_contained_and_complete() {
    let html = html_of(&common::chart_report());
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(svgs(&html).len(), CHARTS);
    for svg in svgs(&html) {
        assert!(
            svg.contains("<circle") || svg.matches("<rect").count() > 4,
            "a chart without data: {svg}"
        );
    }
    // Every measured point of a line chart has its hover text: the figure and its spread.
    let throughput = svgs(&html)[0];
    assert!(throughput.contains("<title>") && throughput.contains("repetitions)"));
    // The disk section says what the points ran on, the network section its server.
    assert!(
        html.contains("class=\"meta setup\">engine "),
        "disk setup line"
    );
    // A person reads µs, never us.
    assert!(
        !html.contains("(us)") && !html.contains(" us "),
        "us in the page"
    );
    // Nothing to run and nothing to fetch: the only URL is the SVG namespace.
    for banned in [
        "<script", "<link", "<img", "<iframe", "src=", "url(", "@import",
    ] {
        assert!(!html.contains(banned), "{banned} in the page");
    }
    assert_eq!(
        html.matches("http").count(),
        html.matches("http://www.w3.org/2000/svg").count()
    );
    for expected in [
        "peakbench run --profile quick",
        "2026-11-21T12:00:00Z",
        "AMD Zen 4",
        "Microarchitecture",
        "L2 unified cache",
        "peakbench measured (GOPS)",
        "likwid-bench measured (GOPS)",
        "likwid-bench",
        "cores × clock × fma_per_cycle",
        "clock = 3.60 GHz (measured)",
        "no SMBIOS table; give --mem-peak-gbs",
        "id=\"chart-disk-rr-percentiles\"",
        "id=\"chart-disk-rr-intervals\"",
        "throughput per interval",
        "id=\"chart-net-latency-percentiles\"",
        "ideal linear scaling",
        "likwid-bench: DP",
        "id=\"chart-mem-latency-staircase\"",
        "id=\"chart-cpu-efficiency\"",
        "id=\"chart-cpu-throughput-measured-bars\"",
        "likwid-bench measured",
        "theoretical peak",
        "L1d 48 KiB",
        "Network THROUGHPUT: goodput vs streams",
    ] {
        assert!(html.contains(expected), "{expected} missing");
    }
}

#[test]
fn odd_reports_give_a_page_not_a_panic() {
    let mut empty = common::fixed_report();
    empty.results.clear();
    let html = html_of(&empty);
    assert!(html.contains("no results") && svgs(&html).is_empty());
    assert!(report::charts::pngs(&common::shown(&empty)).is_empty());

    let mut odd = common::chart_report();
    for (i, rec) in odd.results.iter_mut().enumerate() {
        match i % 5 {
            0 => {
                rec.summary.mean = f64::NAN;
                rec.efficiency = Some(f64::INFINITY);
            }
            1 => {
                // The fewest parameters a record of its kind can have.
                rec.params = peakbench::results::params::Params::with_defaults(
                    rec.workload,
                    serde_json::json!({}),
                )
                .unwrap();
                rec.peak = None;
                rec.peak_unknown_reason = None;
            }
            2 => rec.summary.mean = -1e308,
            3 => {
                rec.summary.mean = 0.0;
                rec.warnings
                    .push("<script>alert('x')</script> & \"q\"".into());
                rec.subsystem = Subsystem::Net;
            }
            _ => rec.summary.mean = 1e308,
        }
    }
    odd.system.caches.clear();
    odd.command_line.push("it's <b>".into());
    let html = html_of(&odd);
    assert!(!html.contains("<script") && !html.contains("<b>"));
    assert!(html.contains("&lt;script&gt;"));
    for (name, png) in report::charts::pngs(&common::shown(&odd)) {
        png.unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn every_chart_exports_as_png() {
    let files = report::charts::pngs(&common::shown(&common::chart_report()));
    let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(names.len(), CHARTS, "{names:?}");
    assert_eq!(names[0], "01-cpu-dp-throughput-vs-threads.png");
    assert!(names.contains(&"07-mem-latency-staircase.png"), "{names:?}");
    for (_, png) in files {
        let png = png.unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }
}

/// A reference's runs are on the page on demand, folded, once per run however many records
/// it gave a figure to; what the tool printed is escaped, even from a hostile document.
#[test]
fn reference_runs_are_shown_folded_and_escaped() {
    let mut report = common::fixed_report();
    let hostile = "$ likwid-bench -t peakflops\n<script>alert(1)</script>\u{1b}[2J done\n";
    let rec = report
        .results
        .iter_mut()
        .find(|r| r.reference.is_some())
        .expect("the fixed report has a reference");
    let reference = rec.reference.as_mut().unwrap();
    reference.samples = vec![1.0, 2.0, 3.0];
    reference.output = hostile.into();
    let page = String::from_utf8(peakbench::report::html::render(&report)).unwrap();
    assert_eq!(
        page.matches("<details class=\"evidence\">").count(),
        1,
        "{page}"
    );
    assert!(page.contains("likwid-bench 5.2.2: 3 runs"), "{page}");
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{page}"
    );
    assert!(!page.contains("<script>"), "{page}");
    assert!(
        !page.contains('\u{1b}'),
        "an escape sequence reached the page"
    );
}
