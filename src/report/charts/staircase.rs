//! The memory latency staircase: latency per load against the working set, the cache sizes
//! marked.

use super::super::bandwidth_levels::staircases;
use super::super::plot::Series;
use super::super::plot::{Axis, Chart, Marker, Plot, Scale, Ticks};
use super::series::{detail, series_of};
use crate::results::params::Pages;
use crate::results::{Report, ResultRecord, Subsystem};
use crate::units::format_bytes_binary;

/// The pointer-chasing staircase: latency against working set, with the cache sizes marked.
pub(super) fn staircase(records: &[&ResultRecord], report: &Report) -> Option<Chart> {
    let chase: Vec<&ResultRecord> = records
        .iter()
        .copied()
        .filter(|r| r.params.latency().is_some_and(|l| l.chase.is_some()))
        .collect();
    let step = |r: &ResultRecord| r.params.latency().and_then(|l| l.chase.clone());
    let unit = chase.first()?.unit;
    // A line per page size, and per thread count where chains ran on several at once.
    let counts: std::collections::BTreeSet<usize> =
        chase.iter().map(|r| r.params.threads()).collect();
    let series = series_of(
        &chase,
        |r| step(r).map(|c| c.working_set_bytes as f64),
        |r| {
            let pages = match step(r).map(|c| c.pages) {
                Some(Pages::Thp) => "transparent huge pages".to_string(),
                Some(Pages::Small) => "4 KiB pages".to_string(),
                None => "latency".to_string(),
            };
            match r.params.threads() {
                _ if counts.len() < 2 => pages,
                1 => format!("{pages}, 1 thread"),
                t => format!("{pages}, {t} threads at once"),
            }
        },
    );
    let markers = cache_markers(report);
    Some(Chart {
        slug: "mem-latency-staircase".into(),
        subsystem: Subsystem::Mem,
        title: "Memory latency staircase".into(),
        note: "Dependent loads through a random cycle of cache lines (pointer chasing), one \
               working set at a time (with several threads, each chases its own ring of that \
               size at once, and the line is their mean); the dashed lines are the cache sizes \
               sysfs gives, per instance."
            .into(),
        plot: Plot::Lines {
            x: Axis::new("working set", Scale::Log, Ticks::Bytes),
            y: Axis::new(
                format!("latency per load ({})", unit),
                Scale::Log,
                Ticks::Number,
            ),
            series,
            guides: Vec::new(),
            markers,
        },
    })
}

/// The data caches' sizes (per instance), as sysfs gives them.
fn cache_markers(report: &Report) -> Vec<Marker> {
    (report.system.caches.iter())
        .filter(|c| c.kind != "Instruction")
        .map(|c| Marker {
            x: c.size_bytes as f64,
            label: format!(
                "L{}{} {}",
                c.level,
                if c.kind == "Data" { "d" } else { "" },
                format_bytes_binary(c.size_bytes)
            ),
        })
        .collect()
}

/// The bandwidth staircase (a run over several `--array-size`s): each bandwidth workload's
/// rate against the working set of one thread, with the cache sizes marked.
pub(super) fn bandwidth_staircase(records: &[&ResultRecord], report: &Report) -> Option<Chart> {
    let lines = staircases(records, &report.system.caches);
    let unit = lines.first()?.records.first()?.unit;
    let series = lines
        .iter()
        .map(|l| Series {
            name: l.name.clone(),
            points: l.points.iter().map(|&(x, y)| (x as f64, y)).collect(),
            details: (l.records.iter().zip(&l.points))
                .map(|(r, &(x, y))| detail(r, x as f64, y, &l.name))
                .collect(),
        })
        .collect();
    Some(Chart {
        slug: "mem-bandwidth-staircase".into(),
        subsystem: Subsystem::Mem,
        title: "Memory bandwidth staircase".into(),
        note: "Each bandwidth workload over the array sizes of --array-size, a line per workload \
               and thread count; the x axis is one thread's working set (all its arrays), so \
               that the dashed lines, the cache sizes sysfs gives per instance, mark where a \
               private cache's plateau ends. With --stores auto the writing kernels use \
               non-temporal stores only where the arrays exceed the last-level cache. The \
               levels found are in the findings."
            .into(),
        plot: Plot::Lines {
            x: Axis::new("working set per thread", Scale::Log, Ticks::Bytes),
            y: Axis::new(format!("bandwidth ({unit})"), Scale::Log, Ticks::Number),
            series,
            guides: Vec::new(),
            markers: cache_markers(report),
        },
    })
}
