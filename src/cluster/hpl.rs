//! `cluster run --hpl`: after the nodes' own points, rank 0 runs one HPL (Debian's hpcc) over
//! the machines of the run, as clusters run it — `mpirun --host` over the machines' addresses
//! when the ranks came from Open MPI (or PMI/PMIx), `srun` in the allocation when they came
//! from Slurm — with one process per physical core, and compares its rate with the sum of the
//! machines' own LINPACK.
//!
//! HPL's N defaults to the largest LINPACK N of the nodes × √machines (the same memory per
//! machine), in multiples of 64 as HPL is sized; hpcc must be installed at the same path on
//! every machine, and mpirun must reach them (its own remote launch, usually ssh).

use crate::reference::hpcc::{self, Job, Launch};
use crate::results::ResultRecord;
use crate::results::fleet::{Fleet, FleetHpl, HplMachine};
use crate::results::{Metric, Unit};
use crate::workload::linalg::LinalgWorkload;
use std::net::IpAddr;
use std::path::Path;

/// The launcher of the HPL job for ranks that came from `identity_source`.
pub fn launcher(identity_source: &str) -> Result<&'static str, String> {
    match identity_source {
        "slurm" => Ok("srun"),
        "open_mpi" | "pmi" | "pmix" => Ok("mpirun"),
        other => Err(format!(
            "the multi-node HPL is launched as the ranks were, by mpirun or srun; these came from {other}"
        )),
    }
}

/// The machines of the run that completed: one entry per machine id, in the order of their
/// lowest rank, at that rank's address, with a process per physical core.
pub fn machines(fleet: &Fleet) -> Vec<HplMachine> {
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for n in fleet.nodes.iter().filter(|n| n.status == "complete") {
        if seen.contains(&n.machine_id.as_str()) {
            continue;
        }
        seen.push(&n.machine_id);
        let cores = n.system.as_ref().map_or(1, |s| {
            s.cpu.cores.get().map_or(s.cpu.threads, |&c| c).max(1) as usize
        });
        out.push(HplMachine {
            hostname: n.hostname.clone(),
            address: n.address.clone(),
            processes: cores,
        });
    }
    out
}

/// Each machine's best LINPACK rate (GFLOP/s), summed; `None` where a machine has none.
pub fn nodes_linpack_gflops(fleet: &Fleet, results: &[ResultRecord]) -> Option<f64> {
    let machine_of = |r: &ResultRecord| {
        let rank = r.params.node().node? as usize;
        Some(fleet.nodes.get(rank)?.machine_id.as_str())
    };
    let mut best: Vec<(&str, f64)> = Vec::new();
    for r in results.iter().filter(|r| {
        r.workload == LinalgWorkload::Linpack
            && r.metric == Metric::Throughput
            && r.unit == Unit::OpsPerSec
    }) {
        let (Some(m), v) = (machine_of(r), r.summary.median) else {
            continue;
        };
        if !v.is_finite() {
            continue;
        }
        match best.iter_mut().find(|(k, _)| *k == m) {
            Some((_, b)) => *b = b.max(v),
            None => best.push((m, v)),
        }
    }
    let machines = machines(fleet);
    (best.len() == machines.len() && !machines.is_empty())
        .then(|| best.iter().map(|(_, v)| v / 1e9).sum())
}

/// HPL's N: `asked`, or the largest LINPACK N of the nodes × √machines, a multiple of 64.
pub fn order(
    asked: Option<usize>,
    results: &[ResultRecord],
    machines: usize,
) -> Result<usize, String> {
    if let Some(n) = asked {
        return Ok(n);
    }
    let largest = results
        .iter()
        .filter(|r| r.workload == LinalgWorkload::Linpack)
        .filter_map(|r| r.params.cpu()?.linalg.as_ref().map(|l| l.n))
        .max()
        .ok_or("the profile has no LINPACK point to size HPL from: give --hpl-n N")?;
    let n = largest as f64 * (machines.max(1) as f64).sqrt();
    Ok(((n as usize) / 64 * 64).max(64))
}

/// The hpcc job over `machines` with `launcher`.
pub fn job(launcher: &str, machines: &[HplMachine], n: usize) -> Result<Job, String> {
    let processes: usize = machines.iter().map(|m| m.processes).sum();
    let launch = match launcher {
        "srun" => Launch::Srun,
        _ => Launch::Hosts(
            machines
                .iter()
                .map(|m| {
                    m.address
                        .parse::<IpAddr>()
                        .map(|ip| (ip, m.processes))
                        .map_err(|_| {
                            format!(
                                "machine {} has no address mpirun can use ({:?})",
                                crate::text::printable(&m.hostname),
                                crate::text::printable(&m.address)
                            )
                        })
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    Ok(Job {
        n,
        nb: crate::workload::linalg::default_nb(n),
        processes: processes.max(1),
        launch,
    })
}

/// Runs the HPL job over the machines of `fleet`; a failure is the record's `error`, never a
/// figure.
pub fn run(
    program: &Path,
    identity_source: &str,
    fleet: &Fleet,
    results: &[ResultRecord],
    asked_n: Option<usize>,
    blas_core: Option<&str>,
) -> FleetHpl {
    let machines = machines(fleet);
    let nodes_linpack_gflops = nodes_linpack_gflops(fleet, results);
    let mut out = FleetHpl {
        launcher: String::new(),
        command: Vec::new(),
        processes: machines.iter().map(|m| m.processes).sum(),
        machines,
        n: 0,
        nb: 0,
        p: 0,
        q: 0,
        gflops: None,
        seconds: None,
        residual: None,
        blas: hpcc::blas_library().map(|l| l.display().to_string()),
        nodes_linpack_gflops,
        error: None,
    };
    let planned = launcher(identity_source).and_then(|l| {
        let n = order(asked_n, results, out.machines.len())?;
        Ok((l, job(l, &out.machines, n)?))
    });
    let (launcher, job) = match planned {
        Ok(p) => p,
        Err(e) => {
            out.error = Some(e);
            return out;
        }
    };
    out.launcher = launcher.into();
    out.n = job.n;
    out.nb = job.nb;
    out.processes = job.processes;
    (out.p, out.q) = hpcc::grid(job.processes);
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let cpus = crate::runner::affinity::allowed_cpus().len();
    out.command = hpcc::command_line(
        program,
        &job,
        root,
        cpus,
        hpcc::openblas_coretype(blas_core),
    );
    match hpcc::run(program, &job, blas_core) {
        Ok(r) => {
            out.gflops = Some(r.hpl_gflops);
            out.seconds = Some(r.hpl_seconds);
            out.residual = Some(r.residual);
        }
        Err(e) => out.error = Some(e.to_string()),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fleet::{Node, OutlierRule};

    fn node(rank: u32, machine: &str, address: &str, status: &str) -> Node {
        Node {
            rank,
            hostname: format!("h{machine}"),
            machine_id: machine.into(),
            identity_source: "open_mpi".into(),
            address: address.into(),
            status: status.into(),
            failed_jobs: Vec::new(),
            system: None,
        }
    }

    fn fleet(nodes: Vec<Node>) -> Fleet {
        Fleet {
            world_size: nodes.len() as u32,
            nodes,
            outliers: Vec::new(),
            outlier_rule: OutlierRule::default(),
            matrices: Vec::new(),
            notes: Vec::new(),
            hpl: None,
            pairs_sampled: None,
        }
    }

    #[test]
    fn machines_count_once_and_the_launcher_follows_the_ranks() {
        let f = fleet(vec![
            node(0, "a", "10.0.0.1", "complete"),
            node(1, "a", "10.0.0.1", "complete"),
            node(2, "b", "10.0.0.2", "complete"),
            node(3, "c", "10.0.0.3", "left during the profile"),
        ]);
        let m = machines(&f);
        assert_eq!(
            m.iter().map(|m| m.address.as_str()).collect::<Vec<_>>(),
            ["10.0.0.1", "10.0.0.2"]
        );
        let j = job("mpirun", &m, 1000).unwrap();
        assert_eq!(j.processes, 2, "no system information: one process each");
        assert!(matches!(j.launch, Launch::Hosts(ref h) if h.len() == 2));
        assert!(matches!(
            job("srun", &m, 1000).unwrap().launch,
            Launch::Srun
        ));
        assert_eq!(launcher("slurm"), Ok("srun"));
        assert_eq!(launcher("open_mpi"), Ok("mpirun"));
        assert!(launcher("flags").unwrap_err().contains("mpirun or srun"));
        let bad = fleet(vec![node(0, "a", "not-an-address\x1b[2J", "complete")]);
        let e = job("mpirun", &machines(&bad), 64).unwrap_err();
        assert!(e.contains("no address") && !e.contains('\x1b'), "{e}");
    }

    #[test]
    fn n_grows_with_the_square_root_of_the_machines() {
        assert_eq!(order(Some(500), &[], 4), Ok(500));
        assert!(order(None, &[], 4).unwrap_err().contains("--hpl-n"));
    }
}
