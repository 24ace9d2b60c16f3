//! The walk of a benchmark command's options (tests/options_*.rs): every long option that clap
//! knows for `peakbench cpu`, `mem`, `disk` or `net` must have a case where it is used (and the
//! output shows it: a record's field, a file, the table) or refused (one line, exit code 2). An
//! option added without a case fails its walk. A case runs the mock session (`MOCK_SESSION`:
//! the option's road to the records, files and tables, nothing measured) unless its check reads
//! what only a measurement shows ([`Case::measured`]); a measured run is tiny (NULL workloads,
//! the null disk engine, 100 ms of loopback), and every run's clock the probes' test double
//! (`MOCK_CLOCK`): the cases test the options, not the probes.

use clap::CommandFactory;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What a case's run gave.
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub doc: Option<Value>,
    pub dir: PathBuf,
}

impl Ran {
    pub fn results(&self) -> &Vec<Value> {
        self.doc
            .as_ref()
            .and_then(|d| d["results"].as_array())
            .unwrap_or_else(|| panic!("no results: {}", self.stderr))
    }
    pub fn first(&self) -> &Value {
        &self.results()[0]
    }
    pub fn params(&self) -> &Value {
        &self.first()["params"]
    }
    /// Whether the first record ran under `--sustain` of `max_s`: its longest time, and when
    /// each repetition was steady (or `null`), within it.
    pub fn sustained(&self, max_s: f64) -> bool {
        let s = &self.first()["sustain"];
        s["max_s"] == max_s
            && s["steady_s"].as_array().is_some_and(|s| {
                !s.is_empty()
                    && s.iter()
                        .all(|t| t.is_null() || t.as_f64().is_some_and(|t| t > 0.0 && t <= max_s))
            })
    }
    /// The first record of `metric`.
    pub fn metric(&self, metric: &str) -> &Value {
        self.results()
            .iter()
            .find(|r| r["metric"] == metric)
            .unwrap_or_else(|| panic!("no {metric} record"))
    }
}

pub type Check = Box<dyn Fn(&Ran) -> bool>;

pub enum Expect {
    /// Runs, and `check` sees the option's effect.
    Used(Check),
    /// Exit code 2, one line holding this text.
    Refused(&'static str),
}

pub struct Case {
    pub option: &'static str,
    pub args: Vec<String>,
    pub expect: Expect,
    /// Runs in the case's directory before the command (to make a file it needs).
    pub setup: Option<fn(&Path)>,
    /// Compares timings, so runs while no other case of any walk runs (the four walks run in
    /// parallel on what may be two cores: a calibration that shares its core with three other
    /// benchmarks and a run that does not would tell nothing of the option).
    pub alone: bool,
    /// Its check reads what only a measurement shows (a socket's granted options, a peak's
    /// inputs, a server's answer, the time a run took): it measures. The others run the mock
    /// session (`MOCK_SESSION`): the option's road from the command line to the records, the
    /// files and the tables, with no benchmark under it.
    pub measured: bool,
    /// An environment variable the command runs with (a test double's).
    pub env: Option<(&'static str, &'static str)>,
}

impl Case {
    /// The case runs with `key=value` in its environment.
    pub fn with_env(self, key: &'static str, value: &'static str) -> Case {
        Case {
            env: Some((key, value)),
            ..self
        }
    }

    /// The case measures (see [`Case::measured`]).
    pub fn measured(self) -> Case {
        Case {
            measured: true,
            ..self
        }
    }
}

pub fn used(
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
        measured: false,
        env: None,
    }
}

/// A case whose check compares timings: it runs alone.
pub fn timed(
    option: &'static str,
    args: &[impl AsRef<str>],
    check: impl Fn(&Ran) -> bool + 'static,
) -> Case {
    Case {
        alone: true,
        measured: true,
        ..used(option, args, check)
    }
}

pub fn refused(option: &'static str, args: &[impl AsRef<str>], text: &'static str) -> Case {
    Case {
        option,
        args: args.iter().map(|a| a.as_ref().to_string()).collect(),
        expect: Expect::Refused(text),
        setup: None,
        alone: false,
        measured: false,
        env: None,
    }
}

/// Options a case leaves out are given these values, so that every run stays tiny.
pub fn base(sub: &str) -> Vec<(&'static str, &'static str)> {
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
pub fn run(sub: &str, case: &Case, servers: &[(&str, String)]) -> Ran {
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
            || (option == "--runtime"
                && args
                    .iter()
                    .any(|a| a == "--total-bytes" || a == "--sustain"))
            || (option == "--duration" && args.iter().any(|a| a == "--sustain"))
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
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"));
    command
        .arg(sub)
        .args(&args)
        .env("PEAKBENCH_DB", dir.path().join("env.db"))
        .env(super::MOCK_CLOCK.0, super::MOCK_CLOCK.1)
        .env("COLUMNS", "1000");
    if !case.measured {
        command.env(super::MOCK_SESSION.0, super::MOCK_SESSION.1);
    }
    if let Some((k, v)) = case.env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
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
pub fn options_of(sub: &str) -> Vec<String> {
    let cli = peakbench::cli::Cli::command();
    let cmd = cli.find_subcommand(sub).unwrap();
    cmd.get_arguments()
        .filter_map(|a| a.get_long())
        .filter(|l| !matches!(*l, "help" | "version"))
        .map(str::to_string)
        .collect()
}

/// Runs every case of `sub`, and checks that every option has one.
pub fn walk(sub: &str, cases: Vec<Case>, servers: &[(&str, String)]) {
    let mut failures = Vec::new();
    for case in &cases {
        let _share = super::share(case.alone);
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
pub fn output_cases(sub: &str, args: &[&str], workload: &str) -> Vec<Case> {
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
        // One event a line: the start, each point, the end.
        used(
            "json-stream",
            &with(&["--json-stream", "{dir}/r.ndjson"]),
            |r: &Ran| {
                std::fs::read_to_string(r.dir.join("r.ndjson")).is_ok_and(|t| {
                    let events: Vec<serde_json::Value> = t
                        .lines()
                        .filter_map(|l| serde_json::from_str(l).ok())
                        .collect();
                    events.len() == t.lines().count()
                        && events.first().is_some_and(|e| e["event"] == "start")
                        && events.last().is_some_and(|e| e["event"] == "end")
                        && events.iter().any(|e| e["event"] == "point")
                })
            },
        ),
        refused(
            "json-stream",
            &with(&["--json-stream", "-", "--json", "-"]),
            "standard output",
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
        // A point the mock session says was disturbed is measured twice more, each time said.
        used("strict", &with(&["--strict"]), |r| {
            r.stderr.contains("--strict measures it again (2 of 2)")
        })
        .with_env(peakbench::app::mock::MOCK_NOISE_ENV, "steal"),
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

pub fn repeat_case(args: &[&str]) -> Case {
    used("repeat", &[args, &["--repeat", "3"]].concat(), |r| {
        r.first()["samples"].as_array().unwrap().len() == 3
    })
}

/// `--precision` and `--max-repeat` on a point of `args` in the mock session, whose
/// repetitions spread by 2 % (a first measurement of 3 has a half width of ±4.97 %): ±2 % asks a
/// second measurement of 7 (the least n with t(n − 1) · 2 % / √n ≤ 2 %), whose ±1.66 % meets it;
/// --max-repeat 8 leaves it 5, whose ±2.08 % does not, and nothing after: the record says so.
/// Refused: a first measurement without an interval, a most below it, a most without a
/// precision.
pub fn precision_cases(args: &[&str]) -> Vec<Case> {
    let reached = |samples: usize, measurements: u64, repetitions: u64, most: u64| {
        move |r: &Ran| {
            r.results().iter().all(|x| {
                let p = &x["precision"];
                let met = most != 8;
                let warned = x["warnings"].as_array().is_some_and(|w| {
                    w.iter().any(|w| {
                        w.as_str()
                            .unwrap()
                            .starts_with("--precision ±2 % not reached")
                    })
                });
                x["samples"].as_array().unwrap().len() == samples
                    && p["met"] == met
                    && warned != met
                    && p["target"] == 0.02
                    && p["measurements"] == measurements
                    && p["repetitions"] == repetitions
                    && p["max_repeat"] == most
            })
        }
    };
    vec![
        used(
            "precision",
            &[args, &["--repeat", "3", "--precision", "2%"]].concat(),
            reached(7, 2, 10, 50),
        ),
        refused(
            "precision",
            &[args, &["--repeat", "1", "--precision", "2%"]].concat(),
            "--repeat 2 or more",
        ),
        refused(
            "precision",
            &[args, &["--precision", "0.01%"]].concat(),
            "0.1% to 50%",
        ),
        used(
            "max-repeat",
            &[
                args,
                &["--repeat", "3", "--precision", "2", "--max-repeat", "8"],
            ]
            .concat(),
            reached(5, 2, 8, 8),
        ),
        refused(
            "max-repeat",
            &[
                args,
                &["--repeat", "3", "--precision", "2%", "--max-repeat", "2"],
            ]
            .concat(),
            "--max-repeat 2 is below --repeat 3",
        ),
        refused(
            "max-repeat",
            &[args, &["--max-repeat", "10"]].concat(),
            "--precision",
        ),
    ]
}

/// Whether the user-given peak input `value` is among the record's peak inputs.
pub fn user_input(rec: &Value, value: f64) -> bool {
    rec["peak"]["inputs"].as_object().is_some_and(|m| {
        m.values()
            .any(|i| i["source"] == "user" && i["value"] == value)
    })
}
