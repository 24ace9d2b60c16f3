//! The efficiency chart: each point's figure against its theoretical peak, the reference
//! tool's beside it.

use super::super::plot::{Axis, BarSeries, Chart, Marker, Plot, Scale, Ticks};
use super::slug;
use crate::results::{Metric, ResultRecord, Subsystem};

/// Efficiency against the theoretical peak, one row per point with a known peak or a
/// reference figure, the reference tool's efficiency beside ours.
pub(super) fn efficiency_chart(subsystem: Subsystem, records: &[&ResultRecord]) -> Option<Chart> {
    let finite = |v: Option<f64>| v.filter(|v| v.is_finite()).map(|v| v * 100.0);
    let reference = |r: &ResultRecord| finite(r.reference.as_ref().and_then(|x| x.efficiency));
    let rows: Vec<&ResultRecord> = records
        .iter()
        .copied()
        .filter(|r| finite(r.efficiency).is_some() || reference(r).is_some())
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut series = vec![BarSeries {
        name: "peakbench".into(),
        values: rows.iter().map(|r| finite(r.efficiency)).collect(),
    }];
    if rows.iter().any(|r| reference(r).is_some()) {
        let tools = crate::report::distinct(
            rows.iter()
                .filter_map(|r| Some(r.reference.as_ref()?.tool.as_str())),
        );
        series.push(BarSeries {
            name: tools.join(", "),
            values: rows.iter().map(|r| reference(r)).collect(),
        });
    }
    let labels = rows
        .iter()
        .map(|r| {
            let variant = crate::report::row(r).variant;
            let mut label = format!("{} ×{}", r.workload, r.params.threads());
            if variant != "—" {
                label.push(' ');
                label.push_str(&variant);
            }
            if !matches!(r.metric, Metric::Throughput) {
                label.push_str(&format!(" ({})", r.unit));
            }
            label
        })
        .collect();
    Some(Chart {
        slug: slug(&[subsystem.name(), "efficiency"]),
        subsystem,
        title: format!("{}: efficiency vs theoretical peak", subsystem.title()),
        note: "Measured ÷ theoretical peak, per point; the peaks' formulas and inputs are listed \
               under Theoretical peaks."
            .into(),
        plot: Plot::Bars {
            rows: labels,
            value: Axis::new("% of the theoretical peak", Scale::Linear, Ticks::Number),
            series,
            guide: Some(Marker {
                x: 100.0,
                label: "peak".into(),
            }),
        },
    })
}
