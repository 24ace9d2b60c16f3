//! The reports' first CPU and memory charts: per point, three bars side by side — what
//! peakbench measured, the reference tool's figure and the theoretical peak — a chart per figure
//! (throughput, IOPS, latency…), its points in parts of at most [`ROWS`] rows, a workload's
//! points kept together where they fit. A point without a reference figure or a peak shows that
//! bar as absent ("n/a"), never as zero. A network test's goodput is its receiver's, as on the
//! sweep charts.

use super::super::plot::{Axis, BarSeries, Chart, Plot, Scale, Ticks};
use super::series::group_by;
use super::slug;
use crate::results::params::Side;
use crate::results::point::{Field, fields, shown_value};
use crate::results::{Metric, ResultRecord, Subsystem};

/// The most rows (points) one chart holds: three bars each, 40 px a row.
const ROWS: usize = 12;

/// The series' names: ours, the reference tools' (joined) and the peak's.
const MEASURED: &str = "peakbench measured";
const PEAK: &str = "theoretical peak";

/// Grouped bars of measured, reference and theoretical per point, one chart per figure and unit
/// (in parts), for the points that have a reference figure or a peak.
pub(super) fn measured_bars(subsystem: Subsystem, records: &[&ResultRecord]) -> Vec<Chart> {
    let finite = |v: f64| v.is_finite().then_some(v);
    let reference = |r: &ResultRecord| r.reference.as_ref().and_then(|x| finite(x.mean));
    let peak = |r: &ResultRecord| r.peak.as_ref().and_then(|p| finite(p.value));
    // A network test's goodput as its receiver measured it (as the sweep charts draw it).
    let sender = |r: &ResultRecord| r.params.net().and_then(|n| n.side) == Some(Side::Sender);
    let compared: Vec<&ResultRecord> = records
        .iter()
        .copied()
        .filter(|r| !sender(r) && (reference(r).is_some() || peak(r).is_some()))
        .collect();
    let mut out = Vec::new();
    for ((metric, unit), recs) in group_by(&compared, |r| (r.metric, r.unit)) {
        let parts = parts(&recs);
        let of = parts.len();
        for (i, part) in parts.into_iter().enumerate() {
            let tools = crate::report::distinct(
                part.iter()
                    .filter_map(|r| Some(r.reference.as_ref()?.tool.as_str())),
            );
            let tool = if tools.is_empty() {
                "reference tool".to_string()
            } else {
                tools.join(", ")
            };
            let workloads = crate::report::distinct(part.iter().map(|r| r.workload.name()));
            let series = vec![
                BarSeries {
                    name: MEASURED.into(),
                    values: part.iter().map(|r| finite(r.summary.mean)).collect(),
                },
                BarSeries {
                    name: format!("{tool} measured"),
                    values: part.iter().map(|r| reference(r)).collect(),
                },
                BarSeries {
                    name: PEAK.into(),
                    values: part.iter().map(|r| peak(r)).collect(),
                },
            ];
            let (numbered, part_title) = if of > 1 {
                (format!("part-{}", i + 1), format!(" ({}/{of})", i + 1))
            } else {
                (String::new(), String::new())
            };
            out.push(Chart {
                slug: slug(&[subsystem.name(), metric.name(), "measured-bars", &numbered]),
                subsystem,
                // Short: the chart's title also names the machine and the run; the tool is in
                // the legend.
                title: format!(
                    "{} {}: {}, tool, peak{part_title}",
                    subsystem.title(),
                    workloads.join(", "),
                    what(subsystem, metric),
                ),
                note: format!(
                    "Per point, three bars: peakbench's mean, the reference tool's figure and \
                     the theoretical peak, in {unit}; n/a: no such figure for the point (the \
                     peaks' formulas are listed under Theoretical peaks)."
                ),
                plot: Plot::Bars {
                    rows: row_labels(&part),
                    value: value_axis(what(subsystem, metric), &unit.to_string(), &series),
                    series,
                    guide: None,
                },
            });
        }
    }
    out
}

/// The figure in words, for titles and axes.
fn what(subsystem: Subsystem, metric: Metric) -> &'static str {
    match metric {
        Metric::Throughput if subsystem == Subsystem::Net => "goodput",
        Metric::Latency if subsystem == Subsystem::Net => "round-trip time",
        Metric::Throughput => "throughput",
        Metric::Iops => "IOPS",
        Metric::Latency => "latency",
        Metric::Loss => "loss",
        Metric::Jitter => "jitter",
        Metric::Rate => "transactions/s",
    }
}

/// The value axis: the figure with its unit; logarithmic where the bars' values span a hundred
/// times or more (all positive), so that the small ones stay visible.
fn value_axis(what: &str, unit: &str, series: &[BarSeries]) -> Axis {
    let values: Vec<f64> = series
        .iter()
        .flat_map(|s| s.values.iter().flatten().copied())
        .collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let label = format!("{what} ({unit})");
    if lo > 0.0 && hi / lo >= 100.0 {
        Axis::new(format!("{label}, log scale"), Scale::Log, Ticks::Number)
    } else {
        Axis::new(label, Scale::Linear, Ticks::Number)
    }
}

/// The rows' labels of a chart's points: workload and threads, the variant (block size, ISA,
/// message) where the chart's points differ in it ("RWS ×4 1 MiB", "SP ×2"), and where two
/// points would still read the same, the parameters they differ in ("SP ×1 · total_ops
/// 1000000"), so that no two rows look alike.
fn row_labels(part: &[&ResultRecord]) -> Vec<String> {
    let variants: Vec<String> = part.iter().map(|r| crate::report::row(r).variant).collect();
    let varies = variants.iter().any(|v| *v != variants[0]);
    let labels: Vec<String> = part
        .iter()
        .zip(&variants)
        .map(|(r, variant)| {
            // The protocol, which the variant leaves to the tables' column of its own.
            let protocol = r
                .params
                .net()
                .map_or(String::new(), |n| format!(" {}", n.protocol.name()));
            let mut label = format!("{}{protocol} ×{}", r.workload, r.params.threads());
            if varies && variant != "—" {
                label.push(' ');
                label.push_str(variant);
            }
            label
        })
        .collect();
    labels
        .iter()
        .enumerate()
        .map(|(i, label)| {
            let twins: Vec<usize> = (0..part.len()).filter(|&j| labels[j] == *label).collect();
            if twins.len() == 1 {
                return label.clone();
            }
            let theirs: Vec<Vec<Field>> = twins.iter().map(|&j| fields(&part[j].params)).collect();
            let differs = |f: &Field| {
                theirs.iter().any(|fs| {
                    fs.iter().find(|g| g.key == f.key).map(|g| &g.value) != Some(&f.value)
                })
            };
            let apart: Vec<String> = fields(&part[i].params)
                .iter()
                .filter(|f| differs(f))
                .map(|f| {
                    f.words()
                        .unwrap_or_else(|| format!("{} {}", f.key, shown_value(f.key, &f.value)))
                })
                .collect();
            if apart.is_empty() {
                label.clone()
            } else {
                format!("{label} · {}", apart.join(" · "))
            }
        })
        .collect()
}

/// The points in charts of at most [`ROWS`] rows: each workload's points in one chart where
/// they fit beside the chart's others, a workload with more split on its own.
fn parts<'a>(recs: &[&'a ResultRecord]) -> Vec<Vec<&'a ResultRecord>> {
    let mut out: Vec<Vec<&ResultRecord>> = Vec::new();
    for (_, points) in group_by(recs, |r| r.workload) {
        for chunk in points.chunks(ROWS) {
            match out.last_mut() {
                Some(last) if last.len() + chunk.len() <= ROWS => last.extend(chunk),
                _ => out.push(chunk.to_vec()),
            }
        }
    }
    out
}
