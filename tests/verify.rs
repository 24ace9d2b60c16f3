//! `peakbench verify`: each ceiling it imposes (a link's rate, a delay, a loss rate, disk caps,
//! a CPU quota) is found within its tolerance or skipped with the reason; the run is stored
//! like any other; and nothing it made (namespaces, TUN and veth devices, a loop device, a
//! tmpfs, control groups) is left, whether it ends or is stopped by Ctrl-C midway. The checks
//! need root: without it each test says so and passes.

mod common;

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The runs make namespaces named after their pid and measure: one at a time.
static ONE: Mutex<()> = Mutex::new(());

fn root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// What a verify run of process `pid` could leave behind: namespaces, links, loop devices,
/// control groups, mounts, temporary directories (any verify's: the runs are one at a time).
fn left_by(pid: u32) -> Vec<String> {
    let mut left = Vec::new();
    let name = format!("pbv{pid}");
    if let Ok(out) = Command::new("ip").args(["netns", "list"]).output() {
        let text = String::from_utf8_lossy(&out.stdout);
        left.extend(
            text.lines()
                .filter(|l| l.starts_with(&name))
                .map(|l| format!("namespace {l}")),
        );
    }
    if let Ok(out) = Command::new("ip").args(["-o", "link"]).output() {
        let text = String::from_utf8_lossy(&out.stdout);
        left.extend(
            text.lines()
                .filter(|l| l.contains(&name))
                .map(|l| format!("link {l}")),
        );
    }
    // Its groups are made below the one it runs in, which is this test's (a child inherits
    // it): under each hierarchy /proc/self/cgroup names.
    let group = format!("peakbench-verify-{pid}");
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let rel = path.trim_start_matches('/');
        let mounts: Vec<String> = if controllers.is_empty() {
            vec!["/sys/fs/cgroup".into()]
        } else {
            ["cpu", "cpu,cpuacct", "blkio"]
                .iter()
                .filter(|m| controllers.split(',').any(|c| m.split(',').any(|x| x == c)))
                .map(|m| format!("/sys/fs/cgroup/{m}"))
                .collect()
        };
        for m in mounts {
            let dir = std::path::Path::new(&m).join(rel).join(&group);
            if dir.exists() {
                left.push(format!("cgroup {}", dir.display()));
            }
        }
    }
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    left.extend(
        mounts
            .lines()
            .filter(|l| l.starts_with("peakbench-verify"))
            .map(|l| format!("mount {l}")),
    );
    // Its tmpfs's directory (made with tempfile under the temporary directory).
    for e in std::fs::read_dir(std::env::temp_dir())
        .into_iter()
        .flatten()
        .flatten()
    {
        if e.file_name()
            .to_string_lossy()
            .starts_with("peakbench-verify-")
        {
            left.push(format!("directory {}", e.path().display()));
        }
    }
    if let Ok(out) = Command::new("losetup").arg("-a").output() {
        let text = String::from_utf8_lossy(&out.stdout);
        left.extend(
            text.lines()
                .filter(|l| l.contains("peakbench-verify-"))
                .map(|l| format!("loop device {l}")),
        );
    }
    left
}

fn verify(args: &[&str], dir: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_peakbench"));
    c.env("PEAKBENCH_DB", dir.join("history.db"))
        .env("COLUMNS", "100")
        .arg("verify")
        .args(args);
    c
}

/// Every check passes within its tolerance or is skipped with its reason; the outcome is in
/// the JSON document, the history and the HTML report; nothing is left.
#[test]
fn every_check_passes_or_says_why_it_was_skipped() {
    if !root() {
        eprintln!("SKIPPED every_check_passes_or_says_why_it_was_skipped: not root");
        return;
    }
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let _alone = common::share(true);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("verify.json");
    let started = Instant::now();
    let child = verify(
        &["--duration", "1500ms", "--repeat", "2", "--json"],
        dir.path(),
    )
    .arg(&json)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(left_by(pid).is_empty(), "left behind: {:?}", left_by(pid));
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let checks = doc["verification"]["checks"].as_array().unwrap();
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "rate tcp",
            "rate udp",
            "delay",
            "loss",
            "disk iops",
            "disk bandwidth",
            "cpu quota"
        ],
        "{stderr}"
    );
    // Where every tool and controller is at hand (this project's CI machine), nothing is
    // skipped.
    let everything = ["ip", "tc", "iptables", "losetup", "mount"]
        .iter()
        .all(|t| Command::new(t).arg("--version").output().is_ok())
        && std::path::Path::new("/dev/net/tun").exists()
        && std::path::Path::new("/sys/fs/cgroup/blkio/cgroup.procs").exists()
        && std::path::Path::new("/sys/fs/cgroup/cpu/cgroup.procs").exists();
    for c in checks {
        assert!(!everything || c["status"] != "skip", "{c}");
        match c["status"].as_str().unwrap() {
            "pass" => {
                let (e, m, t) = (
                    c["expected"].as_f64().unwrap(),
                    c["measured"].as_f64().unwrap(),
                    c["tolerance"].as_f64().unwrap(),
                );
                assert!((m - e).abs() <= t, "{c}");
                assert!(!c["points"].as_array().unwrap().is_empty(), "{c}");
            }
            "skip" => assert!(!c["reason"].as_str().unwrap().is_empty(), "{c}"),
            _ => panic!("a check failed: {c}\n{stderr}"),
        }
    }
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("Verification (7 checks:")
            && stdout.lines().all(|l| l.chars().count() <= 100),
        "{stdout}"
    );
    assert!(
        common::schema_errors(&doc).is_empty(),
        "{:?}",
        common::schema_errors(&doc)
    );
    // Stored like any run: its report from the history has the checks.
    let html = dir.path().join("verify.html");
    let status = Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .env("PEAKBENCH_DB", dir.path().join("history.db"))
        .args(["report", "latest", "--html"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("id=\"verification\"") && page.contains("cpu quota"));
    eprintln!("verify took {:?}", started.elapsed());
}

/// Ctrl-C during the network's checks, and during the disk's (the process in a control group
/// of the run's, a loop device attached): the run stops with 130, keeps its checks so far and
/// leaves nothing.
#[test]
fn ctrl_c_midway_leaves_nothing() {
    if !root() {
        eprintln!("SKIPPED ctrl_c_midway_leaves_nothing: not root");
        return;
    }
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let _shared = common::share(false);
    for (only, after) in [("net", "rate tcp"), ("disk", "disk iops")] {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("verify.json");
        let mut child = verify(
            &[
                "--only",
                only,
                "--duration",
                "1s",
                "--repeat",
                "3",
                "--json",
            ],
            dir.path(),
        )
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        let pid = child.id();
        // Wait for the first check's line (bounded), then stop the run in the next one.
        let (tx, rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut all = String::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.starts_with(&format!("peakbench verify: {after}:")) {
                    let _ = tx.send(());
                }
                all.push_str(&line);
                all.push('\n');
            }
            all
        });
        let seen = rx.recv_timeout(Duration::from_secs(60)).is_ok();
        std::thread::sleep(Duration::from_millis(1500));
        // SAFETY: kill sends a signal to our own child, which has not been waited for.
        unsafe { libc::kill(pid as i32, libc::SIGINT) };
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(
                Instant::now() < deadline,
                "verify did not stop after Ctrl-C"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let text = reader.join().unwrap();
        assert!(seen, "no '{after}' line: {text}");
        assert_eq!(status.code(), Some(130), "{text}");
        assert!(left_by(pid).is_empty(), "left behind: {:?}", left_by(pid));
        let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let checks = doc["verification"]["checks"].as_array().unwrap();
        assert!(checks.iter().any(|c| c["name"] == after), "{doc}");
    }
}

/// Where the machine cannot impose a ceiling (here: its tools are not on PATH), the check is
/// skipped with the reason, never passed or failed silently; the rest still run.
#[test]
fn what_cannot_be_imposed_is_skipped_with_its_reason() {
    if !root() {
        eprintln!("SKIPPED what_cannot_be_imposed_is_skipped_with_its_reason: not root");
        return;
    }
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let _shared = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let json = dir.path().join("verify.json");
    // No ip, tc, iptables, mount or losetup.
    let out = verify(&["--only", "net,disk", "--json"], dir.path())
        .arg(&json)
        .env("PATH", &bin)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let checks = doc["verification"]["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 6, "{doc}");
    for c in checks {
        assert_eq!(c["status"], "skip", "{c}");
        let why = c["reason"].as_str().unwrap();
        assert!(why.contains("cannot run"), "{c}");
    }
    assert!(
        stderr.contains("SKIP: no network namespace pair: cannot run ip"),
        "{stderr}"
    );
    assert!(doc["results"].as_array().unwrap().is_empty());
}

/// Refused with one line: without root, and with --reference (nothing to compare against).
#[test]
fn it_refuses_what_it_cannot_do() {
    common::one_line_exit_2(&["verify", "--reference"], "leave out --reference");
    common::one_line_exit_2(&["verify", "--only", "gpu"], "gpu");
    common::one_line_exit_2(&["verify", "--duration", "50ms"], "give 100ms or more");
    if root() && std::path::Path::new("/usr/bin/setpriv").exists() {
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_peakbench"))
            .args(["verify", "--no-history"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("needs root"), "{err}");
    }
}
