//! What a user meets first: the help, shell completions and man pages, the usual short flags
//! and one size grammar, the progress bar on a terminal, the README's promises and a quick run
//! on a screen of 100 columns.

mod common;

use common::{peakbench, read_json};
use serde_json::Value;

/// Shell completions and man pages come from the clap definitions: every subcommand and option
/// is in them, the bash script parses, and a shell not supported is refused in one line.
#[test]
fn completions_and_man_pages_cover_the_commands() {
    let out = peakbench().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    let script = String::from_utf8(out.stdout).unwrap();
    for word in [
        "_peakbench",
        "cpu",
        "--workload",
        "--total-bytes",
        "compare",
    ] {
        assert!(script.contains(word), "bash completion lacks {word}");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("peakbench.bash");
    std::fs::write(&file, &script).unwrap();
    match std::process::Command::new("bash")
        .arg("-n")
        .arg(&file)
        .status()
    {
        Ok(s) => assert!(s.success(), "bash -n rejects the completion script"),
        Err(e) => println!("SKIPPED: bash -n: {e}"),
    }
    for (shell, mark) in [
        ("zsh", "#compdef peakbench"),
        ("fish", "complete -c peakbench"),
    ] {
        let out = peakbench().args(["completions", shell]).output().unwrap();
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(mark),
            "{shell}"
        );
    }
    let out = peakbench().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);

    let out = peakbench().arg("man").output().unwrap();
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(
        page.contains(".TH peakbench 1") && page.contains("SYNOPSIS"),
        "{page}"
    );
    let pages = dir.path().join("man1");
    peakbench()
        .args(["man", "--out-dir"])
        .arg(&pages)
        .assert()
        .success();
    let cpu = std::fs::read_to_string(pages.join("peakbench-cpu.1")).unwrap();
    assert!(
        cpu.contains("\\-\\-threads") || cpu.contains("--threads"),
        "{cpu}"
    );
    assert!(pages.join("peakbench-net-serve.1").is_file());
}

/// The usual habits: `-t` with a range or `all`, `-o` for the JSON file, `-q`; one size grammar
/// (4k = 4096 B, 4kB = 4000 B) in every subsystem.
#[test]
fn short_flags_ranges_and_one_size_grammar() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    peakbench()
        .args([
            "cpu",
            "--workload",
            "NULL",
            "-t",
            "1..2",
            "--repeat",
            "2",
            "-q",
            "-o",
        ])
        .arg(&json)
        .assert()
        .success()
        .stdout("");
    let threads: Vec<u64> = read_json(&json)["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["params"]["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, [1, 2]);
    let all = std::thread::available_parallelism().unwrap().get() as u64;
    peakbench()
        .args([
            "cpu",
            "--workload",
            "NULL",
            "-t",
            "all",
            "--repeat",
            "2",
            "-q",
            "-o",
        ])
        .arg(&json)
        .assert()
        .success();
    assert_eq!(read_json(&json)["results"][0]["params"]["threads"], all);
    peakbench()
        .args([
            "mem",
            "--workload",
            "RWS",
            "-t",
            "1",
            "--block-size",
            "4k,4kB",
        ])
        .args([
            "--array-size",
            "1M",
            "--duration",
            "5ms",
            "--repeat",
            "2",
            "-q",
            "-o",
        ])
        .arg(&json)
        .assert()
        .success();
    let blocks: Vec<u64> = read_json(&json)["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == "throughput")
        .map(|r| r["params"]["block_size_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(blocks, [4096, 4000]);
    // -q and -v together, a backwards range: one line, exit 2.
    for args in [
        &["cpu", "--workload", "NULL", "-q", "-v"][..],
        &["cpu", "--workload", "NULL", "-t", "4..1"][..],
    ] {
        let out = peakbench().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    }
}

/// On a terminal every multi-point run shows a progress bar with the time elapsed and an
/// estimate of what is left (run under `script`, which gives it a pseudo-terminal).
#[test]
fn a_terminal_shows_progress_with_time_left() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        println!("SKIPPED: script (bsdutils) not found, no pseudo-terminal to run under");
        return;
    }
    let db = tempfile::tempdir().unwrap();
    let line = format!(
        "{} cpu --workload DP --threads 1,2 --duration 200ms --repeat 2 --warmup 0 --no-history",
        env!("CARGO_BIN_EXE_peakbench")
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env("PEAKBENCH_DB", db.path().join("h.db"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("rounds, ") && text.contains(" elapsed, about ") && text.contains(" left"),
        "{text}"
    );
}

/// What a new user looks for: the install section, the minimum Rust and the licence, a sample
/// of the output and a picture of the report, all where the README says.
#[test]
fn install_licence_and_samples_are_where_the_readme_says() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    let cargo = read("Cargo.toml");
    assert!(cargo.contains("license = \"MIT\"") && cargo.contains("rust-version = \"1.89\""));
    assert!(read("LICENSE").starts_with("MIT License"));
    let readme = read("README.md");
    let first: Vec<&str> = readme.lines().take(16).collect();
    assert!(
        first
            .iter()
            .any(|l| l.starts_with("cargo run --release -- run --profile quick"))
            && first.iter().any(|l| l.starts_with("cargo test")),
        "the README's first lines give the two commands"
    );
    for text in [
        "cargo install --path .",
        "Rust 1.89",
        "peakbench completions",
        "peakbench man",
    ] {
        assert!(readme.contains(text), "{text} missing from the README");
    }
    assert!(
        readme.contains("Workload  Thr  Variant               GOPS"),
        "a sample of the terminal's summary"
    );
    // `peakbench` is not on PATH after `cargo run`: the README says what it stands for.
    assert!(
        readme.contains("`peakbench` stands for `cargo run --release --`"),
        "what `peakbench` means in the README"
    );
    let shot = readme
        .split("](docs/")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .expect("a picture of the report");
    let png = std::fs::read(root.join("docs").join(shot)).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}

/// `COLUMNS=100 peakbench run --profile quick` fits the terminal: its plan (the lines the
/// dry run prints are the run's own: the plan, the machine and a line a job), the summary of a
/// recorded quick run and its two closing lines (done, stored) are at most 60 lines, none wider
/// than 100 columns; `-v` prints every point as a row.
#[test]
fn a_quick_run_fits_a_screen_of_100_columns() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/history/quick.json"
    );
    let plan = peakbench()
        .args(["run", "--profile", "quick", "--dry-run"])
        .env("COLUMNS", "100")
        .assert()
        .success();
    let out = plan.get_output();
    let plan = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let summary = peakbench()
        .args(["report", fixture])
        .env("COLUMNS", "100")
        .assert()
        .success();
    let summary = String::from_utf8(summary.get_output().stdout.clone()).unwrap();
    for line in plan.lines().chain(summary.lines()) {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    let lines = plan.lines().count() + summary.lines().count() + 2;
    assert!(lines <= 60, "{lines} lines:\n{plan}{summary}");
    // The headline figures are there: the staircase as its levels, disk and network points.
    for text in [
        "L1 (thp)",
        "L3 (thp)",
        "4 KiB QD32",
        "UDP 1400 B",
        "Mbit/s",
        "IOPS",
    ] {
        assert!(summary.contains(text), "{text} missing:\n{summary}");
    }
    assert!(
        !summary.contains("5.6 KiB thp"),
        "a staircase step is no summary row"
    );
    // -v: a row per point.
    let doc: Value = serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
    let points = doc["results"].as_array().unwrap().len();
    let every = peakbench()
        .args(["report", fixture, "-v"])
        .env("COLUMNS", "1000")
        .assert()
        .success();
    let every = String::from_utf8(every.get_output().stdout.clone()).unwrap();
    let rows = every
        .lines()
        .filter(|l| l.starts_with("│ ") && !l.starts_with("│ Workload") && !l.starts_with("│  "))
        .count();
    assert_eq!(rows, points, "{every}");
}

/// The top-level help's one-liners are the registry's: `reference` names every tool
/// `reference check` lists, `run` every built-in profile, and `peak` says it covers more than
/// the CPU; every line fits 100 columns.
#[test]
fn the_help_names_every_tool_and_profile() {
    let out = peakbench()
        .env("COLUMNS", "100")
        .arg("--help")
        .assert()
        .success();
    let help = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for tool in peakbench::reference::Tool::ALL {
        assert!(flat.contains(tool.name()), "{}: {help}", tool.name());
    }
    for (profile, _) in peakbench::profile::BUILT_IN {
        assert!(flat.contains(profile), "{profile}: {help}");
    }
    assert!(!flat.contains("theoretical CPU peak"), "{help}");
    assert!(flat.contains("memory, disk and network"), "{help}");
    assert!(help.lines().all(|l| l.chars().count() <= 100), "{help}");
}

/// The notes on reference tools while a run goes on (here: no tool measures NULL) keep to the
/// terminal's width on standard error, wrapped, not cut: a note of 100 columns at 40.
#[test]
fn reference_notes_keep_to_the_terminal_width() {
    let out = peakbench()
        .args(["cpu", "--workload", "NULL", "--reference", "--repeat", "1"])
        .args(["--no-history", "--quiet"])
        .env("COLUMNS", "40")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let note = err
        .lines()
        .skip_while(|l| !l.starts_with("peakbench: reference:"))
        .take_while(|l| l.starts_with("peakbench: reference:") || l.starts_with("  "))
        .collect::<Vec<_>>();
    assert!(note.len() >= 2, "{err}");
    for line in &note {
        assert!(line.chars().count() <= 40, "{line}\n{err}");
    }
    let words: Vec<&str> = note.iter().flat_map(|l| l.split_whitespace()).collect();
    assert!(
        words
            .join(" ")
            .contains("no reference tool measures cpu NULL latency (its reference"),
        "{err}"
    );
}
