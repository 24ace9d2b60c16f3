//! Every workload peakbench measures, in one list: its subsystem, its name, what it measures,
//! whether a command without `--workload` runs it, the metrics of its records and the reference
//! tool of its points. The command line's defaults, the profiles' time estimates and the
//! conformance test (tests/conformance.rs, which runs a tiny point of each one through every
//! output) read it; a new workload is its subsystem's enum variant plus a line here.

use super::cpu::CpuWorkload;
use super::disk::DiskWorkload;
use super::linalg::workload::LinalgWorkload;
use super::mem::MemWorkload;
use super::net::NetWorkload;

/// One workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workload {
    /// `cpu`, `mem`, `disk` or `net`.
    pub subsystem: &'static str,
    /// As users type it (`--workload`).
    pub name: &'static str,
    pub what: &'static str,
    /// Run when no `--workload` is given.
    pub default: bool,
    /// The metrics of its records.
    pub metrics: &'static [&'static str],
    /// The standard tool that measures the same point (`--reference`), if any.
    pub reference: Option<&'static str>,
}

const fn w(
    subsystem: &'static str,
    name: &'static str,
    what: &'static str,
    default: bool,
    metrics: &'static [&'static str],
    reference: Option<&'static str>,
) -> Workload {
    Workload {
        subsystem,
        name,
        what,
        default,
        metrics,
        reference,
    }
}

const THROUGHPUT: &[&str] = &["throughput"];
const LATENCY: &[&str] = &["latency"];
const DISK: &[&str] = &["throughput", "iops", "latency"];

/// The list, in the order of the reports.
pub const ALL: &[Workload] = &[
    w(
        "cpu",
        "QP",
        "8-bit integer vector adds",
        true,
        THROUGHPUT,
        None,
    ),
    w(
        "cpu",
        "HP",
        "16-bit adds, or fp16 FMA where the core has it",
        true,
        THROUGHPUT,
        None,
    ),
    w(
        "cpu",
        "SP",
        "fp32 FMA",
        true,
        THROUGHPUT,
        Some("likwid-bench"),
    ),
    w(
        "cpu",
        "DP",
        "fp64 FMA",
        true,
        THROUGHPUT,
        Some("likwid-bench"),
    ),
    w(
        "cpu",
        "INT32",
        "32-bit integer vector adds",
        true,
        THROUGHPUT,
        None,
    ),
    w(
        "cpu",
        "INT64",
        "64-bit integer vector adds",
        true,
        THROUGHPUT,
        None,
    ),
    w("cpu", "NULL", "the harness alone", false, LATENCY, None),
    w(
        "cpu",
        "LINPACK",
        "solve of a random dense system by LU with partial pivoting (HPL's problem, count and residual check)",
        false,
        THROUGHPUT,
        Some("HPL (hpcc)"),
    ),
    w(
        "cpu",
        "DGEMM",
        "fp64 matrix multiply C = A·B (2·N³ operations)",
        false,
        THROUGHPUT,
        Some("HPL (hpcc)"),
    ),
    w(
        "cpu",
        "SGEMM",
        "fp32 matrix multiply C = A·B (2·N³ operations)",
        false,
        THROUGHPUT,
        None,
    ),
    w(
        "mem",
        "RWS",
        "read and write blocks in sequence",
        true,
        THROUGHPUT,
        None,
    ),
    w(
        "mem",
        "RWR",
        "read and write blocks at random",
        true,
        THROUGHPUT,
        None,
    ),
    w(
        "mem",
        "WS",
        "write blocks in sequence",
        true,
        THROUGHPUT,
        None,
    ),
    w(
        "mem",
        "WR",
        "write blocks at random",
        true,
        THROUGHPUT,
        None,
    ),
    w(
        "mem",
        "RS",
        "read blocks in sequence",
        true,
        THROUGHPUT,
        None,
    ),
    w("mem", "RR", "read blocks at random", true, THROUGHPUT, None),
    w(
        "mem",
        "COPY",
        "STREAM copy",
        true,
        THROUGHPUT,
        Some("likwid-bench, STREAM"),
    ),
    w(
        "mem",
        "SCALE",
        "STREAM scale",
        true,
        THROUGHPUT,
        Some("STREAM"),
    ),
    w("mem", "ADD", "STREAM add", true, THROUGHPUT, Some("STREAM")),
    w(
        "mem",
        "TRIAD",
        "STREAM triad",
        true,
        THROUGHPUT,
        Some("likwid-bench, STREAM"),
    ),
    w(
        "mem",
        "LATENCY",
        "pointer-chasing staircase and cache levels",
        true,
        LATENCY,
        None,
    ),
    w("mem", "NULL", "the harness alone", false, LATENCY, None),
    w("disk", "RS", "sequential reads", true, DISK, Some("fio")),
    w("disk", "WS", "sequential writes", true, DISK, Some("fio")),
    w("disk", "RR", "random reads", true, DISK, Some("fio")),
    w("disk", "WR", "random writes", true, DISK, Some("fio")),
    w(
        "disk",
        "RW",
        "random mixed reads and writes",
        false,
        DISK,
        Some("fio"),
    ),
    w(
        "disk",
        "COPY",
        "sequential copy to a second, new file (read + write)",
        false,
        DISK,
        None,
    ),
    w(
        "net",
        "THROUGHPUT",
        "goodput; UDP loss and jitter",
        true,
        &["throughput", "loss", "jitter"],
        Some("iperf3"),
    ),
    w(
        "net",
        "LATENCY",
        "ping-pong round trips",
        true,
        &["latency", "rate"],
        Some("sockperf, qperf, ping"),
    ),
];

/// The workloads of `subsystem`.
pub fn of(subsystem: &str) -> impl Iterator<Item = &'static Workload> + '_ {
    ALL.iter().filter(move |w| w.subsystem == subsystem)
}

/// The workloads of `subsystem` run when none is named.
pub fn defaults(subsystem: &str) -> impl Iterator<Item = &'static Workload> + '_ {
    of(subsystem).filter(|w| w.default)
}

/// The names each subsystem's own type knows, in its order (what the command line parses).
pub fn subsystem_names(subsystem: &str) -> Vec<&'static str> {
    match subsystem {
        "cpu" => CpuWorkload::ALL
            .iter()
            .map(|w| w.name())
            .chain(LinalgWorkload::ALL.iter().map(|w| w.name()))
            .collect(),
        "mem" => MemWorkload::ALL.iter().map(|w| w.name()).collect(),
        "disk" => DiskWorkload::ALL.iter().map(|w| w.name()).collect(),
        "net" => [NetWorkload::Throughput, NetWorkload::Latency]
            .iter()
            .map(|w| w.name())
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry and the subsystems' own types list the same workloads in the same order,
    /// and the registry's defaults are what the subsystems run by default.
    #[test]
    fn the_registry_lists_every_workload_of_every_subsystem() {
        for sub in ["cpu", "mem", "disk", "net"] {
            let listed: Vec<&str> = of(sub).map(|w| w.name).collect();
            assert_eq!(listed, subsystem_names(sub), "{sub}");
        }
        let cpu: Vec<&str> = defaults("cpu").map(|w| w.name).collect();
        let cpu_own: Vec<&str> = CpuWorkload::DEFAULT.iter().map(|w| w.name()).collect();
        assert_eq!(cpu, cpu_own);
        let mem: Vec<&str> = defaults("mem").map(|w| w.name).collect();
        let mem_own: Vec<&str> = MemWorkload::DEFAULT.iter().map(|w| w.name()).collect();
        assert_eq!(mem, mem_own);
        assert!(
            ALL.iter()
                .all(|w| !w.metrics.is_empty() && !w.what.is_empty())
        );
    }
}
