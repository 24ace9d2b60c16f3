//! `peakbench cluster`: the rank each process gets from its launcher, and a whole multi-node
//! run under Open MPI's mpirun with three "nodes" made of network namespaces on one bridge.

mod common;

use assert_cmd::Command;
use common::{Namespaces, run_ip};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The tests of this file run one at a time: the three-node test compares CPU figures between
/// ranks, and another test's work on these two CPUs would make a healthy rank look slow.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn identity(out: &[u8]) -> Vec<Value> {
    let mut ids: Vec<Value> = String::from_utf8_lossy(out)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    ids.sort_by_key(|v| v["rank"].as_u64());
    ids
}

#[test]
fn identity_from_the_environment_and_bad_values() {
    let _serial = serial();
    let out = Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .args(["cluster", "identity"])
        .env("SLURM_STEP_ID", "0")
        .env("SLURM_PROCID", "2")
        .env("SLURM_NTASKS", "4")
        .env("SLURM_LOCALID", "0")
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert!(out.status.success());
    let ids = identity(&out.stdout);
    assert_eq!(ids[0]["rank"], 2);
    assert_eq!(ids[0]["world_size"], 4);
    assert_eq!(ids[0]["source"], "slurm");
    let out = Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .args(["cluster", "identity"])
        .env("PMI_RANK", "x")
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1);
    assert!(err.contains("PMI_RANK"), "{err}");
}

#[test]
fn three_ranks_under_open_mpi() {
    let _serial = serial();
    let has_mpirun = std::process::Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_mpirun {
        eprintln!(
            "SKIPPED three_ranks_under_open_mpi: mpirun not found (apt-get install openmpi-bin)"
        );
        return;
    }
    let out = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-n", "3"])
        .arg(env!("CARGO_BIN_EXE_peakbench"))
        .args(["cluster", "identity"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ids = identity(&out.stdout);
    assert_eq!(ids.len(), 3, "{ids:?}");
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(id["rank"], i as u64);
        assert_eq!(id["world_size"], 3);
        assert_eq!(id["source"], "open_mpi");
    }
}

/// `cluster run --hpl` under mpirun: after the node's own LINPACK, one HPL over the machines
/// (here the one machine, at rank 0's address) by `mpirun --host`, in the fleet and its totals.
#[test]
fn one_rank_runs_the_multi_node_hpl_under_mpirun() {
    let _serial = serial();
    let found = |p: &str| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .any(|d| d.join(p).is_file())
    };
    if !found("hpcc") || !found("mpirun") {
        eprintln!(
            "SKIPPED one_rank_runs_the_multi_node_hpl_under_mpirun: hpcc or mpirun not found (apt-get install hpcc openmpi-bin libopenblas0-serial)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("tiny.toml");
    std::fs::write(
        &profile,
        "description = \"test: LINPACK\"\n[defaults]\nrepeat = 2\n\
         [[job]]\nsubsystem = \"cpu\"\nworkload = [\"LINPACK\"]\nn = 192\nthreads = \"all\"\n",
    )
    .unwrap();
    let json = dir.path().join("fleet.json");
    let out = Command::new("mpirun")
        .args(["--allow-run-as-root", "--bind-to", "none", "-n", "1"])
        .args(["-x", "PEAKBENCH_DB", "-x", common::MOCK_CLOCK.0])
        .env("PEAKBENCH_DB", common::test_db())
        .env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1)
        .arg(env!("CARGO_BIN_EXE_peakbench"))
        .args([
            "cluster",
            "run",
            "--no-net",
            "--hpl",
            "--port",
            "0",
            "--profile",
        ])
        .arg(&profile)
        .arg("--json")
        .arg(&json)
        .timeout(Duration::from_secs(240))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("hpcc cannot be used") {
        eprintln!("SKIPPED one_rank_runs_the_multi_node_hpl_under_mpirun: {stderr}");
        return;
    }
    assert!(out.status.success(), "{stderr}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(
        common::schema_errors(&doc).is_empty(),
        "{:?}",
        common::schema_errors(&doc)
    );
    let hpl = &doc["fleet"]["hpl"];
    assert_eq!(hpl["launcher"], "mpirun", "{hpl}");
    assert_eq!(hpl["error"], Value::Null, "{hpl}");
    // N from the node's LINPACK (192) × √1.
    assert_eq!(hpl["n"], 192, "{hpl}");
    let machines = hpl["machines"].as_array().unwrap();
    assert_eq!(machines.len(), 1, "{hpl}");
    assert_eq!(machines[0]["address"], doc["fleet"]["nodes"][0]["address"]);
    let processes = hpl["processes"].as_u64().unwrap();
    assert!(processes >= 1 && processes == machines[0]["processes"].as_u64().unwrap());
    let command: Vec<&str> = hpl["command"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(command.contains(&"--host"), "{command:?}");
    assert!(hpl["gflops"].as_f64().is_some_and(|g| g > 0.1), "{hpl}");
    assert!(hpl["residual"].as_f64().is_some_and(|r| r < 16.0), "{hpl}");
    assert!(
        hpl["nodes_linpack_gflops"]
            .as_f64()
            .is_some_and(|g| g > 0.1),
        "{hpl}"
    );
}

#[test]
fn hpl_is_refused_where_it_cannot_run() {
    // Ranks from flags: no launcher to start HPL with; refused before anything is measured.
    let out = cluster_run(&["--rank", "0", "--world-size", "1", "--hpl", "--no-net"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--hpl") && err.contains("mpirun or srun"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let out = cluster_run(&["--rank", "0", "--world-size", "1", "--hpl-n", "1000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--hpl"));
}

/// Three namespaces, pbc<id>n0..n2, each with one end of a veth pair whose other end is a port
/// of a bridge in a fourth namespace; node i has 10.251.0.(i+1)/24.
fn three_bridged_nodes() -> Result<Namespaces, String> {
    let id = std::process::id() % 10_000;
    let sw = format!("pbc{id}sw");
    let nodes: Vec<String> = (0..3).map(|i| format!("pbc{id}n{i}")).collect();
    let mut names = vec![sw.clone()];
    names.extend(nodes.iter().cloned());
    let ns = Namespaces::new(names)?;
    run_ip(&["-n", &sw, "link", "add", "br0", "type", "bridge"])?;
    run_ip(&["-n", &sw, "link", "set", "br0", "up"])?;
    for (i, n) in nodes.iter().enumerate() {
        let (inner, outer) = (format!("pbc{id}v{i}"), format!("pbc{id}p{i}"));
        run_ip(&[
            "link", "add", &inner, "netns", n, "type", "veth", "peer", "name", &outer, "netns", &sw,
        ])?;
        run_ip(&["-n", &sw, "link", "set", &outer, "master", "br0"])?;
        run_ip(&["-n", &sw, "link", "set", &outer, "up"])?;
        let addr = format!("10.251.0.{}/24", i + 1);
        run_ip(&["-n", n, "addr", "add", &addr, "dev", &inner])?;
        run_ip(&["-n", n, "link", "set", &inner, "up"])?;
        run_ip(&["-n", n, "link", "set", "lo", "up"])?;
    }
    Ok(ns)
}

/// A CPU cgroup limited to half a CPU (cgroup v2 `cpu.max` or v1 `cpu.cfs_quota_us`), removed
/// when dropped; `procs` is the file a process writes its pid to, to join it.
struct SlowCgroup {
    dir: PathBuf,
    procs: PathBuf,
}

impl SlowCgroup {
    fn create(name: &str) -> Result<SlowCgroup, String> {
        let v2 = Path::new("/sys/fs/cgroup");
        let controllers =
            std::fs::read_to_string(v2.join("cgroup.controllers")).unwrap_or_default();
        let (dir, files): (PathBuf, Vec<(&str, &str)>) =
            if controllers.split_whitespace().any(|c| c == "cpu") {
                (v2.join(name), vec![("cpu.max", "50000 100000")])
            } else if Path::new("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").exists() {
                (
                    Path::new("/sys/fs/cgroup/cpu").join(name),
                    vec![
                        ("cpu.cfs_period_us", "100000"),
                        ("cpu.cfs_quota_us", "50000"),
                    ],
                )
            } else {
                return Err("no cgroup CPU controller (v2 cpu.max or v1 cpu.cfs_quota_us)".into());
            };
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let group = SlowCgroup {
            procs: dir.join("cgroup.procs"),
            dir,
        };
        for (f, v) in files {
            std::fs::write(group.dir.join(f), v).map_err(|e| format!("cannot write {f}: {e}"))?;
        }
        Ok(group)
    }
}

impl SlowCgroup {
    /// How many periods the group has been throttled in so far.
    fn throttled(&self) -> u64 {
        std::fs::read_to_string(self.dir.join("cpu.stat"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("nr_throttled "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Runs a busy process in the group until the quota throttles it (some kernels — and this
    /// sandbox — enforce a fresh group's quota only after a while), at most 5 × 1 s.
    fn prime(&self) -> Result<(), String> {
        for _ in 0..5 {
            let mut busy = std::process::Command::new("sh")
                .arg("-c")
                .arg("echo $$ > \"$1\" && exec yes > /dev/null")
                .arg("sh")
                .arg(&self.procs)
                .spawn()
                .map_err(|e| e.to_string())?;
            std::thread::sleep(Duration::from_secs(1));
            let _ = busy.kill();
            let _ = busy.wait();
            if self.throttled() > 0 {
                return Ok(());
            }
        }
        Err("the cgroup's CPU quota throttles nothing here".into())
    }
}

impl Drop for SlowCgroup {
    fn drop(&mut self) {
        // The processes in it have exited; an empty cgroup is removed with rmdir.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Three "nodes", each a network namespace on one bridge, run a tiny profile under mpirun,
/// authenticated, rank 2 held to half a CPU: one fleet document in the schema, every node and
/// link measured, rank 2 the outlier, and the rendezvous left empty (root, `ip`, mpirun and a
/// cgroup CPU controller needed; skipped, saying so, otherwise).
#[test]
fn three_namespace_nodes_under_mpirun_merge_into_one_fleet() {
    let _serial = serial();
    let skip = |why: &str| {
        eprintln!("SKIPPED three_namespace_nodes_under_mpirun_merge_into_one_fleet: {why}");
    };
    let has_mpirun = std::process::Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_mpirun {
        return skip("mpirun not found (apt-get install openmpi-bin)");
    }
    let ns = match three_bridged_nodes() {
        Ok(ns) => ns,
        Err(why) => return skip(&why),
    };
    let id = std::process::id() % 10_000;
    let slow = match SlowCgroup::create(&format!("peakbench-test-{id}")) {
        Ok(g) => g,
        Err(why) => return skip(&why),
    };
    slow.prime().unwrap();
    let throttled_before = slow.throttled();
    let tmp = tempfile::Builder::new()
        .prefix(&format!("pb-cluster-{id}"))
        .tempdir()
        .unwrap();
    let dir = tmp.path().to_path_buf();
    std::fs::create_dir_all(dir.join("rendezvous")).unwrap();
    let out_json = dir.join("fleet.json");
    let out = run_three_ranks(&dir, id, &slow, &out_json);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        !stderr.contains("no --token") && stderr.contains("authenticated"),
        "{stderr}"
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&out_json).unwrap()).unwrap();
    assert_eq!(doc["schema_version"], 4);
    assert!(
        common::schema_errors(&doc).is_empty(),
        "{:?}",
        common::schema_errors(&doc)
    );
    every_node_is_complete_and_measured(&doc);
    every_link_is_measured(&doc);
    the_slowed_rank_is_the_outlier(&doc, &slow, throttled_before);
    // Rank 0 removed its rendezvous file.
    assert_eq!(
        std::fs::read_dir(dir.join("rendezvous")).unwrap().count(),
        0
    );
    drop(ns);
    drop(slow);
}

/// Runs a tiny profile (CPU DP, LINPACK, memory TRIAD on 32 MiB arrays: the default's 3 × 1.2 GiB
/// would take a rank held to half a CPU 20 s to touch; the links' tests short, with
/// references) on three ranks under mpirun, each in namespace pbc<id>n<rank>, rank 2 in the
/// cgroup `slow`; the fleet document written to `out_json`.
fn run_three_ranks(
    dir: &Path,
    id: u32,
    slow: &SlowCgroup,
    out_json: &Path,
) -> std::process::Output {
    let profile = dir.join("tiny.toml");
    std::fs::write(
        &profile,
        "description = \"test: CPU DP, LINPACK and memory TRIAD\"\n[defaults]\nrepeat = 3\n\
         [[job]]\nsubsystem = \"cpu\"\nworkload = [\"DP\"]\nthreads = \"all\"\nduration = \"200ms\"\n\
         [[job]]\nsubsystem = \"cpu\"\nworkload = [\"LINPACK\"]\nn = 160\nthreads = \"all\"\n\
         [[job]]\nsubsystem = \"mem\"\nworkload = [\"TRIAD\"]\nthreads = \"all\"\nduration = \"100ms\"\n\
         array_size = \"32M\"\n",
    )
    .unwrap();
    // Each rank joins the slow cgroup (rank 2 only) and enters its own namespace before
    // peakbench starts: /sys/fs/cgroup is not visible inside `ip netns exec`.
    let wrapper = dir.join("rank.sh");
    std::fs::write(
        &wrapper,
        "r=$OMPI_COMM_WORLD_RANK\n\
         if [ \"$r\" = 2 ]; then echo $$ > \"$SLOW_PROCS\"; fi\n\
         exec ip netns exec \"$NS_PREFIX$r\" \"$@\"\n",
    )
    .unwrap();
    Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-n", "3"])
        .args(["-x", "SLOW_PROCS", "-x", "NS_PREFIX", "-x", "PEAKBENCH_DB"])
        .args(["-x", common::MOCK_CLOCK.0])
        // Authenticated: the ranks prove the token to the coordinator and to each other's
        // network servers, and every cluster message is sealed.
        .args(["-x", "PEAKBENCH_TOKEN"])
        .env("PEAKBENCH_TOKEN", "three-node-secret")
        .env("SLOW_PROCS", &slow.procs)
        .env("NS_PREFIX", format!("pbc{id}n"))
        .env("PEAKBENCH_DB", common::test_db())
        .env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1)
        .arg("sh")
        .arg(&wrapper)
        .arg(env!("CARGO_BIN_EXE_peakbench"))
        .args(["cluster", "run", "--profile"])
        .arg(&profile)
        .arg("--rendezvous")
        .arg(dir.join("rendezvous"))
        .args([
            // The links are only checked for being measured: short tests.
            "--net-duration",
            "100ms",
            "--net-repeat",
            "1",
            "--join-timeout",
            "30s",
            // iperf3 and sockperf on every pair link, against the destination's servers.
            "--reference",
        ])
        .arg("--json")
        .arg(out_json)
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap()
}

/// Every rank of the fleet document `doc` is complete, with its system and its address on the
/// bridge, and measured its CPU, memory and LINPACK points.
fn every_node_is_complete_and_measured(doc: &Value) {
    let fleet = &doc["fleet"];
    assert_eq!(fleet["world_size"], 3);
    let nodes = fleet["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 3);
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(n["rank"], i as u64);
        assert_eq!(n["status"], "complete", "{n}");
        assert_eq!(n["identity_source"], "open_mpi");
        assert!(
            n["system"]["cpu"]["model"].is_object(),
            "rank {i} has no system information"
        );
        // The others reached each rank over the bridge, at its own address.
        if i > 0 {
            assert_eq!(n["address"], format!("10.251.0.{}", i + 1));
        }
    }
    let results = doc["results"].as_array().unwrap();
    // Each rank solved its own LINPACK system, and the residual passed.
    for node in 0..3u64 {
        assert!(
            results.iter().any(|r| r["workload"] == "LINPACK"
                && r["params"]["node"] == node
                && r["params"]["residual_passed"] == true),
            "no LINPACK point of node {node}"
        );
    }
    for node in 0..3u64 {
        for subsystem in ["cpu", "mem"] {
            assert!(
                results.iter().any(|r| r["subsystem"] == subsystem
                    && r["params"]["node"] == node
                    && r["params"].get("pattern").is_none()
                    && r["mean"].as_f64().is_some_and(|m| m > 0.0)),
                "no {subsystem} point of node {node}"
            );
        }
    }
}

/// The links of the fleet document `doc`: both 3 × 3 matrices with every cell measured, ring
/// and bisection points, and each pair link's iperf3 figure (where iperf3 is installed).
fn every_link_is_measured(doc: &Value) {
    let fleet = &doc["fleet"];
    let results = doc["results"].as_array().unwrap();
    // Both matrices, 3 × 3, every cell measured.
    let matrices = fleet["matrices"].as_array().unwrap();
    for metric in ["throughput", "latency"] {
        let m = matrices
            .iter()
            .find(|m| m["metric"] == metric)
            .unwrap_or_else(|| panic!("no {metric} matrix"));
        let rows = m["values"].as_array().unwrap();
        assert_eq!(rows.len(), 3);
        for row in rows {
            let cells = row.as_array().unwrap();
            assert_eq!(cells.len(), 3);
            assert!(
                cells.iter().all(|c| c.as_f64().is_some_and(|v| v > 0.0)),
                "{metric}: {row}"
            );
        }
    }
    for pattern in ["ring", "bisection"] {
        assert!(
            results.iter().any(|r| r["params"]["pattern"] == pattern),
            "no {pattern} points"
        );
    }
    // Issue 29: each pair link's throughput has iperf3's figure, measured against the server
    // its destination rank started (where iperf3 is installed); links loaded all at once say
    // why they have none.
    let links = |pattern: &'static str| -> Vec<&Value> {
        results
            .iter()
            .filter(|r| r["params"]["pattern"] == pattern && r["metric"] == "throughput")
            .collect()
    };
    if Command::new("iperf3").arg("--version").output().is_ok() {
        for r in links("pairs") {
            assert_eq!(r["reference"]["tool"], "iperf3", "{r}");
            assert!(r["reference"]["mean"].as_f64().unwrap() > 0.0, "{r}");
        }
    } else {
        eprintln!("NOTE: iperf3 is not installed: the links' reference figures are not checked");
    }
    for r in links("ring") {
        assert!(r["reference"].is_null(), "{r}");
        assert!(
            r["reference_unknown_reason"]
                .as_str()
                .unwrap()
                .contains("at once"),
            "{r}"
        );
    }
}

/// The rank held to half a CPU in the cgroup `slow` is the DP outlier of the fleet document
/// `doc`, where the quota slowed it and the healthy ranks agree; no healthy rank is one.
fn the_slowed_rank_is_the_outlier(doc: &Value, slow: &SlowCgroup, throttled_before: u64) {
    let fleet = &doc["fleet"];
    let results = doc["results"].as_array().unwrap();
    // The rank held to half a CPU is the outlier of the DP point; the others are not. (The
    // ranks' tiny LINPACK, three ranks of two threads on this machine's cores, is too short to
    // judge: a few milliseconds that the scheduler alone swings by a quarter.)
    let outliers = fleet["outliers"].as_array().unwrap();
    let cpu: Vec<&Value> = outliers
        .iter()
        .filter(|o| o["kind"] == "node" && o["subsystem"] == "cpu" && o["workload"] == "DP")
        .collect();
    // Rank 2's CPU figure against the others': the quota of a fresh group is not always
    // enforced at once in every kernel (this sandbox's among them). Where it did not slow rank
    // 2, there is no outlier to find, and the check says so instead of failing.
    let dp = |node: u64| {
        results
            .iter()
            .filter(|r| r["workload"] == "DP" && r["params"]["node"] == node)
            // The outlier rule judges a point's median repetition, as here.
            .filter_map(|r| r["median"].as_f64())
            .next()
            .unwrap_or(0.0)
    };
    let (fast, slowed) = (dp(0).min(dp(1)), dp(2));
    // With three nodes the rule's spread (MAD) is the healthy pair's disagreement: where the
    // two healthy ranks themselves differ by more than 10 % (a noisy machine), a slow third is
    // rightly not called an outlier, and the check says so too.
    let agree = fast >= 0.9 * dp(0).max(dp(1));
    if slowed < 0.8 * fast && agree {
        assert!(
            cpu.iter().any(|o| o["node"] == 2 && o["worse"] == true),
            "rank 2 ran at {slowed:.3e} against {fast:.3e} and was not flagged ({} periods throttled): {outliers:?}",
            slow.throttled() - throttled_before
        );
    } else {
        eprintln!(
            "NOTE: rank 2's outlier check is skipped: the quota did not slow it, or the healthy ranks disagree (ranks 0, 1, 2 at {:.3e}, {:.3e}, {slowed:.3e}; {} periods throttled)",
            dp(0),
            dp(1),
            slow.throttled() - throttled_before
        );
    }
    // A healthy rank is called an outlier only where the healthy pair itself disagrees (this
    // host's neighbours swing a figure by 10 % within seconds); where they agree, only rank 2 may be.
    if agree {
        assert!(cpu.iter().all(|o| o["node"] == 2), "{cpu:?}");
    }
}

/// `peakbench cluster run ARGS` with no launcher or coordinator hints from the environment.
fn cluster_run(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_peakbench"));
    c.args(["cluster", "run"]).args(args);
    c.env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1);
    for var in [
        "PEAKBENCH_COORDINATOR",
        "PEAKBENCH_RENDEZVOUS",
        "SLURM_STEP_NODELIST",
        "SLURM_JOB_NODELIST",
        "SLURM_NODELIST",
    ] {
        c.env_remove(var);
    }
    c.env("PEAKBENCH_DB", common::test_db())
        .timeout(Duration::from_secs(120));
    c
}

fn one_line(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn a_rank_without_a_coordinator_or_a_bad_option_is_a_one_line_error() {
    let _serial = serial();
    let out = cluster_run(&["--rank", "1", "--world-size", "3"])
        .output()
        .unwrap();
    let err = one_line(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("cannot tell where rank 0 is"), "{err}");
    for (args, expected) in [
        (vec!["--patterns", "star"], "unknown pattern 'star'"),
        (vec!["--net-only", "--no-net"], "cannot be used with"),
        (vec!["--net-repeat", "0"], "out of range"),
        (vec!["--profile", "nope"], "no profile 'nope'"),
        (vec!["--pair-rounds", "0"], "out of range"),
        (
            vec!["--no-net", "--pair-rounds", "4"],
            "bounds the pairs pattern",
        ),
        (
            vec!["--patterns", "ring", "--pair-rounds", "4"],
            "add pairs to --patterns",
        ),
    ] {
        let mut full = vec!["cluster", "run", "--rank", "0", "--world-size", "1"];
        full.extend(args);
        common::one_line_exit_2(&full, expected);
    }
}

/// Rank 0 of more ranks than its hard limit of open files holds is refused before it listens,
/// saying how to raise it (under the usual soft limit of 1,024 a thousand ranks stopped at
/// accept(), the ranks left out looking unreachable); under a soft limit alone it raises it.
#[test]
fn rank_0_makes_room_for_every_ranks_connection_or_says_how() {
    let _serial = serial();
    // Rank 0 of 48 on loopback, waiting `join` for the others, under the limit `nofile`.
    let rank0 = |nofile: &str, join: &str| {
        std::process::Command::new("prlimit")
            .arg(format!("--nofile={nofile}"))
            .arg(env!("CARGO_BIN_EXE_peakbench"))
            .args(["cluster", "run", "--rank", "0", "--world-size", "48"])
            .args(["--net-only", "--bind", "127.0.0.1", "--port", "0"])
            .args([
                "--patterns",
                "ring",
                "--join-timeout",
                join,
                "--quiet",
                "--no-history",
            ])
            .env("PEAKBENCH_DB", common::test_db())
            .env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1)
            .output()
            .expect("prlimit (util-linux) runs the command under a limit")
    };
    let out = rank0("40:40", "2s");
    let err = one_line(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("48 ranks need 112 open files at rank 0")
            && err.contains("hard limit is 40")
            && err.contains("ulimit -Hn 112"),
        "{err}"
    );
    // A soft limit of 40 under a hard one of 200: raised, and the run goes on to wait for the
    // ranks (none come: it ends on the join timeout, not on the limit).
    let out = rank0("40:200", "1s");
    let err = one_line(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("of 48 did not join within 1s") && !err.contains("open files"),
        "{err}"
    );
}

#[test]
fn missing_and_mismatched_ranks_end_the_run_with_a_reason() {
    let _serial = serial();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let rdv = dir.to_str().unwrap();
    let common_args = ["--rendezvous", rdv, "--join-timeout", "3s", "--no-net"];
    let mut rank0 = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"));
    rank0
        .args(["cluster", "run", "--rank", "0", "--world-size", "2"])
        .args(common_args)
        .env("PEAKBENCH_DB", common::test_db())
        .env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1)
        .stderr(std::process::Stdio::piped());
    let rank0 = rank0.spawn().unwrap();
    // A rank of another run (3 ranks) is refused with the reason; rank 1 of 2 never comes.
    let out = cluster_run(&["--rank", "1", "--world-size", "3"])
        .args(common_args)
        .output()
        .unwrap();
    let err = one_line(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("does not fit this run of 2 ranks"), "{err}");
    let out = rank0.wait_with_output().unwrap();
    let err = one_line(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("rank 1 of 2 did not join within 3s"), "{err}");
    assert_eq!(
        std::fs::read_dir(dir).unwrap().count(),
        0,
        "rendezvous file left"
    );
}

#[test]
fn one_rank_measures_itself_and_writes_a_fleet_document() {
    let _serial = serial();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let json = dir.join("one.json");
    let html = dir.join("one.html");
    let out = cluster_run(&[
        "--rank",
        "0",
        "--world-size",
        "1",
        "--net-only",
        "--net-duration",
        "100ms",
        "--net-repeat",
        "1",
        "--port",
        "0",
        "--quiet",
    ])
    .arg("--json")
    .arg(&json)
    .arg("--html")
    .arg(&html)
    .env("PEAKBENCH_DB", dir.join("history.db"))
    .output()
    .unwrap();
    let err = one_line(&out);
    assert!(out.status.success(), "{err}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(
        common::schema_errors(&doc).is_empty(),
        "{:?}",
        common::schema_errors(&doc)
    );
    let fleet = &doc["fleet"];
    assert_eq!(fleet["nodes"][0]["identity_source"], "flags");
    for m in fleet["matrices"].as_array().unwrap() {
        assert!(m["values"][0][0].as_f64().is_some_and(|v| v > 0.0), "{m}");
    }
    assert_eq!(fleet["matrices"].as_array().unwrap().len(), 2);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<section id=\"nodes\">") && page.contains("class=\"heatmap\""));
    // One database entry, and it keeps the nodes and matrices.
    let store = peakbench::history::Store::open(&dir.join("history.db")).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, "complete");
    let stored = store.load(runs[0].id).unwrap();
    let f = stored.fleet.expect("the stored run has its fleet");
    assert_eq!(f.nodes.len(), 1);
    assert_eq!(f.matrices.len(), 2);
    assert_eq!(
        stored.results.len(),
        doc["results"].as_array().unwrap().len()
    );
}

#[test]
fn a_job_that_fails_on_a_node_is_noted_and_the_run_exits_1() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (profile, json) = (dir.path().join("p.toml"), dir.path().join("r.json"));
    // Job 2's directory is read-only: the job passes the checks made before the run (the
    // directory exists, with room), and fails when it runs, creating its file. Root writes
    // anywhere, so as root the directory is a read-only tmpfs of its own.
    let ro = common::tmpfs("ro,size=64m");
    let read_only = match &ro {
        Some((d, _)) => d.path().to_path_buf(),
        // SAFETY: geteuid has no preconditions.
        None if unsafe { libc::geteuid() } == 0 => return,
        None => {
            use std::os::unix::fs::PermissionsExt;
            let d = dir.path().join("ro");
            std::fs::create_dir(&d).unwrap();
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o500)).unwrap();
            d
        }
    };
    std::fs::write(
        &profile,
        format!(
            "[defaults]\nrepeat = 1\n\
             [[job]]\nsubsystem = 'cpu'\nworkload = ['NULL']\nthreads = 1\nwarmup = 0\n\
             [[job]]\nsubsystem = 'disk'\nengine = 'null'\nworkload = ['RR']\nblock_size = '4K'\n\
             size = '4M'\nruntime = '50ms'\nramp = '0s'\nbuffered = true\ndir = '{}'\n",
            read_only.display()
        ),
    )
    .unwrap();
    let out = cluster_run(&[
        "--rank",
        "0",
        "--world-size",
        "1",
        "--no-net",
        "--port",
        "0",
    ])
    .arg("--profile")
    .arg(&profile)
    .arg("--json")
    .arg(&json)
    .output()
    .unwrap();
    let err = one_line(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the run is incomplete: rank 0: job 2 (disk) failed"),
        "{err}"
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let node = &doc["fleet"]["nodes"][0];
    assert_eq!(node["failed_jobs"].as_array().unwrap().len(), 1, "{node}");
    assert_eq!(doc["results"][0]["workload"], "NULL");
    assert_eq!(doc["results"][0]["params"]["node"], 0);
}
