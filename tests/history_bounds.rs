//! What a document may hold that the results database and its readers must survive: hostile
//! text never printed raw, inputs beyond their bounds or beyond memory refused, many points
//! reported within memory and time, an overflowing peak stored as unknown.

mod common;

use assert_cmd::Command;
use common::history::{fixture, peakbench};
use std::path::Path;
use std::time::Duration;

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
        vec!["report", "1", "--markdown", "-"],
        vec!["report", f, "--pivot", "rows=threads,cols=workload"],
        vec!["compare", f, "1"],
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
    for (a, b) in [("1", "2"), ("2", "1")] {
        let out = peakbench(&db).args(["compare", a, b]).assert();
        let code = out.get_output().status.code();
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(matches!(code, Some(0 | 3)), "{code:?}: {err}");
        assert!(!err.contains("unreadable"), "{err}");
    }
}
