//! The points a request will measure, as records without figures: what the reference tools'
//! adapters are asked before anything runs (`run --dry-run --reference`: which tool will
//! measure which point, and for how long). Each record has the parameters the adapters read,
//! and as many samples as the point will have repetitions.

use crate::bench::cpu::CpuWorkload;
use crate::bench::disk::{DiskOptions, points as disk_points};
use crate::bench::mem::{MemOptions, MemPoint, MemSession, MemWorkload, points as mem_points};
use crate::bench::net::{NetOptions, points as net_points};
use crate::results::params::Params;
use crate::results::{Metric, ResultRecord, Subsystem, Unit, Workload};
use crate::sysinfo::SystemInfo;
use serde_json::{Value, json};

/// A planned record of `workload` with `params`, or None where they do not decode (the plan
/// then leaves the point out rather than guess).
fn record(
    workload: Workload,
    metric: Metric,
    params: Value,
    repeat: usize,
) -> Option<ResultRecord> {
    let params = Params::with_defaults(workload, params).ok()?;
    Some(record_of(workload, metric, params, repeat))
}

/// A planned record of `workload` with decoded `params`.
fn record_of(workload: Workload, metric: Metric, params: Params, repeat: usize) -> ResultRecord {
    let unit = match (metric, workload.subsystem()) {
        (Metric::Throughput, Subsystem::Cpu) => Unit::OpsPerSec,
        (Metric::Throughput, Subsystem::Net) => Unit::BitsPerSec,
        (Metric::Throughput, _) => Unit::BytesPerSec,
        (Metric::Iops, _) => Unit::Iops,
        (Metric::Latency | Metric::Jitter, _) => Unit::Seconds,
        (Metric::Rate, _) => Unit::TransPerSec,
        (Metric::Loss, _) => Unit::Percent,
    };
    ResultRecord::new(
        workload,
        params,
        metric,
        unit,
        vec![1.0; repeat.max(1)],
        Err("planned".into()),
    )
}

/// A point's records, one per metric, with the same parameters.
fn records(
    workload: Workload,
    metrics: &[Metric],
    params: Value,
    repeat: usize,
) -> impl Iterator<Item = ResultRecord> {
    metrics
        .iter()
        .filter_map(move |&m| record(workload, m, params.clone(), repeat))
}

/// The widest instruction set of the machine, or the one asked for.
fn isa_name(asked: Option<crate::sysinfo::Isa>, sys: &SystemInfo) -> &'static str {
    asked
        .or_else(|| sys.cpu.isas.first().copied())
        .map_or("scalar", |i| i.name())
}

/// A memory request's points: the block and array kernels with their arrays, LATENCY (none
/// where the request does not hold on this machine).
pub fn mem(opts: &MemOptions, sys: &SystemInfo) -> Vec<ResultRecord> {
    let Ok(session) = MemSession::new(sys, opts) else {
        return Vec::new();
    };
    mem_points(opts)
        .into_iter()
        .flat_map(|p| mem_point(&session, p, opts, sys))
        .collect()
}

/// One memory point's records, with the parameters `session` will run it with (its CPUs,
/// instruction set and kind of stores).
pub fn mem_point(
    session: &MemSession,
    p: MemPoint,
    opts: &MemOptions,
    sys: &SystemInfo,
) -> Vec<ResultRecord> {
    if p.workload == MemWorkload::Latency {
        return latency(p.threads, opts, sys);
    }
    let Some(params) = session.planned_params(p) else {
        return Vec::new();
    };
    p.workload
        .spec()
        .metrics
        .iter()
        .map(|&m| record_of(p.workload.into(), m, params.clone(), opts.reps.repeat))
        .collect()
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
                MemWorkload::Latency.into(),
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
        let pattern = p.workload.pattern();
        let mut params = json!({
            "threads": p.threads, "iodepth": p.iodepth, "block_size_bytes": p.block,
            "engine": opts.engine.name(),
            "io_mode": if opts.direct { "direct" } else { "buffered" },
            "pattern": pattern.name(),
            "read_percent": p.workload.read_percent(opts.read_percent),
            "file_size_bytes": opts.size, "runtime_s": opts.runtime.as_secs_f64(),
            "ramp_s": opts.ramp.as_secs_f64(), "sync": opts.sync.name(),
        });
        if pattern == crate::results::params::IoPattern::Stride {
            params["stride_blocks"] = json!(opts.stride);
        }
        if opts.engine.caps().stream_buffer {
            params["stream_buffer_bytes"] = json!(opts.stream_buffer);
        }
        out.extend(records(
            p.workload.into(),
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
    net_points(opts)
        .into_iter()
        .flat_map(|p| net_point(p, opts, server))
        .collect()
}

/// One network point's records, against `server` (loopback where `None`).
pub fn net_point(
    p: crate::bench::net::NetPoint,
    opts: &NetOptions,
    server: Option<&str>,
) -> Vec<ResultRecord> {
    use crate::bench::net::NetWorkload;
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
        (NetWorkload::Connect, _) => &[Metric::Rate, Metric::Latency],
        (NetWorkload::Throughput, true) => &[Metric::Throughput, Metric::Loss, Metric::Jitter],
        (NetWorkload::Throughput, false) => &[Metric::Throughput],
    };
    records(p.workload.into(), metrics, params, opts.repeat).collect()
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
    crate::sweep::product(kernels, threads)
        .into_iter()
        .flat_map(|(w, t)| cpu_point(w, t, isa, repeat, sys))
        .collect()
}

/// One synthetic kernel's records at `threads`.
pub fn cpu_point(
    w: CpuWorkload,
    threads: usize,
    isa: Option<crate::sysinfo::Isa>,
    repeat: usize,
    sys: &SystemInfo,
) -> Vec<ResultRecord> {
    let params = json!({"threads": threads, "isa": isa_name(isa, sys)});
    records(w.into(), w.spec().metrics, params, repeat).collect()
}

/// A request's dense solves and multiplies, with the built-in engine's operation count.
pub fn linalg(
    points: &[crate::bench::linalg::workload::LinalgPoint],
    repeat: usize,
) -> Vec<ResultRecord> {
    points
        .iter()
        .filter_map(|p| {
            let flops = p.workload.flops(p.n);
            let params = json!({
                "threads": p.threads, "n": p.n, "engine": "built-in", "micro_kernel": "",
                "flops": flops,
            });
            record(p.workload.into(), Metric::Throughput, params, repeat)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    //! A point's plan asks the reference tools for what its measured records will ask them
    //! for: the runs made between its rounds are the ones its figures are taken from.
    use super::*;
    use crate::bench::buffer::HugePages;
    use crate::reference::{RefContext, jobs};
    use crate::runner::Repetition;
    use std::collections::BTreeSet;
    use std::time::Duration;

    fn sys() -> SystemInfo {
        crate::sysinfo::collect(crate::sysinfo::ClockBudget {
            warmup: Duration::from_millis(1),
            sample: Duration::from_millis(1),
            samples: 1,
        })
    }

    /// The jobs (by key) that `recs` ask the tools for.
    fn keys(recs: &[ResultRecord], ctx: &RefContext) -> BTreeSet<String> {
        recs.iter()
            .filter_map(|r| jobs(r, ctx)?.ok())
            .flatten()
            .map(|j| format!("{:?}", j.key()))
            .collect()
    }

    fn reps() -> Repetition {
        Repetition {
            warmup: 0,
            repeat: 2,
        }
    }

    #[test]
    fn memory_points_plan_the_jobs_they_measure() {
        use crate::bench::mem::Stores;
        let sys = sys();
        let ctx = RefContext::new(std::env::temp_dir());
        let mut asked = 0;
        for stores in [Stores::Nt, Stores::Regular, Stores::Auto] {
            let opts = MemOptions {
                workloads: MemWorkload::ALL.to_vec(),
                block_sizes: vec![8, 8192, 1 << 20],
                threads: vec![1, 2],
                array_sizes: vec![2 << 20],
                stores,
                isa: None,
                huge_pages: vec![HugePages::On],
                latency_max_bytes: 64 << 10,
                latency_threads: vec![1],
                c2c_cpus: Vec::new(),
                mixes: Vec::new(),
                latency_sample: Duration::from_millis(2),
                total_bytes: None,
                scaling: crate::results::params::Scaling::Strong,
                duration: Duration::from_millis(2),
                reps: reps(),
                peak: Default::default(),
            };
            let Ok(session) = MemSession::new(&sys, &opts) else {
                // No non-temporal stores here: the other modes still run.
                continue;
            };
            for p in mem_points(&opts) {
                let planned = keys(&mem_point(&session, p, &opts, &sys), &ctx);
                let measured = keys(&session.run(p, &mut || {}).unwrap(), &ctx);
                assert_eq!(planned, measured, "{stores:?} {p:?}");
                asked += measured.len();
            }
        }
        // sysbench, mbw and likwid-bench have jobs for these points, installed or not.
        assert!(asked >= 20, "{asked}");
    }

    #[test]
    fn disk_points_plan_the_jobs_they_measure() {
        use crate::bench::disk::{DiskSession, DiskWorkload, EngineKind, target::Place};
        let dir = tempfile::tempdir().unwrap();
        let sys = sys();
        let ctx = RefContext::new(dir.path());
        let opts = DiskOptions {
            workloads: vec![DiskWorkload::Ws, DiskWorkload::Rr, DiskWorkload::Rw],
            block_sizes: vec![4096, 65536],
            threads: vec![1, 2],
            iodepths: vec![1],
            engine: EngineKind::Psync,
            place: Place::Dir(dir.path().to_path_buf()),
            size: 1 << 20,
            runtime: Duration::from_millis(20),
            ramp: Duration::ZERO,
            read_percent: 70,
            stride: 17,
            stream_buffer: 64 << 10,
            direct: false,
            sync: crate::results::params::SyncMode::FdatasyncEnd,
            file_per_thread: false,
            total_bytes: None,
            scaling: crate::results::params::Scaling::Strong,
            reps: reps(),
            peaks: Default::default(),
        };
        let session = DiskSession::new(&sys, &opts).unwrap();
        let mut asked = 0;
        for p in disk_points(&opts) {
            let planned = keys(&session.planned(p), &ctx);
            let measured = keys(&session.run(p, &mut || {}).unwrap(), &ctx);
            assert_eq!(planned, measured, "{p:?}");
            // fio and sysbench fileio.
            assert_eq!(measured.len(), 2, "{p:?}");
            asked += 1;
        }
        assert_eq!(asked, 12);
    }

    #[test]
    fn cpu_points_plan_the_jobs_they_measure() {
        use crate::bench::cpu::{CpuOptions, CpuSession, points};
        let sys = sys();
        let ctx = RefContext::new(std::env::temp_dir());
        let mut opts = CpuOptions {
            workloads: vec![],
            threads: vec![1, 2],
            scaling: crate::results::params::Scaling::Weak,
            isa: None,
            duration: Duration::from_millis(2),
            total_ops: None,
            reps: reps(),
            clock_ghz: None,
            ops_per_cycle: Default::default(),
            peak_per_core: Default::default(),
        };
        // Every workload this machine runs (AMX, VNNI and the like are refused where missing).
        for w in CpuWorkload::ALL {
            let one = CpuOptions {
                workloads: vec![w],
                ..opts.clone()
            };
            if CpuSession::new(&sys, &one).is_ok() {
                opts.workloads.push(w);
            }
        }
        let mut session = CpuSession::new(&sys, &opts).unwrap();
        let mut asked = 0;
        for p in points(&opts) {
            let planned = keys(&cpu_point(p.workload, p.threads, None, 2, &sys), &ctx);
            let measured = keys(&[session.run(p, &mut || {}).unwrap()], &ctx);
            assert_eq!(planned, measured, "{p:?}");
            asked += measured.len();
        }
        // likwid-bench's peakflops for DP and SP at each thread count.
        assert!(asked >= 4, "{asked}");
    }
}
