//! The charts a report calls for ([`for_report`]): per subsystem, which records go in which
//! chart and how they are named; the drawing is `plot`'s.

use super::plot::{
    Axis, BarSeries, Chart, ChartError, Legend, Marker, PNG_SCALE, Plot, Scale, Series, Ticks,
    drawable, png,
};
use crate::results::{Report, ResultRecord};
use crate::units::format_bytes_binary;

/// Every chart of `report` as a PNG file, in page order: (file name such as
/// `01-cpu-dp-throughput.png`, its bytes or why it could not be drawn).
pub fn pngs(report: &Report) -> Vec<(String, Result<Vec<u8>, ChartError>)> {
    for_report(report)
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let name = format!("{:02}-{}.png", i + 1, c.slug);
            match png(c, PNG_SCALE) {
                Ok(Some(bytes)) => Some((name, Ok(bytes))),
                Ok(None) => None,
                Err(e) => Some((name, Err(e))),
            }
        })
        .collect()
}

/// The point's threads (network: streams), as an x value.
fn threads(rec: &ResultRecord) -> Option<f64> {
    Some(rec.params.threads() as f64)
}

/// Records grouped by `key`, in first-seen order.
fn group_by<'a, K: PartialEq>(
    records: &[&'a ResultRecord],
    key: impl Fn(&ResultRecord) -> K,
) -> Vec<(K, Vec<&'a ResultRecord>)> {
    let mut out: Vec<(K, Vec<&'a ResultRecord>)> = Vec::new();
    for &rec in records {
        let k = key(rec);
        match out.iter_mut().find(|(g, _)| *g == k) {
            Some((_, v)) => v.push(rec),
            None => out.push((k, vec![rec])),
        }
    }
    out
}

/// One series per distinct `name` of the records: (`x` of the record, the mean).
fn series_of(
    records: &[&ResultRecord],
    x: impl Fn(&ResultRecord) -> Option<f64>,
    name: impl Fn(&ResultRecord) -> String,
) -> Vec<Series> {
    group_by(records, name)
        .into_iter()
        .map(|(name, recs)| Series {
            name,
            points: recs
                .iter()
                .filter_map(|r| Some((x(r)?, r.summary.mean)))
                .collect(),
        })
        .collect()
}

/// A unit as a reader writes it.
fn unit_name(unit: &str) -> &str {
    if unit == "us" { "µs" } else { unit }
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
/// first-seen order), throughput against concurrency per workload, the memory latency
/// staircase, disk IOPS and latency against queue depth, network goodput against streams, then
/// efficiency against the peak. Charts with nothing to draw are left out.
pub fn for_report(report: &Report) -> Vec<Chart> {
    let mut subsystems: Vec<&str> = Vec::new();
    for r in &report.results {
        if !subsystems.contains(&r.subsystem.as_str()) {
            subsystems.push(&r.subsystem);
        }
    }
    let mut out = Vec::new();
    for subsystem in subsystems {
        let records: Vec<&ResultRecord> = report
            .results
            .iter()
            .filter(|r| r.subsystem == subsystem)
            .collect();
        match subsystem {
            "disk" => out.extend(disk_charts(&records)),
            "net" => out.extend(net_charts(&records)),
            _ => out.extend(throughput_charts(subsystem, &records)),
        }
        if subsystem == "mem" {
            out.extend(staircase(&records, report));
        }
        out.extend(efficiency_chart(subsystem, &records));
    }
    out.retain(|c| drawable(&c.plot));
    out
}

/// Lines of a figure (linear y) against a count (threads, queue depth, streams; log x).
fn against_count(x: &str, y: String, series: Vec<Series>) -> Plot {
    Plot::Lines {
        x: Axis::new(x, Scale::Log, Ticks::Count),
        y: Axis::new(y, Scale::Linear, Ticks::Number),
        series,
        markers: Vec::new(),
        legend: Legend::UpperLeft,
    }
}

/// Throughput against threads, one chart per workload, one line per variant (ISA, block size).
fn throughput_charts(subsystem: &str, records: &[&ResultRecord]) -> Vec<Chart> {
    let throughput: Vec<&ResultRecord> = records
        .iter()
        .copied()
        .filter(|r| r.metric == "throughput")
        .collect();
    group_by(&throughput, |r| (r.workload.clone(), r.unit.clone()))
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
                let variant = super::row(r).variant;
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
            Chart {
                slug: slug(&[subsystem, &workload, "throughput"]),
                subsystem: subsystem.to_string(),
                title: format!(
                    "{} {workload}: throughput vs threads",
                    super::subsystem_name(subsystem)
                ),
                note: String::new(),
                plot: against_count(
                    "threads",
                    format!("throughput ({})", unit_name(&unit)),
                    series,
                ),
            }
        })
        .collect()
}

/// The pointer-chasing staircase: latency against working set, with the cache sizes marked.
fn staircase(records: &[&ResultRecord], report: &Report) -> Option<Chart> {
    let chase: Vec<&ResultRecord> = records
        .iter()
        .copied()
        .filter(|r| r.params.latency().is_some_and(|l| l.chase.is_some()))
        .collect();
    let step = |r: &ResultRecord| r.params.latency().and_then(|l| l.chase.clone());
    let unit = chase.first()?.unit.clone();
    let series = series_of(
        &chase,
        |r| step(r).map(|c| c.working_set_bytes as f64),
        |r| match step(r).map(|c| c.pages).as_deref() {
            Some("thp") => "transparent huge pages".to_string(),
            Some("4k") => "4 KiB pages".to_string(),
            Some(other) => other.to_string(),
            None => "latency".to_string(),
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
        subsystem: "mem".into(),
        title: "Memory latency staircase".into(),
        note: "Dependent loads through a random cycle of cache lines (pointer chasing), one \
               working set at a time; the dashed lines are the cache sizes sysfs gives, per \
               instance."
            .into(),
        plot: Plot::Lines {
            x: Axis::new("working set", Scale::Log, Ticks::Bytes),
            y: Axis::new(
                format!("latency per load ({})", unit_name(&unit)),
                Scale::Log,
                Ticks::Number,
            ),
            series,
            markers,
            legend: Legend::LowerRight,
        },
    })
}

/// Disk IOPS and mean latency against queue depth, per workload, one line per block size
/// (and thread count where it varies).
fn disk_charts(records: &[&ResultRecord]) -> Vec<Chart> {
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
            if disk.is_some_and(|d| d.io_mode == "buffered") {
                name.push_str(" buffered");
            }
            name
        };
        for (metric, what) in [("iops", "IOPS"), ("latency", "mean latency")] {
            let of: Vec<&ResultRecord> = recs
                .iter()
                .copied()
                .filter(|r| r.metric == metric)
                .collect();
            let Some(first) = of.first() else { continue };
            out.push(Chart {
                slug: slug(&["disk", &workload, metric]),
                subsystem: "disk".into(),
                title: format!("Disk {workload}: {what} vs queue depth"),
                note: String::new(),
                plot: against_count(
                    "queue depth (per thread)",
                    if metric == "iops" {
                        "IOPS".to_string()
                    } else {
                        format!("{what} ({})", unit_name(&first.unit))
                    },
                    series_of(&of, |r| r.params.disk().map(|d| d.iodepth as f64), name),
                ),
            });
        }
    }
    out
}

/// Network goodput (at the receiver) against streams, per workload, one line per protocol and
/// message size.
fn net_charts(records: &[&ResultRecord]) -> Vec<Chart> {
    let goodput: Vec<&ResultRecord> = records
        .iter()
        .copied()
        .filter(|r| {
            r.metric == "throughput"
                && r.params.net().and_then(|n| n.side.as_deref()) != Some("sender")
        })
        .collect();
    group_by(&goodput, |r| (r.workload.clone(), r.unit.clone()))
        .into_iter()
        .map(|((workload, unit), recs)| {
            let series = series_of(
                &recs,
                |r| r.params.net().map(|n| n.streams as f64).or(threads(r)),
                |r| {
                    let Some(n) = r.params.net() else {
                        return r.workload.clone();
                    };
                    let mut name = format!(
                        "{} {}",
                        n.protocol.name(),
                        format_bytes_binary(n.message_size_bytes as u64)
                    );
                    if n.direction
                        .as_deref()
                        .is_some_and(|d| d.contains("reverse"))
                    {
                        name.push_str(" reverse");
                    }
                    name.trim().to_string()
                },
            );
            Chart {
                slug: slug(&["net", &workload, "streams"]),
                subsystem: "net".into(),
                title: format!("Network {workload}: goodput vs streams"),
                note: "Payload bit rate measured at the receiver.".into(),
                plot: against_count(
                    "parallel streams",
                    format!("goodput ({})", unit_name(&unit)),
                    series,
                ),
            }
        })
        .collect()
}

/// Efficiency against the theoretical peak, one row per point with a known peak or a
/// reference figure, the reference tool's efficiency beside ours.
fn efficiency_chart(subsystem: &str, records: &[&ResultRecord]) -> Option<Chart> {
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
        let mut tools: Vec<&str> = Vec::new();
        for r in &rows {
            if let Some(t) = r.reference.as_ref().map(|x| x.tool.as_str())
                && !tools.contains(&t)
            {
                tools.push(t);
            }
        }
        series.push(BarSeries {
            name: tools.join(", "),
            values: rows.iter().map(|r| reference(r)).collect(),
        });
    }
    let labels = rows
        .iter()
        .map(|r| {
            let variant = super::row(r).variant;
            let mut label = format!("{} ×{}", r.workload, r.params.threads());
            if variant != "—" {
                label.push(' ');
                label.push_str(&variant);
            }
            if !matches!(r.metric.as_str(), "throughput") {
                label.push_str(&format!(" ({})", r.unit));
            }
            label
        })
        .collect();
    Some(Chart {
        slug: slug(&[subsystem, "efficiency"]),
        subsystem: subsystem.to_string(),
        title: format!(
            "{}: efficiency vs theoretical peak",
            super::subsystem_name(subsystem)
        ),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slug(&["cpu", "DP", "throughput"]), "cpu-dp-throughput");
        assert_eq!(
            slug(&["net", "THROUGHPUT ×2", "streams"]),
            "net-throughput-2-streams"
        );
    }
}
