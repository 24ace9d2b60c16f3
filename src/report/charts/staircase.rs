//! The memory latency staircase: latency per load against the working set, the cache sizes
//! marked.

use super::super::plot::{Axis, Chart, Marker, Plot, Scale, Ticks};
use super::series::series_of;
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
    let markers = report
        .system
        .caches
        .iter()
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
        .collect();
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
