//! `peakbench card`: the card's plan fits its budget and names its tools; a card (the mock
//! session, no tool on PATH: a test of what is written, not of the figures) is a directory of
//! its JSON and HTML page, and of its PNG summary where a figure has a peak or a tool's figure
//! (a recorded run's, drawn by `report --as card`); bad directories and views are one line and
//! exit 2.

mod common;

use assert_cmd::Command;
use serde_json::Value;

/// The binary with the clock's and the session's test doubles, no reference tool on PATH, in
/// `dir`.
fn card(dir: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_peakbench"));
    c.env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1)
        .env(common::MOCK_SESSION.0, common::MOCK_SESSION.1)
        .env("PEAKBENCH_DB", dir.join("h.db"))
        .env("COLUMNS", "1000")
        .env("PATH", dir.join("no-tools"))
        .current_dir(dir);
    c
}

/// The dry run: the card's eleven jobs, every subsystem, its estimate within its default budget
/// of 4 min 30 s, the network points against `--server` where given.
#[test]
fn the_cards_plan_fits_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let out = card(dir.path())
        .args(["card", "--dry-run", "--server", "127.0.0.1:5301"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("profile card") && err.contains("11 jobs"),
        "{err}"
    );
    assert!(err.contains("--budget 4 min 30 s"), "{err}");
    for sub in ["cpu", "mem", "disk", "net"] {
        assert!(text.contains(&format!("peakbench {sub} ")), "{sub}: {text}");
    }
    let net: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("peakbench net"))
        .collect();
    assert_eq!(net.len(), 2, "{text}");
    assert!(
        net.iter().all(|l| l.contains("--server=127.0.0.1:5301")),
        "{text}"
    );
    // A dry run writes nothing.
    let made: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(made.is_empty(), "{made:?}");
}

/// A card is its directory: the run's JSON (the card's points of every subsystem) and its HTML
/// page; the run is stored. The mock's figures have no peak and no tool ran: the card says it
/// has no summary image. A recorded run's summary is drawn by `report --as card`.
#[test]
fn a_card_writes_its_json_page_and_summary() {
    let _share = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let out = card(dir.path())
        .args(["card", "--dir", "c", "-q"])
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let c = dir.path().join("c");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(c.join("card.json")).unwrap()).unwrap();
    let results = doc["results"].as_array().unwrap();
    for sub in ["cpu", "mem", "disk", "net"] {
        assert!(results.iter().any(|r| r["subsystem"] == sub), "{sub}");
    }
    assert!(
        doc["command_line"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "card"),
        "{doc}"
    );
    let page = std::fs::read_to_string(c.join("card.html")).unwrap();
    assert!(page.contains("<svg") && page.contains("LINPACK"));
    assert!(!c.join("card.png").exists());
    assert!(err.contains("no summary image"), "{err}");
    // Stored like any run.
    let listed = card(dir.path())
        .args(["history", "--json", "-"])
        .output()
        .unwrap();
    let runs: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 1, "{runs}");
    // A recorded run's summary: the same image every time it is drawn.
    let quick =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history/quick.json");
    for out in ["a", "b"] {
        card(dir.path())
            .arg("report")
            .arg(&quick)
            .args(["--as", "card", "--png", out])
            .assert()
            .success();
    }
    let a = std::fs::read(dir.path().join("a/card.png")).unwrap();
    assert_eq!(&a[1..4], b"PNG");
    assert_eq!(a, std::fs::read(dir.path().join("b/card.png")).unwrap());
}

/// What cannot be written is said in one line, before anything runs.
#[test]
fn bad_places_and_views_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file"), "x").unwrap();
    for (args, says) in [
        (vec!["card", "--dir", "missing/c"], "missing"),
        (vec!["card", "--dir", "file"], "not a directory"),
        (vec!["card", "--budget", "soon"], "not a duration"),
        (
            vec!["report", "x.json", "--as", "card"],
            "--png DIR or --html FILE",
        ),
        (
            vec!["report", "x.json", "--as", "card", "--markdown", "m.md"],
            "drop --markdown",
        ),
    ] {
        let out = card(dir.path()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// The machines' cards in tests/fixtures/machines/ are as peakbench wrote them: each reads back
/// with its sha256 matching its content (never edited by hand), is a `peakbench card` run, and
/// draws its summary.
#[test]
fn the_recorded_machine_cards_are_as_peakbench_wrote_them() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/machines");
    let mut cards = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let report = peakbench::results::Report::from_json(&std::fs::read(&path).unwrap()).unwrap();
        let name = path.display();
        assert!(report.sha256.is_some(), "{name}: no sha256");
        assert_eq!(report.check_sha256(), Ok(()), "{name}");
        assert!(
            report.command_line.iter().any(|a| a == "card"),
            "{name}: {:?}",
            report.command_line
        );
        assert!(
            peakbench::report::card::png(&report).unwrap().is_some(),
            "{name}"
        );
        cards += 1;
    }
    assert!(cards >= 1, "no card in {}", dir.display());
}
