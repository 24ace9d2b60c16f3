//! For the results database's tests (tests/history*.rs): the binary on a database of the test's
//! own, and the recorded runs they read.

use std::path::{Path, PathBuf};

/// The binary with the clock probes' test double, on the database `db`.
pub fn peakbench(db: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(env!("CARGO_BIN_EXE_peakbench"));
    c.env(super::MOCK_CLOCK.0, super::MOCK_CLOCK.1);
    c.env(super::MOCK_SESSION.0, super::MOCK_SESSION.1);
    // Phrases are looked for whole: a terminal wide enough that no cell is wrapped.
    c.env("PEAKBENCH_DB", db).env("COLUMNS", "1000");
    c
}

/// A recorded run of tests/fixtures/history.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/history")
        .join(name)
}

/// A copy of `report` with every figure of every point made `factor` times better (below 1:
/// worse): rates multiplied, times (latency, lower is better) divided.
pub fn scaled(report: &serde_json::Value, factor: f64) -> serde_json::Value {
    let mut r = report.clone();
    for rec in r["results"].as_array_mut().unwrap() {
        let f = if rec["unit"] == "s" {
            1.0 / factor
        } else {
            factor
        };
        for k in ["mean", "median", "min", "max", "stddev"] {
            if let Some(v) = rec[k].as_f64() {
                rec[k] = serde_json::json!(v * f);
            }
        }
        for v in rec["samples"].as_array_mut().unwrap() {
            *v = serde_json::json!(v.as_f64().unwrap() * f);
        }
    }
    r
}
