//! Ctrl-C (or SIGTERM, or SIGHUP) at any moment of `peakbench run`: the run stops after the
//! current point, keeps what it measured in its files and in the database (status
//! `interrupted`), removes its temporary files and exits with 130. Every wait is bounded.

mod common;

use serde_json::Value;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// A suite of short jobs: CPU points, a disk job on the null engine in `dir`, a memory job.
fn profile(dir: &Path) -> String {
    format!(
        r#"description = "signal test"
[defaults]
repeat = 2
[[job]]
subsystem = "cpu"
workload = ["NULL", "DP", "SP", "INT32", "INT64"]
threads = 1
duration = "100ms"
[[job]]
subsystem = "disk"
workload = ["RR"]
engine = "null"
block_size = ["4K", "8K"]
size = "16M"
runtime = "300ms"
ramp = "0"
dir = "{}"
[[job]]
subsystem = "mem"
workload = ["COPY"]
threads = 1
duration = "100ms"
"#,
        dir.display()
    )
}

struct Run {
    child: Child,
    dir: tempfile::TempDir,
}

impl Run {
    fn start() -> Run {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("disk")).unwrap();
        let file = dir.path().join("suite.toml");
        std::fs::write(&file, profile(&dir.path().join("disk"))).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_peakbench"))
            .env("PEAKBENCH_DB", dir.path().join("history.db"))
            .args(["run", "--quiet", "--profile"])
            .arg(&file)
            .arg("--json")
            .arg(dir.path().join("out.json"))
            .spawn()
            .unwrap();
        Run { child, dir }
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    fn signal(&self) {
        self.send(libc::SIGINT);
    }

    fn send(&self, sig: i32) {
        // SAFETY: kill sends a signal to our own child process.
        unsafe { libc::kill(self.child.id() as i32, sig) };
    }

    /// The exit code, within 60 s.
    fn wait(&mut self) -> Option<i32> {
        self.wait_status().code()
    }

    fn wait_status(&mut self) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                panic!("peakbench did not stop within 60 s of SIGINT");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits (bounded) until the JSON document holds at least `n` points.
    fn wait_for_points(&mut self, n: usize) -> bool {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if self.points().is_some_and(|p| p >= n) {
                return true;
            }
            if self.child.try_wait().unwrap().is_some() {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    fn points(&self) -> Option<usize> {
        let text = std::fs::read_to_string(self.path("out.json")).ok()?;
        let doc: Value = serde_json::from_str(&text).ok()?;
        Some(doc["results"].as_array()?.len())
    }

    /// The checks that hold whenever the run was interrupted: nothing left behind, and what
    /// was written is a valid document whose points are all in the database, as interrupted.
    fn check_interrupted(&self) {
        let leftovers: Vec<String> = std::fs::read_dir(self.path("disk"))
            .unwrap()
            .chain(std::fs::read_dir(self.dir.path()).unwrap())
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("peakbench") || n.contains(".tmp"))
            .collect();
        assert_eq!(
            leftovers,
            Vec::<String>::new(),
            "temporary files are removed"
        );
        let Ok(text) = std::fs::read_to_string(self.path("out.json")) else {
            return; // stopped before the first point: nothing to keep
        };
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
        let kept = doc["results"].as_array().unwrap().len();
        let out = Command::new(env!("CARGO_BIN_EXE_peakbench"))
            .env("PEAKBENCH_DB", self.path("history.db"))
            .args(["history", "--json"])
            .output()
            .unwrap();
        let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
        let run = &runs.as_array().unwrap()[0];
        assert_eq!(run["status"], "interrupted", "{run}");
        assert_eq!(run["points"].as_u64(), Some(kept as u64), "{run}");
    }
}

#[test]
fn sigint_after_the_first_points_keeps_them_and_stops() {
    let mut run = Run::start();
    assert!(
        run.wait_for_points(2),
        "two points were not written within 60 s"
    );
    run.signal();
    let started = Instant::now();
    assert_eq!(run.wait(), Some(130));
    // The current point is short: the run stops within seconds, not at the end of the suite.
    assert!(started.elapsed() < Duration::from_secs(20));
    let kept = run.points().unwrap();
    assert!((2..12).contains(&kept), "{kept} points kept");
    run.check_interrupted();
}

#[test]
fn sigint_at_several_moments_always_exits_130_cleanly() {
    for delay_ms in [0u64, 150, 700, 2000, 4000] {
        let mut run = Run::start();
        std::thread::sleep(Duration::from_millis(delay_ms));
        run.signal();
        let status = run.wait_status();
        let code = status.code();
        // A suite that ended before the signal exits 0; every other moment is 130, except
        // that a signal at 0 ms may arrive before the program has started at all.
        let before_start = delay_ms == 0 && status.signal() == Some(libc::SIGINT);
        assert!(
            matches!(code, Some(130) | Some(0)) || before_start,
            "at {delay_ms} ms: {status:?}"
        );
        if code == Some(130) {
            run.check_interrupted();
        }
    }
}

/// SIGHUP (an SSH connection dropped) stops a run as the first Ctrl-C does, and a second one
/// (a shell and `sudo` each pass it on) does not end it before it has kept its points.
#[test]
fn sighup_keeps_the_points_as_ctrl_c_does_however_often_it_comes() {
    let mut run = Run::start();
    assert!(
        run.wait_for_points(2),
        "two points were not written within 60 s"
    );
    run.send(libc::SIGHUP);
    common::wait_delivered(run.child.id(), libc::SIGHUP);
    run.send(libc::SIGHUP);
    assert_eq!(run.wait_status().code(), Some(130));
    assert!(run.points().unwrap() >= 2);
    run.check_interrupted();
}

#[test]
fn a_second_sigint_ends_the_process_at_once() {
    let mut run = Run::start();
    assert!(run.wait_for_points(1), "no point within 60 s");
    run.signal();
    std::thread::sleep(Duration::from_millis(5));
    run.signal();
    assert_eq!(run.wait(), Some(130));
}

#[test]
fn sigint_to_a_command_that_measures_nothing_exits_at_once() {
    let dir = tempfile::tempdir().unwrap();
    // `sysinfo` keeps nothing: Ctrl-C ends it without waiting for its clock probes.
    let mut child = Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .env("PEAKBENCH_DB", dir.path().join("history.db"))
        .args(["sysinfo"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    // SAFETY: kill sends a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "sysinfo ignored SIGINT");
        std::thread::sleep(Duration::from_millis(10));
    };
    // 130; 0 when it had already finished; killed by the signal when it came before main.
    assert!(
        matches!(status.code(), Some(130) | Some(0)) || status.signal() == Some(libc::SIGINT),
        "{status:?}"
    );
}
