//! A machine card's summary image (`peakbench card`'s card.png, for a ticket or a chat): one bar
//! chart of the card's headline figures, each row the point and its figure, its bars the figure
//! as a percentage of its theoretical peak and of its reference tool's figure, the machine in
//! the title. A point shows the figure engineers quote for it (a disk's IOPS for small blocks
//! and its QD1 latency, its MB/s for large ones; a network's goodput at the receiver, a
//! ping-pong's round trip); a staircase (a sweep over working sets) its first and last sizes.
//! Every figure is in the HTML page.

use super::plot::{Axis, BarSeries, Chart, Marker, Plot, Scale, Ticks};
use crate::results::{Report, ResultRecord};
use crate::units::{Display, format_sig};

/// A staircase shorter than this is shown whole.
const STAIRCASE_FROM: usize = 4;

/// The summary chart of the card `report`; None where no figure has a peak or a tool's figure.
pub fn summary(report: &Report) -> Option<Chart> {
    let display = Display::default().fitted(report.results.iter().map(ResultRecord::figure));
    let shown: Vec<&ResultRecord> = report
        .results
        .iter()
        .filter(|r| headline(r) && (efficiency(r).is_some() || against_tool(r).is_some()))
        .collect();
    let rows: Vec<&ResultRecord> = shown
        .iter()
        .enumerate()
        .filter(|(i, r)| !inside_staircase(&shown, *i, r))
        .map(|(_, r)| *r)
        .collect();
    if rows.is_empty() {
        return None;
    }
    let series = vec![
        BarSeries {
            name: "% of the theoretical peak".into(),
            values: rows.iter().map(|r| efficiency(r)).collect(),
        },
        BarSeries {
            name: "% of the reference tool's figure".into(),
            values: rows.iter().map(|r| against_tool(r)).collect(),
        },
    ];
    let sys = &report.system;
    let host = sys.os.hostname.get().map_or("unknown host", String::as_str);
    let uarch = sys
        .cpu
        .microarchitecture
        .get()
        .or(sys.cpu.brand.get())
        .map_or("unknown CPU", String::as_str);
    Some(Chart {
        slug: "card".into(),
        subsystem: rows[0].subsystem,
        title: crate::text::printable(&format!(
            "{host}: {uarch}, {} threads — {}",
            sys.cpu.threads,
            report.started_at.get(..10).unwrap_or(&report.started_at)
        )),
        note: "Each figure against its theoretical peak and against its reference tool's figure \
               on the same machine (a time against the tool's as the tool's over ours, so that \
               above 100 % peakbench measured the better figure); a figure \"after a burst\" \
               is the rate its point kept once a burst ended, against its peak; a staircase \
               shows its first and last sizes here, all of them in the HTML page."
            .into(),
        plot: Plot::Bars {
            rows: rows.iter().map(|r| label(r, &display)).collect(),
            value: Axis::new("%", Scale::Linear, Ticks::Number),
            series,
            guide: Some(Marker {
                x: 100.0,
                label: "100 %".into(),
            }),
        },
    })
}

/// The summary as a PNG image, at the charts' PNG scale; None where it has nothing to draw.
pub fn png(report: &Report) -> Result<Option<Vec<u8>>, super::plot::ChartError> {
    match summary(report) {
        Some(chart) => super::plot::png(&chart, super::plot::PNG_SCALE),
        None => Ok(None),
    }
}

/// Whether `r` is the figure quoted for its point (see the module's words).
fn headline(r: &ResultRecord) -> bool {
    use crate::results::Metric;
    if let Some(d) = r.params.disk() {
        let small = d.block_size_bytes < 64 << 10;
        return match r.metric {
            Metric::Iops => small,
            Metric::Latency => small && d.iodepth == 1,
            Metric::Throughput => !small,
            _ => false,
        };
    }
    if let Some(n) = r.params.net() {
        let sender = n.side == Some(crate::results::params::Side::Sender);
        return matches!(r.metric, Metric::Throughput | Metric::Latency) && !sender;
    }
    true
}

/// The record's figure (the rate it kept, after a burst) as a percentage of its theoretical
/// peak.
fn efficiency(r: &ResultRecord) -> Option<f64> {
    r.headline_efficiency()
        .filter(|e| e.is_finite())
        .map(|e| e * 100.0)
}

/// The record's mean as a percentage of its reference tool's (a lower-is-better figure
/// inverted: the tool's over ours), each over its whole run.
fn against_tool(r: &ResultRecord) -> Option<f64> {
    let tool = r.reference.as_ref()?.mean;
    let ours = r.summary.mean;
    let ratio = if r.metric.lower_is_better() {
        tool / ours
    } else {
        ours / tool
    };
    (ratio.is_finite() && ratio > 0.0).then_some(ratio * 100.0)
}

/// The point's words, short, and its figure: "cpu DP ×2: 172.8 GOPS", "disk RR ×1 4 KiB QD1:
/// 36521 IOPS", "net LATENCY ×1 UDP: 15.72 µs".
fn label(r: &ResultRecord, display: &Display) -> String {
    let (value, unit) = match display.conversion(r.subsystem, r.unit) {
        Some(c) => (c.apply(r.headline()), c.unit),
        None => (r.headline(), r.unit),
    };
    let extra = match r.subsystem {
        // The ISA and the kernel's shape are in the page.
        crate::results::Subsystem::Cpu => String::new(),
        crate::results::Subsystem::Net => r
            .params
            .net()
            .map_or(String::new(), |n| n.protocol.name().to_uppercase()),
        _ => super::row(r).variant,
    };
    let mut words = format!("{} {} ×{}", r.subsystem, r.workload, r.params.threads());
    if !extra.is_empty() && extra != "—" {
        words.push(' ');
        words.push_str(&extra);
    }
    let burst = if r.burst().is_some() {
        " after a burst"
    } else {
        ""
    };
    format!("{words}: {} {unit}{burst}", format_sig(value))
}

/// Whether `shown[i]` is a step inside a staircase: a run of at least [`STAIRCASE_FROM`]
/// neighbours of the same workload, metric and threads over working sets, neither its first
/// nor its last.
fn inside_staircase(shown: &[&ResultRecord], i: usize, r: &ResultRecord) -> bool {
    let step = |x: &ResultRecord| {
        x.params.mem().is_some_and(|m| m.kernel.is_some())
            && x.workload == r.workload
            && x.metric == r.metric
            && x.params.threads() == r.params.threads()
    };
    if !step(r) {
        return false;
    }
    let start = (0..i)
        .rev()
        .take_while(|&k| step(shown[k]))
        .last()
        .unwrap_or(i);
    let end = (i + 1..shown.len())
        .take_while(|&k| step(shown[k]))
        .last()
        .unwrap_or(i);
    end - start + 1 >= STAIRCASE_FROM && start < i && i < end
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recorded quick run: every row has a peak or a tool's figure, the staircase's
    /// inner steps are left out, a latency against its tool is the tool's over ours, and the
    /// chart draws as a PNG.
    #[test]
    fn the_summary_of_a_recorded_run_draws() {
        let report: Report = serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/history/quick.json"
        )))
        .unwrap();
        let chart = summary(&report).unwrap();
        let Plot::Bars { rows, series, .. } = &chart.plot else {
            panic!("{chart:?}")
        };
        assert_eq!(series.len(), 2);
        for (k, row) in rows.iter().enumerate() {
            assert!(
                series.iter().any(|s| s.values[k].is_some()),
                "{row}: neither bar"
            );
        }
        assert!(rows.iter().any(|r| r.starts_with("cpu DP ×")), "{rows:?}");
        assert!(rows.iter().all(|r| r.contains(": ")), "{rows:?}");
        let png = super::super::plot::png(&chart, 1).unwrap().unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }

    #[test]
    fn a_time_against_its_tool_is_the_tools_over_ours() {
        use crate::results::{Metric, Unit, Workload};
        let w = Workload::Net(crate::workload::net::NetWorkload::Latency);
        let params =
            crate::results::params::Params::with_defaults(w, serde_json::json!({})).unwrap();
        let mut r = ResultRecord::new(
            w,
            params,
            Metric::Latency,
            Unit::Seconds,
            vec![2e-5, 2e-5],
            Err("none".into()),
        );
        r.reference = Some(
            serde_json::from_value(serde_json::json!({
                "tool": "sockperf", "version": "3.7", "mean": 3e-5, "efficiency": null
            }))
            .unwrap(),
        );
        assert!((against_tool(&r).unwrap() - 150.0).abs() < 1e-9);
    }
}
