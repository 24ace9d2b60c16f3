//! Every workload's spec (`peakbench::workload::registry::all`) goes the whole way: its name
//! parses, a profile job of it has a time estimate, a tiny point of it runs, and its records
//! round-trip through the JSON document and the results database, render in the table, CSV,
//! Markdown and HTML, and have a reference tool its spec names (or none where it names none).
//! Each tiny point sets the options its spec says it uses, so a new workload needs no line here.

mod common;

use assert_cmd::Command;
use peakbench::history::Store;
use peakbench::reference::{self, RefContext};
use peakbench::results::{Report, Subsystem};
use peakbench::workload::spec::Spec;
use peakbench::workload::{Workload, options, registry};
use std::path::Path;
use std::time::Duration;

/// The value of each option a workload's spec may name that a tiny point sets (bounded: well
/// under a second or two each). An option of a spec not here needs no value for a tiny point.
const TINY: &[(&str, &str)] = &[
    ("n", "96"),
    ("duration", "5ms"),
    ("array-size", "1Mi"),
    ("block-size", "64Ki"),
    ("latency-max", "64Ki"),
    ("huge-pages", "on"),
];

/// The options of a tiny point of `w`: its subsystem's, and each option of the options' table
/// that it uses (one that no point uses is refused).
fn tiny(w: &Spec, dir: &Path) -> Vec<String> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let mut args = s(&[w.subsystem.name(), "--workload", w.name]);
    for (option, value) in TINY {
        let workload = Workload::named(w.subsystem, w.name).unwrap();
        if options::row(w.subsystem, option).is_some_and(|r| (r.users)(workload)) {
            args.extend([format!("--{option}"), value.to_string()]);
        }
    }
    args.extend(match (w.subsystem, w.name) {
        // LOADED chases on one thread and loads on the others; NUMA runs every CPU of a node.
        (Subsystem::Mem, "LOADED") => s(&["--threads", "2", "--repeat", "2", "--warmup", "0"]),
        (Subsystem::Mem, "NUMA") => s(&["--repeat", "2", "--warmup", "0"]),
        (Subsystem::Cpu | Subsystem::Mem, _) => {
            s(&["--threads", "1", "--repeat", "2", "--warmup", "0"])
        }
        (Subsystem::Disk, _) => {
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
        (Subsystem::Net, _) => s(&[
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
    let all = registry::all();
    assert!(all.len() >= 26, "the registry lists every workload");
    for w in &all {
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
            .assert();
        // An instruction-set extension this machine lacks (AMX, VNNI, I8MM) is refused before
        // anything runs, in one line that names what it needs.
        let refused = String::from_utf8_lossy(&dry.get_output().stderr).to_string();
        if dry.get_output().status.code() == Some(2) && refused.contains(" needs ") {
            assert_eq!(refused.trim_end().lines().count(), 1, "{refused}");
            eprintln!(
                "SKIPPED: {} {}: {}",
                w.subsystem,
                w.name,
                refused.trim_end()
            );
            continue;
        }
        let dry = dry.success();
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
        // (The database keeps each point as it was measured; its diagnosis is derived from
        // the whole run when a document is written.)
        let mut measured = doc["results"].clone();
        for r in measured.as_array_mut().unwrap() {
            r.as_object_mut().unwrap().remove("diagnosis");
        }
        assert_eq!(
            serde_json::to_value(&stored.results).unwrap(),
            measured,
            "{what}: database round trip"
        );
        for rec in &report.results {
            assert_eq!((rec.subsystem, rec.workload.spec()), (w.subsystem, *w));
            assert!(w.metrics.contains(&rec.metric), "{what}: {}", rec.metric);
            // A reference tool where the spec names one, and only a tool it names.
            let ctx = RefContext::new(dir.path());
            let jobs = reference::jobs(rec, &ctx);
            assert_eq!(
                jobs.is_some(),
                !w.references.is_empty(),
                "{what} {}",
                rec.metric
            );
            for job in jobs.into_iter().flatten().flatten() {
                assert!(
                    w.references.contains(&job.tool()),
                    "{what}: {:?}",
                    job.tool()
                );
            }
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
