//! Where outputs go: a full file system, a missing output directory, pipes, devices and FIFOs,
//! each said in one line and leaving nothing behind.

mod common;

use assert_cmd::Command;
use common::peakbench;

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

/// `--json-stream -`: the run as NDJSON on standard output, each line parsed as it comes while
/// the run still goes on — the start and the first point arrive before the second point is
/// measured (0.9 s of it) — then every point and the end; a symbolic link is never written
/// through.
#[test]
fn the_event_stream_is_read_line_by_line_while_the_run_goes_on() {
    use std::io::BufRead;
    let _share = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .env("PEAKBENCH_DB", dir.path().join("h.db"))
        .env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1)
        .args([
            "cpu",
            "--workload",
            "DP,SP",
            "--threads",
            "1",
            "--warmup",
            "0",
        ])
        .args(["--duration", "300ms", "--repeat", "3", "--json-stream", "-"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // A run that hangs is killed: the reads below then end.
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(120));
        // SAFETY: kill(2) on the child's pid; a pid already reaped gets ESRCH.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    });
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut events = Vec::new();
    let mut running_after_first_point = None;
    for line in lines.by_ref().take(100) {
        let event: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        let point = event["event"] == "point";
        events.push(event);
        if point && running_after_first_point.is_none() {
            running_after_first_point = Some(child.try_wait().unwrap().is_none());
        }
    }
    let status = child.wait().unwrap();
    drop(watchdog);
    assert!(status.success(), "{status:?}");
    assert_eq!(running_after_first_point, Some(true), "{events:?}");
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"start"));
    assert_eq!(kinds.last(), Some(&"end"));
    let points: Vec<&serde_json::Value> = events.iter().filter(|e| e["event"] == "point").collect();
    assert_eq!(points.len(), 2, "{kinds:?}");
    assert_eq!(points[1]["seq"], 1);
    assert_eq!(points[0]["record"]["workload"], "DP");
    assert!(events[0]["system"]["cpu"].is_object());
    assert_eq!(events.last().unwrap()["points"], 2);
    // A symbolic link is refused, and what it points to is left as it was.
    let target = dir.path().join("target.txt");
    std::fs::write(&target, "keep").unwrap();
    let link = dir.path().join("link.ndjson");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = peakbench()
        .env("PEAKBENCH_DB", dir.path().join("h.db"))
        .args([
            "cpu",
            "--workload",
            "DP",
            "--threads",
            "1",
            "--duration",
            "20ms",
            "--json-stream",
        ])
        .arg(&link)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("symbolic link"),
        "{out:?}"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
}

/// An output named by one of peakbench's own descriptors, with standard output redirected to a
/// file, goes to that file through the descriptor — `/dev/fd/1` and `/proc/self/fd/1`, then
/// `/dev/stdout` — and `/dev/stdout` stays the link it was (renamed over as a file, as root,
/// it became a regular file for every program after, and the output went there instead); a
/// descriptor that is not open is one line and exit 2.
#[test]
fn own_descriptors_are_written_through_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let stdout_was = std::fs::read_link("/dev/stdout").ok();
    for name in ["/dev/fd/1", "/proc/self/fd/1", "/dev/stdout"] {
        let file = dir.path().join("out.json");
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" cpu --workload NULL --repeat 2 --quiet --no-history --json \"$1\" > \"$2\"")
            .arg(env!("CARGO_BIN_EXE_peakbench"))
            .arg(name)
            .arg(&file)
            .env("PEAKBENCH_DB", dir.path().join("h.db"))
            .status()
            .unwrap();
        assert!(status.success(), "{name}");
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap())
            .unwrap_or_else(|e| panic!("{name}: not one JSON document in the file ({e})"));
        assert!(
            doc["results"].as_array().is_some_and(|r| !r.is_empty()),
            "{name}: {doc}"
        );
        assert_eq!(std::fs::read_link("/dev/stdout").ok(), stdout_was, "{name}");
    }
    common::one_line_exit(
        &["cpu", "--workload", "NULL", "--json", "/dev/fd/9"],
        2,
        &["descriptor 9 is not open"],
    );
}
