//! Every registered workload (`peakbench::bench::registry::ALL`) goes the whole way: its name
//! parses, a profile job of it has a time estimate, a tiny point of it runs, and its records
//! round-trip through the JSON document and the results database, render in the table, CSV,
//! Markdown and HTML, and have the reference tool the registry says (or none).

mod common;

use assert_cmd::Command;
use peakbench::bench::registry::{self, Workload};
use peakbench::history::Store;
use peakbench::reference::{self, RefContext};
use peakbench::results::Report;
use std::path::Path;
use std::time::Duration;

/// The options of a tiny point of `w` (bounded: well under a second or two each).
fn tiny(w: &Workload, dir: &Path) -> Vec<String> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let mut args = s(&[w.subsystem, "--workload", w.name]);
    if matches!(w.name, "LINPACK" | "DGEMM" | "SGEMM") {
        args.extend(s(&["--n", "96"]));
    }
    // Each option only where the workload uses it: one that no point uses is refused.
    let kernel = !matches!(w.name, "NULL" | "LINPACK" | "DGEMM" | "SGEMM");
    args.extend(match w.subsystem {
        "cpu" => {
            let mut a = s(&["--threads", "1", "--repeat", "2", "--warmup", "0"]);
            if kernel {
                a.extend(s(&["--duration", "5ms"]));
            }
            a
        }
        "mem" => {
            let mut a = s(&["--threads", "1", "--repeat", "2", "--warmup", "0"]);
            if w.name != "NULL" {
                a.extend(s(&["--duration", "5ms", "--array-size", "1Mi"]));
            }
            if matches!(w.name, "RWS" | "RWR" | "WS" | "WR" | "RS" | "RR") {
                a.extend(s(&["--block-size", "64Ki"]));
            }
            if w.name == "LATENCY" {
                a.extend(s(&["--latency-max", "64Ki", "--huge-pages", "on"]));
            }
            a
        }
        "disk" => {
            let mut a = s(&[
                "--engine",
                "null",
                "--size",
                "4M",
                "--runtime",
                "50ms",
                "--ramp",
                "0",
                "--repeat",
                "1",
                "--block-size",
                "4K",
                "--dir",
            ]);
            a.push(dir.display().to_string());
            a
        }
        "net" => s(&[
            "--loopback",
            "--protocol",
            "tcp",
            "--duration",
            "50ms",
            "--omit",
            "0",
            "--repeat",
            "1",
            "--message-size",
            "64",
        ]),
        other => panic!("no tiny point for subsystem {other}"),
    });
    args
}

fn peakbench(db: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_peakbench"));
    c.env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1);
    c.env("PEAKBENCH_DB", db).timeout(Duration::from_secs(120));
    c
}

#[test]
fn every_registered_workload_parses_estimates_runs_round_trips_and_renders() {
    assert!(
        registry::ALL.len() >= 26,
        "the registry lists every workload"
    );
    for w in registry::ALL {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("history.db");
        let out = |ext: &str| dir.path().join(format!("out.{ext}"));
        // Estimates: a profile job of it has a time, and the suite lists it.
        let profile = dir.path().join("one.toml");
        std::fs::write(
            &profile,
            format!(
                "description = \"{0}\"\n[[job]]\nsubsystem = \"{0}\"\nworkload = [\"{1}\"]\n",
                w.subsystem, w.name
            ),
        )
        .unwrap();
        let dry = peakbench(&db)
            .args(["run", "--dry-run", "--profile"])
            .arg(&profile)
            .assert()
            .success();
        let listed = String::from_utf8(dry.get_output().stdout.clone()).unwrap();
        assert!(
            listed.contains(&format!("--workload={}", w.name)) && listed.contains("(about "),
            "{} {}: {listed}",
            w.subsystem,
            w.name
        );
        // Parses and runs a tiny point, writing every output.
        let ran = peakbench(&db)
            .args(tiny(w, dir.path()))
            .arg("--json")
            .arg(out("json"))
            .arg("--csv")
            .arg(out("csv"))
            .arg("--markdown")
            .arg(out("md"))
            .arg("--html")
            .arg(out("html"))
            .assert()
            .success();
        let table = String::from_utf8(ran.get_output().stdout.clone()).unwrap();
        let what = format!("{} {}", w.subsystem, w.name);
        // Round-trips through the JSON document ...
        let bytes = std::fs::read(out("json")).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(common::schema_errors(&doc), Vec::<String>::new(), "{what}");
        let report = Report::from_json(&bytes).unwrap();
        assert!(!report.results.is_empty(), "{what}: no record");
        assert_eq!(
            serde_json::to_value(&report).unwrap(),
            doc,
            "{what}: JSON round trip"
        );
        // ... and through the results database.
        let store = Store::open(&db).unwrap();
        let run = store.resolve("latest").unwrap();
        let stored = store.load(run).unwrap();
        assert_eq!(
            serde_json::to_value(&stored.results).unwrap(),
            doc["results"],
            "{what}: database round trip"
        );
        for rec in &report.results {
            assert_eq!(
                (rec.subsystem.name(), rec.workload.as_str()),
                (w.subsystem, w.name)
            );
            assert!(
                w.metrics.contains(&rec.metric.name()),
                "{what}: {}",
                rec.metric
            );
            // The reference tool the registry names, or none.
            let ctx = RefContext::new(dir.path());
            assert_eq!(
                reference::jobs(rec, &ctx).is_some(),
                w.reference.is_some(),
                "{what} {}",
                rec.metric
            );
        }
        // Renders in every exporter: the workload is in each.
        for text in [
            table,
            std::fs::read_to_string(out("csv")).unwrap(),
            std::fs::read_to_string(out("md")).unwrap(),
            std::fs::read_to_string(out("html")).unwrap(),
        ] {
            assert!(text.contains(w.name), "{what} missing from: {text}");
        }
        assert_eq!(
            std::fs::read_dir(dir.path())
                .unwrap()
                .filter(|e| e
                    .as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .contains(".tmp"))
                .count(),
            0,
            "{what}: temporary files left"
        );
    }
}
