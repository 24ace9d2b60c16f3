//! The charts a report calls for ([`for_report`]): per subsystem, which records go in which
//! chart and how they are named; the drawing is `plot`'s.

use super::plot::{
    Axis, BarSeries, Chart, ChartError, Detail, Marker, PNG_SCALE, Plot, Scale, Series, Ticks,
    drawable, nines, png,
};
use crate::results::{Metric, Subsystem};
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

/// One series per distinct `name` of the records: (`x` of the record, the mean), each point
/// with its repetitions and hover text.
fn series_of(
    records: &[&ResultRecord],
    x: impl Fn(&ResultRecord) -> Option<f64>,
    name: impl Fn(&ResultRecord) -> String,
) -> Vec<Series> {
    split_by_condition(group_by(records, name))
        .into_iter()
        .map(|(name, recs)| Series {
            points: recs
                .iter()
                .filter_map(|r| Some((x(r)?, r.summary.mean)))
                .collect(),
            details: recs
                .iter()
                .filter_map(|r| Some(detail(r, x(r)?, r.summary.mean, &name)))
                .collect(),
            name,
        })
        .collect()
}

/// The parameters under which points are measured that a line must not join across: an engine,
/// an I/O or sync mode, an ISA, a page size… (a psync QD1 point and an io_uring QD32 point are
/// two series, never one line).
const SERIES_CONDITIONS: &[&str] = &[
    "engine",
    "io_mode",
    "sync",
    "file_per_thread",
    "isa",
    "scaling",
    "pages",
    "stores",
    "order",
    "protocol",
    "direction",
    "side",
    "byte_counting",
    "tcp_nodelay",
    "busy_poll_us",
    "library",
    "micro_kernel",
    "total_bytes",
    "total_ops",
];

/// Each named group split where its records differ in a [`SERIES_CONDITIONS`] parameter, the
/// differing values added to the name ("4 KiB · psync", "4 KiB · io_uring").
fn split_by_condition<'a>(
    groups: Vec<(String, Vec<&'a ResultRecord>)>,
) -> Vec<(String, Vec<&'a ResultRecord>)> {
    let conditions = |r: &ResultRecord| -> Vec<(&'static str, serde_json::Value)> {
        let Ok(serde_json::Value::Object(m)) = serde_json::to_value(&r.params) else {
            return Vec::new();
        };
        SERIES_CONDITIONS
            .iter()
            .map(|k| (*k, m.get(*k).cloned().unwrap_or(serde_json::Value::Null)))
            .collect()
    };
    let mut out = Vec::new();
    for (name, recs) in groups {
        let all: Vec<_> = recs.iter().map(|r| conditions(r)).collect();
        let varying: Vec<usize> = (0..SERIES_CONDITIONS.len())
            .filter(|&i| all.iter().any(|c| c.get(i) != all[0].get(i)))
            .collect();
        if varying.is_empty() {
            out.push((name, recs));
            continue;
        }
        let key = |c: &[(&'static str, serde_json::Value)]| -> String {
            varying
                .iter()
                .filter_map(|&i| c.get(i))
                .map(|(k, v)| match v {
                    serde_json::Value::String(s) => crate::text::printable(s),
                    serde_json::Value::Null => format!("no {k}"),
                    v => format!("{k} {v}"),
                })
                .collect::<Vec<_>>()
                .join(" · ")
        };
        let mut split: Vec<(String, Vec<&'a ResultRecord>)> = Vec::new();
        for (r, c) in recs.iter().zip(&all) {
            let sub = format!("{name} · {}", key(c));
            match split.iter_mut().find(|(n, _)| *n == sub) {
                Some((_, v)) => v.push(r),
                None => split.push((sub, vec![r])),
            }
        }
        out.extend(split);
    }
    out
}

/// A measured point at (`x`, `y`) of series `name`: its repetitions and the text shown on
/// hover — the series, the point in words, the figure with its unit and spread.
fn detail(r: &ResultRecord, x: f64, y: f64, name: &str) -> Detail {
    use crate::units::format_sig;
    let s = &r.summary;
    let unit = r.unit;
    Detail {
        x,
        y,
        min: s.min,
        max: s.max,
        samples: r.samples.clone(),
        tip: format!(
            "{name}\n{} {}\n{}: {} {unit} ± {} (min {}, max {}, {} repetitions)",
            r.subsystem.title(),
            crate::history::compare::label(r),
            r.metric,
            format_sig(s.mean),
            format_sig(s.stddev),
            format_sig(s.min),
            format_sig(s.max),
            r.samples.len()
        ),
    }
}

/// The reference tool's figures beside peakbench's: one series per `name` with any, named
/// after the tool.
fn reference_series(
    records: &[&ResultRecord],
    x: impl Fn(&ResultRecord) -> Option<f64>,
    name: impl Fn(&ResultRecord) -> String,
) -> Vec<Series> {
    group_by(records, name)
        .into_iter()
        .filter_map(|(name, recs)| {
            let tool = recs.iter().find_map(|r| r.reference.as_ref())?.tool.clone();
            let points: Vec<(f64, f64)> = recs
                .iter()
                .filter_map(|r| {
                    let m = r.reference.as_ref()?.mean;
                    m.is_finite().then_some((x(r)?, m))
                })
                .collect();
            let tool = crate::text::printable(&tool);
            Some(Series::of_figures(
                format!("{tool}: {name}"),
                points,
                |_, y| format!("{tool} (reference) {name}: {}", crate::units::format_sig(y)),
            ))
        })
        .collect()
}

/// Ideal linear scaling from each series' one-thread point (at most two series, so that the
/// guides stay readable): y₁ × x at every x the series has.
fn ideal_scaling(series: &[Series]) -> Vec<Series> {
    let with_one: Vec<&Series> = series
        .iter()
        .filter(|s| s.points.iter().any(|p| p.0 == 1.0) && s.points.len() > 1)
        .collect();
    if with_one.is_empty() || with_one.len() > 2 {
        return Vec::new();
    }
    with_one
        .iter()
        .filter_map(|s| {
            let y1 = s.points.iter().find(|p| p.0 == 1.0)?.1;
            let name = if with_one.len() == 1 {
                "ideal linear scaling".to_string()
            } else {
                format!("ideal linear scaling, {}", s.name)
            };
            Some(Series {
                name,
                points: s.points.iter().map(|p| (p.0, y1 * p.0)).collect(),
                details: Vec::new(),
            })
        })
        .collect()
}

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
fn interval_charts(subsystem: Subsystem, records: &[&ResultRecord]) -> Vec<Chart> {
    let with: Vec<&ResultRecord> = records
        .iter()
        .copied()
        .filter(|r| r.intervals.as_ref().is_some_and(|i| i.values.len() >= 2))
        .collect();
    parts(group_by(&with, |r| (r.workload.clone(), r.unit)))
        .into_iter()
        .map(|((workload, unit), part, recs)| {
            let series = recs
                .iter()
                .filter_map(|r| {
                    let iv = r.intervals.as_ref()?;
                    let name = crate::history::compare::label(r);
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
                slug: part.slug(&[subsystem.name(), &workload, "intervals"]),
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

/// Whether a chart has a line to draw: a series of two points or more, or two bars or more (a
/// sweep of one point is a table row, not a chart).
fn has_a_line(plot: &Plot) -> bool {
    match plot {
        Plot::Lines { series, .. } => series.iter().any(|s| {
            let mut xs: Vec<f64> = s.points.iter().map(|p| p.0).collect();
            xs.sort_by(f64::total_cmp);
            xs.dedup();
            xs.len() >= 2
        }),
        Plot::Bars { rows, .. } => rows.len() >= 2,
    }
}

/// The latency percentiles of each point as an HDR percentile plot (latency on a log scale
/// against the percentile in "nines"), one chart per workload with percentiles (in parts of
/// eight lines).
fn percentile_charts(subsystem: Subsystem, records: &[&ResultRecord]) -> Vec<Chart> {
    let with: Vec<&ResultRecord> = records
        .iter()
        .copied()
        .filter(|r| {
            r.metric == Metric::Latency && r.percentiles.as_ref().is_some_and(|p| p.len() >= 2)
        })
        .collect();
    parts(group_by(&with, |r| (r.workload.clone(), r.unit)))
        .into_iter()
        .map(|((workload, unit), part, recs)| {
            let series = recs
                .iter()
                .map(|r| {
                    let name = crate::history::compare::label(r);
                    let mut points: Vec<(f64, f64)> = r
                        .percentiles
                        .iter()
                        .flatten()
                        .filter_map(|(k, v)| {
                            let q = match k.as_str() {
                                "min" => 0.0,
                                "max" => return Some((nines(0.9999) + 1.0, *v)),
                                p => p.strip_prefix('p')?.parse::<f64>().ok()? / 100.0,
                            };
                            (q < 1.0).then_some((nines(q), *v))
                        })
                        .collect();
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                    let tip = |_, y| format!("{name}\n{} {}", crate::units::format_sig(y), unit);
                    Series::of_figures(name.clone(), points, tip)
                })
                .collect();
            Chart {
                slug: part.slug(&[subsystem.name(), &workload, "percentiles"]),
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
        match subsystem {
            Subsystem::Disk => out.extend(disk_charts(&records)),
            Subsystem::Net => out.extend(net_charts(&records)),
            Subsystem::Cpu | Subsystem::Mem => out.extend(throughput_charts(subsystem, &records)),
        }
        if subsystem == Subsystem::Cpu {
            out.extend(linalg_size_charts(&records));
        }
        if subsystem == Subsystem::Mem {
            out.extend(staircase(&records, report));
        }
        if matches!(subsystem, Subsystem::Disk | Subsystem::Net) {
            out.extend(percentile_charts(subsystem, &records));
            out.extend(interval_charts(subsystem, &records));
        }
        out.extend(efficiency_chart(subsystem, &records));
    }
    out.retain(|c| drawable(&c.plot) && has_a_line(&c.plot));
    // Every chart names the machine and the run, also as a picture on its own.
    let host = report
        .system
        .os
        .hostname
        .value
        .as_deref()
        .map(crate::text::printable)
        .unwrap_or_else(|| "unknown host".into());
    let started: String = report.started_at.chars().take(16).collect();
    let tag = format!(" — {host}, {}", started.replace('T', " "));
    for c in &mut out {
        c.title.push_str(&tag);
    }
    out
}

/// Lines of a figure (linear y) against a count (threads, queue depth, streams, N; log x), with
/// dashed guides (the peak).
fn against_count(x: &str, y: String, series: Vec<Series>, guides: Vec<Series>) -> Plot {
    Plot::Lines {
        x: Axis::new(x, Scale::Log, Ticks::Count),
        y: Axis::new(y, Scale::Linear, Ticks::Number),
        series,
        guides,
        markers: Vec::new(),
    }
}

/// Throughput against threads, one chart per workload, one line per variant (ISA, block size).
fn throughput_charts(subsystem: Subsystem, records: &[&ResultRecord]) -> Vec<Chart> {
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
            let mut guides: Vec<Series> = peak_guide(&recs, threads, "theoretical peak".into())
                .into_iter()
                .collect();
            guides.extend(ideal_scaling(&series));
            let mut series = series;
            series.extend(reference_series(&recs, threads, |r| super::row(r).variant));
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

/// The theoretical peak against `x` as a guide line: where every point at the same x has the
/// same peak (within 0.1 %) and at least one has a peak; None otherwise (points whose peaks
/// differ at one x have no single line to draw).
fn peak_guide(
    records: &[&ResultRecord],
    x: impl Fn(&ResultRecord) -> Option<f64>,
    name: String,
) -> Option<Series> {
    let mut points: Vec<(f64, f64)> = Vec::new();
    for r in records {
        let (Some(at), Some(peak)) = (x(r), r.peak.as_ref().map(|p| p.value)) else {
            continue;
        };
        match points.iter().find(|(px, _)| *px == at) {
            Some((_, other)) if (other - peak).abs() > 1e-3 * other.abs() => return None,
            Some(_) => {}
            None => points.push((at, peak)),
        }
    }
    (!points.is_empty()).then_some(Series {
        name,
        points,
        details: Vec::new(),
    })
}

/// Dense linear algebra (LINPACK, DGEMM, SGEMM) against the order N, one chart per workload
/// measured at two or more N: a line per thread count and its peak, dashed.
fn linalg_size_charts(records: &[&ResultRecord]) -> Vec<Chart> {
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

/// The pointer-chasing staircase: latency against working set, with the cache sizes marked.
fn staircase(records: &[&ResultRecord], report: &Report) -> Option<Chart> {
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
            let pages = match step(r).map(|c| c.pages).as_deref() {
                Some("thp") => "transparent huge pages".to_string(),
                Some("4k") => "4 KiB pages".to_string(),
                Some(other) => other.to_string(),
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

/// Network goodput (at the receiver) against streams, per workload, one line per protocol and
/// message size.
fn net_charts(records: &[&ResultRecord]) -> Vec<Chart> {
    let goodput: Vec<&ResultRecord> = records
        .iter()
        .copied()
        .filter(|r| {
            r.metric == Metric::Throughput
                && r.params.net().and_then(|n| n.side.as_deref()) != Some("sender")
        })
        .collect();
    group_by(&goodput, |r| (r.workload.clone(), r.unit))
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
            let streams =
                |r: &ResultRecord| r.params.net().map(|n| n.streams as f64).or(threads(r));
            let mut guides: Vec<Series> = peak_guide(&recs, threads, "theoretical peak".into())
                .into_iter()
                .collect();
            guides.extend(ideal_scaling(&series));
            let mut series = series;
            series.extend(reference_series(&recs, streams, |r| {
                r.params.net().map_or_else(
                    || r.workload.clone(),
                    |n| {
                        format!(
                            "{} {}",
                            n.protocol.name(),
                            format_bytes_binary(n.message_size_bytes as u64)
                        )
                    },
                )
            }));
            Chart {
                slug: slug(&["net", &workload, "streams"]),
                subsystem: Subsystem::Net,
                title: format!("Network {workload}: goodput vs streams"),
                note: "Payload bit rate measured at the receiver; bars: the least and greatest \
                       repetition; dashed: the link's peak and ideal linear scaling from one \
                       stream."
                    .into(),
                plot: against_count(
                    "parallel streams",
                    format!("goodput ({})", unit),
                    series,
                    guides,
                ),
            }
        })
        .collect()
}

/// Efficiency against the theoretical peak, one row per point with a known peak or a
/// reference figure, the reference tool's efficiency beside ours.
fn efficiency_chart(subsystem: Subsystem, records: &[&ResultRecord]) -> Option<Chart> {
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::results::Unit;
    use crate::results::params::{CpuParams, LinalgParams, NodeTag, Params};
    use crate::sysinfo::peak::Peak;

    /// A LINPACK point at order `n` on `threads` threads, its peak 50 GOPS per thread.
    pub(in crate::report) fn linpack(n: usize, threads: usize, gops: f64) -> ResultRecord {
        let params = Params::Cpu(CpuParams {
            threads,
            cpus: (0..threads).collect(),
            cores: threads as u32,
            oversubscribed: false,
            kernel: None,
            linalg: Some(LinalgParams {
                n,
                memory_fraction: None,
                engine: "built-in".into(),
                micro_kernel: "AVX-512 24x8".into(),
                library: None,
                library_threads: None,
                nb: Some(256),
                flops: crate::bench::linalg::hpl::flops(n),
                residual: Some(0.01),
                residual_passed: Some(true),
            }),
            node: NodeTag::default(),
        });
        let peak = Peak {
            value: 50e9 * threads as f64,
            unit: Unit::OpsPerSec,
            formula: String::new(),
            inputs: Default::default(),
        };
        ResultRecord::new(
            Subsystem::Cpu,
            "LINPACK",
            params,
            Metric::Throughput,
            Unit::Gops,
            vec![gops],
            Ok(peak),
        )
    }

    /// LINPACK at two N and two thread counts: a chart against N with a line and a dashed
    /// peak per thread count, and the chart against threads with its peak line.
    #[test]
    fn linpack_is_drawn_against_n_and_threads_with_its_peak() {
        let recs = [
            linpack(1000, 1, 30.0),
            linpack(4000, 1, 42.0),
            linpack(1000, 2, 50.0),
            linpack(4000, 2, 80.0),
        ];
        let refs: Vec<&ResultRecord> = recs.iter().collect();
        let charts = linalg_size_charts(&refs);
        assert_eq!(charts.len(), 1);
        let Plot::Lines { series, guides, .. } = &charts[0].plot else {
            panic!("{:?}", charts[0].plot)
        };
        assert_eq!(charts[0].slug, "cpu-linpack-throughput-vs-n");
        assert_eq!(series.len(), 2);
        assert_eq!(series[1].points, vec![(1000.0, 50e9), (4000.0, 80e9)]);
        assert_eq!(guides.len(), 2);
        assert_eq!(guides[1].name, "peak, 2 threads");
        assert_eq!(guides[1].points, vec![(1000.0, 100e9), (4000.0, 100e9)]);
        let svg = super::super::plot::svg(&charts[0]).unwrap().unwrap();
        assert!(
            svg.contains("peak, 2 threads") && svg.contains("4000"),
            "{svg}"
        );
        // Against threads: one line per N, the peak at 1 and 2 threads.
        let by_threads = throughput_charts(Subsystem::Cpu, &refs);
        let Plot::Lines { guides, series, .. } = &by_threads[0].plot else {
            panic!()
        };
        assert_eq!(series.len(), 2);
        assert_eq!(guides[0].points, vec![(1.0, 50e9), (2.0, 100e9)]);
        // One N: no chart against N.
        assert!(linalg_size_charts(&refs[..1]).is_empty());
    }

    /// Points whose peaks differ at the same x have no single peak line.
    #[test]
    fn differing_peaks_draw_no_guide() {
        let mut other = linpack(4000, 1, 40.0);
        other.peak.as_mut().unwrap().value = 70e9;
        let recs = [linpack(1000, 1, 30.0), other];
        let refs: Vec<&ResultRecord> = recs.iter().collect();
        assert!(peak_guide(&refs, threads, "peak".into()).is_none());
        assert!(peak_guide(&refs[..1], threads, "peak".into()).is_some());
    }

    fn disk(engine: &str, iodepth: u32, iops: f64) -> ResultRecord {
        let params = crate::results::params::Params::with_defaults(
            Subsystem::Disk,
            "RR",
            serde_json::json!({"threads": 1, "iodepth": iodepth, "block_size_bytes": 4096,
                "engine": engine, "io_mode": "direct", "sync": "none", "pattern": "random"}),
        )
        .unwrap();
        ResultRecord::new(
            Subsystem::Disk,
            "RR",
            params,
            Metric::Iops,
            Unit::Iops,
            vec![iops],
            Err("none".into()),
        )
    }

    /// A psync QD1 point and io_uring points are two lines, never one joined across engines.
    #[test]
    fn series_are_split_by_their_conditions() {
        let recs = [
            disk("psync", 1, 15e3),
            disk("io_uring", 1, 14e3),
            disk("io_uring", 32, 75e3),
        ];
        let refs: Vec<&ResultRecord> = recs.iter().collect();
        let charts = disk_charts(&refs);
        let Plot::Lines { series, .. } = &charts[0].plot else {
            panic!("{:?}", charts[0].plot)
        };
        let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["4 KiB · psync", "4 KiB · io_uring"]);
        assert_eq!(series[0].points, vec![(1.0, 15e3)]);
        assert_eq!(series[1].points, vec![(1.0, 14e3), (32.0, 75e3)]);
    }

    /// Twenty points' percentiles: three charts of eight, eight and four lines, none left out.
    #[test]
    fn many_points_are_drawn_in_parts_none_left_out() {
        let recs: Vec<ResultRecord> = (0..20)
            .map(|i| {
                let mut r = disk("psync", i + 1, 1e3);
                r.metric = Metric::Latency;
                r.percentiles = Some(
                    [("p50".to_string(), 1e-4), ("p99".to_string(), 2e-4)]
                        .into_iter()
                        .collect(),
                );
                r
            })
            .collect();
        let refs: Vec<&ResultRecord> = recs.iter().collect();
        let charts = percentile_charts(Subsystem::Disk, &refs);
        let lines: Vec<usize> = charts
            .iter()
            .map(|c| match &c.plot {
                Plot::Lines { series, .. } => series.len(),
                _ => 0,
            })
            .collect();
        assert_eq!(lines, [8, 8, 4]);
        assert!(
            charts[1].title.ends_with("(part 2 of 3)"),
            "{}",
            charts[1].title
        );
        let slugs: std::collections::BTreeSet<&str> =
            charts.iter().map(|c| c.slug.as_str()).collect();
        assert_eq!(slugs.len(), 3, "{slugs:?}");
    }

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slug(&["cpu", "DP", "throughput"]), "cpu-dp-throughput");
        assert_eq!(
            slug(&["net", "THROUGHPUT ×2", "streams"]),
            "net-throughput-2-streams"
        );
    }
}
