//! A point's noise fingerprint: measured beside a busy process, a CPU point says so (the
//! `co-runner` in its `noise` and in the notes), and on its own CPU is diagnosed with it; a
//! mock session's points carry none.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A busy loop in a process of its own, killed and reaped when dropped.
struct Hog(Child);

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One DP point's record, and the run's standard output (its table and notes) and error.
fn point(extra_env: Option<(&str, &str)>, extra: &[&str]) -> (serde_json::Value, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_peakbench"));
    cmd.env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1)
        .env("PEAKBENCH_DB", common::test_db())
        .env("COLUMNS", "1000")
        .args([
            "cpu",
            "--workload",
            "DP",
            "--threads",
            "1",
            "--duration",
            "300ms",
            "--repeat",
            "2",
            "--no-history",
            "--json",
        ])
        .arg(&json)
        .args(extra);
    if let Some((k, v)) = extra_env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(
        common::schema_errors(&doc).is_empty(),
        "{:?}",
        common::schema_errors(&doc)
    );
    (
        doc["results"][0].clone(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Beside a process that keeps a CPU busy, the point's others' CPUs reach a quarter at least
/// (the loop takes one whole CPU where it has one to itself, half of one where it shares the
/// point's), it is named a co-runner in the notes; the window covers the point's timed rounds.
/// With `--strict` the point is measured twice more, each time said, and the last try kept.
#[test]
fn a_point_beside_a_busy_process_names_the_co_runner() {
    let _alone = common::share(true);
    let hog = Hog(Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .stdin(Stdio::null())
        .spawn()
        .unwrap());
    std::thread::sleep(Duration::from_millis(200));
    let (rec, stdout, stderr) = point(None, &["--strict"]);
    drop(hog);
    for n in 1..=2 {
        let again = format!(
            "measured under interference (co-runner); --strict measures it again ({n} of 2)"
        );
        assert!(stderr.contains(&again), "{stderr}");
    }
    let noise = &rec["noise"];
    assert_eq!(rec["unit"], "op/s", "{rec}");
    // The timed rounds' seconds: each sample is the round's operations over its time, in op/s
    // (the rounds' length follows the iterations calibrated once, which a co-runner may
    // shorten).
    let kernel = &rec["params"];
    let ops = kernel["ops_per_iteration"].as_f64().unwrap()
        * kernel["iterations_per_thread"].as_f64().unwrap();
    let rounds_s: f64 = rec["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rate| ops / rate.as_f64().unwrap())
        .sum();
    assert!(rounds_s > 0.0, "{rec}");
    assert!(
        noise["window_s"].as_f64().unwrap() >= rounds_s,
        "{noise}: {rounds_s} s of rounds"
    );
    let others = noise["others_cpus"].as_f64().unwrap();
    assert!(others >= 0.25, "{noise}");
    assert!(
        noise["interference"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "co-runner"),
        "{noise}"
    );
    // Said in the notes under the table, never among the record's warnings.
    assert!(
        stdout.contains("! co-runner: other processes kept"),
        "{stdout}"
    );
    assert!(rec.get("warnings").is_none(), "{rec}");
}

/// A busy process on the point's own CPU leaves its thread about half of it: the point is
/// diagnosed with the co-runner, whose ceiling is the CPU time its thread got (about a half)
/// and whose share of the gap is the larger part of it.
#[test]
fn a_point_sharing_its_cpu_with_a_busy_process_is_diagnosed_with_it() {
    if Command::new("taskset").arg("--version").output().is_err() {
        eprintln!("SKIPPED a_point_sharing_its_cpu_with_a_busy_process: no taskset (util-linux)");
        return;
    }
    let _alone = common::share(true);
    // The one thread of the point runs on the first CPU this process may use.
    let cpu = peakbench::runner::affinity::allowed_cpus()[0].to_string();
    let hog = Hog(Command::new("taskset")
        .args(["-c", &cpu, "sh", "-c", "while :; do :; done"])
        .stdin(Stdio::null())
        .spawn()
        .unwrap());
    std::thread::sleep(Duration::from_millis(200));
    let (rec, stdout, _) = point(None, &[]);
    drop(hog);
    let d = &rec["diagnosis"];
    let co = d["causes"]
        .as_array()
        .unwrap_or_else(|| panic!("no diagnosis: {rec}"))
        .iter()
        .find(|c| c["cause"] == "co-runner")
        .unwrap_or_else(|| panic!("{d}"));
    let ceiling = co["ceiling"].as_f64().unwrap();
    assert!((0.3..0.75).contains(&ceiling), "{d}");
    assert!(co["share"].as_f64().unwrap() > 0.5, "{d}");
    assert!(stdout.contains("other processes kept"), "{stdout}");
}

/// A mock session measures nothing: its points carry no noise.
#[test]
fn a_mock_sessions_points_carry_no_noise() {
    let (rec, _, _) = point(Some(common::MOCK_SESSION), &[]);
    assert!(rec.get("noise").is_none(), "{rec}");
}
