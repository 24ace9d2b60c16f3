//! Memory limits: inside a control group with a 256 MiB limit, peakbench sees the limit
//! (`sysinfo`), and `mem` and `disk` refuse points that would not fit, with one line and exit
//! code 2, instead of being killed by the OOM killer; nothing is left behind. The group is
//! created by the test and removed afterwards (skipped where the cgroup file system is not
//! writable).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const LIMIT: u64 = 256 << 20;

/// A control group of its own, removed when dropped.
struct Group {
    dir: PathBuf,
}

impl Group {
    /// Group `name` under the first hierarchy of `tries` (its root, then the files to write
    /// and their texts, in order) whose files take the texts; None, saying so, without one.
    fn make(name: &str, tries: &[(&str, &[(&str, &str)])]) -> Option<Group> {
        for (root, writes) in tries {
            let root = Path::new(root);
            if !root.join("cgroup.procs").exists() {
                continue;
            }
            let dir = root.join(name);
            if std::fs::create_dir(&dir).is_err() {
                continue;
            }
            let g = Group { dir };
            if writes
                .iter()
                .all(|(file, text)| std::fs::write(g.dir.join(file), text).is_ok())
            {
                return Some(g);
            }
        }
        eprintln!("skipped: no writable control group for {name}");
        None
    }

    /// A memory group (v1 or v2) limited to [`LIMIT`].
    fn new() -> Option<Group> {
        let limit = LIMIT.to_string();
        Group::make(
            &format!("peakbench-test-{}", std::process::id()),
            &[
                (
                    "/sys/fs/cgroup/memory",
                    &[("memory.limit_in_bytes", &limit)],
                ),
                ("/sys/fs/cgroup", &[("memory.max", &limit)]),
            ],
        )
    }

    /// A CPU group (v1 `cpu` or v2) with a quota of half a CPU.
    fn half_a_cpu() -> Option<Group> {
        Group::make(
            &format!("peakbench-cpu-test-{}", std::process::id()),
            &[
                (
                    "/sys/fs/cgroup/cpu",
                    &[
                        ("cpu.cfs_period_us", "100000"),
                        ("cpu.cfs_quota_us", "50000"),
                    ],
                ),
                ("/sys/fs/cgroup", &[("cpu.max", "50000 100000")]),
            ],
        )
    }

    /// Runs peakbench with `args` inside the group; (exit code, stdout, stderr).
    fn run(&self, args: &[&str]) -> (Option<i32>, String, String) {
        run_in(&self.dir, args)
    }
}

/// Runs peakbench with `args` inside the control group at `dir`; (exit code, stdout, stderr).
fn run_in(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let procs = dir.join("cgroup.procs");
    let out = Command::new("sh")
        .arg("-c")
        .arg("echo $$ > \"$0\" && exec \"$@\"")
        .arg(&procs)
        .arg(env!("CARGO_BIN_EXE_peakbench"))
        .args(args)
        .env("PEAKBENCH_DB", common::test_db())
        // The limits are the subject, not the clock: its probes' test double.
        .env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1)
        // One line per message: the phrases the tests look for are never split by wrapping.
        .env("COLUMNS", "1000")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

impl Drop for Group {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[test]
fn a_control_group_limit_is_seen_and_respected() {
    let Some(group) = Group::new() else { return };
    let (code, out, err) = group.run(&["sysinfo", "--json", "-"]);
    assert_eq!(code, Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let memory = &doc["system"]["memory"];
    assert_eq!(memory["cgroup_limit_bytes"], LIMIT, "{memory}");
    assert!(memory["available_bytes"]["value"].as_u64().unwrap() <= LIMIT);

    let (code, _, err) = group.run(&[
        "mem",
        "--workload",
        "COPY",
        "--threads",
        "1",
        "--array-size",
        "1Gi",
        "--repeat",
        "1",
        "--no-history",
        "--quiet",
    ]);
    assert_eq!(code, Some(2), "mem: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let (code, _, err) = group.run(&[
        "disk",
        "--engine",
        "null",
        "--block-size",
        "64M",
        "--iodepth",
        "8",
        "--dir",
        d,
        "--no-history",
        "--quiet",
    ]);
    assert_eq!(code, Some(2), "disk: {err}");
    assert!(
        err.contains("I/O buffers") && err.lines().count() == 1,
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no file left"
    );
}

/// Run on one CPU of two (an affinity mask, as a cpuset or `taskset` gives), `--threads all`
/// gives one thread, and the JSON names the CPU allowed.
#[test]
fn threads_all_follows_the_allowed_cpus() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        eprintln!("skipped: one CPU only");
        return;
    }
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"));
    cmd.env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1).args([
        "cpu",
        "--workload",
        "NULL",
        "--threads",
        "all",
        "--repeat",
        "1",
        "--no-history",
        "--json",
        "-",
        "--quiet",
    ]);
    // SAFETY: cpu_set_t is plain data; zeroed is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU 0 is below CPU_SETSIZE, the set's capacity.
    unsafe { libc::CPU_SET(0, &mut set) };
    // SAFETY: between fork and exec the child only calls sched_setaffinity, which is
    // async-signal-safe, on a set built before the fork.
    unsafe {
        cmd.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["results"][0]["params"]["threads"], 1, "{doc}");
    assert_eq!(doc["system"]["cpu"]["allowed_cpus"], serde_json::json!([0]));
}

/// Under a quota of half a CPU, `sysinfo` names the quota (JSON and text) and `--threads all`
/// gives one thread: the CPUs' worth the quota allows, not the machine's CPUs.
#[test]
fn a_cpu_quota_is_seen_and_threads_all_follows_it() {
    let Some(group) = Group::half_a_cpu() else {
        return;
    };
    let run = |args: &[&str]| run_in(&group.dir, args);
    let (code, out, err) = run(&["sysinfo", "--json", "-"]);
    assert_eq!(code, Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let quota = &doc["system"]["cpu"]["cgroup_cpu_quota"];
    assert_eq!(quota["quota_us"], 50000, "{quota}");
    assert_eq!(quota["period_us"], 100000, "{quota}");
    let (code, out, err) = run(&["sysinfo"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("0.50 CPUs of time"), "{out}");
    assert!(
        out.contains("effective 0.50 CPUs with the CPU quota"),
        "{out}"
    );
    let (code, out, err) = run(&[
        "cpu",
        "--workload",
        "DP",
        "--threads",
        "all",
        "--repeat",
        "1",
        "--no-history",
        "--json",
        "-",
        "--quiet",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["results"][0]["params"]["threads"], 1, "{out}");
    let allowed = doc["system"]["cpu"]["allowed_cpus"].as_array().unwrap();
    assert!(!allowed.is_empty(), "{out}");
    // Named before the run and, for a point with more threads than the quota, in its warnings.
    let (code, out, err) = run(&[
        "cpu",
        "--workload",
        "DP",
        "--threads",
        "1",
        "--repeat",
        "1",
        "--duration",
        "50ms",
        "--no-history",
        "--json",
        "-",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("CPU quota 0.50 CPUs (cgroup: 50000 µs every 100000 µs)")
            && err.contains("effective 0.50 CPUs"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let warnings = doc["results"][0]["warnings"].to_string();
    assert!(
        warnings.contains("CPU quota: this process may use 0.50 CPUs' worth of time")
            && warnings.contains("its thread can reach at most 50.0 % of the peak"),
        "{warnings}"
    );
    // A memory latency point records the quota too (one thread: half of it is within reach).
    let (code, out, err) = run(&[
        "mem",
        "--workload",
        "LATENCY",
        "--latency-max",
        "16K",
        "--repeat",
        "1",
        "--duration",
        "20ms",
        "--no-history",
        "--json",
        "-",
        "--quiet",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let first = &doc["results"][0];
    assert_eq!(first["params"]["probe"], "chase", "{first}");
    assert_eq!(first["params"]["cpu_quota"], 0.5, "{first}");
}
