//! `peakbench cluster`: the rank each process gets from its launcher, and a whole multi-node
//! run under Open MPI's mpirun with three "nodes" made of network namespaces on one bridge.

mod common;

use assert_cmd::Command;
use common::{Namespaces, run_ip};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

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

#[test]
fn three_namespace_nodes_under_mpirun_merge_into_one_fleet() {
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
    let dir = std::env::temp_dir().join(format!("pb-cluster-{id}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("rendezvous")).unwrap();
    let profile = dir.join("tiny.toml");
    std::fs::write(
        &profile,
        "description = \"test: CPU DP and memory TRIAD\"\n[defaults]\nrepeat = 3\n\
         [[job]]\nsubsystem = \"cpu\"\nworkload = [\"DP\"]\nthreads = \"all\"\nduration = \"200ms\"\n\
         [[job]]\nsubsystem = \"mem\"\nworkload = [\"TRIAD\"]\nthreads = \"all\"\nblock_size = \"16M\"\nduration = \"100ms\"\n",
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
    let out_json = dir.join("fleet.json");
    let out = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-n", "3"])
        .args(["-x", "SLOW_PROCS", "-x", "NS_PREFIX", "-x", "PEAKBENCH_DB"])
        .env("SLOW_PROCS", &slow.procs)
        .env("NS_PREFIX", format!("pbc{id}n"))
        .env("PEAKBENCH_DB", common::test_db())
        .arg("sh")
        .arg(&wrapper)
        .arg(env!("CARGO_BIN_EXE_peakbench"))
        .args(["cluster", "run", "--profile"])
        .arg(&profile)
        .arg("--rendezvous")
        .arg(dir.join("rendezvous"))
        .args([
            "--net-duration",
            "300ms",
            "--net-repeat",
            "2",
            "--join-timeout",
            "30s",
        ])
        .arg("--json")
        .arg(&out_json)
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&out_json).unwrap()).unwrap();
    assert_eq!(doc["schema_version"], 3);
    assert!(
        common::schema_errors(&doc).is_empty(),
        "{:?}",
        common::schema_errors(&doc)
    );
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
    // The rank held to half a CPU is the outlier of the CPU point; the others are not.
    let outliers = fleet["outliers"].as_array().unwrap();
    let cpu: Vec<&Value> = outliers
        .iter()
        .filter(|o| o["kind"] == "node" && o["subsystem"] == "cpu")
        .collect();
    assert!(
        cpu.iter().any(|o| o["node"] == 2 && o["worse"] == true),
        "rank 2 not flagged: {outliers:?}"
    );
    assert!(cpu.iter().all(|o| o["node"] == 2), "{cpu:?}");
    // Rank 0 removed its rendezvous file.
    assert_eq!(
        std::fs::read_dir(dir.join("rendezvous")).unwrap().count(),
        0
    );
    drop(ns);
    drop(slow);
    let _ = std::fs::remove_dir_all(&dir);
}
