//! Throughput charts: against threads (CPU and memory workloads), and dense linear algebra
//! against the order N.

use super::super::plot::{Chart, Series};
use super::series::{
    against_count, group_by, ideal_scaling, peak_guide, reference_series, series_of, threads,
};
use super::slug;
use crate::results::{Metric, ResultRecord, Subsystem};

/// Throughput against threads, one chart per workload, one line per variant (ISA, block size).
pub(super) fn throughput_charts(subsystem: Subsystem, records: &[&ResultRecord]) -> Vec<Chart> {
    let throughput: Vec<&ResultRecord> = records
        .iter()
        .copied()
        .filter(|r| r.metric == Metric::Throughput)
        .collect();
    group_by(&throughput, |r| (r.workload.clone(), r.unit))
        .into_iter()
        .map(|((workload, unit), recs)| {
            let scaling = |r: &ResultRecord| {
                r.params
                    .cpu()
                    .and_then(|c| c.kernel.as_ref())
                    .map(|k| k.scaling)
            };
            let scalings = group_by(&recs, scaling).len();
            let series = series_of(&recs, threads, |r| {
                let variant = crate::report::row(r).variant;
                let mut name = if variant == "—" {
                    r.workload.clone()
                } else {
                    variant
                };
                if scalings > 1 {
                    let s = scaling(r).map_or("", |s| s.name());
                    name = format!("{name}, {s} scaling");
                }
                name
            });
            let mut guides: Vec<Series> = peak_guide(&recs, threads, "theoretical peak".into())
                .into_iter()
                .collect();
            guides.extend(ideal_scaling(&series));
            let mut series = series;
            series.extend(reference_series(&recs, threads, |r| {
                crate::report::row(r).variant
            }));
            Chart {
                slug: slug(&[subsystem.name(), &workload, "throughput"]),
                subsystem,
                title: format!("{} {workload}: throughput vs threads", subsystem.title()),
                note: "Bars: the least and greatest repetition; dots: each repetition (from \
                       five); dashed: the theoretical peak and ideal linear scaling from one \
                       thread."
                    .into(),
                plot: against_count("threads", format!("throughput ({})", unit), series, guides),
            }
        })
        .collect()
}

/// Dense linear algebra (LINPACK, DGEMM, SGEMM) against the order N, one chart per workload
/// measured at two or more N: a line per thread count and its peak, dashed.
pub(super) fn linalg_size_charts(records: &[&ResultRecord]) -> Vec<Chart> {
    let order = |r: &ResultRecord| {
        r.params
            .cpu()
            .and_then(|c| c.linalg.as_ref())
            .map(|l| l.n as f64)
    };
    let linalg: Vec<&ResultRecord> = records
        .iter()
        .copied()
        .filter(|r| r.metric == Metric::Throughput && order(r).is_some())
        .collect();
    let mut out = Vec::new();
    for ((workload, unit), recs) in group_by(&linalg, |r| (r.workload.clone(), r.unit)) {
        if group_by(&recs, |r| order(r).map(f64::to_bits)).len() < 2 {
            continue;
        }
        let by_threads = group_by(&recs, |r| r.params.threads());
        let one = by_threads.len() == 1;
        let threads_name = |t: usize| format!("{t} thread{}", if t == 1 { "" } else { "s" });
        let series = series_of(&recs, order, |r| threads_name(r.params.threads()));
        let guides = by_threads
            .iter()
            .filter_map(|(t, rs)| {
                let name = if one {
                    "theoretical peak".to_string()
                } else {
                    format!("peak, {}", threads_name(*t))
                };
                peak_guide(rs, order, name)
            })
            .collect();
        out.push(Chart {
            slug: slug(&["cpu", &workload, "throughput-vs-n"]),
            subsystem: Subsystem::Cpu,
            title: format!("CPU {workload}: throughput vs matrix order N"),
            note: "Larger systems spend a larger share of their time in the multiply, so the \
                   rate climbs with N towards the peak (dashed)."
                .into(),
            plot: against_count(
                "N (order of the matrices)",
                format!("throughput ({})", unit),
                series,
                guides,
            ),
        });
    }
    out
}
