//! `peakbench run --profile`: jobs of every subsystem in one run, one report, one stored run.

mod common;

use assert_cmd::Command;
use serde_json::Value;

fn peakbench(db: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_peakbench"));
    c.env("PEAKBENCH_DB", db);
    c
}

/// A profile whose jobs are tiny: the NULL workloads and engines, and a short loopback test.
const TINY: &str = r#"
description = "tiny: one point per subsystem"
[defaults]
repeat = 2
[[job]]
subsystem = "cpu"
workload = ["NULL"]
threads = "all"
warmup = 0
[[job]]
subsystem = "mem"
workload = ["NULL"]
threads = 1
warmup = 0
[[job]]
subsystem = "disk"
workload = ["RR"]
engine = "null"
block_size = "4K"
size = "4M"
runtime = "50ms"
ramp = "0s"
[[job]]
subsystem = "net"
workload = ["LATENCY"]
protocol = ["tcp"]
duration = "100ms"
omit = "0s"
"#;

#[test]
fn a_profile_runs_every_subsystem_into_one_report_and_one_stored_run() {
    let dir = tempfile::tempdir().unwrap();
    let (profile, json, db) = (
        dir.path().join("tiny.toml"),
        dir.path().join("r.json"),
        dir.path().join("h.db"),
    );
    std::fs::write(&profile, TINY).unwrap();
    let out = peakbench(&db)
        .current_dir(dir.path())
        .args(["run", "--profile"])
        .arg(&profile)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("4 jobs, estimated"), "{err}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    let subsystems: std::collections::BTreeSet<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["subsystem"].as_str().unwrap())
        .collect();
    assert_eq!(
        subsystems.into_iter().collect::<Vec<_>>(),
        ["cpu", "disk", "mem", "net"]
    );
    // The terminal table has a section per subsystem.
    let table = String::from_utf8_lossy(&out.stdout);
    for s in ["cpu", "mem", "disk", "net"] {
        assert!(
            table.contains(&format!("{s} (")),
            "{s} section missing:\n{table}"
        );
    }
    // One run in the history, complete, with every point.
    let store = peakbench::history::Store::open(&db).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, "complete");
    assert_eq!(
        runs[0].points as usize,
        doc["results"].as_array().unwrap().len()
    );
    // No temporary file left in the working directory (the disk job's).
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("peakbench"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn quick_profile_is_estimated_under_a_minute_and_lists_its_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let out = peakbench(&dir.path().join("h.db"))
        .args(["run", "--profile", "quick", "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(err.contains("profile quick"), "{err}");
    assert!(!err.contains("min"), "estimated under a minute: {err}");
    for s in [
        "peakbench cpu",
        "peakbench mem",
        "peakbench disk",
        "peakbench net",
    ] {
        assert!(listing.contains(s), "{s}:\n{listing}");
    }
    let out = peakbench(&dir.path().join("h.db"))
        .args(["run", "--profile", "assignment", "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("min"));
}

#[test]
fn bad_profiles_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = [
        ("no-such-profile", None),
        (
            "typo.toml",
            Some("[[job]]\nsubsystem = \"cpu\"\nworklaod = [\"DP\"]\n"),
        ),
        (
            "value.toml",
            Some("[[job]]\nsubsystem = \"disk\"\niodepth = [0]\n"),
        ),
        ("gpu.toml", Some("[[job]]\nsubsystem = \"gpu\"\n")),
        ("broken.toml", Some("[[job]\n")),
    ];
    for (name, text) in bad {
        let path = dir.path().join(name);
        if let Some(t) = text {
            std::fs::write(&path, t).unwrap();
        }
        let out = peakbench(&dir.path().join("h.db"))
            .args(["run", "--profile"])
            .arg(if text.is_some() {
                path.as_os_str()
            } else {
                name.as_ref()
            })
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
    }
}

#[test]
fn a_failing_job_does_not_stop_the_suite() {
    let dir = tempfile::tempdir().unwrap();
    let (profile, json, db) = (
        dir.path().join("p.toml"),
        dir.path().join("r.json"),
        dir.path().join("h.db"),
    );
    // Job 2 names a directory that does not exist: it fails when it runs, not when parsed.
    std::fs::write(
        &profile,
        "[defaults]\nrepeat = 1\n\
         [[job]]\nsubsystem = 'cpu'\nworkload = ['NULL']\nthreads = 1\nwarmup = 0\n\
         [[job]]\nsubsystem = 'disk'\nengine = 'null'\nworkload = ['RR']\nblock_size = '4K'\n\
         size = '4M'\nruntime = '50ms'\nramp = '0s'\ndir = '/nonexistent-peakbench-dir'\n\
         [[job]]\nsubsystem = 'mem'\nworkload = ['NULL']\nthreads = 1\nwarmup = 0\n",
    )
    .unwrap();
    let out = peakbench(&db)
        .args(["run", "--profile"])
        .arg(&profile)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("job 2/3 (disk) failed"), "{err}");
    assert!(err.contains("1 of 3 jobs failed: job 2 (disk)"), "{err}");
    assert!(!std::path::Path::new("/nonexistent-peakbench-dir").exists());
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let subsystems: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["subsystem"].as_str().unwrap())
        .collect();
    assert!(
        subsystems.contains(&"cpu") && subsystems.contains(&"mem"),
        "{subsystems:?}"
    );
    // The measured points are shown, and the run is stored as failed.
    assert!(String::from_utf8_lossy(&out.stdout).contains("mem ("));
    let runs = peakbench::history::Store::open(&db)
        .unwrap()
        .runs()
        .unwrap();
    assert_eq!(runs[0].status, "failed");
}
