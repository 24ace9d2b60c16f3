//! `peakbench cpu --workload LINPACK,DGEMM,SGEMM`: a tiny solve and multiplies with HPL's
//! residual in the record, and the refusals (too much memory, sizes without a linear-algebra workload).

mod common;

use assert_cmd::Command;
use serde_json::Value;

fn peakbench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_peakbench"));
    c.env("PEAKBENCH_DB", common::test_db())
        .timeout(std::time::Duration::from_secs(120));
    c
}

/// Runs `peakbench cpu ARGS --no-history --quiet --json FILE` and returns the document.
fn cpu_json(args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let out = peakbench()
        .arg("cpu")
        .args(args)
        .args(["--no-history", "--quiet", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

#[test]
fn a_tiny_linpack_dgemm_and_sgemm_report_rate_peak_and_residual() {
    let doc = cpu_json(&[
        "--workload",
        "LINPACK,DGEMM,SGEMM",
        "--n",
        "200,257",
        "--threads",
        "1,2",
        "--repeat",
        "2",
        "--warmup",
        "0",
    ]);
    assert!(
        common::schema_errors(&doc).is_empty(),
        "{:?}",
        common::schema_errors(&doc)
    );
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 12, "3 workloads × 2 sizes × 2 thread counts");
    for r in results {
        let p = &r["params"];
        assert_eq!(r["metric"], "throughput");
        assert!(r["mean"].as_f64().is_some_and(|v| v > 0.0), "{r}");
        assert!(p["n"] == 200 || p["n"] == 257, "{p}");
        assert_eq!(p["engine"], "built-in");
        if r["workload"] == "LINPACK" {
            assert_eq!(p["residual_passed"], true, "{p}");
            assert!(p["residual"].as_f64().is_some_and(|x| x < 16.0), "{p}");
            assert_eq!(p["nb"], 256);
        } else {
            assert!(p.get("residual").is_none(), "{p}");
        }
        // The FMA peak of the element type, or why it is unknown.
        assert!(
            r["peak"]["value"].is_number() || r["peak_unknown_reason"].is_string(),
            "{r}"
        );
    }
    // SGEMM's peak is fp32's: twice DGEMM's at the same threads.
    let peak = |w: &str, t: u64| {
        results
            .iter()
            .find(|r| r["workload"] == w && r["params"]["threads"] == t)
            .and_then(|r| r["peak"]["value"].as_f64())
    };
    for t in [1, 2] {
        if let (Some(d), Some(s)) = (peak("DGEMM", t), peak("SGEMM", t)) {
            assert!((s / d - 2.0).abs() < 1e-9, "{t} threads: {s} vs {d}");
        }
    }
}

#[test]
fn too_much_memory_and_sizes_without_a_workload_are_refused() {
    let out = peakbench()
        .args([
            "cpu",
            "--workload",
            "LINPACK",
            "--n",
            "1000000",
            "--threads",
            "1",
        ])
        .args(["--no-history", "--quiet"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("bytes of memory") && err.contains("--n"),
        "{err}"
    );
    common::one_line_exit_2(
        &["cpu", "--workload", "DP", "--n", "100"],
        "--workload LINPACK",
    );
    common::one_line_exit_2(&["cpu", "--workload", "LINPACK", "--n", "0"], "--n");
    common::one_line_exit_2(
        &["cpu", "--workload", "LINPACK", "--memory-fraction", "2"],
        "share of memory",
    );
    common::one_line_exit_2(&["cpu", "--workload", "HPL"], "LINPACK, DGEMM or SGEMM");
}

/// With hpcc (and mpirun) installed, a LINPACK point's reference column is HPL's rate at the
/// same N on as many processes as threads, and a DGEMM point's hpcc's StarDGEMM.
#[test]
fn the_reference_is_hpl_from_hpcc() {
    let found = |p: &str| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .any(|d| d.join(p).is_file())
    };
    if !found("hpcc") || !found("mpirun") {
        eprintln!(
            "SKIPPED the_reference_is_hpl_from_hpcc: hpcc or mpirun not found (apt-get install hpcc openmpi-bin libopenblas0-serial)"
        );
        return;
    }
    let doc = cpu_json(&[
        "--workload",
        "LINPACK,DGEMM",
        "--n",
        "400",
        "--threads",
        "1",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--reference",
    ]);
    for r in doc["results"].as_array().unwrap() {
        let reference = &r["reference"];
        assert_eq!(reference["tool"], "HPL (hpcc)", "{r}");
        assert!(reference["mean"].as_f64().is_some_and(|v| v > 1e8), "{r}");
        assert!(
            reference["version"]
                .as_str()
                .is_some_and(|v| v.contains("BLAS")),
            "{r}"
        );
    }
}
