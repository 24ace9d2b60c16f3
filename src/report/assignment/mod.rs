//! `peakbench report RUN --as assignment`: the run laid out as the assignment's five reports hand
//! it in (docs/usage.md maps each of their tables and charts to a section here) — the machine,
//! the theoretical values with their formulas, then per subsystem (CPU, memory, disk, network)
//! the T-A tables (one per metric), the pivot tables the reports drew, every chart, the
//! reference tools' command lines and raw output, and the findings as the analysis. This module
//! gathers the content ([`HandIn`]); `html` and `markdown` lay it out.

pub mod html;
pub mod markdown;

use super::model::{Document, ReferenceRun};
use super::pivot::Pivot;
use crate::results::{Metric, Report, ResultRecord, Subsystem};
use crate::sysinfo::peak::Peak;
use crate::units::format_sig;

/// A pivot the reports drew: the subsystem's figures with parameter `rows` down the rows and
/// `cols` across the columns, as `report --pivot rows=…,cols=…` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PivotSpec {
    pub subsystem: Subsystem,
    pub rows: &'static str,
    pub cols: &'static str,
    /// The reports' table it mirrors (ASSIGNMENT.md §1.3).
    pub mirrors: &'static str,
}

impl PivotSpec {
    /// What it lays out and which report's table it mirrors, as the document says it.
    pub fn describe(&self) -> String {
        format!(
            "{} down, {} across — as {}",
            self.rows, self.cols, self.mirrors
        )
    }
}

/// The pivots of the reports, per subsystem in the reports' order. A pivot the pivot code
/// cannot draw yet (a workload or protocol as an axis) is left out of the document with a
/// one-line note, and appears once it can.
pub const PIVOTS: &[PivotSpec] = &[
    PivotSpec {
        subsystem: Subsystem::Cpu,
        rows: "threads",
        cols: "workload",
        mirrors: "S3's T-E (GFLOPS and GIOPS side by side)",
    },
    PivotSpec {
        subsystem: Subsystem::Mem,
        rows: "threads",
        cols: "block_size",
        mirrors: "S3's T-C (a table per workload)",
    },
    PivotSpec {
        subsystem: Subsystem::Mem,
        rows: "threads",
        cols: "workload",
        mirrors: "S4's T-D (the workloads side by side)",
    },
    PivotSpec {
        subsystem: Subsystem::Disk,
        rows: "threads",
        cols: "block_size",
        mirrors: "S3's T-C (a table per workload)",
    },
    PivotSpec {
        subsystem: Subsystem::Disk,
        rows: "threads+block_size",
        cols: "workload",
        mirrors: "S4's T-D (the workloads side by side)",
    },
    PivotSpec {
        subsystem: Subsystem::Net,
        rows: "streams",
        cols: "protocol",
        mirrors: "S3's T-E (TCP and UDP side by side)",
    },
    PivotSpec {
        subsystem: Subsystem::Net,
        rows: "streams",
        cols: "message_size",
        mirrors: "S0's and S1's T-B (a table per protocol)",
    },
];

/// A table of the document: its title, header row, rows (text already printable) and the
/// first column of figures (aligned right).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub first_figure: usize,
    /// Some row is flagged noisy (`!`: its note is due).
    pub noisy: bool,
    /// Some figure is the rate a point kept after a burst (`↓`: its note is due).
    pub burst: bool,
}

/// A pivot of a subsystem: its tables, or why it is left out.
#[derive(Debug, Clone, PartialEq)]
pub struct PivotBlock {
    pub spec: PivotSpec,
    pub tables: Vec<Table>,
    /// Why the pivot is not in the document (the pivot code's own words).
    pub left_out: Option<String>,
}

/// One subsystem's part of the hand-in.
#[derive(Debug, Clone)]
pub struct Section {
    pub subsystem: Subsystem,
    /// What its points ran on (disk, network), where there is something to say.
    pub setup: Option<String>,
    /// T-A: one table per metric and unit.
    pub tables: Vec<Table>,
    pub pivots: Vec<PivotBlock>,
    /// Its charts: indices into the document's charts (their PNG files are numbered so).
    pub charts: Vec<usize>,
    pub references: Vec<ReferenceRun>,
    /// The analysis: the findings, then why points have no reference figure.
    pub findings: Vec<String>,
    pub reference_gaps: Vec<String>,
}

/// The whole hand-in.
#[derive(Debug, Clone)]
pub struct HandIn {
    /// The report's document: its header, charts, notes and system.
    pub doc: Document,
    /// The theoretical values: one row per peak (value, formula, inputs) and the points that
    /// share it, then one row per reason a peak is unknown.
    pub peaks: Table,
    pub sections: Vec<Section>,
}

impl HandIn {
    /// The hand-in of `report` (in the units it is to be shown in).
    pub fn of(report: &Report) -> HandIn {
        let doc = Document::of(report);
        let sections = Subsystem::ALL
            .iter()
            .copied()
            .filter(|s| doc.subsystems.contains(s))
            .map(|s| section(s, report, &doc))
            .collect();
        HandIn {
            peaks: peaks_table(&report.results),
            sections,
            doc,
        }
    }
}

/// Text from the run made printable (control characters escaped: it is shown on pages and
/// terminals).
fn printable(mut t: Table) -> Table {
    let p = |s: &mut String| *s = crate::text::printable(s);
    p(&mut t.title);
    t.headers.iter_mut().for_each(p);
    t.rows.iter_mut().flatten().for_each(p);
    t
}

fn section(subsystem: Subsystem, report: &Report, doc: &Document) -> Section {
    let records: Vec<ResultRecord> = report
        .results
        .iter()
        .filter(|r| r.subsystem == subsystem)
        .cloned()
        .collect();
    let of = |list: &[(Subsystem, String)]| -> Vec<String> {
        list.iter()
            .filter(|(s, _)| *s == subsystem)
            .map(|(_, t)| t.clone())
            .collect()
    };
    Section {
        subsystem,
        setup: of(&doc.setups).into_iter().next(),
        tables: metric_tables(&records),
        pivots: PIVOTS
            .iter()
            .filter(|p| p.subsystem == subsystem)
            .map(|p| pivot_block(*p, &records))
            .collect(),
        charts: doc
            .charts
            .iter()
            .enumerate()
            .filter(|(_, c)| c.subsystem == subsystem)
            .map(|(i, _)| i)
            .collect(),
        references: doc
            .reference_runs
            .iter()
            .filter(|r| r.subsystem == subsystem)
            .cloned()
            .collect(),
        findings: of(&doc.findings_by),
        reference_gaps: of(&doc.reference_gaps_by),
    }
}

/// The T-A tables of one subsystem's records: one per metric and unit, the reports' columns
/// (both reference columns even where no point has the tool's figure), and peakbench's figure
/// as a share of the reference tool's.
fn metric_tables(records: &[ResultRecord]) -> Vec<Table> {
    super::grouped(records, |r| (r.metric, r.unit))
        .into_iter()
        .map(|((metric, unit), recs)| {
            let subsystem = recs[0].subsystem;
            let tools = super::reference_tools(&recs);
            let tool = tools.as_deref().unwrap_or("reference");
            let protocol = recs.iter().any(|r| r.params.net().is_some());
            let mut headers = super::headers(
                unit.name(),
                super::variant_header(subsystem),
                Some(tool),
                protocol,
            );
            headers.insert(headers.len() - 1, format!("peakbench ÷ {tool} %"));
            let rows = recs
                .iter()
                .map(|r| {
                    let mut cells = super::row(r).cells(true);
                    cells.insert(cells.len() - 1, against_reference(r));
                    cells
                })
                .collect();
            printable(Table {
                title: format!("{} {} ({unit})", subsystem.title(), metric_words(metric)),
                headers,
                rows,
                first_figure: if protocol { 4 } else { 3 },
                noisy: recs.iter().any(|r| r.summary.noisy),
                burst: recs.iter().any(|r| r.burst().is_some()),
            })
        })
        .collect()
}

/// A metric in a table's title.
fn metric_words(metric: Metric) -> &'static str {
    match metric {
        Metric::Throughput => "throughput",
        Metric::Iops => "IOPS",
        Metric::Latency => "latency",
        Metric::Loss => "loss",
        Metric::Jitter => "jitter",
        Metric::Rate => "transaction rate",
    }
}

/// peakbench's mean as a percentage of the reference tool's, or "—" where there is none.
fn against_reference(r: &ResultRecord) -> String {
    let Some(reference) = r.reference.as_ref().map(|x| x.mean) else {
        return "—".into();
    };
    let ratio = r.summary.mean / reference * 100.0;
    if ratio.is_finite() && reference > 0.0 {
        format!("{ratio:.1}")
    } else {
        "—".into()
    }
}

/// A pivot of the subsystem's records, or why it is left out.
fn pivot_block(spec: PivotSpec, records: &[ResultRecord]) -> PivotBlock {
    let tables = format!("rows={},cols={}", spec.rows, spec.cols)
        .parse::<Pivot>()
        .and_then(|p| p.tables(records));
    match tables {
        Ok(tables) => PivotBlock {
            spec,
            tables: tables
                .into_iter()
                .map(|t| {
                    printable(Table {
                        title: t.heading(),
                        headers: t.headers,
                        rows: t.rows,
                        first_figure: t.first_figure,
                        noisy: t.noisy,
                        burst: t.burst,
                    })
                })
                .collect(),
            left_out: None,
        },
        Err(why) => PivotBlock {
            spec,
            tables: Vec::new(),
            left_out: Some(crate::text::printable(&why)),
        },
    }
}

/// The theoretical values: a row per workload, figure and formula — the range of its points'
/// peaks, the formula, each input's range with its unit and sources — then a row per reason a
/// peak is unknown. (Each point's own peak is in its T-A table.)
fn peaks_table(results: &[ResultRecord]) -> Table {
    let with_peak: Vec<(&ResultRecord, &Peak)> = results
        .iter()
        .filter_map(|r| Some((r, r.peak.as_ref()?)))
        .collect();
    let known = super::grouped(with_peak, |(r, p)| {
        (r.subsystem, r.workload, r.metric, p.formula.clone(), p.unit)
    });
    let unknown = super::grouped(results.iter().filter(|r| r.peak.is_none()), |r| {
        (
            r.subsystem,
            r.metric,
            r.peak_unknown_reason.clone().unwrap_or_default(),
        )
    });
    let mut rows: Vec<Vec<String>> = known
        .into_iter()
        .map(|((subsystem, _, metric, formula, unit), group)| {
            let recs: Vec<&ResultRecord> = group.iter().map(|(r, _)| *r).collect();
            let peaks: Vec<&Peak> = group.iter().map(|(_, p)| *p).collect();
            let values: Vec<f64> = peaks.iter().map(|p| p.value).collect();
            vec![
                subsystem.title().to_string(),
                points(&recs),
                metric.to_string(),
                format!("{} {unit}", range(&values, format_sig)),
                if formula.is_empty() {
                    "—".into()
                } else {
                    formula
                },
                inputs(&peaks),
            ]
        })
        .collect();
    rows.extend(
        unknown
            .into_iter()
            .map(|((subsystem, metric, reason), recs)| {
                vec![
                    subsystem.title().to_string(),
                    points(&recs),
                    metric.to_string(),
                    "unknown".into(),
                    if reason.is_empty() {
                        "no peak recorded".into()
                    } else {
                        reason
                    },
                    "—".into(),
                ]
            }),
    );
    printable(Table {
        title: "Theoretical peaks".into(),
        headers: [
            "Subsystem",
            "Points",
            "Figure",
            "Theoretical",
            "Formula (or why unknown)",
            "Inputs [source]",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        first_figure: usize::MAX,
        noisy: false,
        burst: false,
    })
}

/// The least and greatest of `values` ("79.4–161.9"), or the one value they all are.
fn range(values: &[f64], show: impl Fn(f64) -> String) -> String {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (a, b) = (show(lo), show(hi));
    if a == b { a } else { format!("{a}–{b}") }
}

/// The inputs of peaks that share a formula: each with its range, unit and sources
/// ("clock = 2.45–2.53 GHz (measured), cores = 1–2 (detected)").
fn inputs(peaks: &[&Peak]) -> String {
    let keys = super::distinct(peaks.iter().flat_map(|p| p.inputs.keys()));
    keys.into_iter()
        .map(|k| {
            let of: Vec<&crate::sysinfo::peak::PeakInput> =
                peaks.iter().filter_map(|p| p.inputs.get(k)).collect();
            let values: Vec<f64> = of.iter().map(|i| i.value).collect();
            let shown = range(&values, |v| {
                if v.fract() == 0.0 && v.abs() < 1e15 {
                    format!("{v}")
                } else {
                    format_sig(v)
                }
            });
            let unit = &of[0].unit;
            let unit = if unit == k {
                String::new()
            } else {
                format!(" {unit}")
            };
            let sources = super::distinct(of.iter().map(|i| super::source_name(i.source)));
            format!("{k} = {shown}{unit} ({})", sources.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The points that share a row, as the peaks' notes name them.
fn points(recs: &[&ResultRecord]) -> String {
    super::unknown_points(recs)
}

#[cfg(test)]
mod tests;
