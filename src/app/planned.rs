//! The points a request will measure, as records without figures: what the reference tools'
//! adapters are asked before anything runs (`run --dry-run --reference`: which tool will
//! measure which point, and for how long). Each record has the parameters the adapters read,
//! and as many samples as the point will have repetitions.

use crate::bench::cpu::{CpuOptions, CpuSession, points as cpu_points};
use crate::bench::disk::{DiskOptions, point_params, points as disk_points};
use crate::bench::linalg::workload::LinalgPoint;
use crate::bench::mem::{MemOptions, MemPoint, MemSession, MemWorkload, points as mem_points};
use crate::bench::net::{NetOptions, points as net_points};
use crate::results::params::{LinalgEngine, Params};
use crate::results::{Metric, ResultRecord};
use crate::sysinfo::SystemInfo;

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
        return crate::bench::mem::planned_latency(opts, sys, p.threads);
    }
    let Some(params) = session.planned_params(p) else {
        return Vec::new();
    };
    p.workload
        .spec()
        .metrics
        .iter()
        .map(|&metric| ResultRecord::planned(p.workload, params.clone(), metric, opts.reps.repeat))
        .collect()
}

/// A disk request's points: each workload, block size, thread count and queue depth, with
/// the parameters the session will complete with its file and CPUs.
pub fn disk(opts: &DiskOptions) -> Vec<ResultRecord> {
    disk_points(opts)
        .into_iter()
        .flat_map(|p| crate::bench::disk::planned(p, point_params(opts, p), opts.reps.repeat))
        .collect()
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
    crate::bench::net::planned(opts, p, server.unwrap_or("127.0.0.1:0").to_string())
}

/// A CPU request's synthetic kernels at each thread count, as its session will run them
/// (none where the session does not hold on this machine; its dense solves and multiplies:
/// [`linalg`]).
pub fn cpu(opts: &CpuOptions, sys: &SystemInfo) -> Vec<ResultRecord> {
    let Ok(session) = CpuSession::new(sys, opts) else {
        return Vec::new();
    };
    cpu_points(opts)
        .into_iter()
        .map(|p| session.planned(p))
        .collect()
}

/// A request's dense solves and multiplies, with the parameters their run starts from
/// ([`crate::bench::linalg::workload::point_params`]): block `nb` (HPL's default for N where
/// none is given), `engine`, and the share of memory N was sized from.
pub fn linalg(
    sys: &SystemInfo,
    points: &[LinalgPoint],
    nb: Option<usize>,
    engine: LinalgEngine,
    memory_fraction: Option<f64>,
    repeat: usize,
) -> Vec<ResultRecord> {
    points
        .iter()
        .map(|p| {
            let nb = nb.unwrap_or(crate::workload::linalg::default_nb(p.n));
            let mut params = crate::bench::linalg::workload::point_params(sys, *p, nb, engine);
            if let Some(l) = &mut params.linalg {
                l.memory_fraction = memory_fraction;
            }
            ResultRecord::planned(p.workload, Params::Cpu(params), Metric::Throughput, repeat)
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

    /// The points (by the key that pairs records across runs) that `recs` are of.
    fn point_keys(recs: &[ResultRecord]) -> BTreeSet<String> {
        recs.iter().map(crate::results::point::point_key).collect()
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
            // The probes and the loaded curve store nothing: once (0.4 s each in a test build).
            let stores_nothing = [MemWorkload::Latency, MemWorkload::Loaded, MemWorkload::Numa];
            let workloads = (MemWorkload::ALL.iter().copied())
                .filter(|w| stores == Stores::Regular || !stores_nothing.contains(w))
                .collect();
            let opts = MemOptions {
                workloads,
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
                sustain: None,
                scaling: crate::results::params::Scaling::Strong,
                duration: Duration::from_millis(2),
                reps: reps(),
                peak: Default::default(),
                diagnose: false,
                precision: None,
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
            sustain: false,
            percentiles: Default::default(),
            scaling: crate::results::params::Scaling::Strong,
            reps: reps(),
            peaks: Default::default(),
            diagnose: false,
            precision: None,
        };
        let session = DiskSession::new(&sys, &opts).unwrap();
        let mut asked = 0;
        for p in disk_points(&opts) {
            let measured_records = session.run(p, &mut || {}).unwrap();
            // The dry run's records name the point as the measured ones do.
            let dry_run = point_keys(&disk(&opts));
            let measured_keys = point_keys(&measured_records);
            assert!(
                measured_keys.is_subset(&dry_run),
                "{p:?}: {measured_keys:?}"
            );
            let planned = keys(&session.planned(p), &ctx);
            let measured = keys(&measured_records, &ctx);
            assert_eq!(planned, measured, "{p:?}");
            // fio and sysbench fileio.
            assert_eq!(measured.len(), 2, "{p:?}");
            asked += 1;
        }
        assert_eq!(asked, 12);
    }

    #[test]
    fn cpu_points_plan_the_jobs_they_measure() {
        use crate::bench::cpu::{CpuOptions, CpuSession, CpuWorkload, points};
        let sys = sys();
        let ctx = RefContext::new(std::env::temp_dir());
        let mut opts = CpuOptions {
            workloads: vec![],
            threads: vec![1, 2],
            scaling: crate::results::params::Scaling::Weak,
            isa: None,
            duration: Duration::from_millis(2),
            total_ops: None,
            sustain: false,
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
        let session = CpuSession::new(&sys, &opts).unwrap();
        let mut asked = 0;
        let dry_run = point_keys(&cpu(&opts, &sys));
        for p in points(&opts) {
            let measured_record = session.run(p, &mut || {}).unwrap();
            let measured_key = crate::results::point::point_key(&measured_record);
            assert!(dry_run.contains(&measured_key), "{p:?}: {measured_key}");
            let planned = keys(&[session.planned(p)], &ctx);
            let measured = keys(&[measured_record], &ctx);
            assert_eq!(planned, measured, "{p:?}");
            asked += measured.len();
        }
        // likwid-bench's peakflops for DP and SP at each thread count.
        assert!(asked >= 4, "{asked}");
    }

    #[test]
    fn network_points_plan_the_records_they_measure() {
        use crate::bench::net::{NetSession, NetWorkload, Proto};
        // One way, the other way (--reverse) and both at once (--bidir): each way's sender and
        // receiver, UDP's loss and jitter, and the sum.
        for (reverse, bidir) in [(false, false), (true, false), (false, true)] {
            let opts = NetOptions {
                workloads: vec![NetWorkload::Throughput, NetWorkload::Latency],
                protocols: vec![Proto::Tcp, Proto::Udp],
                streams: vec![1],
                message_sizes: None,
                duration: Duration::from_millis(30),
                omit: Duration::ZERO,
                reverse,
                rate_bps: 10_000_000,
                busy_poll: Duration::ZERO,
                busy_poll_asked: false,
                repeat: 1,
                link_gbps: None,
                propagation_us: None,
                bidir,
                socket: Default::default(),
                total_bytes: None,
                count: None,
                scaling: crate::results::params::Scaling::Strong,
                mps: 0,
                load: Vec::new(),
                amount_bound: None,
                sustain: None,
                precision: None,
                percentiles: Default::default(),
            };
            let session = NetSession::loopback(opts.clone(), None).unwrap();
            let server = session.target().addr.to_string();
            // Each record by its metric, its unit and its point.
            let shapes = |recs: &[ResultRecord]| -> BTreeSet<String> {
                recs.iter()
                    .map(|r| {
                        let key = crate::results::point::point_key(r);
                        format!("{} {} {key}", r.metric, r.unit)
                    })
                    .collect()
            };
            for p in net_points(&opts) {
                if bidir && p.workload != NetWorkload::Throughput {
                    continue;
                }
                let p = session.as_run(p);
                let planned = net_point(p, &opts, Some(&server));
                let measured = session.run(p, &mut || {}).unwrap();
                // The plan has the records the point measures, no more, no fewer.
                assert_eq!(planned.len(), measured.len(), "{p:?}");
                assert_eq!(shapes(&planned), shapes(&measured), "{p:?}");
            }
        }
    }
}
