//! Records into the lines of a chart: grouped by a name, split where a condition of their
//! measurement differs, each point with its repetitions and hover text; the reference tool's
//! lines, ideal scaling and the peak as guides.

use super::super::plot::{Detail, Series};
use crate::results::ResultRecord;
use crate::results::point::series_conditions;
use std::collections::HashMap;

pub(super) use crate::report::group_by;

/// One series per distinct `name` of the records: (`x` of the record, the mean), each point
/// with its repetitions and hover text.
pub(super) fn series_of(
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

/// Each named group split where its records differ in a parameter a line must not join across
/// ([`series_conditions`]), the
/// differing values added to the name ("4 KiB · psync", "4 KiB · io_uring").
fn split_by_condition(
    groups: Vec<(String, Vec<&ResultRecord>)>,
) -> Vec<(String, Vec<&ResultRecord>)> {
    let mut out = Vec::new();
    for (name, recs) in groups {
        let all: Vec<Vec<_>> = recs.iter().map(|r| series_conditions(&r.params)).collect();
        let null = serde_json::Value::Null;
        let value = |c: &[(&'static str, serde_json::Value)], k: &str| -> serde_json::Value {
            c.iter()
                .find(|(ck, _)| *ck == k)
                .map_or(null.clone(), |(_, v)| v.clone())
        };
        let keys = crate::report::distinct(all.iter().flatten().map(|(k, _)| *k));
        let varying: Vec<&'static str> = keys
            .into_iter()
            .filter(|k| all.iter().any(|c| value(c, k) != value(&all[0], k)))
            .collect();
        if varying.is_empty() {
            out.push((name, recs));
            continue;
        }
        let key = |c: &[(&'static str, serde_json::Value)]| -> String {
            varying
                .iter()
                .map(|k| match value(c, k) {
                    serde_json::Value::String(s) => crate::text::printable(&s),
                    serde_json::Value::Null => format!("no {k}"),
                    v => format!("{k} {v}"),
                })
                .collect::<Vec<_>>()
                .join(" · ")
        };
        let named = recs
            .iter()
            .zip(&all)
            .map(|(&r, c)| (r, format!("{name} · {}", key(c))));
        let split = crate::report::grouped(named, |(_, sub)| sub.clone());
        out.extend(
            split
                .into_iter()
                .map(|(sub, recs)| (sub, recs.into_iter().map(|(r, _)| r).collect())),
        );
    }
    out
}

/// A measured point at (`x`, `y`) of series `name`: its repetitions and the text shown on
/// hover — the series, the point in words, the figure with its unit and spread.
pub(super) fn detail(r: &ResultRecord, x: f64, y: f64, name: &str) -> Detail {
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
            crate::results::point::label(r),
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
/// after the tool ("(stand-in)" where its run is not exactly the points: see
/// `Reference::differs`, which its points' labels give).
pub(super) fn reference_series(
    records: &[&ResultRecord],
    x: impl Fn(&ResultRecord) -> Option<f64>,
    name: impl Fn(&ResultRecord) -> String,
) -> Vec<Series> {
    group_by(records, name)
        .into_iter()
        .filter_map(|(name, recs)| {
            let first = recs.iter().find_map(|r| r.reference.as_ref())?;
            // Each point's figure, and what its tool measured where it is not the point.
            let figures: Vec<(f64, f64, Option<String>)> = recs
                .iter()
                .filter_map(|r| {
                    let reference = r.reference.as_ref()?;
                    let m = reference.mean;
                    m.is_finite()
                        .then_some((x(r)?, m, reference.differs.clone()))
                })
                .collect();
            let stand_ins = figures.iter().filter(|f| f.2.is_some()).count();
            let tool = crate::text::printable(&first.tool);
            let tool = match stand_ins {
                0 => tool,
                n if n == figures.len() => format!("{tool} (stand-in)"),
                _ => format!("{tool} (stand-in in part)"),
            };
            let points = figures.iter().map(|f| (f.0, f.1)).collect();
            // What the tool measured at each (x, y): the first point's there.
            let mut differs: HashMap<(u64, u64), Option<&str>> = HashMap::new();
            for f in &figures {
                if let Some(at) = bits(f.0, f.1) {
                    differs.entry(at).or_insert(f.2.as_deref());
                }
            }
            Some(Series::of_figures(
                format!("{tool}: {name}"),
                points,
                |x, y| {
                    let what = bits(x, y)
                        .and_then(|at| differs.get(&at).copied().flatten())
                        .map_or(String::new(), |d| {
                            format!(" ({})", crate::text::printable(d))
                        });
                    format!(
                        "{tool} (reference) {name}: {}{what}",
                        crate::units::format_sig(y)
                    )
                },
            ))
        })
        .collect()
}

/// A point's coordinates as a key that is equal where they are (`==`: 0 and -0 alike), or
/// None where one is NaN, which equals nothing.
fn bits(x: f64, y: f64) -> Option<(u64, u64)> {
    let key = |v: f64| (!v.is_nan()).then(|| (v + 0.0).to_bits());
    Some((key(x)?, key(y)?))
}

/// Ideal linear scaling from each series' one-thread point (at most two series, so that the
/// guides stay readable): y₁ × x at every x the series has.
pub(super) fn ideal_scaling(series: &[Series]) -> Vec<Series> {
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

/// The theoretical peak against `x` as a guide line: where every point at the same x has the
/// same peak (within 0.1 %) and at least one has a peak; None otherwise (points whose peaks
/// differ at one x have no single line to draw).
pub(super) fn peak_guide(
    records: &[&ResultRecord],
    x: impl Fn(&ResultRecord) -> Option<f64>,
    name: String,
) -> Option<Series> {
    let mut points: Vec<(f64, f64)> = Vec::new();
    // Where each x is in `points` (a NaN x is a point of its own each time: it equals nothing).
    let mut at_x: HashMap<u64, usize> = HashMap::new();
    for r in records {
        let (Some(at), Some(peak)) = (x(r), r.peak.as_ref().map(|p| p.value)) else {
            continue;
        };
        let known = bits(at, 0.0).and_then(|(b, _)| at_x.get(&b));
        match known.map(|&i| points[i]) {
            Some((_, other)) if (other - peak).abs() > 1e-3 * other.abs() => return None,
            Some(_) => {}
            None => {
                if let Some((b, _)) = bits(at, 0.0) {
                    at_x.insert(b, points.len());
                }
                points.push((at, peak));
            }
        }
    }
    (!points.is_empty()).then_some(Series {
        name,
        points,
        details: Vec::new(),
    })
}
