//! CLI tests against the real binary: a benchmark command's outputs and refusals, a killed
//! run, notes and warnings, and `report --pivot`. The NULL workload makes them exact: its points
//! have a known shape whatever the machine.

mod common;

use assert_cmd::Command;
use common::{peakbench, read_json, real};
use serde_json::Value;
use std::time::{Duration, Instant};

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
    // Times in the unit that suits them (an empty operation's overhead: ns or µs, or ms on a
    // busy shared host: 0.13 ms once in CI), not the record's seconds.
    let first = csv.lines().nth(1).unwrap();
    assert!(
        ["ns", "µs", "ms"]
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
