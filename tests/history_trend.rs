//! `peakbench history --trend`: a point that moved to another level and stayed is found at the
//! run it moved, the others are steady through 1 % noise, another machine starts the point anew,
//! and bad requests are one line.

mod common;

use common::history::{fixture, peakbench};
use serde_json::Value;
use std::path::Path;

/// Twelve runs of the recorded quick run, each figure moved by up to ±1 % (a fixed sequence),
/// TRIAD 20 % slower from the 8th run on, the last two on a CPU of another name; imported in
/// order into `db` (runs 1 to 12).
fn twelve_runs(dir: &Path, db: &Path) {
    let base: Value =
        serde_json::from_slice(&std::fs::read(fixture("quick.json")).unwrap()).unwrap();
    let docs = dir.join("docs");
    std::fs::create_dir(&docs).unwrap();
    let mut x: u64 = 5;
    for run in 0..12 {
        let mut r = base.clone();
        // Changed since written: stored without its digest, as documents of old versions are.
        r.as_object_mut().unwrap().remove("sha256");
        for rec in r["results"].as_array_mut().unwrap() {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mut f = 1.0 + ((x >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.02;
            if rec["workload"] == "TRIAD" && run >= 7 {
                f *= 0.8;
            }
            for k in ["mean", "median", "min", "max", "stddev"] {
                if let Some(v) = rec[k].as_f64() {
                    rec[k] = serde_json::json!(v * f);
                }
            }
            for v in rec["samples"].as_array_mut().unwrap() {
                if let Some(s) = v.as_f64() {
                    *v = serde_json::json!(s * f);
                }
            }
        }
        if run >= 10 {
            r["system"]["cpu"]["brand"] =
                serde_json::json!({"value": "Another CPU", "source": "detected"});
        }
        std::fs::write(
            docs.join(format!("run{run:02}.json")),
            serde_json::to_vec(&r).unwrap(),
        )
        .unwrap();
    }
    peakbench(db)
        .args(["history", "--import"])
        .arg(&docs)
        .assert()
        .success();
}

#[test]
fn a_point_that_moved_is_found_at_its_run_and_the_others_are_steady() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    twelve_runs(dir.path(), &db);
    let out = peakbench(&db)
        .args(["history", "--trend", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let trends: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(trends.len() > 30, "{} trends", trends.len());
    for t in &trends {
        let levels = t["levels"].as_array().unwrap();
        assert_eq!(t["runs"].as_array().unwrap().len(), 12, "{t}");
        // Every point starts anew on the other CPU at run 11, and only TRIAD moved before.
        let begins: Vec<(&str, i64)> = levels
            .iter()
            .map(|l| {
                (
                    l["begins"].as_str().unwrap(),
                    l["from_run"].as_i64().unwrap(),
                )
            })
            .collect();
        if t["point"].as_str().unwrap().starts_with("TRIAD") {
            assert_eq!(begins, [("first", 1), ("level", 8), ("machine", 11)], "{t}");
            let (a, b) = (
                levels[0]["median"].as_f64().unwrap(),
                levels[1]["median"].as_f64().unwrap(),
            );
            assert!((b / a - 0.8).abs() < 0.02, "{t}");
        } else {
            assert_eq!(begins, [("first", 1), ("machine", 11)], "{t}");
        }
    }
    // The table says it in words, at 100 columns.
    let out = peakbench(&db)
        .env("COLUMNS", "100")
        .args(["history", "--trend", "triad"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    // The first line is wrapped: read as one.
    let flat = text.replace("\n  ", " ");
    assert!(
        flat.contains("Trend of 1 point over 12 runs (1 to 12): 1 moved")
            && flat.contains("the hardware changed at run 11")
            && text.contains("worse from run 8")
            && text.contains("(-20 %)"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    // The page: a chart per point, its levels and the runs they begin at.
    let page = dir.path().join("trend.html");
    peakbench(&db)
        .args(["history", "--trend", "TRIAD", "--html"])
        .arg(&page)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<svg").count(), 1, "{html}");
    for words in [
        "Trend of 1 point over 12 runs",
        "run 8",
        "run 11: other machine",
        "level 2:",
        "worse from run 8",
    ] {
        assert!(html.contains(words), "{words}: {html}");
    }
}

#[test]
fn the_last_runs_only_and_bad_requests_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    twelve_runs(dir.path(), &db);
    let out = peakbench(&db)
        .args(["history", "--trend", "TRIAD", "--last", "5", "--json"])
        .output()
        .unwrap();
    let trends: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(trends.len(), 1);
    assert_eq!(trends[0]["runs"], serde_json::json!([8, 9, 10, 11, 12]));
    for (args, says) in [
        (
            &["history", "--trend", "NO-SUCH-POINT"][..],
            "no point of the 12 run(s)",
        ),
        (&["history", "--last", "3"][..], "--trend"),
        (&["history", "--trend", "--last", "1"][..], "out of range"),
        (
            &["history", "--trend", "--min-shift", "0"][..],
            "--min-shift",
        ),
        (
            &["history", "--trend", "--json", "-", "--html", "-"][..],
            "both go to standard output",
        ),
    ] {
        let out = peakbench(&db).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(says) && err.trim_end().lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}
