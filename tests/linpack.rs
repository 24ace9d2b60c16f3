//! `peakbench cpu --workload LINPACK,DGEMM,SGEMM`: a tiny solve and multiplies with HPL's
//! residual in the record, and the refusals (too much memory, sizes without a linear-algebra workload).

mod common;

use assert_cmd::Command;
use serde_json::Value;

fn peakbench() -> Command {
    let mut c = common::peakbench();
    c.timeout(std::time::Duration::from_secs(120));
    c
}

/// Runs `peakbench cpu ARGS --no-history --quiet --json FILE` and returns the document.
fn cpu_json(args: &[&str]) -> Value {
    cpu_json_env(args, &[])
}

/// [`cpu_json`] with `env` in the command's environment.
fn cpu_json_env(args: &[&str], env: &[(&str, &str)]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let out = peakbench()
        .envs(env.iter().copied())
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
            // The default block of a small matrix: the largest power of two up to N/6, at
            // least 32 (so these run several panels, with look-ahead).
            assert_eq!(p["nb"], 32);
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
        "none of them is in --workload",
    );
    common::one_line_exit_2(&["cpu", "--workload", "LINPACK", "--n", "0"], "--n");
    common::one_line_exit_2(
        &["cpu", "--workload", "LINPACK", "--memory-fraction", "2"],
        "share of memory",
    );
    common::one_line_exit_2(&["cpu", "--workload", "HPL"], "LINPACK, DGEMM or SGEMM");
}

/// With hpcc (and mpirun) installed, a LINPACK point's reference column is HPL's rate at the
/// same N on as many processes as threads, and a DGEMM point's hpcc's StarDGEMM where BLIS
/// cannot be had (here: `PEAKBENCH_BLIS` names no file; BLIS's own: tests/reference.rs).
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
    let doc = cpu_json_env(
        &[
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
        ],
        &[("PEAKBENCH_BLIS", "/nonexistent/libblis.so.4")],
    );
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

/// `--blas system`: the same points on an installed BLAS/LAPACK (OpenBLAS here), recorded as
/// such; skipped, saying so, where none is installed.
#[test]
fn the_system_engine_runs_an_installed_blas() {
    let probe = peakbench()
        .args([
            "cpu",
            "--workload",
            "DGEMM",
            "--blas",
            "system",
            "--n",
            "64",
        ])
        .args(["--threads", "1", "--repeat", "1", "--warmup", "0"])
        .args(["--no-history", "--quiet"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&probe.stderr);
    if err.contains("no system BLAS/LAPACK could be loaded") {
        eprintln!("SKIPPED the_system_engine_runs_an_installed_blas: {err}");
        return;
    }
    assert!(probe.status.success(), "{err}");
    let doc = cpu_json(&[
        "--workload",
        "LINPACK,DGEMM,SGEMM",
        "--blas",
        "system",
        "--n",
        "200",
        "--threads",
        "1,2",
        "--repeat",
        "2",
        "--warmup",
        "1",
    ]);
    assert!(
        common::schema_errors(&doc).is_empty(),
        "{:?}",
        common::schema_errors(&doc)
    );
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 6, "3 workloads × 2 thread counts");
    for r in results {
        let p = &r["params"];
        assert_eq!(p["engine"], "system", "{p}");
        assert!(
            p["library"].as_str().is_some_and(|l| l.starts_with('/')),
            "the library's file is recorded: {p}"
        );
        assert!(
            p.get("nb").is_none(),
            "a system LAPACK has its own block: {p}"
        );
        assert!(r["mean"].as_f64().is_some_and(|v| v > 0.0), "{r}");
        // The peak, or why not (the clock probe refuses to guess on a busy machine).
        assert!(
            r["peak"]["value"].as_f64().is_some_and(|v| v > 0.0)
                || r["peak_unknown_reason"].is_string(),
            "{r}"
        );
        if r["workload"] == "LINPACK" {
            assert_eq!(p["residual_passed"], true, "{p}");
            assert!(p["residual"].as_f64().is_some_and(|v| v < 16.0), "{p}");
        }
        // The library says how many threads it used; where that is not the point's count (a
        // single-threaded build), the record says so.
        let used = p["library_threads"].as_u64();
        if used != p["threads"].as_u64() {
            let warnings = r["warnings"].to_string();
            assert!(warnings.contains("the system BLAS"), "{r}");
        }
    }
}

/// OpenBLAS's single-threaded build, named with --blas-library: a 2-thread point ran on one,
/// and the record says so.
#[test]
fn a_single_threaded_library_is_named_in_the_record() {
    let Some(serial) = std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .flatten()
        .map(|d| d.path().join("openblas-serial/libopenblas.so.0"))
        .find(|p| p.is_file())
    else {
        eprintln!(
            "SKIPPED a_single_threaded_library_is_named_in_the_record: no openblas-serial (apt-get install libopenblas0-serial)"
        );
        return;
    };
    let doc = cpu_json(&[
        "--workload",
        "DGEMM",
        "--blas",
        "system",
        "--blas-library",
        serial.to_str().unwrap(),
        "--n",
        "128",
        "--threads",
        "2",
        "--repeat",
        "1",
        "--warmup",
        "0",
    ]);
    let r = &doc["results"][0];
    assert_eq!(r["params"]["library_threads"], 1, "{r}");
    assert!(
        r["params"]["library"]
            .as_str()
            .is_some_and(|l| l.contains("openblas-serial") && l.contains("sequential")),
        "{r}"
    );
    assert!(
        r["warnings"].to_string().contains("single-threaded build"),
        "{r}"
    );
}

#[test]
fn engine_options_that_do_not_apply_are_refused() {
    common::one_line_exit_2(
        &["cpu", "--workload", "DP", "--blas", "system"],
        "--blas chooses the engine of LINPACK, DGEMM and SGEMM",
    );
    common::one_line_exit_2(
        &[
            "cpu",
            "--workload",
            "DGEMM",
            "--blas-library",
            "libopenblas.so.0",
        ],
        "add --blas system",
    );
    common::one_line_exit_2(
        &["cpu", "--workload", "DGEMM", "--nb", "128"],
        "add LINPACK to --workload",
    );
    common::one_line_exit_2(
        &[
            "cpu",
            "--workload",
            "LINPACK",
            "--blas",
            "system",
            "--nb",
            "128",
        ],
        "drop --nb",
    );
    common::one_line_exit_2(
        &["cpu", "--workload", "LINPACK", "--blas", "cuda"],
        "--blas",
    );
    // A library that does not exist, and one that is no LAPACK: refused before any point.
    common::one_line_exit_2(
        &[
            "cpu",
            "--workload",
            "DGEMM",
            "--blas",
            "system",
            "--blas-library",
            "/nonexistent/libopenblas.so.0",
        ],
        "No such file",
    );
    common::one_line_exit_2(
        &[
            "cpu",
            "--workload",
            "LINPACK",
            "--blas",
            "system",
            "--blas-library",
            "libm.so.6",
            "--n",
            "64",
        ],
        "no dgetrf_",
    );
}
