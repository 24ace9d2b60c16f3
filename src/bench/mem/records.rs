//! The memory benchmark's records: a workload's figures with their parameters and peak, and
//! the parameters of a LATENCY point's steps, levels and probes.

use super::MemWorkload;
use crate::results::params::{self as rp, Params};
use crate::results::{Metric, ResultRecord, Unit};
use crate::sysinfo::peak::Peak;

/// The parameters of a latency point on `threads` threads.
pub(super) fn latency_params(
    threads: usize,
    probe: rp::Probe,
    chase: Option<rp::Chase>,
    level: Option<rp::Level>,
    op: Option<rp::OpProbe>,
) -> Params {
    Params::MemLatency(rp::LatencyParams {
        threads,
        cpu_quota: None,
        probe,
        cpus: Vec::new(),
        thread_latency_ns: Vec::new(),
        ops_per_s: None,
        chase,
        level,
        op,
        pair: None,
        load: None,
        cell: None,
        node: rp::NodeTag::default(),
    })
}

/// A staircase step or a probe (ns): their floors are the levels' (see the level records).
pub(super) fn latency_record(params: Params, samples: Vec<f64>) -> ResultRecord {
    record(
        MemWorkload::Latency,
        params,
        Metric::Latency,
        Unit::Nanos,
        samples,
        Err("the floor of each level is on its level record".into()),
    )
}

/// A memory record of `workload`.
pub(super) fn record(
    workload: MemWorkload,
    params: Params,
    metric: Metric,
    unit: Unit,
    samples: Vec<f64>,
    peak: Result<Peak, String>,
) -> ResultRecord {
    ResultRecord::new(workload, params, metric, unit, samples, peak)
}
