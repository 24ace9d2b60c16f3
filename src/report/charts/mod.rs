//! The charts a report calls for ([`for_report`]): per subsystem, which records go in which
//! chart and how they are named; the drawing is `plot`'s. One file per family of charts:
//! each figure against each swept parameter (`sweeps`), the memory staircase, the per-point
//! charts (percentiles, intervals), efficiency and the grouped bars of measured, reference and
//! peak per point; `series` turns records into the lines they share.

mod efficiency;
mod loaded;
mod measured_bars;
mod per_point;
mod roofline;
mod series;
mod staircase;
mod sweeps;

use super::plot::{Chart, ChartError, PNG_SCALE, Plot, Series, drawable, png};
use crate::results::{Report, ResultRecord, Subsystem};
use crate::workload::spec::ChartKind;
use efficiency::efficiency_chart;
use loaded::loaded_latency;
use measured_bars::measured_bars;
use per_point::{interval_charts, percentile_charts};
use staircase::{bandwidth_staircase, staircase};
use sweeps::sweep_charts;

/// Every chart of `report` as a PNG file, in page order: (file name such as
/// `01-cpu-dp-throughput.png`, its bytes or why it could not be drawn).
pub fn pngs(report: &Report) -> Vec<(String, Result<Vec<u8>, ChartError>)> {
    for_report(report)
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let name = png_name(i, c);
            match png(c, PNG_SCALE) {
                Ok(Some(bytes)) => Some((name, Ok(bytes))),
                Ok(None) => None,
                Err(e) => Some((name, Err(e))),
            }
        })
        .collect()
}

/// The PNG file of the report's chart at `index` (from 0) among [`for_report`]'s:
/// `01-cpu-dp-throughput.png`.
pub fn png_name(index: usize, chart: &Chart) -> String {
    format!("{:02}-{}.png", index + 1, chart.slug)
}

/// Whether a chart has a line to draw: a series of two points or more, or two bars or more (a
/// sweep of one point is a table row, not a chart).
fn has_a_line(plot: &Plot) -> bool {
    match plot {
        Plot::Lines { series, guides, .. } => {
            let spans = |s: &Series| {
                let mut xs: Vec<f64> = s.points.iter().map(|p| p.0).collect();
                xs.sort_by(f64::total_cmp);
                xs.dedup();
                xs.len() >= 2
            };
            // A line of points, or points under a guide line (a roofline's roof).
            series.iter().any(spans)
                || (guides.iter().any(spans) && series.iter().any(|s| !s.points.is_empty()))
        }
        Plot::Bars { rows, .. } => rows.len() >= 2,
    }
}

/// A file and anchor name from its parts: lower case, words joined by `-`.
fn slug(parts: &[&str]) -> String {
    let mut out = String::new();
    for c in parts.join("-").chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// The charts a report calls for, in the order its sections show them: per subsystem (in
/// first-seen order), each figure against each parameter its points swept, the memory latency
/// staircase, percentiles and intervals, efficiency against the peak, then each point's figure
/// beside its reference's and its peak as grouped bars. Charts with nothing to draw are left
/// out.
pub fn for_report(report: &Report) -> Vec<Chart> {
    let mut subsystems: Vec<Subsystem> = Vec::new();
    for r in &report.results {
        if !subsystems.contains(&r.subsystem) {
            subsystems.push(r.subsystem);
        }
    }
    let mut out = Vec::new();
    for subsystem in subsystems {
        let records: Vec<&ResultRecord> = report
            .results
            .iter()
            .filter(|r| r.subsystem == subsystem)
            .collect();
        // Each chart gets the records of the workloads whose spec calls for it.
        let of_kind = |kind: ChartKind| -> Vec<&ResultRecord> {
            records
                .iter()
                .copied()
                .filter(|r| r.workload.spec().charts.contains(&kind))
                .collect()
        };
        out.extend(sweep_charts(subsystem, &of_kind(ChartKind::Sweeps)));
        out.extend(staircase(&of_kind(ChartKind::Staircase), report));
        out.extend(bandwidth_staircase(&of_kind(ChartKind::Staircase), report));
        out.extend(loaded_latency(&of_kind(ChartKind::LoadedLatency)));
        out.extend(percentile_charts(
            subsystem,
            &of_kind(ChartKind::Percentiles),
        ));
        out.extend(interval_charts(subsystem, &of_kind(ChartKind::Intervals)));
        out.extend(efficiency_chart(subsystem, &of_kind(ChartKind::Efficiency)));
        out.extend(measured_bars(subsystem, &of_kind(ChartKind::Efficiency)));
    }
    out.extend(roofline::roofline(report));
    out.retain(|c| drawable(&c.plot) && has_a_line(&c.plot));
    // Every chart names the machine and the run, also as a picture on its own.
    let host = super::model::host_name(&report.system);
    let started: String = report.started_at.chars().take(16).collect();
    let tag = format!(" — {host}, {}", started.replace('T', " "));
    for c in &mut out {
        c.title.push_str(&tag);
    }
    out
}

#[cfg(test)]
pub(super) mod tests;
