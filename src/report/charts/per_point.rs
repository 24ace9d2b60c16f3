//! The per-point charts of disk and network runs: each point's latency percentiles and its
//! throughput per interval, drawn in parts of at most eight lines, none left out.

use super::super::plot::{Axis, Chart, Plot, Scale, Series, Ticks, nines};
use super::series::group_by;
use super::slug;
use crate::measure::latency::Percentiles;
use crate::results::{Metric, ResultRecord, Subsystem};

/// The most lines one chart of per-point lines holds (the palette's colours, then dashed).
const LINES: usize = 8;

/// Each group's records in parts of at most [`LINES`], none left out: (the group's key, the
/// part, its records).
fn parts<K: Clone>(groups: Vec<(K, Vec<&ResultRecord>)>) -> Vec<(K, Part, Vec<&ResultRecord>)> {
    groups
        .into_iter()
        .flat_map(|(k, recs)| {
            let of = recs.len().div_ceil(LINES);
            recs.chunks(LINES)
                .enumerate()
                .map(|(i, chunk)| (k.clone(), Part { number: i + 1, of }, chunk.to_vec()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Which part of a group a chart draws.
struct Part {
    number: usize,
    of: usize,
}

impl Part {
    /// " (part 2 of 3)" for a title, or nothing where the group is one chart.
    fn title(&self) -> String {
        if self.of > 1 {
            format!(" (part {} of {})", self.number, self.of)
        } else {
            String::new()
        }
    }

    /// The chart's slug from `parts`, with the part's number where there are several.
    fn slug(&self, parts: &[&str]) -> String {
        if self.of > 1 {
            format!("{}-part-{}", slug(parts), self.number)
        } else {
            slug(parts)
        }
    }
}

/// Throughput per interval of each point's last repetition (as fio's and iperf3's per-second
/// lines), one chart per workload with intervals (in parts of eight lines): stalls, warm-up
/// and write-back show as dips and steps.
pub(super) fn interval_charts(subsystem: Subsystem, records: &[&ResultRecord]) -> Vec<Chart> {
    let with: Vec<&ResultRecord> = records
        .iter()
        .copied()
        .filter(|r| r.intervals.as_ref().is_some_and(|i| i.values.len() >= 2))
        .collect();
    parts(group_by(&with, |r| (r.workload, r.unit)))
        .into_iter()
        .map(|((workload, unit), part, recs)| {
            let series = recs
                .iter()
                .filter_map(|r| {
                    let iv = r.intervals.as_ref()?;
                    let name = crate::results::point::label(r);
                    let points: Vec<(f64, f64)> = iv
                        .values
                        .iter()
                        .enumerate()
                        .map(|(i, v)| ((i as f64 + 1.0) * iv.interval_s, *v))
                        .collect();
                    let tip = |x, y| {
                        format!(
                            "{name}\n{} s: {} {}",
                            crate::units::format_sig(x),
                            crate::units::format_sig(y),
                            unit
                        )
                    };
                    Some(Series::of_figures(name.clone(), points, tip))
                })
                .collect();
            Chart {
                slug: part.slug(&[subsystem.name(), workload.name(), "intervals"]),
                subsystem,
                title: format!(
                    "{} {workload}: throughput per interval{}",
                    subsystem.title(),
                    part.title()
                ),
                note: "Each point's last repetition, interval by interval after its ramp (the \
                       interval is in the record): dips are stalls, steps are caches filling or \
                       writing back."
                    .into(),
                plot: Plot::Lines {
                    x: Axis::new("time (s)", Scale::Linear, Ticks::Number),
                    y: Axis::new(
                        format!("throughput ({})", unit),
                        Scale::Linear,
                        Ticks::Number,
                    ),
                    series,
                    guides: Vec::new(),
                    markers: Vec::new(),
                },
            }
        })
        .collect()
}

/// The latency percentiles of each point as an HDR percentile plot (latency on a log scale
/// against the percentile in "nines"), one chart per workload with percentiles (in parts of
/// eight lines).
pub(super) fn percentile_charts(subsystem: Subsystem, records: &[&ResultRecord]) -> Vec<Chart> {
    let with: Vec<&ResultRecord> = records
        .iter()
        .copied()
        .filter(|r| {
            r.metric == Metric::Latency && r.percentiles.as_ref().is_some_and(|p| p.len() >= 2)
        })
        .collect();
    parts(group_by(&with, |r| (r.workload, r.unit)))
        .into_iter()
        .map(|((workload, unit), part, recs)| {
            // Every line's max one "nine" beyond the finest percentile of the chart's lines
            // (--percentiles): one place for all of them, past every percentile's tick.
            let finest = (recs.iter())
                .flat_map(|r| r.percentiles.iter().flatten())
                .filter_map(|(k, _)| Percentiles::of_key(k))
                .fold(99.99, f64::max);
            let series = recs
                .iter()
                .map(|r| {
                    let name = crate::results::point::label(r);
                    let mut points: Vec<(f64, f64)> = r
                        .percentiles
                        .iter()
                        .flatten()
                        .filter_map(|(k, v)| {
                            let q = match k.as_str() {
                                "min" => 0.0,
                                "max" => return Some((nines(finest / 100.0) + 1.0, *v)),
                                p => Percentiles::of_key(p)? / 100.0,
                            };
                            Some((nines(q), *v))
                        })
                        .collect();
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                    let tip = |_, y| format!("{name}\n{} {}", crate::units::format_sig(y), unit);
                    Series::of_figures(name.clone(), points, tip)
                })
                .collect();
            Chart {
                slug: part.slug(&[subsystem.name(), workload.name(), "percentiles"]),
                subsystem,
                title: format!(
                    "{} {workload}: latency percentiles{}",
                    subsystem.title(),
                    part.title()
                ),
                note: "Each point's latency at the percentiles of all its operations (an HDR \
                       percentile plot: each step right is ten times rarer); the tail is where \
                       the lines climb."
                    .into(),
                plot: Plot::Lines {
                    x: Axis::new("percentile", Scale::Linear, Ticks::Percentile),
                    y: Axis::new(format!("latency ({})", unit), Scale::Log, Ticks::Number),
                    series,
                    guides: Vec::new(),
                    markers: Vec::new(),
                },
            }
        })
        .collect()
}
