//! Exporters: pure functions from a [`Report`](crate::results::Report) to bytes, one file per
//! format (and the charts the HTML page and the PNG export share), and the atomic file writing
//! that lets a run be interrupted without losing a point.

pub mod assignment;
pub mod bandwidth_levels;
pub mod c2c;
pub mod charts;
pub mod compare;
pub mod csv;
pub mod findings;
pub mod html;
pub mod json;
pub mod legend;
pub mod markdown;
pub mod matrix;
pub mod model;
mod net_conditions;
pub mod nodes;
pub mod numa;
pub mod pivot;
pub mod plot;
pub mod summary;
pub mod table;
pub mod verify;

use crate::results::params::{Direction, LinalgEngine, Pages, Params};
use crate::results::{Metric, Subsystem, Unit};
use crate::results::{Reference, ResultRecord};
use crate::units::{format_sig, format_size};
use std::collections::{HashMap, HashSet};
use std::hash::Hash;

/// The columns of SPEC §4 for one record, already formatted; shared by the terminal table,
/// Markdown and the row order of CSV so that they cannot drift apart.
pub struct Row {
    pub workload: String,
    /// Network points: the transport, a column of its own as the reports have it.
    pub protocol: Option<String>,
    pub concurrency: String,
    pub variant: String,
    pub measured: String,
    pub reference: String,
    pub theoretical: String,
    pub efficiency: String,
    pub reference_efficiency: String,
    pub stddev: String,
}

fn percent(fraction: Option<f64>) -> String {
    fraction.map_or_else(|| "—".to_string(), |f| format!("{:.1}", f * 100.0))
}

/// The memory's matrices of a run: C2C's, then NUMA's.
pub fn mem_matrices(records: &[ResultRecord]) -> Vec<matrix::MatrixView> {
    let mut out = c2c::matrices(records);
    out.extend(numa::matrices(records));
    out
}

/// The "variant" column, and where the point ran in a multi-node run: "node 2", or the link
/// "pairs 0→1".
fn variant(rec: &ResultRecord) -> String {
    variant_of(rec, true)
}

/// [`variant`], with a network point's protocol or without it (where a table gives it a
/// column).
fn variant_of(rec: &ResultRecord, with_protocol: bool) -> String {
    let mut v = base_variant(&rec.params, rec.metric, with_protocol);
    if let Some(q) = rec.params.cpu_quota() {
        v.push_str(&format!(" quota {q} CPUs"));
    }
    let link = rec.params.net().and_then(|n| n.between.as_ref());
    let place = match (link, rec.params.node().node) {
        (Some(l), _) => format!("{} {}→{}", l.pattern, l.src_node, l.dst_node),
        (None, Some(n)) => format!("node {n}"),
        _ => return v,
    };
    if v.is_empty() {
        place
    } else {
        format!("{v} {place}")
    }
}

/// The ISA for CPU points; for memory, the block size or the arrays' size, or for latency the
/// working set and page size, the probe, or the cache level found.
fn base_variant(params: &Params, metric: Metric, with_protocol: bool) -> String {
    match params {
        Params::Cpu(p) => match &p.kernel {
            // The data type and operation beside the ISA: "QP" is 8-bit integers ("avx512
            // int8 add"), never quad precision; HP on a core with native fp16 is an fp16 FMA.
            Some(k) if k.operation.is_empty() => k.isa.name().into(),
            Some(k) => format!("{} {}", k.isa.name(), k.operation),
            None => p
                .linalg
                .as_ref()
                .map(|l| match l.engine {
                    LinalgEngine::BuiltIn => format!("N={} {}", l.n, l.micro_kernel),
                    engine => format!("N={} {engine} {}", l.n, l.micro_kernel),
                })
                .unwrap_or_default(),
        },
        Params::Disk(p) => {
            let mut v = format!(
                "{} QD{}",
                crate::units::format_bytes_binary(p.block_size_bytes),
                p.iodepth
            );
            if p.io_mode == crate::results::params::IoMode::Buffered {
                v.push_str(" buffered");
            }
            // Writes made durable otherwise than the default (fdatasync at the end).
            if p.read_percent < 100 && p.sync != crate::results::params::SyncMode::FdatasyncEnd {
                v.push_str(&format!(" sync {}", p.sync.name()));
            }
            if p.file_per_thread {
                v.push_str(" file/thread");
            }
            v
        }
        Params::Net(p) => {
            let mut v = crate::units::format_bytes_binary(p.message_size_bytes as u64);
            if with_protocol {
                v = format!("{} {v}", p.protocol.name());
            }
            match metric {
                Metric::Throughput => v.push_str(&format!(" {}", p.side.map_or("", |s| s.name()))),
                Metric::Loss | Metric::Jitter => v.push_str(&format!(" {metric}")),
                Metric::Iops | Metric::Latency | Metric::Rate => {}
            }
            v.push_str(match p.direction {
                Some(Direction::ServerToClient) => " reverse",
                Some(Direction::BidirClientToServer) => " bidir c→s",
                Some(Direction::BidirServerToClient) => " bidir s→c",
                Some(Direction::BidirSum) => " bidir sum",
                Some(Direction::ClientToServer) | None => "",
            });
            if let Some(phase) = p.phase {
                v.push_str(&format!(" {phase}"));
            }
            if let Some(n) = p.load_streams {
                v.push_str(&format!(" load {n}"));
            }
            v
        }
        // A whole-array kernel's arrays (each, all threads together, as --array-size gives
        // them), so that runs over several sizes tell their rows apart.
        Params::Mem(p) => p
            .kernel
            .as_ref()
            .map(|k| match (&k.blocks, k.mix) {
                (Some(b), _) => format_size(b.block_size_bytes),
                (None, mix) => format!(
                    "{}{} arrays",
                    mix.map_or_else(String::new, |m| format!("mix {m}, ")),
                    format_size(k.array_bytes_per_thread.saturating_mul(p.threads as u64))
                ),
            })
            .unwrap_or_default(),
        Params::MemLatency(p) => match (&p.chase, &p.level, &p.pair) {
            // NUMA: the row's CPUs and the column's memory.
            (Some(_), _, _) if p.cell.is_some() => p.cell.as_ref().map_or_else(String::new, |c| {
                format!("CPUs node {} → mem node {}", c.cpu_node, c.mem_node)
            }),
            // LOADED: the traffic's mix and delay ("1:0 400 ns thp", "1:0 idle thp").
            (Some(c), _, _) if p.load.is_some() => {
                let load = p.load.as_ref();
                let delay = load
                    .and_then(|l| l.injection_delay_ns)
                    .map_or_else(|| "idle".to_string(), |ns| format!("{ns} ns"));
                let mix = load.map(|l| l.mix.to_string()).unwrap_or_default();
                format!("{mix} {delay} {}", c.pages)
            }
            (Some(c), _, _) => format!("{} {}", format_size(c.working_set_bytes), c.pages),
            (None, Some(l), _) => format!("{} ({})", l.level, l.pages),
            (None, None, Some(c)) => format!("CPU {} → {}", c.from_cpu, c.to_cpu),
            (None, None, None) => p.probe.to_string(),
        },
    }
}

/// Formats one record for a table.
pub fn row(rec: &ResultRecord) -> Row {
    let protocol = rec.params.net().map(|n| n.protocol.name().to_string());
    let variant = variant_of(rec, protocol.is_none());
    Row {
        workload: rec.workload.clone(),
        protocol,
        concurrency: rec.params.threads().to_string(),
        variant: if variant.is_empty() {
            "—".into()
        } else {
            variant
        },
        measured: format_sig(rec.summary.mean),
        reference: rec
            .reference
            .as_ref()
            .map_or_else(|| "—".into(), |r| format_sig(r.mean)),
        theoretical: rec
            .peak
            .as_ref()
            .map_or_else(|| "unknown".into(), |p| format_sig(p.value)),
        efficiency: efficiency_cell(rec),
        reference_efficiency: percent(rec.reference.as_ref().and_then(|r| r.efficiency)),
        stddev: format!(
            "{}{}",
            format_sig(rec.summary.stddev),
            if rec.summary.noisy { " !" } else { "" }
        ),
    }
}

/// The efficiency, "unknown (clock)" where the peak needs a clock that is unknown, flagged
/// where a user-given input made it exceed 100 %, and marked `!` where the point has another
/// warning (printed under the table).
fn efficiency_cell(rec: &ResultRecord) -> String {
    let clock_unknown = rec
        .peak_unknown_reason
        .as_deref()
        .is_some_and(|r| r.starts_with(crate::sysinfo::peak::CLOCK_UNKNOWN));
    match rec.efficiency {
        None if clock_unknown => "unknown (clock)".into(),
        e if rec.warnings.is_empty() => percent(e),
        Some(e) if e > 1.0 => format!("{} (! above peak: user input)", percent(Some(e))),
        e => format!("{} !", percent(e)),
    }
}

/// Which reference columns a table shows: none when no point has a reference figure.
fn keep(column: usize, with_reference: bool) -> bool {
    with_reference || !matches!(column, 4 | 7)
}

/// A table's headers, with `unit` where values carry it; `reference` names the reference tools
/// of its rows ("fio", "STREAM, likwid-bench"), where any row has one; a network table has a
/// Protocol column after the workload.
pub fn headers(unit: &str, variant: &str, reference: Option<&str>, protocol: bool) -> Vec<String> {
    let tool = reference.unwrap_or("reference");
    let mut out: Vec<String> = [
        "Workload".into(),
        "Concurrency".into(),
        variant.into(),
        format!("peakbench measured ({unit})"),
        format!("{tool} measured ({unit})"),
        format!("theoretical ({unit})"),
        "peakbench efficiency %".into(),
        format!("{tool} efficiency %"),
        format!("std dev ({unit})"),
    ]
    .into_iter()
    .enumerate()
    .filter(|(i, _)| keep(*i, reference.is_some()))
    .map(|(_, h)| h)
    .collect();
    if protocol {
        out.insert(1, "Protocol".into());
    }
    out
}

impl Row {
    pub fn cells(self, with_reference: bool) -> Vec<String> {
        let protocol = self.protocol;
        let mut out: Vec<String> = [
            self.workload,
            self.concurrency,
            self.variant,
            self.measured,
            self.reference,
            self.theoretical,
            self.efficiency,
            self.reference_efficiency,
            self.stddev,
        ]
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keep(*i, with_reference))
        .map(|(_, c)| c)
        .collect();
        if let Some(p) = protocol {
            out.insert(1, p);
        }
        out
    }
}

/// True when some record of the group has a reference figure.
/// The reference tools of `records` in the order they first appear, joined ("fio",
/// "likwid-bench, STREAM"), or None where no record has a reference figure.
pub fn reference_tools(records: &[&ResultRecord]) -> Option<String> {
    let tools = distinct(
        records
            .iter()
            .filter_map(|r| Some(r.reference.as_ref()?.tool.as_str())),
    );
    (!tools.is_empty()).then(|| tools.join(", "))
}

/// `items` without repeats, each where it first comes.
pub(crate) fn distinct<T: Hash + Eq + Clone>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut seen: HashSet<T> = HashSet::new();
    items
        .into_iter()
        .filter(|t| seen.insert(t.clone()))
        .collect()
}

/// Records grouped by (subsystem, unit), in first-seen order: one table each.
pub fn groups(results: &[ResultRecord]) -> Vec<((Subsystem, Unit), Vec<&ResultRecord>)> {
    grouped(results, |r| (r.subsystem, r.unit))
}

/// The name of the "variant" column for a subsystem.
pub fn variant_header(subsystem: Subsystem) -> &'static str {
    match subsystem {
        Subsystem::Cpu => "ISA",
        Subsystem::Net => "Message",
        Subsystem::Mem => "Size",
        Subsystem::Disk => "Block size",
    }
}

/// Why points have no reference figure (with `--reference`), and what their tool measured
/// where it is not exactly the point: one line per reason, naming its points by workload and
/// variant ("RR 1 KiB, WR 1 KiB: sysbench cannot run this point: …"), once however many rows
/// and metrics share it.
pub fn reference_gap_notes(records: &[&ResultRecord]) -> Vec<String> {
    // (the line's opening, its reason) and the points that share them, each named once.
    let mut by_reason: Vec<((&str, &str), Vec<String>)> = Vec::new();
    let mut index: HashMap<(&str, &str), (usize, HashSet<String>)> = HashMap::new();
    for r in records {
        let why = match (&r.reference_unknown_reason, &r.reference) {
            (Some(why), _) => ("no reference figure for", why.as_str()),
            (
                None,
                Some(Reference {
                    differs: Some(d), ..
                }),
            ) => ("the reference for", d.as_str()),
            _ => continue,
        };
        let v = variant_of(r, false);
        let name = if v.is_empty() {
            r.workload.clone()
        } else {
            format!("{} {v}", r.workload)
        };
        let (at, named) = index.entry(why).or_insert_with(|| {
            by_reason.push((why, Vec::new()));
            (by_reason.len() - 1, HashSet::new())
        });
        if named.insert(name.clone()) {
            by_reason[*at].1.push(name);
        }
    }
    by_reason
        .into_iter()
        .map(|((opening, why), names)| format!("{opening} {}: {why}", names.join(", ")))
        .collect()
}

/// One line per warning of the records ([`ResultRecord::warnings`]: oversubscribed threads, a
/// disk target in memory, an efficiency above 100 % under a user's input), naming its points.
pub fn notice_notes(results: &[ResultRecord]) -> Vec<String> {
    let warned = results
        .iter()
        .flat_map(|rec| rec.warnings.iter().map(move |w| (w.as_str(), rec)));
    grouped(warned, |(w, _)| *w)
        .into_iter()
        .map(|(text, warned)| {
            let recs: Vec<&ResultRecord> = warned.into_iter().map(|(_, r)| r).collect();
            format!("{}: ! {text}", unknown_points(&recs))
        })
        .collect()
}

/// One line per record explaining its peak: the formula with every input and its source, or
/// why it is unknown.
pub fn peak_notes(results: &[ResultRecord]) -> Vec<String> {
    let mut known = Vec::new();
    let mut without: Vec<&ResultRecord> = Vec::new();
    for rec in results {
        match &rec.peak {
            Some(p) => {
                let what = point_and_metric(&crate::results::point::label(rec), rec.metric);
                known.push(format!(
                    "{what}: {} {} = {}; {}",
                    format_sig(p.value),
                    p.unit,
                    p.formula,
                    peak_inputs(p)
                ));
            }
            None => without.push(rec),
        }
    }
    // Unknown peaks share their reason: one line per reason and metric, naming the points.
    let unknown = grouped(without, |&r| {
        (
            r.peak_unknown_reason.as_deref().unwrap_or_default(),
            r.metric,
        )
    });
    known.extend(unknown.into_iter().map(|((reason, metric), recs)| {
        let what = point_and_metric(&unknown_points(&recs), metric);
        format!("{what}: peak unknown: {reason}")
    }));
    known
}

/// "DP · 2 threads throughput", or the points alone where the metric repeats their workload's
/// name ("LATENCY · 1 thread", not "… latency").
fn point_and_metric(points: &str, metric: Metric) -> String {
    let workload = points.split([' ', ',']).next().unwrap_or("");
    if workload.eq_ignore_ascii_case(metric.name()) {
        points.to_string()
    } else {
        format!("{points} {metric}")
    }
}

/// The points that share an unknown peak's reason: each by its label where they are few, or
/// each workload with its count of points ("LATENCY (26 points)") where they are many; a
/// workload whose every point shares it is named alone.
fn unknown_points(recs: &[&ResultRecord]) -> String {
    const LISTED: usize = 3;
    if recs.len() <= LISTED {
        let labels: Vec<String> = recs
            .iter()
            .map(|r| crate::results::point::label(r))
            .collect();
        // Points that differ in nothing shown (a throughput and its latency) are named once.
        let mut unique: Vec<String> = Vec::new();
        for l in labels {
            if !unique.contains(&l) {
                unique.push(l);
            }
        }
        return unique.join(", ");
    }
    grouped(recs, |&&r| r.workload.as_str())
        .iter()
        .map(|(w, points)| {
            let w = crate::text::printable(w);
            let count = points.len();
            if count == 1 {
                w
            } else {
                format!("{w} ({count} points)")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A peak's inputs with their units and sources. Whole inputs (cores, widths, rates) print as
/// whole numbers; a unit that repeats the input's name is left out.
pub(crate) fn peak_inputs(p: &crate::sysinfo::peak::Peak) -> String {
    p.inputs
        .iter()
        .map(|(k, i)| {
            let value = if i.value.fract() == 0.0 && i.value.abs() < 1e15 {
                format!("{}", i.value)
            } else {
                format_sig(i.value)
            };
            let unit = if i.unit == *k {
                String::new()
            } else {
                format!(" {}", i.unit)
            };
            format!("{k} = {value}{unit} ({})", source_name(i.source))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn source_name(s: crate::sysinfo::Source) -> &'static str {
    use crate::sysinfo::Source;
    match s {
        Source::Detected => "detected",
        Source::Table => "table",
        Source::Measured => "measured",
        Source::User => "user",
    }
}

/// What the points of `subsystem` ran on, in one line (None where nothing is known): for the
/// disk the engines, I/O modes, sync modes, devices, file systems and targets; for the network
/// the servers, protocols and the client's socket buffers at the end of its tests.
pub fn setup_line(subsystem: Subsystem, results: &[ResultRecord]) -> Option<String> {
    use std::collections::BTreeSet;
    let mut parts: Vec<String> = Vec::new();
    let join = |set: BTreeSet<String>| -> Option<String> {
        (!set.is_empty()).then(|| set.into_iter().collect::<Vec<_>>().join(", "))
    };
    let recs: Vec<&ResultRecord> = results
        .iter()
        .filter(|r| r.subsystem == subsystem)
        .collect();
    match subsystem {
        Subsystem::Disk => {
            let ds: Vec<_> = recs.iter().filter_map(|r| r.params.disk()).collect();
            let field = |f: &dyn Fn(&crate::results::params::DiskParams) -> Option<String>| {
                join(ds.iter().filter_map(|d| f(d)).collect())
            };
            for (label, v) in [
                (
                    "engine",
                    field(&|d| {
                        serde_json::to_value(d.engine)
                            .ok()
                            .and_then(|v| v.as_str().map(String::from))
                    }),
                ),
                ("I/O", field(&|d| Some(d.io_mode.to_string()))),
                ("sync", field(&|d| Some(d.sync.name().to_string()))),
                ("device", field(&|d| d.device.clone())),
                ("file system", field(&|d| d.file_system.clone())),
                ("target", field(&|d| Some(d.target.clone()))),
            ] {
                if let Some(v) = v {
                    parts.push(format!("{label} {}", crate::text::printable(&v)));
                }
            }
        }
        Subsystem::Net => {
            let ns: Vec<_> = recs.iter().filter_map(|r| r.params.net()).collect();
            parts.extend(net_conditions::of(&ns));
        }
        Subsystem::Cpu | Subsystem::Mem => {}
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// One line per latency point with percentiles: p50, p99, p99.9 and max.
pub fn percentile_notes(results: &[ResultRecord]) -> Vec<String> {
    results
        .iter()
        .filter_map(|r| {
            let p = r.percentiles.as_ref()?;
            let get = |k: &str| p.get(k).map_or_else(|| "—".into(), |v| format_sig(*v));
            Some(format!(
                "{} {} ×{}: p50 {} {u}, p99 {} {u}, p99.9 {} {u}, max {} {u}",
                r.workload,
                variant(r),
                r.params.threads(),
                get("p50"),
                get("p99"),
                get("p99.9"),
                get("max"),
                u = r.unit
            ))
        })
        .collect()
}

/// One line per dense linear-algebra point: the time of one solve or multiply (from its
/// operation count and each repetition's rate) and, for LINPACK, HPL's scaled residual with
/// its verdict against the threshold.
pub fn solve_notes(results: &[ResultRecord]) -> Vec<String> {
    results
        .iter()
        .filter_map(|r| {
            let l = r.params.cpu()?.linalg.as_ref()?;
            // The exporters see figures in their display unit (GOPS); op/s is the base.
            let per_op_s = r.unit.to_base().map_or(1.0, |(_, f)| f);
            let times: Vec<f64> = r
                .samples
                .iter()
                .filter(|s| **s > 0.0)
                .map(|s| l.flops / (s * per_op_s))
                .collect();
            let what = if r.workload == "LINPACK" {
                "solve"
            } else {
                "multiply"
            };
            let seconds = |t: f64| {
                if t < 1.0 {
                    format!("{} ms", format_sig(t * 1e3))
                } else {
                    format!("{} s", format_sig(t))
                }
            };
            let mut line = format!(
                "{} {} ×{}: {} per {what} (mean of {}, best {}) for {} GFLOP",
                r.workload,
                variant(r),
                r.params.threads(),
                seconds(times.iter().sum::<f64>() / times.len().max(1) as f64),
                times.len(),
                seconds(times.iter().copied().fold(f64::INFINITY, f64::min)),
                format_sig(l.flops / 1e9),
            );
            if let Some(res) = l.residual {
                let verdict = match l.residual_passed {
                    Some(true) => "PASSED",
                    Some(false) => "FAILED",
                    None => "not checked",
                };
                line.push_str(&format!(
                    "; HPL scaled residual {res:.3e} (threshold {}): {verdict}",
                    crate::bench::linalg::hpl::THRESHOLD
                ));
            }
            Some(line)
        })
        .collect()
}

/// One line per latency point measured on several threads or streams at once: each one's own
/// figure and, for memory, the loads per second of all of them together (the network's rate is
/// a record of its own). Of a memory staircase, only the largest working set of each page size
/// (the others are in the JSON and CSV).
pub fn concurrency_notes(results: &[ResultRecord]) -> Vec<String> {
    // The largest working set of each page size and thread count.
    let mut largest_of: HashMap<(Pages, usize), u64> = HashMap::new();
    for r in results {
        if let Some(l) = r.params.latency()
            && let Some(c) = l.chase.as_ref()
        {
            let at = largest_of.entry((c.pages, l.threads)).or_default();
            *at = (*at).max(c.working_set_bytes);
        }
    }
    let largest = |pages: Pages, threads: usize| largest_of.get(&(pages, threads)).copied();
    let list = |values: &[f64]| {
        values
            .iter()
            .map(|v| format_sig(*v))
            .collect::<Vec<_>>()
            .join(", ")
    };
    results
        .iter()
        .filter_map(|r| {
            let head = format!("{} {} ×{}", r.workload, variant(r), r.params.threads());
            if let Some(l) = r.params.latency() {
                if l.thread_latency_ns.len() < 2
                    || l.chase
                        .as_ref()
                        .is_some_and(|c| largest(c.pages, l.threads) != Some(c.working_set_bytes))
                {
                    return None;
                }
                return Some(format!(
                    "{head}: per thread {} ns; together {} M loads/s",
                    list(&l.thread_latency_ns),
                    format_sig(l.ops_per_s? / 1e6)
                ));
            }
            let n = r.params.net()?;
            (r.metric == Metric::Latency && n.stream_rtt_us.len() > 1)
                .then(|| format!("{head}: per stream {} µs", list(&n.stream_rtt_us)))
        })
        .collect()
}

/// One line per point that carries a Little's-law check (IOPS ≈ outstanding I/Os ÷ mean
/// latency), a mismatch above 5 % flagged.
pub fn littles_law_notes(results: &[ResultRecord]) -> Vec<String> {
    results
        .iter()
        .filter(|r| r.metric == Metric::Iops)
        .filter_map(|r| {
            let l = &r.params.disk()?.littles_law;
            Some(format!(
                "{} {} ×{}: {} IOPS measured, {} expected from {} outstanding ÷ mean latency (ratio {:.3}){}",
                r.workload,
                variant(r),
                r.params.threads(),
                format_sig(r.summary.mean),
                format_sig(l.expected_iops),
                l.outstanding,
                l.ratio,
                if l.within_5_percent {
                    ""
                } else {
                    "  ! MISMATCH over 5 %"
                }
            ))
        })
        .collect()
}

/// Records grouped by `key`, in first-seen order.
pub(crate) fn group_by<'a, K: Hash + Eq + Clone>(
    records: &[&'a ResultRecord],
    key: impl Fn(&ResultRecord) -> K,
) -> Vec<(K, Vec<&'a ResultRecord>)> {
    grouped(records.iter().copied(), |r| key(r))
}

/// `items` grouped by `key`: the groups in the order their first items come, each in the
/// items' order. The groups are found through a hash index, so that a run of many points (and
/// many groups) is grouped in one pass.
pub(crate) fn grouped<T, K: Hash + Eq + Clone>(
    items: impl IntoIterator<Item = T>,
    key: impl Fn(&T) -> K,
) -> Vec<(K, Vec<T>)> {
    let mut index: HashMap<K, usize> = HashMap::new();
    let mut out: Vec<(K, Vec<T>)> = Vec::new();
    for item in items {
        let k = key(&item);
        match index.get(&k) {
            Some(&i) => out[i].1.push(item),
            None => {
                index.insert(k.clone(), out.len());
                out.push((k, vec![item]));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::peak::{CpuPeakOverrides, OpClass, cpu_peak};

    /// Points without a reference figure are said once per reason, by workload and variant,
    /// however many metrics and thread counts share it.
    #[test]
    fn reference_gaps_are_said_once_per_reason() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
        let run =
            crate::results::Report::from_json(&std::fs::read(dir.join("quick.json")).unwrap())
                .unwrap();
        let mut recs: Vec<ResultRecord> = run
            .results
            .iter()
            .filter(|r| matches!(r.workload.as_str(), "COPY" | "TRIAD" | "DP"))
            .cloned()
            .collect();
        for r in &mut recs {
            r.reference_unknown_reason = Some(match r.workload.as_str() {
                "DP" => "likwid-bench not found: apt-get install likwid".into(),
                _ => "no reference tool measures it".into(),
            });
        }
        // A reference that is not exactly its point says what it measured, once too.
        let mut stand_in = recs[0].clone();
        stand_in.reference_unknown_reason = None;
        stand_in.reference = Some(Reference {
            differs: Some("the tool takes the blocks in sequence".into()),
            ..Reference::default()
        });
        recs.push(stand_in);
        let mut twice = recs.clone();
        twice.extend(recs.iter().cloned());
        let refs: Vec<&ResultRecord> = twice.iter().collect();
        let notes = reference_gap_notes(&refs);
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("no reference figure for DP ")
                    && n.ends_with(": likwid-bench not found: apt-get install likwid")),
            "{notes:?}"
        );
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(
            notes.iter().any(|n| n.starts_with("the reference for ")
                && n.ends_with(": the tool takes the blocks in sequence")),
            "{notes:?}"
        );
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("no reference figure for COPY 128 MiB arrays, TRIAD")),
            "{notes:?}"
        );
    }

    /// A whole-array kernel's row names its arrays (each, all threads together, as
    /// --array-size gives them), so that runs over several sizes tell their rows apart; a
    /// block workload's names its blocks.
    #[test]
    fn memory_rows_name_their_arrays_or_blocks() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
        let run =
            crate::results::Report::from_json(&std::fs::read(dir.join("quick.json")).unwrap())
                .unwrap();
        let copy = run.results.iter().find(|r| r.workload == "COPY").unwrap();
        // 64 MiB per thread, two threads.
        assert_eq!(row(copy).variant, "128 MiB arrays");
        let mut smaller = copy.clone();
        if let Params::Mem(m) = &mut smaller.params {
            m.kernel.as_mut().unwrap().array_bytes_per_thread = 16 << 10;
        }
        assert_eq!(row(&smaller).variant, "32 KiB arrays");
        assert_eq!(variant_header(Subsystem::Mem), "Size");
    }

    /// Several threads or streams at once: each one's figure in a note, with memory's loads
    /// per second together; of a staircase only its largest working set; one thread, no note.
    #[test]
    fn concurrency_notes_give_each_thread_and_stream() {
        use crate::reference::testing::record;
        use serde_json::json;
        let chase = |ws: u64, threads: usize, each: &[f64]| {
            record(
                "mem",
                "LATENCY",
                "latency",
                "ns",
                json!({"threads": threads, "probe": "chase", "cpus": [0, 1],
                       "thread_latency_ns": each, "ops_per_s": 2.0e7,
                       "working_set_bytes": ws, "pages": "thp", "huge_page_bytes": null,
                       "loads": 1000, "clock_ghz": null}),
                None,
            )
        };
        let net = |streams: u32, each: &[f64]| {
            record(
                "net",
                "LATENCY",
                "latency",
                "us",
                json!({"threads": streams, "streams": streams, "protocol": "TCP",
                       "message_size_bytes": 1, "duration_s": 1.0, "omit_s": 0.0,
                       "side": "client", "stream_rtt_us": each}),
                None,
            )
        };
        let notes = concurrency_notes(&[
            chase(1 << 20, 2, &[100.0, 110.0]),
            chase(1 << 30, 2, &[150.0, 160.5]),
            chase(1 << 30, 1, &[150.0]),
            net(2, &[30.0, 31.25]),
            net(1, &[30.0]),
        ]);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[0].ends_with("×2: per thread 150.0, 160.5 ns; together 20.00 M loads/s"),
            "{}",
            notes[0]
        );
        assert!(
            notes[1].ends_with("×2: per stream 30.00, 31.25 µs"),
            "{}",
            notes[1]
        );
    }

    /// A LINPACK point's note gives the time of one solve from its count and rate, in base or
    /// display units alike, and the residual's verdict; a FAILED verdict is said as such.
    #[test]
    fn solve_notes_give_the_time_and_the_residual_verdict() {
        // 2/3·2000³ + 1.5·2000² = 5.339 GFLOP at 40 GOPS: 133.5 ms.
        let rec = super::charts::tests::linpack(2000, 2, 40.0);
        let base = solve_notes(std::slice::from_ref(&rec));
        assert_eq!(base.len(), 1);
        assert!(
            base[0].starts_with("LINPACK N=2000 AVX-512 24x8 ×2: 133.5 ms per solve (mean of 1"),
            "{}",
            base[0]
        );
        assert!(base[0].ends_with("(threshold 16): PASSED"), "{}", base[0]);
        let display = crate::units::Display {
            mib: false,
            gbit: false,
            ..Default::default()
        };
        let shown = rec.clone().converted(&|s, u| display.conversion(s, u));
        assert_eq!(shown.unit, Unit::Gops);
        assert_eq!(solve_notes(&[shown]), base);
        let mut failed = rec;
        if let Params::Cpu(c) = &mut failed.params {
            c.linalg.as_mut().unwrap().residual_passed = Some(false);
        }
        assert!(solve_notes(&[failed])[0].ends_with(": FAILED"));
    }
    use crate::sysinfo::uarch::lookup_x86;
    use crate::sysinfo::{Isa, Source};

    fn dp(mean: f64, clock: Result<f64, String>, user_clock: Option<f64>) -> ResultRecord {
        let peak = cpu_peak(
            OpClass::Fma { element_bits: 64 },
            1,
            clock,
            lookup_x86("AuthenticAMD", 0x19, 0x11),
            &[Isa::Avx512, Isa::Avx2],
            &CpuPeakOverrides {
                clock_ghz: user_clock,
                ..Default::default()
            },
        );
        let params = Params::with_defaults(Subsystem::Cpu, "DP", serde_json::json!({})).unwrap();
        ResultRecord::new(
            Subsystem::Cpu,
            "DP",
            params,
            Metric::Throughput,
            Unit::Gops,
            vec![mean],
            peak,
        )
    }

    #[test]
    fn unknown_clock_says_so_in_the_efficiency_column() {
        let rec = dp(60.0, Err("the probes disagree".into()), None);
        assert_eq!(rec.efficiency, None);
        assert_eq!(row(&rec).efficiency, "unknown (clock)");
        assert!(rec.warnings.is_empty());
        let notes = peak_notes(std::slice::from_ref(&rec));
        assert!(notes[0].contains("the probes disagree"), "{notes:?}");
    }

    #[test]
    fn efficiency_above_peak_under_a_user_clock_is_flagged() {
        // Zen 4 DP: 16 FLOP/cycle; a user clock of 2 GHz gives 32 GOPS, below the 60 measured.
        let rec = dp(60.0, Ok(3.7), Some(2.0));
        assert_eq!(
            rec.peak.as_ref().unwrap().inputs["clock"].source,
            Source::User
        );
        assert!(rec.efficiency.unwrap() > 1.0);
        assert!(
            rec.warnings[0].contains("user-given clock"),
            "{:?}",
            rec.warnings
        );
        assert!(row(&rec).efficiency.contains("above peak"));
        let notes = notice_notes(std::slice::from_ref(&rec));
        assert!(
            notes.iter().any(|n| n.contains("! efficiency 187.5 %")),
            "{notes:?}"
        );
        let json = serde_json::to_value(&rec).unwrap();
        assert!(json["warnings"][0].is_string());
        // A measured clock never warns, and a user clock below 100 % does not either.
        assert!(dp(60.0, Ok(1.0), None).warnings.is_empty());
        assert!(dp(30.0, Ok(3.7), Some(2.0)).warnings.is_empty());
    }

    /// Unknown peaks that share a reason: a few points each by its label, many by their
    /// workload and count; a metric that repeats the workload's name is not said twice.
    #[test]
    fn unknown_peaks_name_their_points() {
        use crate::reference::testing::record;
        use serde_json::json;
        let chase = |ws: u64, reason: &str| {
            let mut r = record(
                "mem",
                "LATENCY",
                "latency",
                "ns",
                json!({"threads": 1, "probe": "chase", "cpus": [0],
                       "thread_latency_ns": [80.0], "ops_per_s": 1.0e7,
                       "working_set_bytes": ws, "pages": "4k", "huge_page_bytes": null,
                       "loads": 1000, "clock_ghz": null}),
                None,
            );
            r.peak = None;
            r.peak_unknown_reason = Some(reason.into());
            r
        };
        let many: Vec<ResultRecord> = (12..17).map(|k| chase(1 << k, "a")).collect();
        assert_eq!(
            peak_notes(&many),
            ["LATENCY (5 points): peak unknown: a"],
            "one line for the five, no 'LATENCY latency'"
        );
        let few = [
            chase(1 << 12, "a"),
            chase(1 << 20, "a"),
            chase(1 << 30, "b"),
        ];
        assert_eq!(
            peak_notes(&few),
            [
                "LATENCY · 1 thread · 4 KiB working set · 4k pages · chase, LATENCY · 1 thread · 1 MiB working set · 4k pages · chase: peak unknown: a",
                "LATENCY · 1 thread · 1 GiB working set · 4k pages · chase: peak unknown: b",
            ]
        );
        assert_eq!(
            point_and_metric("DP · 2 threads", Metric::Throughput),
            "DP · 2 threads throughput"
        );
        assert_eq!(
            point_and_metric("LATENCY (3 points)", Metric::Latency),
            "LATENCY (3 points)"
        );
    }
}
