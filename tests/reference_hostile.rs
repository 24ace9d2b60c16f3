//! A reference tool's output is as hostile as a peer's (security review, findings 6 and 7): a
//! figure out of range, or more output than peakbench keeps, gives the point no reference
//! figure, with the reason in one line; the point keeps its own figure. The tool here is a
//! stand-in iperf3 on PATH, on loopback.

use assert_cmd::Command;
use std::time::Duration;

/// A stand-in for iperf3: answers `--version`; as a server (`-s … -B IP -p PORT`) it is a
/// listener on IP:PORT (a peakbench server, $FAKE_LISTENER); as a client it prints a report
/// whose every figure is $FAKE_FIGURE (or, with $FAKE_BYTES, that many bytes of lines first).
const FAKE_IPERF3: &str = r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "iperf 3.12 (cJSON 1.7.15)"; exit 0; fi
if [ "$1" = "-s" ]; then
  while [ $# -gt 0 ]; do
    case "$1" in -B) ip=$2; shift ;; -p) port=$2; shift ;; esac
    shift
  done
  exec "$FAKE_LISTENER" net serve --bind "$ip" --port "$port" --idle-timeout 30s
fi
if [ -n "$FAKE_BYTES" ]; then head -c "$FAKE_BYTES" /dev/zero | tr '\0' '\n'; fi
f=$FAKE_FIGURE
echo "{\"start\":{\"version\":\"iperf 3.12\"},\"end\":{\"sum_sent\":{\"bits_per_second\":$f},\"sum_received\":{\"bits_per_second\":$f},\"sum_sent_bidir_reverse\":{\"bits_per_second\":$f},\"sum_received_bidir_reverse\":{\"bits_per_second\":$f}}}"
"#;

/// A directory holding the stand-in iperf3, and a PATH with it first.
fn fake_iperf3() -> (tempfile::TempDir, std::ffi::OsString) {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let fake = bin.join("iperf3");
    std::fs::write(&fake, FAKE_IPERF3).unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    (dir, path)
}

/// A loopback `net` point both ways with `--reference`, the stand-in iperf3 on PATH with
/// `env`: (exit code, stderr, the stored JSON).
fn net_with_fake_iperf3(env: &[(&str, &str)]) -> (Option<i32>, String, String, std::path::PathBuf) {
    let (dir, path) = fake_iperf3();
    let json = dir.path().join("ref.json");
    let out = Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .args([
            "net",
            "--workload",
            "THROUGHPUT",
            "--protocol",
            "tcp",
            "--bidir",
        ])
        .args([
            "--duration",
            "200ms",
            "--repeat",
            "1",
            "--reference",
            "--json",
        ])
        .arg(&json)
        .env("PATH", &path)
        .env("FAKE_LISTENER", env!("CARGO_BIN_EXE_peakbench"))
        .envs(env.iter().copied())
        .env("PEAKBENCH_DB", dir.path().join("h.db"))
        .env("COLUMNS", "1000")
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stored = std::fs::read_to_string(&json).unwrap_or_default();
    let kept = dir.keep();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        stored,
        kept,
    )
}

/// The stored document's goodput records (there is one at least), each without a reference
/// figure, with its one-line reason why.
fn unreferenced_goodput(stored: &str) -> Vec<(serde_json::Value, String)> {
    let doc: serde_json::Value =
        serde_json::from_str(stored).unwrap_or_else(|e| panic!("{e}: {stored}"));
    let goodput: Vec<_> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == "throughput")
        .map(|r| {
            assert!(r["reference"].is_null(), "{r}");
            let why = r["reference_unknown_reason"].as_str().unwrap_or_default();
            assert!(!why.contains('\n'), "{why}");
            (r.clone(), why.to_string())
        })
        .collect();
    assert!(!goodput.is_empty(), "{stored}");
    goodput
}

/// Security review, finding 6: a tool that reports 1e308 bit/s (a remote iperf3 server
/// controls `sum_received`) gives no reference figure: the point keeps its own, the reason is
/// stated in one line per point, and the stored document reads back with `report`.
#[test]
fn an_absurd_figure_from_a_tool_is_a_failed_reference_run() {
    let (code, err, stored, dir) = net_with_fake_iperf3(&[("FAKE_FIGURE", "1e308")]);
    assert_eq!(code, Some(0), "{err}");
    for (r, why) in unreferenced_goodput(&stored) {
        assert!(
            why.contains("iperf3") && why.contains("is not a number from 0 to"),
            "{r}"
        );
        assert!(r["mean"].as_f64().is_some_and(|m| m > 0.0), "{r}");
    }
    assert!(!stored.contains("1e308"), "{stored}");
    let report = Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .arg("report")
        .arg(dir.join("ref.json"))
        .env("COLUMNS", "1000")
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&report.stdout),
        String::from_utf8_lossy(&report.stderr)
    );
    assert!(report.status.success(), "{text}");
    assert!(text.contains("no reference figure for"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Security review, finding 7: a tool that prints more than peakbench keeps (40 MB of lines
/// before its report) is stopped; the point has no reference figure, and says why in one line.
#[test]
fn a_tool_that_prints_too_much_is_a_failed_reference_run() {
    let (code, err, stored, dir) =
        net_with_fake_iperf3(&[("FAKE_FIGURE", "1e9"), ("FAKE_BYTES", "40000000")]);
    assert_eq!(code, Some(0), "{err}");
    for (r, why) in unreferenced_goodput(&stored) {
        assert!(
            why.contains("iperf3 failed: its output was larger than 16 MiB"),
            "{r}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
