//! Every option of `peakbench cpu`, `mem`, `disk` and `net` is used or refused, never ignored.
//! For each subsystem, the test walks every long option that clap knows for it: each must
//! have a case here where it is used (and the output shows it: a record's field, a file, the
//! table) or refused (one line, exit code 2). An option added without a case fails the test.
//! Every run is tiny (NULL workloads, the null disk engine, 100 ms of loopback) and its clock
//! the probes' test double (`common::MOCK_CLOCK`): the cases test the options, not the probes.

mod common;

use clap::CommandFactory;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What a case's run gave.
struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
    doc: Option<Value>,
    dir: PathBuf,
}

impl Ran {
    fn results(&self) -> &Vec<Value> {
        self.doc
            .as_ref()
            .and_then(|d| d["results"].as_array())
            .unwrap_or_else(|| panic!("no results: {}", self.stderr))
    }
    fn first(&self) -> &Value {
        &self.results()[0]
    }
    fn params(&self) -> &Value {
        &self.first()["params"]
    }
    /// The first record of `metric`.
    fn metric(&self, metric: &str) -> &Value {
        self.results()
            .iter()
            .find(|r| r["metric"] == metric)
            .unwrap_or_else(|| panic!("no {metric} record"))
    }
}

type Check = Box<dyn Fn(&Ran) -> bool>;

enum Expect {
    /// Runs, and `check` sees the option's effect.
    Used(Check),
    /// Exit code 2, one line holding this text.
    Refused(&'static str),
}

struct Case {
    option: &'static str,
    args: Vec<String>,
    expect: Expect,
    /// Runs in the case's directory before the command (to make a file it needs).
    setup: Option<fn(&Path)>,
    /// Compares timings, so runs while no other case of any walk runs (the four walks run in
    /// parallel on what may be two cores: a calibration that shares its core with three other
    /// benchmarks and a run that does not would tell nothing of the option).
    alone: bool,
}

fn used(
    option: &'static str,
    args: &[impl AsRef<str>],
    check: impl Fn(&Ran) -> bool + 'static,
) -> Case {
    Case {
        option,
        args: args.iter().map(|a| a.as_ref().to_string()).collect(),
        expect: Expect::Used(Box::new(check)),
        setup: None,
        alone: false,
    }
}

/// A case whose check compares timings: it runs alone.
fn timed(
    option: &'static str,
    args: &[impl AsRef<str>],
    check: impl Fn(&Ran) -> bool + 'static,
) -> Case {
    Case {
        alone: true,
        ..used(option, args, check)
    }
}

fn refused(option: &'static str, args: &[impl AsRef<str>], text: &'static str) -> Case {
    Case {
        option,
        args: args.iter().map(|a| a.as_ref().to_string()).collect(),
        expect: Expect::Refused(text),
        setup: None,
        alone: false,
    }
}

/// Options a case leaves out are given these values, so that every run stays tiny.
fn base(sub: &str) -> Vec<(&'static str, &'static str)> {
    match sub {
        "cpu" | "mem" => vec![("--threads", "1"), ("--repeat", "1"), ("--warmup", "0")],
        "disk" => vec![
            ("--engine", "null"),
            ("--size", "4M"),
            ("--runtime", "20ms"),
            ("--ramp", "0"),
            ("--repeat", "1"),
            ("--block-size", "4K"),
            ("--dir", "{dir}"),
        ],
        _ => vec![
            ("--duration", "100ms"),
            ("--omit", "0"),
            ("--repeat", "1"),
            ("--protocol", "tcp"),
        ],
    }
}

/// Runs `peakbench SUB ARGS` (with the base options the case does not set and `--json` into
/// the case's directory unless it writes JSON itself); `{dir}` in an argument is that
/// directory.
fn run(sub: &str, case: &Case, servers: &[(&str, String)]) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_string();
    if let Some(setup) = case.setup {
        setup(dir.path());
    }
    let fill = |a: &str| {
        let mut a = a.replace("{dir}", &d);
        for (name, addr) in servers {
            a = a.replace(name, addr);
        }
        a
    };
    let mut args: Vec<String> = case.args.iter().map(|a| fill(a)).collect();
    for (option, value) in base(sub) {
        let set = args
            .iter()
            .any(|a| a == option || a.starts_with(&format!("{option}=")));
        let conflicts = (option == "--dir" && args.iter().any(|a| a == "--file"))
            || (option == "--runtime" && args.iter().any(|a| a == "--total-bytes"))
            || (option == "--protocol" && args.iter().any(|a| a == "--server"));
        if !set && !conflicts {
            args.push(option.into());
            args.push(fill(value));
        }
    }
    let json = dir.path().join("out.json");
    if !args.iter().any(|a| a == "--json") {
        args.push("--json".into());
        args.push(json.display().to_string());
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .arg(sub)
        .args(&args)
        .env("PEAKBENCH_DB", dir.path().join("env.db"))
        .env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1)
        .env("COLUMNS", "1000")
        .output()
        .unwrap();
    let doc = std::fs::read(&json)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    // The directory lives as long as the check needs its files.
    let path = dir.keep();
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
        doc,
        dir: path,
    }
}

/// The long options of subcommand `sub` (the net client's for `net`), help and version aside.
fn options_of(sub: &str) -> Vec<String> {
    let cli = peakbench::cli::Cli::command();
    let cmd = cli.find_subcommand(sub).unwrap();
    cmd.get_arguments()
        .filter_map(|a| a.get_long())
        .filter(|l| !matches!(*l, "help" | "version"))
        .map(str::to_string)
        .collect()
}

/// Runs every case of `sub`, and checks that every option has one.
fn walk(sub: &str, cases: Vec<Case>, servers: &[(&str, String)]) {
    let mut failures = Vec::new();
    for case in &cases {
        let _share = common::share(case.alone);
        let ran = run(sub, case, servers);
        let what = format!("{sub} {}", case.args.join(" "));
        match &case.expect {
            Expect::Used(check) => {
                if ran.code != 0 {
                    failures.push(format!("{what}: exit {}: {}", ran.code, ran.stderr));
                } else if !check(&ran) {
                    failures.push(format!(
                        "{what}: the output does not show --{} used",
                        case.option
                    ));
                }
            }
            Expect::Refused(text) => {
                // The error is the last line (a banner may come before a refusal that needs
                // the server's answer).
                let line = ran.stderr.trim_end().lines().last().unwrap_or("");
                if ran.code != 2 || !line.contains(text) || !line.starts_with("peakbench: ") {
                    failures.push(format!(
                        "{what}: expected one line with '{text}' and exit 2, got exit {}: {line}",
                        ran.code
                    ));
                }
            }
        }
        let _ = std::fs::remove_dir_all(&ran.dir);
    }
    let covered: std::collections::BTreeSet<&str> = cases.iter().map(|c| c.option).collect();
    for option in options_of(sub) {
        if !covered.contains(option.as_str()) {
            failures.push(format!(
                "{sub} --{option} has no case: show here where it is used or refused"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The options every benchmark command shares: outputs, history and display.
fn output_cases(sub: &str, args: &[&str], workload: &str) -> Vec<Case> {
    let with = |extra: &[&'static str]| -> Vec<String> {
        args.iter().chain(extra).map(|a| a.to_string()).collect()
    };
    let file_has = |name: &'static str, text: String| {
        move |r: &Ran| std::fs::read_to_string(r.dir.join(name)).is_ok_and(|t| t.contains(&text))
    };
    let w = workload.to_string();
    let (sub_name, w_name) = (sub.to_string(), workload.to_string());
    let mut cases = vec![
        used(
            "json",
            &with(&["--json", "{dir}/r.json"]),
            file_has("r.json", format!("\"workload\": \"{w}\"")),
        ),
        used(
            "csv",
            &with(&["--csv", "{dir}/r.csv"]),
            file_has("r.csv", w.clone()),
        ),
        used(
            "csv-samples",
            &with(&["--csv", "{dir}/r.csv", "--csv-samples"]),
            |r: &Ran| {
                std::fs::read_to_string(r.dir.join("r.csv")).is_ok_and(|t| {
                    t.lines()
                        .next()
                        .is_some_and(|h| h.ends_with(",repetition,value"))
                })
            },
        ),
        refused("csv-samples", &with(&["--csv-samples"]), "--csv <FILE>"),
        used(
            "markdown",
            &with(&["--markdown", "{dir}/r.md"]),
            file_has("r.md", format!("| {w}")),
        ),
        used(
            "html",
            &with(&["--html", "{dir}/r.html"]),
            file_has("r.html", "<html".into()),
        ),
        // The table on standard output, and nothing there with --quiet.
        used("quiet", &with(&["--quiet"]), |r| r.stdout.is_empty()),
        // Every point on standard error, with its repetitions.
        used("verbose", &with(&["--verbose"]), move |r| {
            r.stderr.contains(&format!("{sub_name} {w_name}")) && r.stderr.contains("repetitions: ")
        }),
        used("no-history", &with(&["--no-history"]), |r| {
            !r.dir.join("env.db").exists()
        }),
        used("db", &with(&["--db", "{dir}/h.db"]), |r| {
            r.dir.join("h.db").exists() && !r.dir.join("env.db").exists()
        }),
        refused(
            "db",
            &with(&["--no-history", "--db", "{dir}/h.db"]),
            "--no-history stores nothing",
        ),
    ];
    if sub == "disk" {
        cases.push(used("mib", &with(&[]), |r| {
            r.stdout.contains("MB/s") && !r.stdout.contains("MiB/s")
        }));
        cases.push(used("mib", &with(&["--mib"]), |r| {
            r.stdout.contains("MiB/s")
        }));
    } else {
        cases.push(refused(
            "mib",
            &with(&["--mib"]),
            "--mib shows disk throughput",
        ));
    }
    if sub != "net" {
        cases.push(refused(
            "gbit",
            &with(&["--gbit"]),
            "--gbit shows network goodput",
        ));
    }
    cases
}

fn repeat_case(args: &[&str]) -> Case {
    used("repeat", &[args, &["--repeat", "3"]].concat(), |r| {
        r.first()["samples"].as_array().unwrap().len() == 3
    })
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

/// Whether the user-given peak input `value` is among the record's peak inputs.
fn user_input(rec: &Value, value: f64) -> bool {
    rec["peak"]["inputs"].as_object().is_some_and(|m| {
        m.values()
            .any(|i| i["source"] == "user" && i["value"] == value)
    })
}

#[test]
fn every_cpu_option_is_used_or_refused() {
    let null = ["--workload", "NULL"];
    let int = ["--workload", "INT64", "--duration", "5ms"];
    let dgemm = ["--workload", "DGEMM", "--n", "64"];
    let mut cases = vec![
        used("workload", &null, |r| {
            r.results().iter().all(|x| x["workload"] == "NULL")
        }),
        used("n", &dgemm, |r| r.params()["n"] == 64),
        refused(
            "n",
            &["--workload", "NULL", "--n", "64"],
            "--n and --memory-fraction size",
        ),
        used(
            "memory-fraction",
            &["--workload", "DGEMM", "--memory-fraction", "0.00001"],
            |r| r.params()["memory_fraction"] == 0.00001,
        ),
        refused(
            "memory-fraction",
            &["--workload", "QP", "--memory-fraction", "0.5"],
            "--n and --memory-fraction size",
        ),
        used(
            "nb",
            &["--workload", "LINPACK", "--n", "64", "--nb", "16"],
            |r| r.params()["nb"] == 16,
        ),
        refused(
            "nb",
            &[&dgemm[..], &["--nb", "16"]].concat(),
            "--nb sets LINPACK's block",
        ),
        used(
            "blas",
            &[&dgemm[..], &["--blas", "built-in"]].concat(),
            |r| r.params()["engine"] == "built-in",
        ),
        refused(
            "blas",
            &["--workload", "NULL", "--blas", "built-in"],
            "--blas and --blas-library choose the engine",
        ),
        refused(
            "blas-library",
            &[&dgemm[..], &["--blas-library", "/nonexistent.so"]].concat(),
            "add --blas system",
        ),
        used("threads", &["--workload", "NULL", "--threads", "2"], |r| {
            r.params()["threads"] == 2
        }),
        used(
            "scaling",
            &[&int[..], &["--scaling", "strong"]].concat(),
            |r| r.params()["scaling"] == "strong",
        ),
        refused(
            "scaling",
            &["--workload", "NULL", "--scaling", "strong"],
            "--scaling splits the work",
        ),
        used("isa", &[&int[..], &["--isa", "scalar"]].concat(), |r| {
            r.params()["isa"] == "scalar"
        }),
        used("isa", &[&dgemm[..], &["--isa", "scalar"]].concat(), |r| {
            r.params()["micro_kernel"]
                .as_str()
                .is_some_and(|k| k.starts_with("portable"))
        }),
        refused(
            "isa",
            &["--workload", "NULL", "--isa", "scalar"],
            "--isa chooses the instructions",
        ),
        used(
            "clock-ghz",
            &[&int[..], &["--clock-ghz", "2.5"]].concat(),
            |r| user_input(r.first(), 2.5),
        ),
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
                &int[..],
                &["--ops-per-cycle", "INT64=7", "--clock-ghz", "3"],
            ]
            .concat(),
            |r| user_input(r.first(), 7.0),
        ),
        refused(
            "ops-per-cycle",
            &[&int[..], &["--ops-per-cycle", "QP=7"]].concat(),
            "no point of this run has QP's peak",
        ),
        used("peak", &[&int[..], &["--peak", "INT64=3"]].concat(), |r| {
            r.first()["peak"]["value"] == 3e9
        }),
        refused(
            "peak",
            &[&int[..], &["--peak", "INT64=3,INT64=4"]].concat(),
            "gives INT64 twice",
        ),
        repeat_case(&null),
        used("warmup", &["--workload", "NULL", "--warmup", "2"], |r| {
            r.first()["warmup_rounds"] == 2
        }),
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
                    ),
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
        ),
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
        used("reference", &["--workload", "NULL", "--reference"], |r| {
            r.stderr.contains("no reference tool measures cpu NULL")
        }),
    ];
    let openblas = Path::new("/usr/lib/x86_64-linux-gnu/libopenblas.so.0");
    if openblas.exists() {
        cases.push(used(
            "blas-library",
            &[
                &dgemm[..],
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
        ));
    } else {
        println!(
            "SKIPPED: --blas-library used: no OpenBLAS at {}",
            openblas.display()
        );
    }
    cases.extend(output_cases("cpu", &null, "NULL"));
    walk("cpu", cases, &[]);
}

#[test]
fn every_mem_option_is_used_or_refused() {
    let last_cache = largest_cache();
    // 8 × the last cache: at 4 × (the least --mem-latency-ns accepts) the staircase did not
    // always find its memory plateau (CI, a guest whose sysfs says 300 MiB of L3).
    let past_the_caches = format!("{}", last_cache.unwrap_or(16 << 10).saturating_mul(8));
    let copy = [
        "--workload",
        "COPY",
        "--array-size",
        "1Mi",
        "--duration",
        "5ms",
    ];
    let lat = [
        "--workload",
        "LATENCY",
        "--latency-max",
        "16Ki",
        "--huge-pages",
        "on",
        "--duration",
        "2ms",
    ];
    let ws = |r: &Ran| {
        r.results()
            .iter()
            .filter(|x| x["params"]["probe"] == "chase")
            .filter_map(|x| x["params"]["working_set_bytes"].as_u64())
            .max()
    };
    let mut cases = vec![
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
            &[&copy[..], &["--block-size", "64Ki"]].concat(),
            "--block-size sizes the blocks",
        ),
        used("threads", &["--workload", "NULL", "--threads", "2"], |r| {
            r.params()["threads"] == 2
        }),
        used("threads", &[&lat[..], &["--threads", "2"]].concat(), |r| {
            r.params()["thread_latency_ns"]
                .as_array()
                .is_some_and(|t| t.len() == 2)
        }),
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
        used(
            "stores",
            &[&copy[..], &["--stores", "regular"]].concat(),
            |r| r.params()["stores"] == "regular",
        ),
        refused(
            "stores",
            &["--workload", "RS", "--stores", "nt"],
            "--stores chooses the store instructions",
        ),
        refused(
            "stores",
            &[&copy[..], &["--isa", "scalar", "--stores", "nt"]].concat(),
            "needs non-temporal store",
        ),
        used("isa", &[&copy[..], &["--isa", "scalar"]].concat(), |r| {
            r.params()["isa"] == "scalar"
        }),
        refused(
            "isa",
            &[&lat[..], &["--isa", "scalar"]].concat(),
            "--workload has only LATENCY, C2C or NULL",
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
            &[&copy[..], &["--huge-pages", "off"]].concat(),
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
            &[&copy[..], &["--mix", "1:1"]].concat(),
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
        ),
        refused(
            "cpus",
            &[&copy[..], &["--cpus", "0,1"]].concat(),
            "--cpus names the CPUs that C2C pairs",
        ),
        used("latency-max", &lat, move |r| ws(r) == Some(16384)),
        refused(
            "latency-max",
            &[&copy[..], &["--latency-max", "1Mi"]].concat(),
            "applies to the LATENCY staircase",
        ),
        used(
            "mem-peak-gbs",
            &[&copy[..], &["--mem-peak-gbs", "50"]].concat(),
            |r| r.first()["peak"]["value"] == 50e9,
        ),
        refused(
            "mem-peak-gbs",
            &[&lat[..], &["--mem-peak-gbs", "50"]].concat(),
            "--workload has only LATENCY, C2C or NULL",
        ),
        used(
            "mem-channels",
            &[&copy[..], &["--mem-channels", "2", "--mem-mts", "3200"]].concat(),
            |r| r.first()["peak"]["value"] == 2.0 * 3200e6 * 8.0,
        ),
        refused(
            "mem-channels",
            &[
                &copy[..],
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
            &[&copy[..], &["--mem-channels", "4", "--mem-mts", "3200"]].concat(),
            |r| user_input(r.first(), 3200.0),
        ),
        refused(
            "mem-mts",
            &[&lat[..], &["--mem-channels", "2", "--mem-mts", "3200"]].concat(),
            "--workload has only LATENCY, C2C or NULL",
        ),
        // The floor of the memory plateau: the staircase must go past the last cache (to eight
        // times its size, so that memory's plateau has a few points), and one that stops inside
        // the caches is refused. Alone: a staircase beside other benchmarks is a slope; 25 ms
        // samples, as 10 ms ones once left its last steps too noisy to name a memory plateau.
        timed(
            "mem-latency-ns",
            &[
                "--workload",
                "LATENCY",
                "--latency-max",
                &past_the_caches,
                "--huge-pages",
                "on",
                "--duration",
                "25ms",
                "--mem-latency-ns",
                "80",
            ],
            |r| {
                r.results()
                    .iter()
                    .any(|x| x["params"]["level"].as_str() == Some("memory") && user_input(x, 80.0))
            },
        ),
        refused(
            "mem-latency-ns",
            &[&copy[..], &["--mem-latency-ns", "80"]].concat(),
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
        ),
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
        ),
        refused(
            "mem-cl",
            &[&copy[..], &["--mem-cl", "15", "--mem-mts", "2133"]].concat(),
            "none of them is in --workload",
        ),
        refused(
            "mem-mts",
            &[&copy[..], &["--mem-mts", "2133"]].concat(),
            "give one of them",
        ),
    ];
    if last_cache.is_some_and(|c| c >= 16 << 10) {
        cases.push(refused(
            "mem-latency-ns",
            &[&lat[..], &["--mem-latency-ns", "80"]].concat(),
            "ends inside the caches",
        ));
    }
    cases.extend([
        repeat_case(&["--workload", "NULL"]),
        used("warmup", &["--workload", "NULL", "--warmup", "2"], |r| {
            r.first()["warmup_rounds"] == 2
        }),
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
        ),
        refused(
            "total-bytes",
            &["--workload", "LATENCY", "--total-bytes", "100M"],
            "--workload has only LATENCY, LOADED, C2C, NUMA or NULL",
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
        ),
        refused(
            "scaling",
            &["--workload", "COPY", "--scaling", "weak"],
            "no --total-bytes is given",
        ),
        used("reference", &["--workload", "NULL", "--reference"], |r| {
            r.stderr.contains("no reference tool measures mem NULL")
        }),
    ]);
    cases.extend(output_cases("mem", &["--workload", "NULL"], "NULL"));
    walk("mem", cases, &[]);
}

#[test]
fn every_disk_option_is_used_or_refused() {
    let psync = ["--engine", "psync", "--size", "1M"];
    let mut cases = vec![
        used("workload", &["--workload", "RR"], |r| {
            r.first()["workload"] == "RR"
        }),
        used(
            "block-size",
            &["--block-size", "8K", "--workload", "RR"],
            |r| r.params()["block_size_bytes"] == 8192,
        ),
        refused("block-size", &["--block-size", "0"], "out of range"),
        used("threads", &["--workload", "RR", "--threads", "2"], |r| {
            r.params()["threads"] == 2
        }),
        used("iodepth", &["--workload", "RR", "--iodepth", "4"], |r| {
            r.params()["iodepth"] == 4
        }),
        used(
            "engine",
            &[&psync[..], &["--workload", "RR"]].concat(),
            |r| r.params()["engine"] == "psync",
        ),
        used(
            "sync",
            &[&psync[..], &["--workload", "WS", "--sync", "none"]].concat(),
            |r| r.params()["sync"] == "none",
        ),
        refused(
            "sync",
            &["--workload", "RR", "--sync", "o-sync"],
            "no workload in --workload writes",
        ),
        used(
            "file-per-thread",
            &[
                &psync[..],
                &["--workload", "RR", "--threads", "2", "--file-per-thread"],
            ]
            .concat(),
            |r| r.params()["file_per_thread"] == true,
        ),
        refused(
            "file-per-thread",
            &["--workload", "RR", "--file", "{dir}/f", "--file-per-thread"],
            "--file-per-thread needs --dir",
        ),
        used("file", &["--workload", "RR", "--file", "{dir}/f"], |r| {
            r.params()["target"]
                .as_str()
                .is_some_and(|t| t.ends_with("/f"))
                && !r.dir.join("f").exists()
        }),
        used("dir", &["--workload", "RR", "--dir", "{dir}"], |r| {
            r.params()["target"]
                .as_str()
                .is_some_and(|t| t.starts_with(r.dir.to_str().unwrap()))
        }),
        refused(
            "dir",
            &["--workload", "RR", "--dir", "{dir}/missing"],
            "does not exist",
        ),
        Case {
            setup: Some(|d| std::fs::write(d.join("old"), b"x").unwrap()),
            ..used(
                "allow-overwrite",
                &[
                    "--workload",
                    "RR",
                    "--file",
                    "{dir}/old",
                    "--allow-overwrite",
                ],
                |r| {
                    r.params()["target"]
                        .as_str()
                        .is_some_and(|t| t.ends_with("/old"))
                },
            )
        },
        Case {
            setup: Some(|d| std::fs::write(d.join("old"), b"x").unwrap()),
            ..refused(
                "allow-overwrite",
                &["--workload", "RR", "--file", "{dir}/old"],
                "pass --allow-overwrite",
            )
        },
        refused(
            "allow-overwrite",
            &["--workload", "RR", "--allow-overwrite"],
            "--file",
        ),
        refused(
            "destructive",
            &["--workload", "RR", "--destructive"],
            "--file",
        ),
        used("size", &["--workload", "RR", "--size", "8M"], |r| {
            r.params()["file_size_bytes"] == 8 << 20
        }),
        used("runtime", &["--workload", "RR", "--runtime", "30ms"], |r| {
            r.params()["runtime_s"] == 0.03
        }),
        used("ramp", &["--workload", "RR", "--ramp", "10ms"], |r| {
            r.params()["ramp_s"] == 0.01
        }),
        used(
            "read-percent",
            &["--workload", "RW", "--read-percent", "30"],
            |r| r.params()["read_percent"] == 30,
        ),
        refused(
            "read-percent",
            &["--workload", "RR", "--read-percent", "30"],
            "RW is not in --workload",
        ),
        used("stride", &["--workload", "RSTRIDE", "--stride", "5"], |r| {
            r.params()["stride_blocks"] == 5 && r.params()["pattern"] == "stride"
        }),
        refused(
            "stride",
            &["--workload", "RR", "--stride", "5"],
            "RSTRIDE is not in --workload",
        ),
        used(
            "stream-buffer",
            &[
                "--workload",
                "RS",
                "--engine",
                "stream",
                "--buffered",
                "--size",
                "1M",
                "--stream-buffer",
                "16K",
            ],
            |r| r.params()["stream_buffer_bytes"] == 16384 && r.params()["engine"] == "stream",
        ),
        refused(
            "stream-buffer",
            &["--workload", "RS", "--stream-buffer", "16K"],
            "add --engine stream or drop --stream-buffer",
        ),
        used("buffered", &["--workload", "RR", "--buffered"], |r| {
            r.params()["io_mode"] == "buffered"
        }),
        repeat_case(&["--workload", "RR"]),
        used(
            "disk-peak-read-mbps",
            &["--workload", "RS", "--disk-peak-read-mbps", "100"],
            |r| r.metric("throughput")["peak"]["value"] == 1e8,
        ),
        refused(
            "disk-peak-read-mbps",
            &["--workload", "RW", "--disk-peak-read-mbps", "100"],
            "needs the write figure too",
        ),
        used(
            "disk-peak-write-mbps",
            &["--workload", "WS", "--disk-peak-write-mbps", "200"],
            |r| r.metric("throughput")["peak"]["value"] == 2e8,
        ),
        refused(
            "disk-peak-write-mbps",
            &["--workload", "RS", "--disk-peak-write-mbps", "100"],
            "no point of this run only writes",
        ),
        used(
            "disk-peak-read-iops",
            &["--workload", "RR", "--disk-peak-read-iops", "1000"],
            |r| r.metric("iops")["peak"]["value"] == 1000.0,
        ),
        refused(
            "disk-peak-read-iops",
            &["--workload", "WR", "--disk-peak-read-iops", "1000"],
            "no point of this run only reads",
        ),
        used(
            "disk-peak-write-iops",
            &["--workload", "WR", "--disk-peak-write-iops", "500"],
            |r| r.metric("iops")["peak"]["value"] == 500.0,
        ),
        refused(
            "disk-peak-write-iops",
            &["--workload", "RW", "--disk-peak-write-iops", "500"],
            "needs the read figure too",
        ),
        used(
            "disk-latency-us",
            &["--workload", "RR", "--disk-latency-us", "80"],
            |r| user_input(r.metric("latency"), 80.0),
        ),
        refused(
            "disk-latency-us",
            &[
                "--workload",
                "RR",
                "--disk-latency-us",
                "80",
                "--rpm",
                "7200",
                "--seek-ms",
                "8",
            ],
            "cannot be used with",
        ),
        used(
            "rpm",
            &["--workload", "RR", "--rpm", "7200", "--seek-ms", "8"],
            |r| user_input(r.metric("iops"), 7200.0) && user_input(r.metric("latency"), 8.0),
        ),
        refused("rpm", &["--workload", "RR", "--rpm", "7200"], "--seek-ms"),
        used(
            "seek-ms",
            &["--workload", "RS", "--rpm", "5400", "--seek-ms", "12"],
            |r| user_input(r.metric("latency"), 12.0),
        ),
        refused("seek-ms", &["--workload", "RR", "--seek-ms", "8"], "--rpm"),
        used(
            "total-bytes",
            &["--workload", "RR", "--total-bytes", "1M"],
            |r| r.params()["total_bytes"] == 1u64 << 20 && r.params()["runtime_s"] == 0.0,
        ),
        refused(
            "total-bytes",
            &["--workload", "RR", "--total-bytes", "1M", "--runtime", "1s"],
            "cannot be used with",
        ),
        used(
            "scaling",
            &[
                "--workload",
                "RR",
                "--threads",
                "2",
                "--total-bytes",
                "1M",
                "--scaling",
                "weak",
            ],
            |r| r.params()["scaling"] == "weak",
        ),
        refused(
            "scaling",
            &["--workload", "RR", "--scaling", "weak"],
            "no --total-bytes is given",
        ),
        // COPY's tool is dd (coreutils): its figure, or why there is none.
        used("reference", &["--workload", "COPY", "--reference"], |r| {
            r.results().iter().any(|x| {
                x["reference"]["tool"] == "dd" || x["reference_unknown_reason"].is_string()
            })
        }),
    ];
    cases.extend(output_cases("disk", &["--workload", "RR"], "RR"));
    walk("disk", cases, &[]);
}

#[test]
fn every_net_option_is_used_or_refused() {
    let plain = common::net::start(None);
    let guarded = common::net::start(Some("s3cret"));
    let servers = [
        ("{server}", plain.addr.to_string()),
        ("{guarded}", guarded.addr.to_string()),
    ];
    let lat = ["--workload", "LATENCY"];
    let tput = ["--workload", "THROUGHPUT"];
    let tcp = ["--workload", "THROUGHPUT", "--protocol", "tcp"];
    let mut cases = vec![
        used(
            "server",
            &["--workload", "LATENCY", "--server", "{server}"],
            |r| r.params()["server"].as_str().is_some_and(|s| !s.is_empty()),
        ),
        used("loopback", &["--workload", "LATENCY", "--loopback"], |r| {
            r.params()["server"]
                .as_str()
                .is_some_and(|s| s.starts_with("127.0.0.1:"))
        }),
        refused(
            "loopback",
            &[
                "--workload",
                "LATENCY",
                "--loopback",
                "--server",
                "{server}",
            ],
            "cannot be used with",
        ),
        used(
            "token",
            &[
                "--workload",
                "LATENCY",
                "--server",
                "{guarded}",
                "--token",
                "s3cret",
            ],
            |r| {
                r.doc.as_ref().is_some_and(|d| {
                    d["command_line"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|a| a == "***")
                })
            },
        ),
        refused(
            "token",
            &[
                "--workload",
                "LATENCY",
                "--server",
                "{guarded}",
                "--token",
                "wrong",
            ],
            "does not match the server",
        ),
        Case {
            setup: Some(|d| std::fs::write(d.join("tok"), "s3cret\n").unwrap()),
            ..used(
                "token-file",
                &[
                    "--workload",
                    "LATENCY",
                    "--server",
                    "{guarded}",
                    "--token-file",
                    "{dir}/tok",
                ],
                |r| r.first()["workload"] == "LATENCY",
            )
        },
        used("workload", &lat, |r| {
            r.results().iter().all(|x| x["workload"] == "LATENCY")
        }),
        used(
            "protocol",
            &["--workload", "LATENCY", "--protocol", "udp"],
            |r| r.params()["protocol"] == "UDP",
        ),
        used(
            "streams",
            &["--workload", "LATENCY", "--streams", "2"],
            |r| r.params()["streams"] == 2,
        ),
        used(
            "message-size",
            &["--workload", "LATENCY", "--message-size", "64"],
            |r| r.params()["message_size_bytes"] == 64,
        ),
        used(
            "duration",
            &["--workload", "LATENCY", "--duration", "150ms"],
            |r| r.params()["duration_s"] == 0.15,
        ),
        used("omit", &["--workload", "LATENCY", "--omit", "50ms"], |r| {
            r.params()["omit_s"] == 0.05
        }),
        used("reverse", &[&tput[..], &["--reverse"]].concat(), |r| {
            r.params()["direction"]
                .as_str()
                .is_some_and(|d| d.contains("reverse"))
        }),
        refused(
            "reverse",
            &[&lat[..], &["--reverse"]].concat(),
            "THROUGHPUT is not in --workload",
        ),
        used(
            "rate",
            &[
                "--workload",
                "THROUGHPUT",
                "--protocol",
                "udp",
                "--rate",
                "10M",
            ],
            |r| r.params()["target_rate_bps"] == 10_000_000,
        ),
        refused(
            "rate",
            &[
                "--workload",
                "LATENCY",
                "--protocol",
                "udp",
                "--rate",
                "10M",
            ],
            "--rate paces UDP THROUGHPUT",
        ),
        used(
            "busy-poll",
            &[&tput[..], &["--busy-poll", "0"]].concat(),
            |r| r.params()["busy_poll_us"] == 0,
        ),
        refused(
            "busy-poll",
            &[&lat[..], &["--busy-poll", "0"]].concat(),
            "THROUGHPUT is not in --workload",
        ),
        repeat_case(&lat),
        used(
            "link-gbps",
            &[&tput[..], &["--link-gbps", "10"]].concat(),
            |r| user_input(r.first(), 10000.0),
        ),
        refused(
            "link-gbps",
            &[&lat[..], &["--link-gbps", "10"]].concat(),
            "this run has neither",
        ),
        used(
            "propagation-us",
            &[&lat[..], &["--link-gbps", "10", "--propagation-us", "2"]].concat(),
            |r| user_input(r.metric("latency"), 2.0) && user_input(r.metric("latency"), 10000.0),
        ),
        refused(
            "propagation-us",
            &[&tput[..], &["--propagation-us", "2"]].concat(),
            "LATENCY is not in --workload",
        ),
        used("bidir", &[&tcp[..], &["--bidir"]].concat(), |r| {
            r.results()
                .iter()
                .any(|x| x["params"]["direction"] == "both ways at once, summed (--bidir)")
        }),
        refused(
            "bidir",
            &[&lat[..], &["--bidir"]].concat(),
            "THROUGHPUT is not in --workload",
        ),
        used("window", &[&tcp[..], &["--window", "256K"]].concat(), |r| {
            r.params()["socket_options"]["window_bytes"] == 262_144
                && r.params()["client_socket"]["receive_buffer_bytes"] == 524_288
        }),
        refused(
            "window",
            &[&tcp[..], &["--window", "1G"]].concat(),
            "out of range",
        ),
        used(
            "congestion",
            &[&tcp[..], &["--congestion", "reno"]].concat(),
            |r| r.params()["client_socket"]["congestion"] == "reno",
        ),
        refused(
            "congestion",
            &[&tcp[..], &["--congestion", "no_such_cc"]].concat(),
            "this kernel has no congestion control 'no_such_cc'",
        ),
        used("mss", &[&tcp[..], &["--mss", "1200"]].concat(), |r| {
            r.params()["client_socket"]["mss_bytes"]
                .as_u64()
                .is_some_and(|m| m <= 1200)
        }),
        refused(
            "mss",
            &[&tput[..], &["--protocol", "udp", "--mss", "1200"]].concat(),
            "is a TCP option",
        ),
        used(
            "no-delay",
            &[
                "--workload",
                "LATENCY",
                "--protocol",
                "tcp",
                "--no-delay",
                "off",
            ],
            |r| r.params()["client_socket"]["nodelay"] == false,
        ),
        refused(
            "no-delay",
            &[&lat[..], &["--no-delay", "maybe"]].concat(),
            "is neither on nor off",
        ),
        used("zerocopy", &[&tcp[..], &["--zerocopy"]].concat(), |r| {
            r.params()["client_socket"]["zerocopy_sends"]
                .as_u64()
                .is_some_and(|n| n > 0)
        }),
        refused(
            "zerocopy",
            &["--workload", "LATENCY", "--protocol", "tcp", "--zerocopy"],
            "THROUGHPUT is not in --workload",
        ),
        used(
            "total-bytes",
            &[&tcp[..], &["--total-bytes", "64M", "--streams", "2"]].concat(),
            |r| r.params()["amount_per_stream"] == 32 << 20 && r.params()["scaling"] == "strong",
        ),
        refused(
            "total-bytes",
            &[
                &tput[..],
                &["--protocol", "tcp,udp", "--total-bytes", "64M"],
            ]
            .concat(),
            "add --protocol tcp",
        ),
        used("count", &[&lat[..], &["--count", "500"]].concat(), |r| {
            r.params()["amount_per_stream"] == 500
        }),
        refused(
            "count",
            &[&tcp[..], &["--count", "500"]].concat(),
            "--workload has none of them",
        ),
        used(
            "scaling",
            &[
                &lat[..],
                &["--count", "500", "--streams", "2", "--scaling", "weak"],
            ]
            .concat(),
            |r| r.params()["amount_per_stream"] == 500 && r.params()["scaling"] == "weak",
        ),
        refused(
            "scaling",
            &[&lat[..], &["--scaling", "weak"]].concat(),
            "neither is given",
        ),
        used("mps", &[&lat[..], &["--mps", "2000"]].concat(), |r| {
            r.params()["mps"] == 2000
                && r.metric("rate")["mean"]
                    .as_f64()
                    .is_some_and(|v| v > 1000.0 && v <= 2050.0)
        }),
        refused(
            "mps",
            &[&tput[..], &["--mps", "2000"]].concat(),
            "--workload has none of them",
        ),
        used("load", &[&lat[..], &["--load", "0,1"]].concat(), |r| {
            let load = |x: &Value| x["params"]["load_streams"].as_u64();
            r.results().iter().any(|x| load(x) == Some(0))
                && r.results().iter().any(|x| {
                    load(x) == Some(1)
                        && x["params"]["load_goodput_bps"]
                            .as_f64()
                            .is_some_and(|v| v > 0.0)
                })
        }),
        refused(
            "load",
            &[&tcp[..], &["--load", "1"]].concat(),
            "LATENCY is not in --workload",
        ),
        used("gbit", &[&tput[..], &["--gbit"]].concat(), |r| {
            r.stdout.contains("Gbit/s")
        }),
        refused(
            "gbit",
            &[&lat[..], &["--gbit"]].concat(),
            "--gbit shows network goodput",
        ),
        used(
            "reference",
            &[
                "--workload",
                "LATENCY",
                "--message-size",
                "1",
                "--reference",
            ],
            |r| r.stderr.contains("reference") || !r.first()["reference"].is_null(),
        ),
    ];
    cases.extend(output_cases("net", &lat, "LATENCY"));
    walk("net", cases, &servers);
    drop((plain, guarded));
}

/// A theoretical input beyond what any machine has (1e308 GOPS, a clock of 10³⁰⁸ GHz or of
/// 10⁻³⁰⁰ GHz, +∞) overflowed the peak to infinity, which the JSON document and the database
/// then held as `null` and could not read back: each option that gives one is bounded, and
/// refuses such a value in one line, exit code 2, before anything runs or is stored.
#[test]
fn theoretical_inputs_beyond_any_machine_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let db = db.to_str().unwrap();
    let cpu = ["cpu", "--workload", "DP", "--threads", "1", "--db", db];
    let mem = ["mem", "--workload", "COPY", "--threads", "1", "--db", db];
    let disk = ["disk", "--engine", "null", "--dir", "/tmp", "--db", db];
    let net = ["net", "--loopback", "--workload", "THROUGHPUT", "--db", db];
    let cases: Vec<Vec<&str>> = vec![
        [&cpu[..], &["--peak", "DP=1e308"]].concat(),
        [&cpu[..], &["--peak", "DP=inf"]].concat(),
        [&cpu[..], &["--clock-ghz", "1e308"]].concat(),
        [&cpu[..], &["--clock-ghz", "1e-300"]].concat(),
        [&cpu[..], &["--ops-per-cycle", "DP=1e308"]].concat(),
        [&mem[..], &["--mem-peak-gbs", "1e308"]].concat(),
        [&mem[..], &["--mem-latency-ns", "1e-300"]].concat(),
        [&mem[..], &["--mem-channels", "4", "--mem-mts", "1e308"]].concat(),
        [&disk[..], &["--disk-peak-read-mbps", "1e308"]].concat(),
        [&disk[..], &["--disk-peak-write-iops", "1e308"]].concat(),
        [&disk[..], &["--disk-latency-us", "1e308"]].concat(),
        [&disk[..], &["--rpm", "1e308", "--seek-ms", "8"]].concat(),
        [&disk[..], &["--rpm", "7200", "--seek-ms", "1e-300"]].concat(),
        [&net[..], &["--link-gbps", "1e308"]].concat(),
        vec!["peak", "--disk-peak-read-iops", "1e308"],
        vec!["peak", "--rpm", "7200", "--seek-ms", "1e308"],
    ];
    for args in &cases {
        common::one_line_exit_2(args, "is out of range for");
    }
    assert!(!Path::new(db).exists(), "a refused command stored nothing");
}

/// Runs `peakbench args` with the clock's test double and a database in `dir`, bounded in
/// time: (exit code, stderr).
fn refused_within(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .args(args)
        .current_dir(dir)
        .env("PEAKBENCH_DB", dir.join("env.db"))
        .env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1)
        .env("COLUMNS", "1000")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Finding 5: fixed work beyond its bound (1 PiB, 10¹⁸ operations) or estimated at more than
/// a day a repetition is refused in one line with exit code 2, never a panic of the estimate:
/// on the command line, in a profile's dry run (two such cpu jobs summed), and in a cluster
/// run's dry run. Nothing is measured.
#[test]
fn fixed_work_beyond_its_bounds_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let profile = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let mem = profile(
        "mem.toml",
        "[[job]]\nsubsystem = \"mem\"\nworkload = [\"COPY\"]\ntotal_bytes = \"16000000T\"\nscaling = \"weak\"\nthreads = \"1..4096\"\narray_size = \"64M\"\n",
    );
    let cpu_job = "[[job]]\nsubsystem = \"cpu\"\nworkload = [\"DP\"]\ntotal_ops = \"18446744073709551615\"\nscaling = \"weak\"\nthreads = \"1..4096\"\n";
    let cpu = profile("cpu.toml", &format!("{cpu_job}{cpu_job}"));
    // Within the bounds, and still a day's work a repetition: refused by its estimate.
    let long_disk = profile(
        "disk.toml",
        "[[job]]\nsubsystem = \"disk\"\nworkload = [\"RS\"]\nengine = \"null\"\ntotal_bytes = \"1024T\"\nscaling = \"weak\"\nthreads = \"1..128\"\nblock_size = \"4K\"\nsize = \"1M\"\n",
    );
    let long_cpu = profile(
        "long-cpu.toml",
        "[[job]]\nsubsystem = \"cpu\"\nworkload = [\"DP\"]\ntotal_ops = \"1000000000000000000\"\nthreads = \"1\"\n",
    );
    let disk = [
        "disk",
        "--workload",
        "RS",
        "--total-bytes",
        "16000000T",
        "--scaling",
        "weak",
        "--iodepth",
        "1..256",
        "--threads",
        "1..128",
        "--repeat",
        "1000",
        "--block-size",
        "4K",
        "--size",
        "1M",
    ];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            disk.to_vec(),
            "'16000000T' is out of range: at most 1024T (1 PiB)",
        ),
        (
            vec!["run", "--profile", &mem, "--dry-run"],
            "'16000000T' is out of range: at most 1024T (1 PiB)",
        ),
        (
            vec!["run", "--profile", &cpu, "--dry-run"],
            "'18446744073709551615' is out of range: at most 1000000000000000000",
        ),
        (
            vec!["cluster", "run", "--profile", &cpu, "--dry-run"],
            "'18446744073709551615' is out of range",
        ),
        (
            vec!["run", "--profile", &long_disk, "--dry-run"],
            "more than 24 h: give less --total-bytes",
        ),
        (
            vec!["run", "--profile", &long_cpu, "--dry-run"],
            "more than 24 h: give less --total-ops",
        ),
    ];
    for (args, text) in cases {
        let (code, err) = refused_within(dir.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(text), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
