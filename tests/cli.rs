//! CLI tests against the real binary. The NULL workload makes them exact: its points have a
//! known shape whatever the machine.

mod common;

use assert_cmd::Command;
use serde_json::Value;
use std::time::{Duration, Instant};

/// The binary with the clock probes' test double: these tests are of parsing and reporting.
fn peakbench() -> Command {
    let mut c = real();
    c.env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1);
    c
}

/// The binary as users run it: the clock probed.
fn real() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_peakbench"));
    c.env("PEAKBENCH_DB", common::test_db());
    c
}

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn null_workload_writes_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let (json, csv, md) = (
        dir.path().join("r.json"),
        dir.path().join("r.csv"),
        dir.path().join("r.md"),
    );
    peakbench()
        .args([
            "cpu",
            "--workload",
            "NULL",
            "--threads",
            "1,2",
            "--repeat",
            "4",
            "--warmup",
            "0",
            "--quiet",
        ])
        .arg("--json")
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .arg("--markdown")
        .arg(&md)
        .assert()
        .success()
        .stdout("");
    let doc = read_json(&json);
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    assert_eq!(doc["schema_version"], 4);
    assert_eq!(doc["command_line"][1], "cpu");
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for (rec, threads) in results.iter().zip([1, 2]) {
        assert_eq!(rec["subsystem"], "cpu");
        assert_eq!(rec["workload"], "NULL");
        assert_eq!(rec["unit"], "s");
        assert_eq!(rec["metric"], "latency");
        assert_eq!(rec["params"]["threads"], threads);
        assert_eq!(rec["samples"].as_array().unwrap().len(), 4);
        assert!(rec["peak"].is_null());
        assert!(
            rec["peak_unknown_reason"]
                .as_str()
                .unwrap()
                .contains("no peak")
        );
    }
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv.lines().count(), 3);
    // Times in the unit that suits them (an empty operation's overhead: ns or µs).
    let first = csv.lines().nth(1).unwrap();
    assert!(
        ["ns", "µs"]
            .iter()
            .any(|u| first.starts_with(&format!("cpu,NULL,latency,{u},1,"))),
        "{first}"
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("| NULL | 2 |"), "{md}");
}

#[test]
fn table_on_stdout_and_json_on_stdout() {
    let out = peakbench()
        .args([
            "cpu",
            "--workload",
            "NULL",
            "--threads",
            "1",
            "--repeat",
            "2",
        ])
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    // The summary: the workload and its figure's column, unit in the header.
    assert!(stdout.contains("lat ns"), "{stdout}");
    assert!(stdout.contains("NULL"));

    let out = peakbench()
        .args([
            "cpu",
            "--workload",
            "NULL",
            "--threads",
            "1",
            "--repeat",
            "2",
            "--json",
            "-",
        ])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc["results"].as_array().unwrap().len(), 1);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("lat ns") && stderr.contains("NULL"),
        "the table moves to stderr: {stderr}"
    );
}

#[test]
fn user_overrides_make_the_peak_exact() {
    let out = peakbench()
        .args([
            "cpu",
            "--workload",
            "DP,SP",
            "--threads",
            "1",
            "--repeat",
            "1",
            "--warmup",
            "0",
        ])
        .args([
            "--duration",
            "5ms",
            "--clock-ghz",
            "2",
            "--ops-per-cycle",
            "DP=10",
            "--peak",
            "SP=50",
        ])
        .args(["--quiet", "--json", "-"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    let dp = &doc["results"][0];
    assert_eq!(dp["workload"], "DP");
    assert_eq!(dp["unit"], "op/s");
    assert_eq!(dp["peak"]["value"], 20e9);
    assert_eq!(dp["peak"]["inputs"]["clock"]["source"], "user");
    assert_eq!(dp["peak"]["inputs"]["ops_per_cycle"]["source"], "user");
    let eff = dp["efficiency"].as_f64().unwrap();
    let mean = dp["mean"].as_f64().unwrap();
    assert!((eff - mean / 20e9).abs() < 1e-12);
    let sp = &doc["results"][1];
    assert_eq!(sp["peak"]["value"], 50e9);
    assert_eq!(sp["peak"]["inputs"]["peak_per_core"]["source"], "user");
}

#[test]
fn real_workload_reports_isa_and_work_model() {
    let out = peakbench()
        .args([
            "cpu",
            "--workload",
            "INT32",
            "--threads",
            "1",
            "--repeat",
            "1",
            "--warmup",
            "0",
        ])
        .args(["--duration", "5ms", "--quiet", "--json", "-"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let rec = &doc["results"][0];
    assert_eq!(rec["params"]["isa"], doc["system"]["cpu"]["isas"][0]);
    assert!(rec["params"]["ops_per_iteration"].as_u64().unwrap() > 0);
    assert!(rec["mean"].as_f64().unwrap() > 0.0);
    // Either a peak with its formula, or the reason there is none.
    assert!(rec["peak"]["formula"].is_string() || rec["peak_unknown_reason"].is_string());
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let absent_isa = if cfg!(target_arch = "x86_64") {
        "neon"
    } else {
        "avx512"
    };
    let cases: &[(&[&str], &str)] = &[
        (&["cpu", "--threads", "0"], "between 1 and 4096"),
        (&["cpu", "--threads", "abc"], "'abc' is not a whole number"),
        (&["cpu", "--threads", "1,,2"], "has an empty entry"),
        (&["cpu", "--repeat", "0"], "between 1 and 1000"),
        (&["cpu", "--workload", "FOO"], "unknown CPU workload 'FOO'"),
        (&["cpu", "--isa", "mmx"], "unknown ISA 'mmx'"),
        (
            &["cpu", "--workload", "DP", "--isa", absent_isa],
            "is not available on this CPU",
        ),
        (&["cpu", "--duration", "fast"], "not a duration"),
        (&["cpu", "--clock-ghz", "0"], "not a positive number"),
        (&["cpu", "--clock-ghz=-1"], "not a positive number"),
        (&["cpu", "--ops-per-cycle", "DP"], "WORKLOAD=VALUE"),
        (
            &[
                "cpu",
                "--workload",
                "NULL",
                "--json",
                "/nonexistent-dir/x.json",
            ],
            "does not exist",
        ),
        (&["frobnicate"], "unrecognized subcommand"),
    ];
    for (args, expected) in cases {
        common::one_line_exit_2(args, expected);
    }
}

#[test]
fn sysinfo_json_follows_the_schema() {
    let out = real().args(["sysinfo", "--json", "-"]).assert().success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    assert_eq!(doc["results"].as_array().unwrap().len(), 0);
    assert!(doc["system"]["cpu"]["threads"].as_u64().unwrap() >= 1);
    let table = real().arg("sysinfo").assert().success();
    let text = String::from_utf8(table.get_output().stdout.clone()).unwrap();
    assert!(text.contains("Core clock, 1 thread"), "{text}");
    assert!(text.contains("Core clock, all"), "{text}");
    assert!(text.contains("imul r64 chain × 3 cycles"), "{text}");
    let cpu = &doc["system"]["cpu"];
    assert!(cpu["clock_probes"].as_array().unwrap().len() >= 2, "{cpu}");
    assert!(
        cpu["all_core_clock_ghz"]["value"].is_number()
            || cpu["all_core_clock_ghz"]["unknown_reason"].is_string()
    );
}

/// A run killed midway leaves a valid JSON file with the points measured before the kill.
#[test]
fn killed_run_keeps_finished_points() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("partial.json");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .env("PEAKBENCH_DB", common::test_db())
        .args([
            "cpu",
            "--workload",
            "NULL,DP",
            "--threads",
            "1",
            "--repeat",
            "50",
            "--duration",
            "1s",
            "--quiet",
        ])
        .arg("--json")
        .arg(&json)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !json.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let doc = read_json(&json);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "only the NULL point finished");
    assert_eq!(results[0]["workload"], "NULL");
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no temporary file left behind: {leftovers:?}"
    );
}

#[test]
fn mem_null_and_tiny_points_follow_the_schema() {
    let out = peakbench()
        .args([
            "mem",
            "--workload",
            "NULL,COPY,RWR,LATENCY",
            "--threads",
            "1,2",
            "--repeat",
            "2",
        ])
        .args([
            "--warmup",
            "0",
            "--duration",
            "2ms",
            "--array-size",
            "1Mi",
            "--block-size",
            "1KB,64Ki",
        ])
        .args([
            "--latency-max",
            "32Ki",
            "--huge-pages",
            "off",
            "--quiet",
            "--json",
            "-",
        ])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    let results = doc["results"].as_array().unwrap();
    let of = |w: &str| {
        results
            .iter()
            .filter(|r| r["workload"] == w)
            .collect::<Vec<_>>()
    };
    assert_eq!(of("NULL").len(), 2);
    assert_eq!(of("COPY").len(), 2);
    // 2 block sizes × 2 thread counts, each its throughput and the time of one operation.
    assert_eq!(of("RWR").len(), 8);
    let (rates, ops): (Vec<&Value>, Vec<&Value>) = of("RWR")
        .into_iter()
        .partition(|r| r["metric"] == "throughput");
    assert_eq!((rates.len(), ops.len()), (4, 4));
    for r in &ops {
        assert!(r["metric"] == "latency" && r["unit"] == "s", "{r}");
        assert!(r["mean"].as_f64().unwrap() > 0.0, "{r}");
    }
    for r in of("COPY").iter().chain(rates.iter()) {
        assert_eq!(r["unit"], "B/s");
        assert_eq!(r["samples"].as_array().unwrap().len(), 2);
        // No SMBIOS here or there: unknown with the reason, unless the machine has one.
        assert!(r["peak"].is_object() || r["peak_unknown_reason"].is_string());
    }
    assert_eq!(of("RWR")[0]["params"]["block_size_bytes"], 1000);
    assert_eq!(of("RWR")[0]["params"]["order"], "random");
    // --threads 1,2 given: the staircase at each count, the two-thread one with both chains.
    for threads in [1, 2] {
        let chase: Vec<&Value> = of("LATENCY")
            .into_iter()
            .filter(|r| r["params"]["probe"] == "chase" && r["params"]["threads"] == threads)
            .collect();
        assert_eq!(chase.len(), 7, "4, 5.6, 8, 11.3, 16, 22.6 and 32 KiB");
        for r in chase {
            let each = r["params"]["thread_latency_ns"].as_array().unwrap();
            assert_eq!(each.len(), threads, "{r}");
        }
    }
}

#[test]
fn mem_user_peak_gives_efficiency() {
    let out = peakbench()
        .args([
            "mem",
            "--workload",
            "TRIAD",
            "--threads",
            "1",
            "--repeat",
            "1",
            "--warmup",
            "0",
        ])
        .args([
            "--duration",
            "2ms",
            "--array-size",
            "1Mi",
            "--mem-channels",
            "2",
            "--mem-mts",
            "4800",
        ])
        .args(["--quiet", "--json", "-"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let r = &doc["results"][0];
    assert_eq!(r["peak"]["value"], 76.8e9);
    assert_eq!(r["peak"]["inputs"]["channels"]["source"], "user");
    let eff = r["efficiency"].as_f64().unwrap();
    assert!((eff - r["mean"].as_f64().unwrap() / 76.8e9).abs() < 1e-12);
}

#[test]
fn mem_bad_input_is_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["mem", "--block-size", "0"],
            "--block-size 0 is out of range",
        ),
        (
            &["mem", "--block-size", "2G"],
            "out of range: use 1 B to 1 GiB",
        ),
        (&["mem", "--block-size", "1X"], "'1X' is not a size"),
        (
            &[
                "mem",
                "--workload",
                "RWS",
                "--array-size",
                "1Mi",
                "--block-size",
                "10M",
            ],
            "larger than each thread's array",
        ),
        (
            &["mem", "--array-size", "1000T"],
            "more than 90 % of the available memory",
        ),
        (
            &["mem", "--workload", "LATENCY", "--latency-max", "1000T"],
            "more than 90 % of the available memory",
        ),
        (
            &["mem", "--workload", "STREAM"],
            "unknown memory workload 'STREAM'",
        ),
        (&["mem", "--mem-channels", "2"], "--mem-mts"),
        (&["mem", "--threads", "0"], "between 1 and 4096"),
    ];
    for (args, expected) in cases {
        common::one_line_exit_2(args, expected);
    }
}

/// `peak` computes another machine's theoretical peak without measuring: the example.
#[test]
fn peak_for_another_machine() {
    let haswell = |columns: &str| {
        let out = peakbench()
            .args([
                "peak", "--uarch", "haswell", "--cores", "24", "--ghz", "2.3",
            ])
            .env("COLUMNS", columns)
            .assert()
            .success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let text = haswell("300");
    let dp = text.lines().find(|l| l.contains(" DP ")).unwrap();
    assert!(dp.contains("883.2") && dp.contains("× 2"), "{text}");
    // On a terminal of 100 columns, the table wraps its cells instead of its lines.
    let text = haswell("100");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    assert!(text.contains("883.2"), "{text}");
    let out = peakbench()
        .args([
            "peak",
            "--uarch",
            "6:0xcf",
            "--cores",
            "56",
            "--sockets",
            "2",
        ])
        .args(["--ghz", "2", "--json", "-"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        doc["microarchitecture"],
        "Intel Sapphire Rapids/Emerald Rapids"
    );
    let dp = doc["peaks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["workload"] == "DP")
        .unwrap();
    assert_eq!(dp["peak"]["value"], 7168.0);
    for bad in [
        vec!["--uarch", "pentium4", "--cores", "4", "--ghz", "3"],
        vec!["--uarch", "zen4", "--cores", "0", "--ghz", "3"],
        vec!["--uarch", "zen4", "--cores", "4", "--ghz", "-1"],
    ] {
        let out = peakbench().arg("peak").args(&bad).assert().code(2);
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert_eq!(err.lines().count(), 1, "{bad:?}: {err}");
    }
}

/// An error that quotes what the user typed prints it escaped: one line, no terminal control.
#[test]
fn errors_quoting_input_escape_its_control_characters() {
    let out = Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .args(["disk", "--dir", "/nonexistent/x\u{1b}[2J\r\nFORGED\u{7}"])
        .assert()
        .code(2);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.trim_end().chars().any(char::is_control), "{err:?}");
    assert!(err.contains("\\u{1b}"), "{err}");
}

/// Item 14 of issue 16: an output on a full file system (a tmpfs of its own, filled; root
/// only) fails with one line that names the file, says that its file system is full and what to
/// do, and leaves no temporary file; standard output redirected to it fails the same way
/// instead of panicking.
#[test]
fn a_full_file_system_is_said_in_one_line_and_leaves_nothing() {
    let Some((dir, _unmount)) = common::tmpfs("size=256k") else {
        return;
    };
    common::fill(dir.path());
    let d = dir.path().to_str().unwrap();
    let full = format!("the file system of {d} is full; free space there");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/history/base.json"
    );
    for (args, file) in [
        (vec!["sysinfo", "--json"], "s.json"),
        (
            vec![
                "cpu",
                "--workload",
                "NULL",
                "--threads",
                "1",
                "--repeat",
                "1",
                "--warmup",
                "0",
                "--quiet",
                "--no-history",
                "--csv",
            ],
            "c.csv",
        ),
        (vec!["report", fixture, "--html"], "r.html"),
        (
            vec![
                "peak", "--uarch", "zen4", "--cores", "4", "--ghz", "3", "--json",
            ],
            "p.json",
        ),
    ] {
        let path = format!("{d}/{file}");
        let mut args = args.clone();
        args.push(&path);
        common::one_line_exit(&args, 1, &[&format!("cannot write {path}: "), &full]);
        assert_eq!(
            common::left_in(dir.path()),
            Vec::<String>::new(),
            "{args:?}"
        );
    }
    let redirected = std::fs::File::create(dir.path().join("stdout.txt")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .arg("sysinfo")
        .stdout(redirected)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(
            "cannot write to standard output: the file system standard output goes to is full"
        ),
        "{err}"
    );
}

/// Item 14 of issue 16: one rule for a missing output directory, whatever the command and the
/// option: the directory of an output file (and of a results database named with --db) must
/// exist; the command fails before anything runs with the same one line, exit code 2, and
/// creates nothing. A directory that is itself the output (`report --png DIR`) is created when
/// its parent exists, and so is the default database's directory, which the user did not name.
#[test]
fn a_missing_output_directory_is_one_rule_and_one_message() {
    let root = tempfile::tempdir().unwrap();
    let missing = root.path().join("missing/sub");
    let m = missing.to_str().unwrap();
    let bench = [
        "--workload",
        "NULL",
        "--threads",
        "1",
        "--repeat",
        "1",
        "--warmup",
        "0",
    ];
    let cpu = [&["cpu"], &bench[..], &["--quiet"]].concat();
    let mem = [&["mem"], &bench[..], &["--quiet"]].concat();
    let work = tempfile::tempdir().unwrap();
    let disk = [
        "disk",
        "--engine",
        "null",
        "--size",
        "1M",
        "--runtime",
        "10ms",
        "--ramp",
        "0",
        "--repeat",
        "1",
        "--workload",
        "RR",
        "--block-size",
        "4K",
        "--quiet",
        "--dir",
        work.path().to_str().unwrap(),
    ];
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/history/base.json"
    );
    let peak = ["peak", "--uarch", "zen4", "--cores", "4", "--ghz", "3"];
    let net = ["net", "--server", "127.0.0.1:1", "--quiet"];
    let cases: Vec<(Vec<&str>, &str, &str)> = vec![
        (cpu.clone(), "--json", "r.json"),
        (cpu.clone(), "--csv", "r.csv"),
        (mem.clone(), "--markdown", "r.md"),
        (disk.to_vec(), "--html", "r.html"),
        (net.to_vec(), "--json", "r.json"),
        (
            vec!["run", "--profile", "quick", "--quiet"],
            "--json",
            "r.json",
        ),
        (vec!["sysinfo"], "--json", "s.json"),
        (peak.to_vec(), "--json", "p.json"),
        (vec!["report", fixture], "--html", "r.html"),
        (vec!["report", fixture], "--png", "charts"),
        (cpu.clone(), "--db", "history.db"),
        (vec!["history", "--import", fixture], "--db", "history.db"),
    ];
    for (args, option, file) in cases {
        let path = format!("{m}/{file}");
        let args = [&args[..], &[option, &path]].concat();
        common::one_line_exit(
            &args,
            2,
            &[&format!(
                "cannot write {path}: directory {m} does not exist; create it first"
            )],
        );
        assert_eq!(
            std::fs::read_dir(root.path()).unwrap().count(),
            0,
            "{args:?}"
        );
    }
    // A database the run does not use is refused, as every option that is not used.
    let unused = format!("{m}/history.db");
    let args = [&cpu[..], &["--no-history", "--db", &unused]].concat();
    common::one_line_exit(
        &args,
        2,
        &["--db names the results database, and --no-history stores nothing"],
    );

    // The exceptions: the directory that is the output, and the default database's.
    let charts = root.path().join("charts");
    peakbench()
        .args(["report", fixture, "--png"])
        .arg(&charts)
        .assert()
        .success();
    let drawn: Vec<_> = std::fs::read_dir(&charts)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(!drawn.is_empty());
    // A symbolic link as the directory is refused: the charts' fixed names would be renamed
    // over the files of the directory it points to.
    let victim = root.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    for name in &drawn {
        std::fs::write(victim.join(name), b"precious").unwrap();
    }
    let link = root.path().join("link");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let link = link.to_str().unwrap().to_string();
    common::one_line_exit(
        &["report", fixture, "--png", &link],
        2,
        &["it is a symbolic link"],
    );
    for name in &drawn {
        assert_eq!(std::fs::read(victim.join(name)).unwrap(), b"precious");
    }
    let data = root.path().join("data");
    Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .env_remove("PEAKBENCH_DB")
        .env("XDG_DATA_HOME", &data)
        .args(&cpu)
        .assert()
        .success();
    assert!(data.join("peakbench/history.db").is_file());
}

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

/// More compute threads than CPUs, and a disk target in memory: each point says so in its
/// record's warnings, and the terminal's notes.
#[test]
fn oversubscription_and_a_disk_in_memory_are_noticed() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let cpus = peakbench::runner::affinity::allowed_cpus().len();
    let out = peakbench()
        .args([
            "cpu",
            "--workload",
            "NULL",
            "--repeat",
            "1",
            "--warmup",
            "0",
        ])
        .args([
            "--threads",
            &(cpus + 1).to_string(),
            "--no-history",
            "--json",
        ])
        .arg(&json)
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let warning = doc["results"][0]["warnings"][0]
        .as_str()
        .unwrap_or_default();
    assert!(warning.starts_with("oversubscribed: "), "{doc}");
    let text = String::from_utf8_lossy(&out.get_output().stdout);
    assert!(text.contains("! oversubscribed"), "{text}");
    // Within the CPUs: no warning.
    peakbench()
        .args([
            "cpu",
            "--workload",
            "NULL",
            "--repeat",
            "1",
            "--warmup",
            "0",
        ])
        .args(["--threads", "1", "--no-history", "--json"])
        .arg(&json)
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(doc["results"][0]["warnings"].is_null(), "{doc}");
    // A disk test on tmpfs measures memory.
    let shm = std::path::Path::new("/dev/shm");
    let on_tmpfs = std::fs::read_to_string("/proc/mounts")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some("/dev/shm") && l.contains(" tmpfs "));
    if !on_tmpfs || !shm.is_dir() {
        println!("SKIPPED: the tmpfs notice: /dev/shm is not a tmpfs here");
        return;
    }
    let work = tempfile::tempdir_in(shm).unwrap();
    let out = peakbench()
        .args([
            "disk",
            "--engine",
            "psync",
            "--workload",
            "RR",
            "--block-size",
            "4K",
        ])
        .args([
            "--size",
            "4M",
            "--runtime",
            "20ms",
            "--ramp",
            "0s",
            "--repeat",
            "1",
        ])
        .arg("--dir")
        .arg(work.path())
        .args(["--no-history", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    if !out.status.success() {
        println!(
            "SKIPPED: the tmpfs notice: a disk test on /dev/shm failed here: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for r in doc["results"].as_array().unwrap() {
        let w = r["warnings"][0].as_str().unwrap_or_default();
        assert!(
            w.starts_with("the target is on tmpfs: this measured memory"),
            "{r}"
        );
    }
}

/// "QP" is 8-bit integers: every table says the data type beside the ISA.
#[test]
fn the_cpu_variant_names_its_data_type() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    peakbench()
        .args([
            "cpu",
            "--workload",
            "QP",
            "--threads",
            "1",
            "--duration",
            "10ms",
        ])
        .args(["--repeat", "1", "--warmup", "0", "--no-history", "--json"])
        .arg(&json)
        .assert()
        .success();
    let out = peakbench().arg("report").arg(&json).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout);
    let row = text
        .lines()
        .find(|l| l.starts_with("QP"))
        .unwrap_or_default();
    assert!(row.contains("int8 add"), "{text}");
}

/// `peak` computes a memory, disk or network peak without a CPU, into the same JSON document
/// (the CPU's keys absent), and refuses a command line that describes nothing in one line.
#[test]
fn peak_describes_any_part_of_a_machine() {
    let out = peakbench()
        .args([
            "peak",
            "--mem-channels",
            "4",
            "--mem-mts",
            "2133",
            "--json",
            "-",
        ])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert!(doc.get("microarchitecture").is_none(), "{doc}");
    assert_eq!(doc["memory"]["described"], "4 channels × 2133 MT/s");
    let bw = &doc["memory"]["peaks"][0];
    assert_eq!(bw["figure"], "bandwidth");
    assert!((bw["peak"]["value"].as_f64().unwrap() - 68.256).abs() < 1e-9);
    assert!(
        doc["memory"]["peaks"][1]["unknown_reason"]
            .as_str()
            .unwrap()
            .contains("--mem-cl")
    );
    for (args, says) in [
        (&["peak"][..], "give a machine to compute"),
        (&["peak", "--mem-channels", "4"], "--mem-mts"),
        (&["peak", "--rpm", "7200"], "--seek-ms"),
        (&["peak", "--link-gbps", "0"], "--link-gbps"),
        (&["peak", "--link-gbps", "1e9"], "out of range"),
        (
            &[
                "peak",
                "--mem-channels",
                "4",
                "--mem-mts",
                "2133",
                "--mem-cl",
                "x",
            ],
            "--mem-cl",
        ),
    ] {
        let out = peakbench().args(args).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// A rated figure that physics contradicts (S1's "Total 5782" IOPS for a 7200 rpm disk with
/// 8.5 ms seeks: 1 / (seek + ½ rotation) = 78.95 IOPS) is a warning, never a refusal: in
/// `peak --json` and its table, and in a measured point's record, table and JSON; the point's
/// IOPS peak counts its own I/Os in flight (QD 4: 4 / 12.67 ms).
#[test]
fn a_contradicted_rated_figure_is_warned_everywhere() {
    let rated = [
        "--rpm",
        "7200",
        "--seek-ms",
        "8.5",
        "--disk-peak-read-iops",
        "5782.4991",
    ];
    let out = peakbench()
        .arg("peak")
        .args(rated)
        .args(["--iodepth", "4", "--json", "-"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let iops = &doc["disk"]["peaks"][2];
    assert_eq!(iops["figure"], "random read IOPS (4 KiB, QD 4)");
    assert!((iops["peak"]["value"].as_f64().unwrap() - 4e3 / (8.5 + 30e3 / 7200.0)).abs() < 1e-9);
    assert!(
        iops["warnings"][0].as_str().unwrap().contains("78.95 IOPS"),
        "{doc}"
    );
    let out = peakbench()
        .env("COLUMNS", "100")
        .arg("peak")
        .args(rated)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains("warning: random read IOPS (4 KiB, QD 1)"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.json");
    let out = peakbench()
        .current_dir(dir.path())
        .env("COLUMNS", "100")
        .args([
            "disk",
            "--engine",
            "null",
            "--workload",
            "RR",
            "--iodepth",
            "4",
        ])
        .args([
            "--block-size",
            "4K",
            "--size",
            "4M",
            "--runtime",
            "20ms",
            "--ramp",
            "0s",
        ])
        .args(["--repeat", "1", "--no-history", "--json"])
        .arg(&run)
        .args(rated)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("78.95 IOPS"), "{text}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&run).unwrap()).unwrap();
    let iops = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "iops")
        .unwrap();
    assert_eq!(iops["peak"]["inputs"]["n"]["value"], 4.0);
    let warnings = iops["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("= 78.95 IOPS")),
        "{warnings:?}"
    );
}

/// `report --pivot rows=threads,cols=block_size`: one table per workload and figure, threads
/// down and block sizes across, on the terminal and in HTML, Markdown and CSV; what a pivot
/// cannot be is refused in one line.
#[test]
fn report_pivots_a_sweep_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.json");
    peakbench()
        .current_dir(dir.path())
        .args([
            "disk",
            "--engine",
            "null",
            "--workload",
            "RS",
            "--threads",
            "1,2",
            "--block-size",
            "4K,64K",
            "--size",
            "4M",
            "--runtime",
            "20ms",
            "--ramp",
            "0s",
            "--repeat",
            "2",
            "--no-history",
            "--quiet",
            "--json",
        ])
        .arg(&run)
        .assert()
        .success();
    let pivot = ["--pivot", "rows=threads,cols=block_size"];
    let out = peakbench()
        .env("COLUMNS", "100")
        .arg("report")
        .arg(&run)
        .args(pivot)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for title in [
        "Disk RS throughput (MB/s)",
        "Disk RS (IOPS)",
        "Disk RS latency (",
    ] {
        assert!(text.contains(title), "{title}: {text}");
    }
    assert!(text.contains("threads \\ block size"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    let (html, md, csv) = (
        dir.path().join("p.html"),
        dir.path().join("p.md"),
        dir.path().join("p.csv"),
    );
    peakbench()
        .arg("report")
        .arg(&run)
        .args(pivot)
        .arg("--html")
        .arg(&html)
        .arg("--markdown")
        .arg(&md)
        .arg("--csv")
        .arg(&csv)
        .assert()
        .success();
    let html = std::fs::read_to_string(html).unwrap();
    assert!(
        html.contains("<th>threads \\ block size</th><th>4 KiB</th><th>64 KiB</th>"),
        "{html}"
    );
    let md = std::fs::read_to_string(md).unwrap();
    assert!(
        md.contains("| threads \\ block size | 4 KiB | 64 KiB |"),
        "{md}"
    );
    let csv = std::fs::read_to_string(csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "table,unit,threads \\ block size,4 KiB,64 KiB");
    // Three figures × two thread counts, every cell a number.
    assert_eq!(lines.len(), 7, "{csv}");
    for l in &lines[1..] {
        let cells: Vec<&str> = l.rsplitn(3, ',').collect();
        assert!(
            cells[0].parse::<f64>().is_ok() && cells[1].parse::<f64>().is_ok(),
            "{l}"
        );
    }
    for (args, says) in [
        (&["--json", "-"][..], "--json"),
        (
            &["--pivot", "rows=threads,cols=streams"],
            "no point of the run has both",
        ),
        (
            &["--pivot", "rows=threads"],
            "rows=PARAMETER,cols=PARAMETER",
        ),
    ] {
        let mut c = peakbench();
        c.arg("report").arg(&run);
        if args[0] != "--pivot" {
            c.args(pivot);
        }
        let out = c.args(args).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// An output that is a pipe or a device is written once, at the end (one document, not one a
/// point), and a FIFO that nobody reads is refused at once rather than waited on.
#[test]
fn streams_get_one_document_and_a_fifo_without_reader_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = peakbench()
        .env("PEAKBENCH_DB", dir.path().join("h.db"))
        .args([
            "cpu",
            "--workload",
            "NULL",
            "--threads",
            "1,2",
            "--repeat",
            "2",
            "--quiet",
            "--json",
            "/dev/stdout",
        ])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {text}"));
    assert_eq!(doc["results"].as_array().map(Vec::len), Some(2), "{doc}");
    let fifo = dir.path().join("fifo");
    common::mkfifo(&fifo);
    common::one_line_exit(
        &[
            "peak",
            "--uarch",
            "zen4",
            "--cores",
            "2",
            "--ghz",
            "3",
            "--json",
            fifo.to_str().unwrap(),
        ],
        1,
        &["is a FIFO that no process reads"],
    );
}

/// A range of working sets up to 2⁶⁴ − 1 bytes looped forever in the grid's generator (memory
/// grew until the OOM killer came), also under --help and in a profile's dry run: now one line,
/// at once, saying the range.
#[test]
fn a_working_set_range_to_the_end_of_u64_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    for extra in [None, Some("--help")] {
        let mut args = vec!["mem", "--array-size", "1..18446744073709551615"];
        args.extend(extra);
        common::one_line_exit(&args, 2, &["is out of range: at most 1024 TiB"]);
    }
    common::one_line_exit(
        &["mem", "--workload", "LATENCY", "--latency-max", "2048T"],
        2,
        &["out of range"],
    );
    let profile = dir.path().join("big.toml");
    std::fs::write(
        &profile,
        "[[job]]\nsubsystem = 'mem'\nworkload = ['COPY']\narray_size = '1..18446744073709551615'\n",
    )
    .unwrap();
    common::one_line_exit(
        &["run", "--dry-run", "--profile", profile.to_str().unwrap()],
        2,
        &["job 1 (mem)", "is out of range"],
    );
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
