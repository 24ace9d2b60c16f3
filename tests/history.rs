//! The results database: runs stored point by point, listed, imported, compared; a killed run
//! stays readable; `run --profile` jobs land in one run.

mod common;

use assert_cmd::Command;
use peakbench::history::Store;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn peakbench(db: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_peakbench"));
    c.env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1);
    // Phrases are looked for whole: a terminal wide enough that no cell is wrapped.
    c.env("PEAKBENCH_DB", db).env("COLUMNS", "1000");
    c
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/history")
        .join(name)
}

#[test]
fn store_round_trips_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/history.db");
    let report = common::fixed_report();
    // A database named by the caller goes into a directory that exists (one rule for outputs).
    let e = Store::open(&path).err().unwrap().to_string();
    assert!(
        e.contains("directory") && e.contains("does not exist"),
        "{e}"
    );
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let mut store = Store::open(&path).unwrap();
    let run = store.begin_run(&report).unwrap();
    store.add_records(run, 0, &report.results[..2]).unwrap();
    store.add_records(run, 2, &report.results[2..]).unwrap();
    assert_eq!(store.runs().unwrap()[0].status, "running");
    store.finish_run(run, "complete").unwrap();
    drop(store);
    let store = Store::open(&path).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!((runs[0].status.as_str(), runs[0].points), ("complete", 6));
    let back = store.load(run).unwrap();
    assert_eq!(
        serde_json::to_value(&back).unwrap(),
        serde_json::to_value(&report).unwrap(),
        "a stored run reads back as the same JSON document"
    );
    assert_eq!(store.resolve("latest").unwrap(), run);
    assert!(store.resolve("latest~1").is_err());
    assert!(store.resolve("9").is_err());
    assert!(store.resolve("abc").is_err());
}

#[test]
fn compare_flags_a_20_percent_regression_and_not_a_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    peakbench(&db)
        .args(["history", "--import"])
        .arg(fixture("base.json"))
        .arg(fixture("regressed.json"))
        .arg(fixture("repeat.json"))
        .assert()
        .success();
    let listed = peakbench(&db).args(["history", "--json"]).output().unwrap();
    let runs: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 3);

    // base → regressed: DP lost 20 % in every repetition.
    let out = peakbench(&db)
        .args(["compare", "1", "2", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let changes = &doc["changes"];
    let dp = changes
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["workload"] == "DP")
        .unwrap();
    assert!(dp["significant"].as_bool().unwrap() && dp["regression"].as_bool().unwrap());
    assert!((dp["change"].as_f64().unwrap() + 0.2).abs() < 0.01);
    let sp = changes
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["workload"] == "SP")
        .unwrap();
    assert!(!sp["regression"].as_bool().unwrap(), "SP was not touched");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("1 significant regression"),
        "one line saying why the exit code is 3"
    );

    // base → a real repeat of the same command: nothing significant.
    let out = peakbench(&db).args(["compare", "1", "3"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains("REGRESSION"), "{text}");
    assert!(text.contains("no significant change"), "{text}");

    // A stored run makes the same HTML report as its JSON document.
    let html = dir.path().join("r.html");
    peakbench(&db)
        .args(["report", "1", "--html"])
        .arg(&html)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg") && page.contains("DP"));
    peakbench(&db)
        .args(["report", "9", "--html"])
        .arg(&html)
        .assert()
        .code(2);

    // JSON files compare directly too, and the table shows the p-value.
    peakbench(&db)
        .arg("compare")
        .arg(fixture("base.json"))
        .arg(fixture("regressed.json"))
        .assert()
        .code(3)
        .stdout(predicates::str::contains("REGRESSION"));
}

/// A copy of `report` with every figure of every point made `factor` times better (below 1:
/// worse): rates multiplied, times (latency, lower is better) divided.
fn scaled(report: &serde_json::Value, factor: f64) -> serde_json::Value {
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

/// `compare` at 100 columns: a table per subsystem under its title, the parts every point of
/// it shares said once above it, no line wider than the terminal, and each point's figures and
/// verdict on one line (its label may go on below, never cut).
#[test]
fn compare_fits_100_columns_a_line_per_point() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let quick = fixture("quick.json");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&quick).unwrap()).unwrap();
    let copy = dir.path().join("copy.json");
    std::fs::write(&copy, serde_json::to_vec(&scaled(&report, 0.9)).unwrap()).unwrap();
    let out = peakbench(&db)
        .env("COLUMNS", "100")
        .args(["compare", "--json", "-"])
        .arg(&quick)
        .arg(&copy)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let changes = doc["changes"].as_array().unwrap();
    assert!(changes.len() > 20, "{doc}");
    // The text at `columns`, no line wider and no cell cut.
    let at = |columns: usize| {
        let out = peakbench(&db)
            .env("COLUMNS", columns.to_string())
            .arg("compare")
            .arg(&quick)
            .arg(&copy)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        for line in text.lines() {
            assert!(line.chars().count() <= columns, "{line}\n{text}");
        }
        assert!(!text.contains('…'), "a cell was cut:\n{text}");
        text
    };
    let text = at(100);
    // A row's figures: the change in percent, then p and the verdict.
    let rows = text
        .lines()
        .filter(|l| l.contains(" -10.0 ") || l.contains(" +11.1 "))
        .count();
    assert_eq!(rows, changes.len(), "{text}");
    for title in ["CPU", "Memory", "Disk", "Network"] {
        assert!(text.lines().any(|l| l == title), "{title}:\n{text}");
    }
    assert!(text.contains("every point: 1 thread · 1 stream"), "{text}");
    // Too narrow for the columns: a point a line, its figures below it.
    let text = at(40);
    assert!(text.contains("Δ % -10.0"), "{text}");
}

/// A run against a copy of itself 1 % worse in every point: no regression (below the 3 %
/// threshold, and the many points' p-values are corrected); 20 % worse: exit 3. The table
/// names points for a person and says the correction.
#[test]
fn a_copy_one_percent_worse_is_no_regression_twenty_percent_is() {
    // Its repetitions' spread decides the verdicts: alone, as the other benchmarks would widen it.
    let _share = common::share(true);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let run = dir.path().join("run.json");
    peakbench(&db)
        .args([
            "cpu",
            "--workload",
            "DP,SP",
            "--threads",
            "1,2",
            "--duration",
            "20ms",
        ])
        .args(["--repeat", "5", "--no-history", "--json"])
        .arg(&run)
        .assert()
        .success();
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&run).unwrap()).unwrap();
    assert_eq!(report["results"].as_array().unwrap().len(), 4);
    let copy = |factor: f64| {
        let path = dir.path().join(format!("copy-{factor}.json"));
        std::fs::write(&path, serde_json::to_vec(&scaled(&report, factor)).unwrap()).unwrap();
        path
    };
    let out = peakbench(&db)
        .arg("compare")
        .arg(&run)
        .arg(copy(0.99))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains("REGRESSION"), "{text}");
    assert!(
        text.contains("Holm") && text.contains("DP · 2 threads"),
        "{text}"
    );
    let out = peakbench(&db)
        .arg("compare")
        .arg(&run)
        .arg(copy(0.8))
        .args(["--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let changes = &doc["changes"];
    for c in changes.as_array().unwrap() {
        assert!(c["p_adjusted"].as_f64().unwrap() >= c["p"].as_f64().unwrap());
        assert!((c["change"].as_f64().unwrap() + 0.2).abs() < 1e-6, "{c}");
    }
    assert!(
        changes
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["regression"] == true)
    );
}

/// `peakbench history | head`: a reader gone is no error to report; two documents on one
/// standard output are refused; a command refused while it is planned leaves no run.
#[test]
fn pipes_stdout_and_refusals_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    peakbench(&db)
        .args(["history", "--import"])
        .arg(fixture("base.json"))
        .assert()
        .success();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .env("PEAKBENCH_DB", &db)
        .arg("history")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A stored run exported as CSV (a row per point) and Markdown.
    let out = peakbench(&db)
        .args(["history", "export", "1", "--csv", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    assert!(
        csv.starts_with("subsystem,workload,metric,unit,threads,"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 3, "a header and the run's two points");
    let out = peakbench(&db)
        .args(["history", "export", "1", "--markdown", "-"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("| DP"));
    // The reader goes before the table is written.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = peakbench(&db)
        .args(["cpu", "--workload", "NULL", "--json", "-", "--csv", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--json and --csv") && err.lines().count() == 1,
        "{err}"
    );

    let before = Store::open(&db).unwrap().runs().unwrap().len();
    for args in [
        vec![
            "cpu",
            "--workload",
            "LINPACK",
            "--n",
            "2000000",
            "--threads",
            "1",
        ],
        vec![
            "cpu",
            "--workload",
            "NULL",
            "--threads",
            "1",
            "--cpus",
            "4095",
        ],
    ] {
        let out = peakbench(&db).args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        Store::open(&db).unwrap().runs().unwrap().len(),
        before,
        "nothing recorded"
    );
}

#[test]
fn compare_and_history_refuse_bad_input_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let not_json = dir.path().join("x.json");
    std::fs::write(&not_json, "not json").unwrap();
    for args in [
        vec!["compare", "1", "2"],
        vec!["compare", "latest", "abc"],
        vec!["compare", "1", "2", "--threshold", "-1"],
        vec!["compare", "1", "2", "--alpha", "2"],
        vec!["history", "--import", not_json.to_str().unwrap()],
        vec!["history", "--import", "/nonexistent/r.json"],
    ] {
        let out = peakbench(&db).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn every_run_is_stored_and_a_killed_run_stays_readable() {
    let _share = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    peakbench(&db)
        .args([
            "cpu",
            "--workload",
            "NULL",
            "--threads",
            "1",
            "--repeat",
            "2",
        ])
        .args(["--warmup", "0", "--quiet"])
        .assert()
        .success();
    // A suite: a NULL job, then a DP job that takes 50 s; killed in the middle of the second.
    let profile = dir.path().join("p.toml");
    std::fs::write(
        &profile,
        "[defaults]\nthreads = 1\nrepeat = 50\nquiet = true\n\
         [[job]]\nsubsystem = 'cpu'\nworkload = ['NULL']\n\
         [[job]]\nsubsystem = 'cpu'\nworkload = ['DP']\nduration = '1s'\n",
    )
    .unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .env("PEAKBENCH_DB", &db)
        .args(["run", "--quiet", "--profile"])
        .arg(&profile)
        .spawn()
        .unwrap();
    // Wait for the NULL point to be committed, then SIGKILL in the middle of DP.
    let deadline = Instant::now() + Duration::from_secs(30);
    let killed_run = loop {
        let runs = Store::open(&db).unwrap().runs().unwrap();
        if let Some(r) = runs.iter().find(|r| r.id == 2 && r.points >= 1) {
            break r.id;
        }
        assert!(
            Instant::now() < deadline,
            "the first point never reached the database"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let store = Store::open(&db).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!((runs[0].status.as_str(), runs[0].points), ("complete", 1));
    assert_eq!(runs[1].status, "running", "killed: never marked complete");
    let report = store.load(killed_run).unwrap();
    assert_eq!(report.results.len(), 1);
    assert_eq!(
        report.results[0].workload,
        peakbench::workload::cpu::CpuWorkload::Null
    );
    assert_eq!(report.results[0].samples.len(), 50);
    let listed = peakbench(&db).arg("history").output().unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("incomplete"));
}

#[test]
fn no_history_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    peakbench(&db)
        .args([
            "cpu",
            "--workload",
            "NULL",
            "--threads",
            "1",
            "--repeat",
            "1",
        ])
        .args(["--warmup", "0", "--quiet", "--no-history"])
        .assert()
        .success();
    assert!(!db.exists());
}

/// `--gbit` changes what is printed, never what is stored: runs of the same figures compare
/// equal whatever display options made them. This holds for documents of this version and for
/// documents of schema version 3, which stored the printed unit (Gbit/s with `--gbit`, Mbit/s
/// without) and which `compare` once took for a 1000-fold regression.
#[test]
fn compare_is_blind_to_display_units() {
    let _share = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let (a, csv) = (dir.path().join("a.json"), dir.path().join("a.csv"));
    peakbench(&db)
        .args([
            "net",
            "--loopback",
            "--workload",
            "THROUGHPUT",
            "--protocol",
            "tcp",
        ])
        .args([
            "--duration",
            "100ms",
            "--omit",
            "0",
            "--repeat",
            "2",
            "--gbit",
        ])
        .args(["--quiet", "--no-history", "--json"])
        .arg(&a)
        .arg("--csv")
        .arg(&csv)
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&a).unwrap()).unwrap();
    let recs = doc["results"].as_array().unwrap();
    assert!(
        !recs.is_empty() && recs.iter().all(|r| r["unit"] == "bit/s"),
        "{doc}"
    );
    let printed = std::fs::read_to_string(&csv).unwrap();
    assert!(
        printed.contains(",Gbit/s,") && !printed.contains(",bit/s,"),
        "{printed}"
    );
    // The same figures from a run without --gbit.
    let mut plain = doc.clone();
    plain["command_line"] = serde_json::json!(["peakbench", "net", "--loopback"]);
    let b = dir.path().join("b.json");
    std::fs::write(&b, serde_json::to_vec(&plain).unwrap()).unwrap();
    // The same figures as schema version 3 stored them: Gbit/s with --gbit, Mbit/s without.
    let v3 = |unit: &str, per: f64, name: &str| {
        let mut d = doc.clone();
        d["schema_version"] = serde_json::json!(3);
        for r in d["results"].as_array_mut().unwrap() {
            let scale = |v: &serde_json::Value| serde_json::json!(v.as_f64().unwrap() / per);
            for k in ["mean", "stddev", "min", "max", "median"] {
                r[k] = scale(&r[k]);
            }
            let samples: Vec<_> = r["samples"].as_array().unwrap().iter().map(scale).collect();
            r["samples"] = serde_json::json!(samples);
            r["unit"] = serde_json::json!(unit);
        }
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_vec(&d).unwrap()).unwrap();
        path
    };
    let a3 = v3("Gbit/s", 1e9, "a3.json");
    let b3 = v3("Mbit/s", 1e6, "b3.json");
    for (x, y) in [(&a, &b), (&a3, &b3), (&a3, &b), (&a, &b3)] {
        let out = peakbench(&db)
            .arg("compare")
            .arg(x)
            .arg(y)
            .arg("--json")
            .assert()
            .success();
        let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        let changes = doc["changes"].as_array().unwrap();
        assert_eq!(changes.len(), recs.len(), "every point is matched");
        for c in changes {
            assert_eq!(c["unit"], "bit/s", "{c}");
            assert!(c["change"].as_f64().unwrap().abs() < 1e-9, "{c}");
            assert_eq!(c["regression"], false, "{c}");
        }
    }
}

/// Every JSON pointer to a string in `v`.
fn string_pointers(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(_) => out.push(at),
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                string_pointers(x, format!("{at}/{i}"), out);
            }
        }
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                let k = k.replace('~', "~0").replace('/', "~1");
                string_pointers(x, format!("{at}/{k}"), out);
            }
        }
        _ => {}
    }
}

/// Text from a document is never printed raw: every free-text field of a recorded run (each
/// string the document still reads with) carries a terminal title change, a screen clear and a
/// right-to-left override; importing it, listing the history, reporting it (summary, -v,
/// Markdown to standard output, a pivot) and comparing it print none of them, on standard
/// output or standard error.
#[test]
fn hostile_text_in_a_document_is_never_printed_raw() {
    let evil = "\u{1b}]0;owned\u{7}\u{1b}[2J\u{202e}\u{2066}";
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("quick.json")).unwrap()).unwrap();
    let mut pointers = Vec::new();
    string_pointers(&doc, String::new(), &mut pointers);
    // Tried a field at a time (its every occurrence: "/results/*/params/target"), kept where
    // the document still reads as a report (a name the schema knows is not free text).
    let field = |p: &str| -> String {
        p.split('/')
            .map(|s| if s.parse::<usize>().is_ok() { "*" } else { s })
            .collect::<Vec<_>>()
            .join("/")
    };
    let mut fields: std::collections::BTreeMap<String, Vec<&String>> = Default::default();
    for p in &pointers {
        fields.entry(field(p)).or_default().push(p);
    }
    let mut hostile = 0;
    for at in fields.values() {
        let old = doc.clone();
        for p in at {
            let text = doc.pointer(p).unwrap().as_str().unwrap().to_string();
            *doc.pointer_mut(p).unwrap() = format!("{text}{evil}").into();
        }
        if peakbench::results::Report::from_json(&serde_json::to_vec(&doc).unwrap()).is_ok() {
            hostile += at.len();
        } else {
            doc = old;
        }
    }
    assert!(hostile >= 100, "{hostile} of {} strings", pointers.len());
    for host in [
        "/system/os/hostname/value",
        "/command_line/1",
        "/started_at",
    ] {
        let text = doc
            .pointer(host)
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        assert!(text.ends_with(evil), "{host} is not hostile: {text:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let file = dir.path().join("evil.json");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let f = file.to_str().unwrap();
    for args in [
        vec!["history", "--import", f],
        vec!["history"],
        vec!["report", f],
        vec!["report", f, "-v"],
        vec!["report", "latest", "--markdown", "-"],
        vec!["report", f, "--pivot", "rows=threads,cols=workload"],
        vec!["compare", f, "latest"],
        vec!["compare", f, f, "--same-machine"],
    ] {
        let out = peakbench(&db)
            .args(&args)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let text = [out.stdout, out.stderr].concat();
        let text = String::from_utf8_lossy(&text);
        for bad in ['\u{1b}', '\u{7}', '\u{202e}', '\u{2066}'] {
            assert!(!text.contains(bad), "{args:?} printed {bad:?} raw:\n{text}");
        }
        if args[0] == "history" {
            assert!(out.status.success(), "{args:?}: {text}");
        }
    }
}

/// Any `--db` path is a file of that name, read and written alike: `#` and `?` (URI syntax to
/// SQLite) and a "file:" prefix are part of the name.
#[test]
fn any_db_path_is_the_file_it_names() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["h#x.db", "h?mode=memory", "file:h.db"] {
        let db = dir.path().join(name);
        peakbench(&db)
            .args(["cpu", "--workload", "NULL", "--repeat", "2"])
            .timeout(Duration::from_secs(60))
            .assert()
            .success();
        assert!(db.is_file(), "{name}");
        let listed = peakbench(&db)
            .args(["history", "--json"])
            .timeout(Duration::from_secs(30))
            .assert()
            .success();
        let runs: serde_json::Value = serde_json::from_slice(&listed.get_output().stdout).unwrap();
        assert_eq!(runs.as_array().map(Vec::len), Some(1), "{name}: {runs}");
        let files: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with(name))
            .collect();
        assert!(files.is_empty(), "{name}: also wrote {files:?}");
        for e in std::fs::read_dir(dir.path()).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
    }
}

/// Inputs are bounded: a device or a file beyond `--max-input` is refused at once with one
/// line that names the limit and the option, before anything is read (no growing to the size
/// of /dev/zero).
#[test]
fn unbounded_or_oversized_inputs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    // A FIFO that nobody writes: opening it for reading would wait forever.
    let fifo = dir.path().join("fifo");
    common::mkfifo(&fifo);
    let fifo = fifo.to_str().unwrap();
    for args in [
        vec!["compare", "/dev/zero", "/dev/zero"],
        vec!["report", "/dev/zero", "--html", "-"],
        vec!["history", "--import", "/dev/zero"],
        vec!["report", fifo],
        vec!["compare", fifo, fifo],
        vec!["history", "--import", fifo],
        vec!["net", "serve", "--token-file", fifo, "--bind", "127.0.0.1"],
        vec!["run", "--profile", fifo],
    ] {
        let out = peakbench(&db)
            .args(&args)
            .timeout(Duration::from_secs(30))
            .assert()
            .code(2);
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
    }
    let big = dir.path().join("big.json");
    std::fs::write(&big, vec![b' '; 4096]).unwrap();
    let out = peakbench(&db)
        .args(["compare", "--max-input", "1Ki"])
        .arg(&big)
        .arg(&big)
        .assert()
        .code(2);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("1024 bytes") && err.contains("--max-input"),
        "{err}"
    );
}

/// Listing, comparing and reporting only read the database: they work when it lies on a
/// read-only file system (a shared, mounted-read-only history) and change nothing.
#[test]
fn a_read_only_database_can_be_read() {
    let Some((dir, _unmount)) = common::tmpfs("size=8m") else {
        return;
    };
    let db = dir.path().join("history.db");
    peakbench(&db)
        .args(["history", "--import"])
        .arg(fixture("base.json"))
        .assert()
        .success();
    let remount = std::process::Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(remount.success());
    let before: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let listed = peakbench(&db)
        .args(["history", "--json"])
        .assert()
        .success();
    let runs: serde_json::Value = serde_json::from_slice(&listed.get_output().stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 1);
    peakbench(&db)
        .args(["compare", "latest", "latest", "--json"])
        .assert()
        .success();
    peakbench(&db)
        .args(["report", "latest", "--html", "-"])
        .assert()
        .success();
    let after: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after);
}

/// Item 14 of issue 16: a results database on a full file system (a tmpfs of its own, filled;
/// root only). Importing into a new one fails with one line naming the database and the full
/// file system, and leaves no file (no empty database, no -wal/-shm); storing into an existing
/// one fails the same way (SQLite's "database or disk is full" and "disk I/O error" both) and
/// leaves its runs readable; a benchmark whose run cannot be stored says so in one warning and
/// still writes its results.
#[test]
fn a_full_file_system_is_said_in_one_line() {
    let Some((dir, _unmount)) = common::tmpfs("size=1m") else {
        return;
    };
    let d = dir.path().to_str().unwrap();
    let full = format!(
        "the file system of {d} is full; free space there or choose another database with --db"
    );
    let old = dir.path().join("old.db");
    let old_s = old.to_str().unwrap();
    let import = |db: &str, name: &str| {
        let file = fixture(name);
        vec![
            "history".to_string(),
            "--db".into(),
            db.into(),
            "--import".into(),
            file.to_str().unwrap().into(),
        ]
    };
    peakbench(&old)
        .args(import(old_s, "base.json"))
        .assert()
        .success();
    // Held open here: its -wal and -shm exist, so that the next writes fail inside SQLite.
    let mut store = Store::open(&old).unwrap();
    common::fill(dir.path());
    let new_db = |names: Vec<String>| names.iter().any(|n| n.starts_with("new.db"));

    let new = format!("{d}/new.db");
    let args = import(&new, "base.json");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    common::one_line_exit(
        &args,
        1,
        &[&format!("cannot open the results database {new}: "), &full],
    );
    assert!(!new_db(common::left_in(dir.path())));

    let args = import(old_s, "regressed.json");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    common::one_line_exit(&args, 1, &[&format!("results database {old_s}: "), &full]);
    let mut big = common::fixed_report();
    let records = big.results.clone();
    for _ in 0..200 {
        big.results.extend(records.iter().cloned());
    }
    let e = store.import(&big).unwrap_err().to_string();
    assert!(
        e.starts_with("cannot store the") && e.contains(old_s) && e.contains(&full),
        "{e}"
    );
    drop(store);
    let listed = peakbench(&old)
        .args(["history", "--json"])
        .assert()
        .success();
    let runs: serde_json::Value = serde_json::from_slice(&listed.get_output().stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 1, "{runs}");

    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("r.json");
    let run = peakbench(Path::new(&new))
        .args([
            "cpu",
            "--workload",
            "NULL",
            "--threads",
            "1",
            "--repeat",
            "1",
        ])
        .args(["--warmup", "0", "--quiet", "--json"])
        .arg(&json)
        .assert()
        .success();
    let err = String::from_utf8(run.get_output().stderr.clone()).unwrap();
    // The warning, then --quiet's one line: where the results are.
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(
        err.lines().nth(1).unwrap().starts_with("peakbench: wrote "),
        "{err}"
    );
    assert!(
        err.contains("warning: the run is not stored in the history: ") && err.contains(&full),
        "{err}"
    );
    assert!(json.is_file());
    assert!(!new_db(common::left_in(dir.path())));
}

/// Two real loopback runs (each with its own in-process server on an ephemeral port) pair every
/// point: the port is no part of a point's identity. A copy of a paced UDP run (goodput steady
/// at its target rate, so its repetitions decide) with the figures 20 % worse exits 3; a copy
/// missing a point lists it as only in A.
#[test]
fn two_loopback_runs_pair_every_point_and_a_network_drop_regresses() {
    // Its repetitions' spread decides the regression: alone.
    let _share = common::share(true);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let run = |name: &str, args: &[&str]| {
        let path = dir.path().join(name);
        peakbench(&db)
            .args(["net", "--loopback", "--protocol"])
            .args(args)
            .args(["--omit", "0s", "--no-history", "--quiet", "--json"])
            .arg(&path)
            .assert()
            .success();
        path
    };
    let every = ["tcp,udp", "--duration", "100ms", "--repeat", "2"];
    let (a, b) = (run("a.json", &every), run("b.json", &every));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&a).unwrap()).unwrap();
    let points = report["results"].as_array().unwrap().len();
    assert!(points >= 4, "{points} points");
    let compare = |x: &Path, y: &Path| {
        let out = peakbench(&db)
            .arg("compare")
            .arg(x)
            .arg(y)
            .args(["--json", "-"])
            .output()
            .unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code(), doc)
    };
    let (code, doc) = compare(&a, &b);
    assert_ne!(code, Some(2), "{doc}");
    assert_eq!(doc["changes"].as_array().unwrap().len(), points, "{doc}");
    assert!(doc["only_in_a"].as_array().unwrap().is_empty(), "{doc}");
    assert!(doc["only_in_b"].as_array().unwrap().is_empty(), "{doc}");

    // The network figures 20 % worse: a regression, exit 3.
    let paced = run(
        "paced.json",
        &[
            "udp",
            "--workload",
            "THROUGHPUT",
            "--rate",
            "200M",
            "--duration",
            "200ms",
            "--repeat",
            "5",
        ],
    );
    let paced_report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&paced).unwrap()).unwrap();
    let worse = dir.path().join("worse.json");
    std::fs::write(
        &worse,
        serde_json::to_vec(&scaled(&paced_report, 0.8)).unwrap(),
    )
    .unwrap();
    let (code, doc) = compare(&paced, &worse);
    assert_eq!(code, Some(3), "{doc}");
    assert!(
        doc["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["subsystem"] == "net" && c["regression"] == true),
        "{doc}"
    );

    // One point missing from B: listed by its label, in the table too.
    let mut fewer = report.clone();
    let gone = fewer["results"].as_array_mut().unwrap().pop().unwrap();
    let fewer_path = dir.path().join("fewer.json");
    std::fs::write(&fewer_path, serde_json::to_vec(&fewer).unwrap()).unwrap();
    let (_, doc) = compare(&a, &fewer_path);
    let only = doc["only_in_a"].as_array().unwrap();
    assert_eq!(only.len(), 1, "{doc}");
    assert_eq!(only[0]["workload"], gone["workload"]);
    assert_eq!(only[0]["metric"], gone["metric"]);
    let out = peakbench(&db)
        .arg("compare")
        .arg(&a)
        .arg(&fewer_path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("only in A (1 points, not compared)"),
        "{text}"
    );
    assert!(text.contains(only[0]["label"].as_str().unwrap()), "{text}");
}

/// Two repetitions of a noisy point: "inconclusive" with the smallest change they detect, exit
/// 0, and the advice to repeat more.
#[test]
fn two_noisy_repetitions_are_inconclusive() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let mut report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("base.json")).unwrap()).unwrap();
    for rec in report["results"].as_array_mut().unwrap() {
        let m = rec["mean"].as_f64().unwrap();
        rec["samples"] = serde_json::json!([m * 0.95, m * 1.05]);
    }
    let a = dir.path().join("a.json");
    std::fs::write(&a, serde_json::to_vec(&report).unwrap()).unwrap();
    let b = dir.path().join("b.json");
    std::fs::write(&b, serde_json::to_vec(&scaled(&report, 0.97)).unwrap()).unwrap();
    let out = peakbench(&db)
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("inconclusive"), "{text}");
    assert!(!text.contains("no significant change"), "{text}");
    assert!(text.contains("--repeat"), "{text}");
    // --json FILE, as every other command's: the document in the file, where it went said.
    let file = dir.path().join("cmp.json");
    let out = peakbench(&db)
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .arg("--json")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("wrote "));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let changes = doc["changes"].as_array().unwrap();
    assert!(!changes.is_empty());
    assert!(
        changes
            .iter()
            .all(|c| c["inconclusive"] == true && c["detectable_change"].as_f64().unwrap() > 0.03),
        "{doc}"
    );
}

/// What `peakbench ARGS…` may have of address space beyond ten times its input's size: what a
/// tiny document needs, with room. `report` of base.json needs 31 MiB in a debug build (16 MiB
/// in release): the binary's mappings, the main thread's stack, the allocator's heap; it runs on
/// one thread, so no other thread's stack or allocator arena counts.
const ADDRESS_BASE: u64 = 48 << 20;

/// Runs `peakbench ARGS…` with its address space (RLIMIT_AS, set in the child before it runs)
/// limited to ten times the size of `input` and [`ADDRESS_BASE`]: a process that needs more
/// fails to allocate and aborts. `hang` bounds how long it may take.
fn within_memory(
    args: &[&std::ffi::OsStr],
    input: &Path,
    db: &Path,
    hang: Duration,
) -> assert_cmd::assert::Assert {
    use std::os::unix::process::CommandExt;
    let limit = 10 * std::fs::metadata(input).unwrap().len() + ADDRESS_BASE;
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"));
    cmd.env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1)
        .env("PEAKBENCH_DB", db)
        .env("COLUMNS", "1000")
        .args(args);
    // SAFETY: between fork and exec the child only calls setrlimit, which is
    // async-signal-safe, with a value computed before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let l = libc::rlimit {
                rlim_cur: limit as libc::rlim_t,
                rlim_max: limit as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &l) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    Command::from_std(cmd).timeout(hang).assert()
}

/// A run of many points is reported in one pass over them and in memory of a few times the
/// document's size: the summary of 40,000 records (36 MB, [`common::scaled_document`]: a quick
/// run's records on 159 nodes, each with a sweep over threads) stays within ten times the file
/// and finishes in seconds. Before, every point was looked for among all the others (minutes
/// even in a release build, past the hang bound), and the document was read as a tree of JSON
/// values first (ten times the file and more).
#[test]
fn a_run_of_many_points_is_reported_within_memory_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("many.json");
    std::fs::write(&doc, common::scaled_document(40_000)).unwrap();
    let out = within_memory(
        &["report".as_ref(), doc.as_os_str()],
        &doc,
        &dir.path().join("history.db"),
        Duration::from_secs(120),
    )
    .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    // A row per node's DP sweep (threads 2–8), the last node's sweep cut short (2–6).
    let dp: Vec<&str> = text.lines().filter(|l| l.starts_with("DP ")).collect();
    assert_eq!(dp.len(), 159, "{text}");
    assert!(
        dp[0].contains("2–8") && dp[0].contains("node 0"),
        "{}",
        dp[0]
    );
    assert!(
        dp[158].contains("2–6") && dp[158].contains("node 158"),
        "{}",
        dp[158]
    );
    assert!(
        text.contains("CPU: 1905 points with a known peak"),
        "{text}"
    );
}

/// A JSON document that is not a results document is refused, by `report`, `compare` and
/// `history --import` alike, within ten times its size in memory: an 8 MiB array of zeros was
/// read whole as a tree of JSON values (147 MB) before its version was looked for.
#[test]
fn an_array_of_zeros_is_refused_within_memory() {
    let dir = tempfile::tempdir().unwrap();
    let zeros = dir.path().join("zeros.json");
    let mut bytes = vec![b'['];
    while bytes.len() < (8 << 20) - 2 {
        bytes.extend_from_slice(b"0,");
    }
    bytes.extend_from_slice(b"0]");
    std::fs::write(&zeros, bytes).unwrap();
    let z = zeros.as_os_str();
    for args in [
        vec!["report".as_ref(), z],
        vec!["compare".as_ref(), z, z],
        vec!["history".as_ref(), "--import".as_ref(), z],
    ] {
        let out = within_memory(
            &args,
            &zeros,
            &dir.path().join("history.db"),
            Duration::from_secs(60),
        )
        .code(2);
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("not a peakbench results document"),
            "{args:?}: {err}"
        );
    }
}

/// Not a test: writes [`common::scaled_document`] of `PEAKBENCH_SCALE_RECORDS` records (100,000
/// by default) to the file `PEAKBENCH_SCALE_OUT`, for bench/report-scale.sh.
#[test]
#[ignore = "writes bench/report-scale.sh's document"]
fn write_scaled_document() {
    let out = std::env::var("PEAKBENCH_SCALE_OUT").expect("PEAKBENCH_SCALE_OUT names the file");
    let records = std::env::var("PEAKBENCH_SCALE_RECORDS").map_or(100_000, |n| n.parse().unwrap());
    std::fs::write(out, common::scaled_document(records)).unwrap();
}

/// A peak that overflows is never stored as `null`, and a row that holds one reads (row 9 of the
/// security issue): a document of schema version 2 whose peak of 10³⁰⁸ GOPS is infinite in
/// op/s is imported with that peak unknown and why; a row an earlier peakbench stored with
/// `"value": null` in its peak (written here by hand, as its `add_records` did) reads with the
/// peak unknown too. Listing, reporting, exporting and comparing the database all work.
#[test]
fn an_overflowing_peak_is_stored_unknown_and_a_null_one_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("base.json")).unwrap()).unwrap();
    doc["results"][0]["peak"]["value"] = serde_json::json!(1e308);
    let huge = dir.path().join("huge.json");
    std::fs::write(&huge, serde_json::to_vec(&doc).unwrap()).unwrap();
    peakbench(&db)
        .args(["history", "--import"])
        .arg(&huge)
        .arg(fixture("regressed.json"))
        .assert()
        .success();
    // Run 1 was stored with a reason where its peak was, nothing `null` where a number is.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let record: String = conn
        .query_row(
            "SELECT record FROM points WHERE run_id = 1 ORDER BY seq LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let stored: serde_json::Value = serde_json::from_str(&record).unwrap();
    assert!(stored["peak"].is_null(), "{stored}");
    assert!(
        stored["peak_unknown_reason"]
            .as_str()
            .is_some_and(|w| w.contains("not a finite number")),
        "{stored}"
    );
    // Run 2's first point as an earlier peakbench stored an overflowed peak.
    let changed = conn
        .execute(
            "UPDATE points SET record = json_set(record, '$.peak.value', json('null')) \
             WHERE run_id = 2 AND seq = 0",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(conn);
    peakbench(&db).arg("history").assert().success();
    for run in ["1", "2"] {
        let out = peakbench(&db)
            .args(["history", "export", run, "--json", "-"])
            .assert()
            .success();
        let back: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        let rec = &back["results"][0];
        assert!(rec["peak"].is_null(), "run {run}: {rec}");
        assert!(
            rec["peak_unknown_reason"]
                .as_str()
                .is_some_and(|w| w.contains("not a finite number")),
            "run {run}: {rec}"
        );
        assert_eq!(common::schema_errors(&back), Vec::<String>::new());
        peakbench(&db).args(["report", run]).assert().success();
    }
    // base against regressed: a regression (exit code 3), not an unreadable run.
    for (a, b) in [("1", "2"), ("latest~1", "latest")] {
        let out = peakbench(&db).args(["compare", a, b]).assert();
        let code = out.get_output().status.code();
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(matches!(code, Some(0 | 3)), "{code:?}: {err}");
        assert!(!err.contains("unreadable"), "{err}");
    }
}
