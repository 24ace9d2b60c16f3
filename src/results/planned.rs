//! A point's record before it is measured.

use super::params::Params;
use super::{Metric, ResultRecord, Subsystem, Unit, Workload};

impl ResultRecord {
    /// A point's record before it is measured (the dry run, and the reference tools asked
    /// before a point runs): `repeat` samples of 1 in the metric's base unit, which no adapter
    /// takes for a measured rate (each assumes one where a point has none), and no peak.
    pub fn planned(
        workload: impl Into<Workload>,
        params: impl Into<Params>,
        metric: Metric,
        repeat: usize,
    ) -> ResultRecord {
        let workload = workload.into();
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
            Err("planned: not measured yet".into()),
        )
    }
}
