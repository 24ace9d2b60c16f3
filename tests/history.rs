//! The results database: runs stored point by point, listed and imported; a killed run stays
//! readable; any `--db` path, a read-only database and a full file system; pipes and refusals
//! leave nothing behind.

mod common;

use common::history::{fixture, peakbench};
use peakbench::history::Store;
use std::path::Path;
use std::time::{Duration, Instant};

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
        .args(["compare", "1", "1", "--json"])
        .assert()
        .success();
    peakbench(&db)
        .args(["report", "1", "--html", "-"])
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

/// A document peakbench writes carries its version and its content's sha256; `--import` takes
/// files and directories of them (a directory of cards: their subdirectories' documents), refuses
/// one changed since it was written before storing anything, and an imported run is never
/// `latest` (it was measured elsewhere, or before): only its id names it.
#[test]
fn imported_runs_are_checked_and_never_latest() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let cards = dir.path().join("cards");
    for name in ["a", "b"] {
        std::fs::create_dir_all(cards.join(name)).unwrap();
        peakbench(&db)
            .arg("report")
            .arg(fixture("base.json"))
            .arg("--json")
            .arg(cards.join(name).join("card.json"))
            .assert()
            .success();
    }
    let text = std::fs::read_to_string(cards.join("a/card.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["tool"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(doc["sha256"].as_str().unwrap().len(), 64, "{doc}");
    // A figure changed by hand: refused, in one line, and nothing is stored.
    let changed = dir.path().join("changed.json");
    let mut edited = doc.clone();
    edited["results"][0]["mean"] = serde_json::json!(1e12);
    std::fs::write(&changed, serde_json::to_vec_pretty(&edited).unwrap()).unwrap();
    let out = peakbench(&db)
        .args(["history", "--import"])
        .arg(&cards)
        .arg(&changed)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("changed after peakbench wrote it"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!db.exists() || Store::open(&db).unwrap().runs().unwrap().is_empty());
    // The directory of cards: both documents, and an older document without a hash.
    let out = peakbench(&db)
        .args(["history", "--import"])
        .arg(&cards)
        .arg(fixture("repeat.json"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("as run 1") && err.contains("as run 3"),
        "{err}"
    );
    assert!(err.contains("no sha256"), "{err}");
    let listed = peakbench(&db).args(["history", "--json"]).output().unwrap();
    let runs: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let statuses: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["imported"; 3]);
    // None was measured here: `latest` names none of them; their ids do.
    let out = peakbench(&db)
        .args(["compare", "latest", "2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no run 'latest'"));
    peakbench(&db)
        .args(["compare", "1", "2"])
        .assert()
        .success();
    // A directory without a document is said so.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = peakbench(&db)
        .args(["history", "--import"])
        .arg(&empty)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds no .json document"));
}
