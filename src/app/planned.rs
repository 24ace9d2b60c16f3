//! The points a request will measure, as records without figures: what the reference tools'
//! adapters are asked before anything runs (`run --dry-run --reference`: which tool will
//! measure which point, and for how long). Each record has the parameters the adapters read,
//! and as many samples as the point will have repetitions.

use crate::bench::cpu::CpuWorkload;
use crate::bench::disk::{DiskOptions, points as disk_points};
use crate::bench::mem::{MemOptions, MemWorkload, points as mem_points};
use crate::bench::net::{NetOptions, points as net_points};
use crate::results::params::Params;
use crate::results::{Metric, ResultRecord, Subsystem, Unit};
use crate::sysinfo::SystemInfo;
use serde_json::{Value, json};

/// A planned record of `workload` with `params`, or None where they do not decode (the plan
/// then leaves the point out rather than guess).
fn record(
    subsystem: Subsystem,
    workload: &str,
    metric: Metric,
    params: Value,
    repeat: usize,
) -> Option<ResultRecord> {
    let params = Params::with_defaults(subsystem, workload, params).ok()?;
    let unit = match (metric, subsystem) {
        (Metric::Throughput, Subsystem::Cpu) => Unit::OpsPerSec,
        (Metric::Throughput, Subsystem::Net) => Unit::BitsPerSec,
        (Metric::Throughput, _) => Unit::BytesPerSec,
        (Metric::Iops, _) => Unit::Iops,
        (Metric::Latency | Metric::Jitter, _) => Unit::Seconds,
        (Metric::Rate, _) => Unit::TransPerSec,
        (Metric::Loss, _) => Unit::Percent,
    };
    Some(ResultRecord::new(
        subsystem,
        workload,
        params,
        metric,
        unit,
        vec![1.0; repeat.max(1)],
        Err("planned".into()),
    ))
}

/// A point's records, one per metric, with the same parameters.
fn records(
    subsystem: Subsystem,
    workload: &str,
    metrics: &[Metric],
    params: Value,
    repeat: usize,
) -> impl Iterator<Item = ResultRecord> {
    metrics
        .iter()
        .filter_map(move |&m| record(subsystem, workload, m, params.clone(), repeat))
}

/// The widest instruction set of the machine, or the one asked for.
fn isa_name(asked: Option<crate::sysinfo::Isa>, sys: &SystemInfo) -> &'static str {
    asked
        .or_else(|| sys.cpu.isas.first().copied())
        .map_or("scalar", |i| i.name())
}

/// A memory request's points: the block and array kernels with their arrays, LATENCY.
pub fn mem(opts: &MemOptions, sys: &SystemInfo) -> Vec<ResultRecord> {
    let array = crate::bench::mem::array_bytes(opts, sys);
    let isa = isa_name(opts.isa, sys);
    let mut out = Vec::new();
    for p in mem_points(opts) {
        let per_thread = array / p.threads.max(1) as u64;
        let params = match (p.workload, p.block) {
            (MemWorkload::Latency, _) => {
                out.extend(latency(p.threads, opts, sys));
                continue;
            }
            (w, Some(block)) => json!({
                "threads": p.threads, "isa": isa, "stores": "regular",
                "array_bytes_per_thread": per_thread, "working_set_bytes": array * w.arrays(),
                "block_size_bytes": block, "blocks_per_thread": per_thread / block.max(1),
                "order": if w.random() { "random" } else { "sequential" },
            }),
            (w, None) => json!({
                "threads": p.threads, "isa": isa, "stores": "nt",
                "array_bytes_per_thread": per_thread, "working_set_bytes": array * w.arrays(),
            }),
        };
        out.extend(records(
            Subsystem::Mem,
            p.workload.name(),
            p.workload.spec().metrics,
            params,
            opts.reps.repeat,
        ));
    }
    out
}

/// A LATENCY point's records: its staircase (one record for all its steps, whose working sets
/// are known only as it runs) and its per-operation probes.
fn latency(threads: usize, opts: &MemOptions, sys: &SystemInfo) -> Vec<ResultRecord> {
    use crate::bench::mem::latency::Probe;
    let span = crate::bench::mem::probe_span(opts, sys, threads);
    let probes = Probe::ALL.iter().map(|p| {
        json!({
            "threads": threads, "probe": p.name().to_string(), "op_bytes": p.op_bytes,
            "order": if p.random { "random" } else { "sequential" },
            "working_set_bytes": span,
        })
    });
    std::iter::once(json!({"threads": threads, "probe": "chase"}))
        .chain(probes)
        .filter_map(|params| {
            record(
                Subsystem::Mem,
                MemWorkload::Latency.name(),
                Metric::Latency,
                params,
                opts.reps.repeat,
            )
        })
        .collect()
}

/// A disk request's points: each workload, block size, thread count and queue depth.
pub fn disk(opts: &DiskOptions) -> Vec<ResultRecord> {
    let mut out = Vec::new();
    for p in disk_points(opts) {
        let params = json!({
            "threads": p.threads, "iodepth": p.iodepth, "block_size_bytes": p.block,
            "engine": opts.engine.name(),
            "io_mode": if opts.direct { "direct" } else { "buffered" },
            "pattern": if p.workload.random() { "random" } else { "sequential" },
            "read_percent": p.workload.read_percent(opts.read_percent),
            "file_size_bytes": opts.size, "runtime_s": opts.runtime.as_secs_f64(),
            "ramp_s": opts.ramp.as_secs_f64(), "sync": opts.sync.name(),
        });
        out.extend(records(
            Subsystem::Disk,
            p.workload.name(),
            p.workload.spec().metrics,
            params,
            opts.reps.repeat,
        ));
    }
    out
}

/// A network request's points: goodput as the receiver measures it (and UDP's loss and
/// jitter), or the round trip and the transaction rate.
pub fn net(opts: &NetOptions, server: Option<&str>) -> Vec<ResultRecord> {
    use crate::bench::net::NetWorkload;
    let mut out = Vec::new();
    for p in net_points(opts) {
        let udp = p.params.proto == crate::bench::net::Proto::Udp;
        let params = json!({
            "threads": p.params.streams, "streams": p.params.streams,
            "protocol": if udp { "UDP" } else { "TCP" },
            "message_size_bytes": p.params.message_bytes,
            "duration_s": p.params.duration_ms as f64 / 1e3,
            "omit_s": p.params.omit_ms as f64 / 1e3,
            "server": server.unwrap_or("127.0.0.1:0"),
            "side": "receiver",
            "target_rate_bps": p.params.rate_bps,
        });
        let metrics: &[Metric] = match (p.workload, udp) {
            (NetWorkload::Latency, _) => &[Metric::Latency, Metric::Rate],
            (NetWorkload::Throughput, true) => &[Metric::Throughput, Metric::Loss, Metric::Jitter],
            (NetWorkload::Throughput, false) => &[Metric::Throughput],
        };
        out.extend(records(
            Subsystem::Net,
            p.workload.name(),
            metrics,
            params,
            opts.repeat,
        ));
    }
    out
}

/// A CPU request's synthetic kernels at each thread count (its dense solves and multiplies:
/// [`linalg`]).
pub fn cpu(
    kernels: &[CpuWorkload],
    threads: &[usize],
    isa: Option<crate::sysinfo::Isa>,
    repeat: usize,
    sys: &SystemInfo,
) -> Vec<ResultRecord> {
    let isa = isa_name(isa, sys);
    let mut out = Vec::new();
    for (w, t) in crate::sweep::product(kernels, threads) {
        let params = json!({"threads": t, "isa": isa});
        out.extend(records(
            Subsystem::Cpu,
            w.name(),
            w.spec().metrics,
            params,
            repeat,
        ));
    }
    out
}

/// A request's dense solves and multiplies, with the built-in engine's operation count.
pub fn linalg(
    points: &[crate::bench::linalg::workload::LinalgPoint],
    repeat: usize,
) -> Vec<ResultRecord> {
    use crate::bench::linalg::workload::LinalgWorkload;
    points
        .iter()
        .filter_map(|p| {
            let n = p.n as f64;
            let flops = match p.workload {
                LinalgWorkload::Linpack => crate::bench::linalg::hpl::flops(p.n),
                _ => 2.0 * n * n * n,
            };
            let params = json!({
                "threads": p.threads, "n": p.n, "engine": "built-in", "micro_kernel": "",
                "flops": flops,
            });
            record(
                Subsystem::Cpu,
                p.workload.name(),
                Metric::Throughput,
                params,
                repeat,
            )
        })
        .collect()
}
