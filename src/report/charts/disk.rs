//! Disk charts: IOPS and mean latency against queue depth.

use super::super::plot::Chart;
use super::series::{against_count, group_by, peak_guide, series_of};
use super::slug;
use crate::results::{Metric, ResultRecord, Subsystem};
use crate::units::format_bytes_binary;

/// Disk IOPS and mean latency against queue depth, per workload, one line per block size
/// (and thread count where it varies).
pub(super) fn disk_charts(records: &[&ResultRecord]) -> Vec<Chart> {
    let mut out = Vec::new();
    for (workload, recs) in group_by(records, |r| r.workload.clone()) {
        let counts = group_by(&recs, |r| r.params.threads()).len();
        let name = |r: &ResultRecord| {
            let disk = r.params.disk();
            let mut name = disk
                .map(|d| format_bytes_binary(d.block_size_bytes))
                .unwrap_or_else(|| r.workload.clone());
            if counts > 1 {
                name.push_str(&format!(" ×{} threads", r.params.threads()));
            }
            if disk.is_some_and(|d| d.io_mode == crate::results::params::IoMode::Buffered) {
                name.push_str(" buffered");
            }
            name
        };
        let depth = |r: &ResultRecord| r.params.disk().map(|d| d.iodepth as f64);
        for (metric, what) in [(Metric::Iops, "IOPS"), (Metric::Latency, "mean latency")] {
            let of: Vec<&ResultRecord> = recs
                .iter()
                .copied()
                .filter(|r| r.metric == metric)
                .collect();
            let Some(first) = of.first() else { continue };
            out.push(Chart {
                slug: slug(&["disk", &workload, metric.name()]),
                subsystem: Subsystem::Disk,
                title: format!("Disk {workload}: {what} vs queue depth"),
                note: String::new(),
                plot: against_count(
                    "queue depth (per thread)",
                    if metric == Metric::Iops {
                        "IOPS".to_string()
                    } else {
                        format!("{what} ({})", first.unit)
                    },
                    series_of(&of, depth, name),
                    // The rated IOPS where the disk has one (not for latency, nor where block
                    // sizes bound the points differently).
                    peak_guide(&of, depth, "theoretical peak".into())
                        .filter(|_| metric == Metric::Iops)
                        .into_iter()
                        .collect(),
                ),
            });
        }
    }
    out
}
