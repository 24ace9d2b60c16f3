//! Every option of `peakbench cpu` is used or refused, never ignored: its walk (see
//! tests/common/options.rs) over what runs, the peak's inputs and how long a point runs.

mod common;

use common::options::{
    Case, Ran, output_cases, precision_cases, refused, repeat_case, run, timed, used, user_input,
    walk,
};
use std::path::Path;

const NULL: [&str; 2] = ["--workload", "NULL"];
const INT: [&str; 4] = ["--workload", "INT64", "--duration", "5ms"];
const DGEMM: [&str; 4] = ["--workload", "DGEMM", "--n", "64"];

#[test]
fn every_cpu_option_is_used_or_refused() {
    let mut cases = what_runs();
    cases.extend(peak_inputs());
    cases.extend(how_long());
    cases.extend(system_blas());
    cases.extend(output_cases("cpu", &NULL, "NULL"));
    cases.extend(precision_cases(&NULL));
    walk("cpu", cases, &[]);
}

/// The workload, its size, its BLAS engine, threads and instructions.
fn what_runs() -> Vec<Case> {
    vec![
        used("workload", &NULL, |r| {
            r.results().iter().all(|x| x["workload"] == "NULL")
        }),
        used("n", &DGEMM, |r| r.params()["n"] == 64),
        // SSE2's quarter of the widest vectors: measured again on the widest, which confirms
        // the cause (a quarter's gap, and four times the rate).
        used(
            "diagnose",
            &[
                "--workload",
                "DP",
                "--isa",
                "sse2",
                "--duration",
                "20ms",
                "--diagnose",
            ],
            |r| {
                let results = r.results();
                let rerun = results.iter().find(|x| x["rerun"]["of"] == 0);
                let confirmed =
                    results[0]["diagnosis"]["causes"][0]["confirmation"]["confirmed"] == true;
                rerun.is_some_and(|x| x["rerun"]["cause"] == "isa" && x["params"]["isa"] != "sse2")
                    && confirmed
                    && r.stdout.contains("measured again with --isa")
                    && r.stdout.contains("fp64 FMA (--diagnose)")
            },
        )
        .measured(),
        refused(
            "n",
            &["--workload", "NULL", "--n", "64"],
            "--n sizes LINPACK, DGEMM and SGEMM",
        ),
        used(
            "memory-fraction",
            &["--workload", "DGEMM", "--memory-fraction", "0.00001"],
            |r| r.params()["memory_fraction"] == 0.00001,
        ),
        refused(
            "memory-fraction",
            &["--workload", "QP", "--memory-fraction", "0.5"],
            "--memory-fraction sizes LINPACK, DGEMM and SGEMM",
        ),
        used(
            "nb",
            &["--workload", "LINPACK", "--n", "64", "--nb", "16"],
            |r| r.params()["nb"] == 16,
        ),
        refused(
            "nb",
            &[&DGEMM[..], &["--nb", "16"]].concat(),
            "--nb sets LINPACK's block",
        ),
        used(
            "blas",
            &[&DGEMM[..], &["--blas", "built-in"]].concat(),
            |r| r.params()["engine"] == "built-in",
        ),
        refused(
            "blas",
            &["--workload", "NULL", "--blas", "built-in"],
            "--blas chooses the engine of LINPACK",
        ),
        refused(
            "blas-library",
            &[&DGEMM[..], &["--blas-library", "/nonexistent.so"]].concat(),
            "add --blas system",
        ),
        used("threads", &["--workload", "NULL", "--threads", "2"], |r| {
            r.params()["threads"] == 2
        }),
        used(
            "scaling",
            &[&INT[..], &["--scaling", "strong"]].concat(),
            |r| r.params()["scaling"] == "strong",
        ),
        refused(
            "scaling",
            &["--workload", "NULL", "--scaling", "strong"],
            "--scaling splits the work",
        ),
        used("isa", &[&INT[..], &["--isa", "scalar"]].concat(), |r| {
            r.params()["isa"] == "scalar"
        }),
        used("isa", &[&DGEMM[..], &["--isa", "scalar"]].concat(), |r| {
            r.params()["micro_kernel"]
                .as_str()
                .is_some_and(|k| k.starts_with("portable"))
        })
        .measured(),
        refused(
            "isa",
            &["--workload", "NULL", "--isa", "scalar"],
            "--isa chooses the instructions",
        ),
    ]
}

/// The inputs of the theoretical peak: clock, operations per cycle, the peak itself.
fn peak_inputs() -> Vec<Case> {
    vec![
        used(
            "clock-ghz",
            &[&INT[..], &["--clock-ghz", "2.5"]].concat(),
            |r| user_input(r.first(), 2.5),
        )
        .measured(),
        refused(
            "clock-ghz",
            &["--workload", "NULL", "--clock-ghz", "2.5"],
            "--clock-ghz enters the peak",
        ),
        // With a given clock: on a loaded machine the clock probes may disagree, and a peak
        // with an unknown clock has no inputs to show the option in.
        used(
            "ops-per-cycle",
            &[
                &INT[..],
                &["--ops-per-cycle", "INT64=7", "--clock-ghz", "3"],
            ]
            .concat(),
            |r| user_input(r.first(), 7.0),
        )
        .measured(),
        refused(
            "ops-per-cycle",
            &[&INT[..], &["--ops-per-cycle", "QP=7"]].concat(),
            "no point of this run has QP's peak",
        ),
        used("peak", &[&INT[..], &["--peak", "INT64=3"]].concat(), |r| {
            r.first()["peak"]["value"] == 3e9
        })
        .measured(),
        refused(
            "peak",
            &[&INT[..], &["--peak", "INT64=3,INT64=4"]].concat(),
            "gives INT64 twice",
        ),
    ]
}

/// Repetitions, warm-up, duration and fixed work; the reference tool.
fn how_long() -> Vec<Case> {
    vec![
        repeat_case(&NULL),
        used("warmup", &["--workload", "NULL", "--warmup", "2"], |r| {
            r.first()["warmup_rounds"] == 2
        })
        .measured(),
        timed(
            "duration",
            &["--workload", "INT64", "--duration", "100ms"],
            |r| {
                // Ten times the time of a 10 ms run: more than three times its iterations (the
                // calibration scales with the speed it sees; both runs are alone, but the
                // machine's neighbours can still slow one of them).
                let short = run(
                    "cpu",
                    &used(
                        "duration",
                        &["--workload", "INT64", "--duration", "10ms"],
                        |_| true,
                    )
                    .measured(),
                    &[],
                );
                let iterations = |r: &Ran| r.params()["iterations_per_thread"].as_f64().unwrap();
                iterations(r) > 3.0 * iterations(&short)
            },
        ),
        refused(
            "duration",
            &["--workload", "LINPACK", "--n", "64", "--duration", "5ms"],
            "--duration sets how much",
        ),
        used(
            "total-ops",
            &[
                "--workload",
                "INT64",
                "--threads",
                "2",
                "--scaling",
                "strong",
                "--total-ops",
                "1G",
            ],
            |r| {
                let p = r.params();
                let done = p["iterations_per_thread"].as_f64().unwrap()
                    * p["ops_per_iteration"].as_f64().unwrap()
                    * 2.0;
                p["total_ops"] == 1_000_000_000u64
                    && (1e9..1e9 + 2.0 * p["ops_per_iteration"].as_f64().unwrap()).contains(&done)
            },
        )
        .measured(),
        refused(
            "total-ops",
            &["--workload", "NULL", "--total-ops", "1G"],
            "--total-ops sets how much",
        ),
        refused(
            "total-ops",
            &["--workload", "DP", "--total-ops", "1G", "--duration", "1s"],
            "cannot be used with",
        ),
        // Until steady, 1 s at most (measured: a planned record knows no steady state).
        used(
            "sustain",
            &["--workload", "INT64", "--threads", "1", "--sustain", "1s"],
            |r| r.sustained(1.0),
        )
        .measured(),
        refused(
            "sustain",
            &["--workload", "LINPACK", "--n", "64", "--sustain", "1s"],
            "--sustain sets how much",
        ),
        refused(
            "sustain",
            &["--workload", "DP", "--sustain", "2s", "--duration", "1s"],
            "cannot be used with",
        ),
        refused(
            "sustain",
            &["--workload", "DP", "--sustain", "11h"],
            "at most 10h",
        ),
        used("reference", &["--workload", "NULL", "--reference"], |r| {
            r.stderr.contains("no reference tool measures cpu NULL")
        }),
    ]
}

/// `--blas-library` used: with the system's OpenBLAS where it is installed.
fn system_blas() -> Vec<Case> {
    let openblas = Path::new("/usr/lib/x86_64-linux-gnu/libopenblas.so.0");
    if openblas.exists() {
        vec![
            used(
                "blas-library",
                &[
                    &DGEMM[..],
                    &[
                        "--blas",
                        "system",
                        "--blas-library",
                        openblas.to_str().unwrap(),
                    ],
                ]
                .concat(),
                |r| {
                    r.params()["engine"] == "system"
                        && r.params()["library"]
                            .as_str()
                            .is_some_and(|l| l.contains("openblas"))
                },
            )
            .measured(),
        ]
    } else {
        println!(
            "SKIPPED: --blas-library used: no OpenBLAS at {}",
            openblas.display()
        );
        Vec::new()
    }
}
