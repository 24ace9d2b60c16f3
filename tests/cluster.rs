//! `peakbench cluster identity`: the rank each process gets from its launcher.

use assert_cmd::Command;
use serde_json::Value;
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
