//! `peakbench calibrate` and `compare --gate`: a calibration stored with its false alarms, a
//! gate that fails a slower copy and passes the same run, refuses without a calibration, across
//! machines and on a calibration that does not hold together; `compare` says where its
//! run-to-run noise came from. The runs are the mock session's (nothing measured).

mod common;

use common::history::{peakbench, scaled};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A profile of one CPU point, written into `dir`.
fn profile(dir: &Path) -> PathBuf {
    let path = dir.join("tiny.toml");
    std::fs::write(
        &path,
        "[[job]]\nsubsystem = \"cpu\"\nworkload = [\"DP\", \"SP\"]\nthreads = 1\nduration = \"20ms\"\nrepeat = 3\n",
    )
    .unwrap();
    path
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn a_calibrated_gate_fails_a_slower_copy_and_passes_the_same_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let tiny = profile(dir.path());
    let run = dir.path().join("run.json");
    peakbench(&db)
        .args(["run", "-q", "--profile"])
        .arg(&tiny)
        .arg("--json")
        .arg(&run)
        .assert()
        .success();
    // No calibration yet: refused, saying how to make one.
    let out = peakbench(&db)
        .args(["compare", "--gate", "latest", "latest"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("peakbench calibrate"));
    // Five runs: each pair of them is judged with the other three's noise (10 pairs).
    let out = peakbench(&db)
        .args(["calibrate", "--runs", "5", "--json", "-", "--profile"])
        .arg(&tiny)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let cal = json(&out);
    assert_eq!(cal["runs"].as_array().unwrap().len(), 5, "{cal}");
    assert_eq!(cal["pairs_tested"], 10, "{cal}");
    assert_eq!(cal["pairs_failed"], 0, "{cal}");
    let points = cal["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{cal}");
    for p in points {
        assert_eq!(p["runs"], 5, "{p}");
        assert!(p["run_cv"].as_f64().unwrap() >= 0.0 && p["mean"].as_f64().unwrap() > 0.0);
    }
    let id = cal["id"].as_i64().unwrap();
    let report: Value = serde_json::from_slice(&std::fs::read(&run).unwrap()).unwrap();
    let copy = |factor: f64| {
        let path = dir.path().join(format!("copy-{factor}.json"));
        std::fs::write(&path, serde_json::to_vec(&scaled(&report, factor)).unwrap()).unwrap();
        path
    };
    // The same figures pass; half of them fail (exit 3), each point tested and gated.
    let same = peakbench(&db)
        .args(["compare", "--gate", "--json", "-"])
        .arg(&run)
        .arg(copy(1.0))
        .output()
        .unwrap();
    assert_eq!(same.status.code(), Some(0), "{same:?}");
    let doc = json(&same);
    assert_eq!(doc["gate"]["calibration"], id, "{doc}");
    assert_eq!(doc["gate"]["pairs_tested"], 10, "{doc}");
    assert!(
        doc["run_to_run"]
            .as_str()
            .unwrap()
            .starts_with(&format!("calibration {id}"))
    );
    let slower = peakbench(&db)
        .args(["compare", "--gate", "--json", "-"])
        .arg(&run)
        .arg(copy(0.5))
        .output()
        .unwrap();
    assert_eq!(slower.status.code(), Some(3), "{slower:?}");
    for c in json(&slower)["changes"].as_array().unwrap() {
        assert_eq!(c["regression"], true, "{c}");
        assert!(
            c["catches"].as_f64().unwrap() >= c["threshold"].as_f64().unwrap(),
            "{c}"
        );
        assert!(c["spread"].is_string(), "{c}");
    }
    // The table: the gate's line and its columns, within 100 columns.
    let text = peakbench(&db)
        .env("COLUMNS", "100")
        .args(["compare", "--gate"])
        .arg(&run)
        .arg(copy(0.5))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("Gate %") && stdout.contains("Catch %") && stdout.contains("REGRESSION"),
        "{stdout}"
    );
    let flat = stdout.replace("\n  ", " ");
    assert!(
        flat.contains("false alarms expected in at most 5 %"),
        "{stdout}"
    );
    assert!(stdout.lines().all(|l| l.chars().count() <= 100), "{stdout}");
    // Another machine's run is refused by the gate.
    let mut other = scaled(&report, 1.0);
    other["system"]["cpu"]["brand"]["value"] = "Intel Xeon Platinum 8480+".into();
    let path = dir.path().join("other.json");
    std::fs::write(&path, serde_json::to_vec(&other).unwrap()).unwrap();
    let out = peakbench(&db)
        .args(["compare", "--gate"])
        .arg(&run)
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("calibrate and gate each machine"));
}

/// Without a calibration, `compare` takes the run-to-run noise of the machine's stored runs
/// (three besides A and B at least) and says so; a calibration whose figures were changed in
/// the database to ones that cannot be is ignored (the gate is refused, as without one).
#[test]
fn compare_says_where_its_noise_came_from_and_a_tampered_calibration_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let tiny = profile(dir.path());
    for _ in 0..5 {
        peakbench(&db)
            .args(["run", "-q", "--profile"])
            .arg(&tiny)
            .assert()
            .success();
    }
    let out = peakbench(&db)
        .args(["compare", "latest~1", "latest", "--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let doc = json(&out);
    assert_eq!(
        doc["run_to_run"], "3 stored runs of this machine (runs 1, 2, 3)",
        "{doc}"
    );
    // A calibration of these runs, then its figures made impossible in the database.
    peakbench(&db)
        .args(["calibrate", "--runs", "3", "--json", "-", "--profile"])
        .arg(&tiny)
        .assert()
        .success();
    peakbench(&db)
        .args(["compare", "--gate", "latest~1", "latest"])
        .assert()
        .code(0);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let text: String = conn
        .query_row("SELECT calibration FROM calibrations", [], |r| r.get(0))
        .unwrap();
    let mut cal: Value = serde_json::from_str(&text).unwrap();
    cal["points"][0]["run_cv"] = serde_json::json!(-1.0);
    conn.execute(
        "UPDATE calibrations SET calibration = ?1",
        [serde_json::to_string(&cal).unwrap()],
    )
    .unwrap();
    drop(conn);
    let out = peakbench(&db)
        .args(["compare", "--gate", "latest~1", "latest"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("there is none"),
        "{out:?}"
    );
}
