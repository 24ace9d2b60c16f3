//! Every option of `peakbench mem` is used or refused, never ignored: its walk (see
//! tests/common/options.rs) over the kernels, C2C and the latency staircase, the inputs of the
//! bandwidth peak and of the latency floor, and how long a point runs.

mod common;

use common::options::{
    Case, Ran, output_cases, precision_cases, refused, repeat_case, run, timed, used, user_input,
    walk,
};

const COPY: [&str; 6] = [
    "--workload",
    "COPY",
    "--array-size",
    "1Mi",
    "--duration",
    "5ms",
];
const LAT: [&str; 8] = [
    "--workload",
    "LATENCY",
    "--latency-max",
    "16Ki",
    "--huge-pages",
    "on",
    "--duration",
    "2ms",
];

#[test]
fn every_mem_option_is_used_or_refused() {
    let mut cases = what_runs();
    cases.extend(c2c_and_staircase());
    cases.extend(bandwidth_peak_inputs());
    cases.extend(latency_floor_inputs());
    cases.extend(how_long());
    cases.extend(output_cases("mem", &["--workload", "NULL"], "NULL"));
    cases.extend(precision_cases(&["--workload", "NULL"]));
    walk("mem", cases, &[]);
}

/// The workload, its blocks, threads, arrays, stores, instructions, pages and mixes.
fn what_runs() -> Vec<Case> {
    vec![
        used("workload", &["--workload", "NULL"], |r| {
            r.first()["workload"] == "NULL"
        }),
        used(
            "block-size",
            &[
                "--workload",
                "RS",
                "--array-size",
                "1Mi",
                "--duration",
                "5ms",
                "--block-size",
                "64Ki",
            ],
            |r| r.params()["block_size_bytes"] == 65536,
        ),
        refused(
            "block-size",
            &[&COPY[..], &["--block-size", "64Ki"]].concat(),
            "--block-size sizes the blocks",
        ),
        used("threads", &["--workload", "NULL", "--threads", "2"], |r| {
            r.params()["threads"] == 2
        }),
        // A staircase of L1 alone names no cause with a knob: nothing to measure again, and it
        // says so (what a re-run confirms: report::findings's tests, on recorded figures).
        used("diagnose", &[&LAT[..], &["--diagnose"]].concat(), |r| {
            r.stderr
                .contains("peakbench mem --diagnose: nothing to measure again")
                || r.stderr.contains("peakbench mem --diagnose: LATENCY")
        })
        .measured(),
        used("threads", &[&LAT[..], &["--threads", "2"]].concat(), |r| {
            r.params()["thread_latency_ns"]
                .as_array()
                .is_some_and(|t| t.len() == 2)
        })
        .measured(),
        used(
            "array-size",
            &[
                "--workload",
                "COPY",
                "--duration",
                "5ms",
                "--array-size",
                "2Mi",
            ],
            |r| r.params()["array_bytes_per_thread"] == 2 << 20,
        ),
        refused(
            "array-size",
            &["--workload", "NULL", "--array-size", "2Mi"],
            "--workload has only NULL",
        ),
        // C2C bounces one line between two CPUs: no array to size.
        refused(
            "array-size",
            &["--workload", "C2C", "--array-size", "2Mi"],
            "--array-size sizes the arrays of the bandwidth workloads, LATENCY, LOADED and NUMA, and --workload has only C2C",
        ),
        used(
            "stores",
            &[&COPY[..], &["--stores", "regular"]].concat(),
            |r| r.params()["stores"] == "regular",
        ),
        refused(
            "stores",
            &["--workload", "RS", "--stores", "nt"],
            "--stores chooses the store instructions",
        ),
        refused(
            "stores",
            &[&COPY[..], &["--isa", "scalar", "--stores", "nt"]].concat(),
            "needs non-temporal store",
        ),
        used("isa", &[&COPY[..], &["--isa", "scalar"]].concat(), |r| {
            r.params()["isa"] == "scalar"
        }),
        refused(
            "isa",
            &[&LAT[..], &["--isa", "scalar"]].concat(),
            "--workload has only LATENCY: add a bandwidth workload",
        ),
        used(
            "huge-pages",
            &[
                "--workload",
                "LATENCY",
                "--latency-max",
                "16Ki",
                "--duration",
                "2ms",
                "--huge-pages",
                "off",
            ],
            |r| {
                r.results()
                    .iter()
                    .all(|x| x["params"]["pages"].is_null() || x["params"]["pages"] == "4k")
            },
        ),
        refused(
            "huge-pages",
            &[&COPY[..], &["--huge-pages", "off"]].concat(),
            "--huge-pages chooses the pages that LATENCY and LOADED chase through",
        ),
        used(
            "mix",
            &[
                "--workload",
                "MIX",
                "--duration",
                "5ms",
                "--array-size",
                "1Mi",
                "--mix",
                "6:2",
            ],
            |r| r.params()["mix"] == "3:1" && r.params()["bytes_read_per_pass"] == 3 << 20,
        ),
        refused(
            "mix",
            &[&COPY[..], &["--mix", "1:1"]].concat(),
            "--mix chooses the read/write mixes of MIX and LOADED",
        ),
        refused(
            "mix",
            &["--workload", "MIX", "--mix", "4:1"],
            "4:1 is not one of the kernels' mixes",
        ),
        refused(
            "stores",
            &["--workload", "LOADED", "--stores", "nt"],
            "every mix of MIX and LOADED here reads only",
        ),
        refused(
            "threads",
            &["--workload", "NUMA", "--threads", "2"],
            "NUMA runs every CPU of each node",
        ),
    ]
}

/// The CPUs that C2C pairs, and how far the LATENCY staircase goes.
fn c2c_and_staircase() -> Vec<Case> {
    let ws = |r: &Ran| {
        r.results()
            .iter()
            .filter(|x| x["params"]["probe"] == "chase")
            .filter_map(|x| x["params"]["working_set_bytes"].as_u64())
            .max()
    };
    vec![
        used(
            "cpus",
            &[
                "--workload",
                "C2C",
                "--duration",
                "2ms",
                "--repeat",
                "1",
                "--cpus",
                "1,0",
            ],
            |r| {
                let pairs: Vec<(u64, u64)> = r
                    .results()
                    .iter()
                    .filter_map(|x| {
                        Some((
                            x["params"]["from_cpu"].as_u64()?,
                            x["params"]["to_cpu"].as_u64()?,
                        ))
                    })
                    .collect();
                pairs == [(1, 0), (0, 1)]
            },
        )
        .measured(),
        refused(
            "cpus",
            &[&COPY[..], &["--cpus", "0,1"]].concat(),
            "--cpus names the CPUs that C2C pairs",
        ),
        used("latency-max", &LAT, move |r| ws(r) == Some(16384)).measured(),
        refused(
            "latency-max",
            &[&COPY[..], &["--latency-max", "1Mi"]].concat(),
            "applies to the LATENCY staircase",
        ),
    ]
}

/// The inputs of the bandwidth peak: the peak itself, or channels and transfer rate.
fn bandwidth_peak_inputs() -> Vec<Case> {
    vec![
        used(
            "mem-peak-gbs",
            &[&COPY[..], &["--mem-peak-gbs", "50"]].concat(),
            |r| r.first()["peak"]["value"] == 50e9,
        )
        .measured(),
        refused(
            "mem-peak-gbs",
            &[&LAT[..], &["--mem-peak-gbs", "50"]].concat(),
            "--workload has only LATENCY: add a bandwidth workload",
        ),
        used(
            "mem-channels",
            &[&COPY[..], &["--mem-channels", "2", "--mem-mts", "3200"]].concat(),
            |r| r.first()["peak"]["value"] == 2.0 * 3200e6 * 8.0,
        )
        .measured(),
        refused(
            "mem-channels",
            &[
                &COPY[..],
                &[
                    "--mem-peak-gbs",
                    "1",
                    "--mem-channels",
                    "2",
                    "--mem-mts",
                    "3200",
                ],
            ]
            .concat(),
            "cannot be used with",
        ),
        used(
            "mem-mts",
            &[&COPY[..], &["--mem-channels", "4", "--mem-mts", "3200"]].concat(),
            |r| user_input(r.first(), 3200.0),
        )
        .measured(),
        refused(
            "mem-mts",
            &[&LAT[..], &["--mem-channels", "2", "--mem-mts", "3200"]].concat(),
            "--workload has only LATENCY: add a bandwidth workload",
        ),
        // The floor of the memory plateau: the staircase must go past the last cache (to eight
        // times its size, so that memory's plateau has a few points), and one that stops inside
        // the caches is refused. Alone: a staircase beside other benchmarks is a slope; 25 ms
        // samples, as 10 ms ones once left its last steps too noisy to name a memory plateau.
    ]
}

/// The inputs of the latency floor: the rated latency, or the CAS latency and transfer rate.
fn latency_floor_inputs() -> Vec<Case> {
    let last_cache = largest_cache();
    // The staircase's memory plateau takes the same input as its floor: a unit test
    // (bench::mem::tests::the_memory_plateaus_floor_is_the_rated_latency) draws a staircase
    // past the caches for it, since measuring one past 8 × a guest's 300 MiB of L3 took 40 s.
    let mut cases = vec![
        refused(
            "mem-latency-ns",
            &[&COPY[..], &["--mem-latency-ns", "80"]].concat(),
            "none of them is in --workload",
        ),
        // A block workload's operation: its floor is the rated latency (and the transfer).
        used(
            "mem-latency-ns",
            &[
                "--workload",
                "RWS",
                "--block-size",
                "64",
                "--array-size",
                "1Mi",
                "--duration",
                "5ms",
                "--mem-latency-ns",
                "80",
            ],
            |r| {
                r.results()
                    .iter()
                    .any(|x| x["metric"] == "latency" && user_input(x, 80.0))
            },
        )
        .measured(),
        // Or the CAS latency as the reports computed it: CL 15 at 2133 MT/s = 14.06 ns.
        used(
            "mem-cl",
            &[
                "--workload",
                "RWS",
                "--block-size",
                "64",
                "--array-size",
                "1Mi",
                "--duration",
                "5ms",
                "--mem-cl",
                "15",
                "--mem-mts",
                "2133",
            ],
            |r| {
                r.results().iter().any(|x| {
                    x["metric"] == "latency"
                        && user_input(x, 15.0)
                        && user_input(x, 2133.0)
                        && x["peak"]["value"].as_f64() > Some(14.06e-9)
                })
            },
        )
        .measured(),
        refused(
            "mem-cl",
            &[&COPY[..], &["--mem-cl", "15", "--mem-mts", "2133"]].concat(),
            "none of them is in --workload",
        ),
        refused(
            "mem-mts",
            &[&COPY[..], &["--mem-mts", "2133"]].concat(),
            "give one of them",
        ),
    ];
    if last_cache.is_some_and(|c| c >= 16 << 10) {
        cases.push(refused(
            "mem-latency-ns",
            &[&LAT[..], &["--mem-latency-ns", "80"]].concat(),
            "ends inside the caches",
        ));
    }
    cases
}

/// Repetitions, warm-up, duration and fixed work; the reference tool.
fn how_long() -> Vec<Case> {
    vec![
        repeat_case(&["--workload", "NULL"]),
        used("warmup", &["--workload", "NULL", "--warmup", "2"], |r| {
            r.first()["warmup_rounds"] == 2
        })
        .measured(),
        timed(
            "duration",
            &[
                "--workload",
                "COPY",
                "--array-size",
                "1Mi",
                "--duration",
                "100ms",
            ],
            |r| {
                let short = run(
                    "mem",
                    &used(
                        "duration",
                        &[
                            "--workload",
                            "COPY",
                            "--array-size",
                            "1Mi",
                            "--duration",
                            "10ms",
                        ],
                        |_| true,
                    ),
                    &[],
                );
                let passes = |r: &Ran| r.params()["passes"].as_f64().unwrap();
                passes(r) > 3.0 * passes(&short)
            },
        ),
        refused(
            "duration",
            &["--workload", "NULL", "--duration", "5ms"],
            "--workload has only NULL",
        ),
        used(
            "total-bytes",
            &[
                "--workload",
                "COPY",
                "--array-size",
                "1Mi",
                "--total-bytes",
                "100MB",
            ],
            |r| {
                let p = r.params();
                let pass = (p["bytes_read_per_pass"].as_f64().unwrap()
                    + p["bytes_written_per_pass"].as_f64().unwrap())
                    / p["threads"].as_f64().unwrap();
                let moved = pass * p["passes"].as_f64().unwrap();
                p["total_bytes"] == 100_000_000u64 && (1e8..1e8 + pass).contains(&moved)
            },
        )
        .measured(),
        refused(
            "total-bytes",
            &["--workload", "LATENCY", "--total-bytes", "100M"],
            "--workload has only LATENCY: add a bandwidth workload",
        ),
        // Until steady, 1 s at most (measured: a planned record knows no steady state).
        used(
            "sustain",
            &[
                "--workload",
                "COPY",
                "--array-size",
                "1Mi",
                "--sustain",
                "1s",
            ],
            |r| r.sustained(1.0),
        )
        .measured(),
        refused(
            "sustain",
            &["--workload", "LATENCY", "--sustain", "1s"],
            "--workload has only LATENCY: add a bandwidth workload",
        ),
        refused(
            "sustain",
            &[
                "--workload",
                "COPY",
                "--sustain",
                "1s",
                "--total-bytes",
                "1G",
            ],
            "cannot be used with",
        ),
        used(
            "scaling",
            &[
                "--workload",
                "COPY",
                "--array-size",
                "1Mi",
                "--threads",
                "2",
                "--total-bytes",
                "100MB",
                "--scaling",
                "weak",
            ],
            |r| {
                let p = r.params();
                let per_thread = p["bytes_read_per_pass"].as_f64().unwrap()
                    + p["bytes_written_per_pass"].as_f64().unwrap();
                p["scaling"] == "weak" && per_thread / 2.0 * p["passes"].as_f64().unwrap() >= 1e8
            },
        )
        .measured(),
        refused(
            "scaling",
            &["--workload", "COPY", "--scaling", "weak"],
            "no --total-bytes is given",
        ),
        used("reference", &["--workload", "NULL", "--reference"], |r| {
            r.stderr.contains("no reference tool measures mem NULL")
        }),
    ]
}

/// The largest data or unified cache sysfs lists for CPU 0, as peakbench reads it (None where
/// sysfs lists none).
fn largest_cache() -> Option<u64> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("index"))
        .filter(|e| {
            std::fs::read_to_string(e.path().join("type")).is_ok_and(|t| t.trim() != "Instruction")
        })
        .filter_map(|e| {
            let size = std::fs::read_to_string(e.path().join("size")).ok()?;
            let size = size.trim();
            let (digits, unit) = size.split_at(size.find(|c: char| !c.is_ascii_digit())?);
            let n: u64 = digits.parse().ok()?;
            Some(match unit {
                "K" => n << 10,
                "M" => n << 20,
                "G" => n << 30,
                _ => n,
            })
        })
        .max()
}
