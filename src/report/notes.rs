//! The notes under the tables: what a run's records say beyond their figures (references
//! missing and why, peaks and their inputs, each subsystem's set-up, percentiles, solves,
//! concurrency, Little's law).

use super::grouping::grouped;
use super::rows::{variant, variant_of};
use crate::results::params::Pages;
use crate::results::{Metric, Subsystem};
use crate::results::{Reference, ResultRecord};
use crate::units::format_sig;
use crate::workload::linalg::LinalgWorkload;
use std::collections::{HashMap, HashSet};

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
            r.workload.name().to_string()
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
/// disk target in memory, an efficiency above 100 % under a user's input) and per interference
/// their noise shows (a co-runner, steal), naming its points.
pub fn notice_notes(results: &[ResultRecord]) -> Vec<String> {
    let warned: Vec<(String, &ResultRecord)> = results
        .iter()
        .flat_map(|rec| {
            let noise = rec.noise.iter().flat_map(|n| n.words()).map(|w| {
                format!(
                    "{w}: its figure may be low; measure again on a quiet machine, or with --strict"
                )
            });
            rec.warnings
                .iter()
                .cloned()
                .chain(noise)
                .map(move |w| (w, rec))
        })
        .collect();
    grouped(warned.iter().map(|(w, r)| (w.as_str(), *r)), |(w, _)| *w)
        .into_iter()
        .map(|(text, warned)| {
            let recs: Vec<&ResultRecord> = warned.into_iter().map(|(_, r)| r).collect();
            format!(
                "{}: ! {}",
                unknown_points(&recs),
                crate::text::printable(text)
            )
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
pub(crate) fn point_and_metric(points: &str, metric: Metric) -> String {
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
pub(crate) fn unknown_points(recs: &[&ResultRecord]) -> String {
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
    grouped(recs, |&&r| r.workload.name())
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

pub(crate) fn source_name(s: crate::sysinfo::Source) -> &'static str {
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
            parts.extend(super::net_conditions::of(&ns));
        }
        Subsystem::Cpu | Subsystem::Mem => {}
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// One line per latency point with percentiles: each it has (`--percentiles`), in order, and
/// max.
pub fn percentile_notes(results: &[ResultRecord]) -> Vec<String> {
    use crate::measure::latency::Percentiles;
    results
        .iter()
        .filter_map(|r| {
            let p = r.percentiles.as_ref()?;
            let figures: Vec<String> = (crate::measure::latency::chosen(p).iter())
                .map(|(q, v)| (Percentiles::key(*q), Some(*v)))
                .chain([("max".to_string(), p.get("max").copied())])
                .map(|(k, v)| {
                    let v = v.map_or_else(|| "—".into(), format_sig);
                    format!("{k} {v} {}", r.unit)
                })
                .collect();
            Some(format!(
                "{} {} ×{}: {}",
                r.workload,
                variant(r),
                r.params.threads(),
                figures.join(", ")
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
            let what = if r.workload == LinalgWorkload::Linpack {
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
                    crate::workload::linalg::RESIDUAL_THRESHOLD
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
