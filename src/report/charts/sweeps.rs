//! Charts that follow what was swept: each figure (throughput, IOPS, latency, loss, jitter,
//! transactions) against each parameter the run varied — threads, N, block size, queue depth,
//! streams, message size — a line per value of the other varied parameters. Which parameters
//! can be an x axis, and how a line is named, the points' own fields say
//! ([`crate::results::point::Fields`]); sequential and random workloads of one kind share a
//! chart.

use super::super::plot::{Axis, Chart, Plot, Scale, Series, Ticks};
use super::series::{group_by, ideal_scaling, peak_guide, reference_series, series_of};
use super::slug;
use crate::results::Workload;
use crate::results::params::Side;
use crate::results::point::{Drawn, Field, Role, Words, fields};
use crate::results::{Metric, ResultRecord, Subsystem, Unit};
use crate::workload::spec::Work;
use std::collections::HashSet;

/// More lines than this are left to the table (the chart says how many).
const MAX_SERIES: usize = 8;

/// The charts of a subsystem's swept points, in the order their workloads and figures first
/// appear, each parameter in the order the points name it.
pub(super) fn sweep_charts(subsystem: Subsystem, records: &[&ResultRecord]) -> Vec<Chart> {
    let drawn: Vec<&ResultRecord> = records.iter().copied().filter(|r| swept(r)).collect();
    let mut out = Vec::new();
    for ((_, metric, unit), recs) in group_by(&drawn, |r| (family(r), r.metric, r.unit)) {
        let workloads: Vec<Workload> = group_by(&recs, |r| r.workload)
            .into_iter()
            .map(|(w, _)| w)
            .collect();
        let tails: Vec<ResultRecord> = recs.iter().filter_map(|r| tail_of(r)).collect();
        let tails: Vec<&ResultRecord> = tails.iter().collect();
        for (key, title) in varied_axes(&recs) {
            let mut group = Group {
                subsystem,
                workloads: &workloads,
                metric,
                unit,
                recs: &recs,
                tail: false,
            };
            out.push(group.chart(key, title));
            // The 99th percentile beside the mean, where the points measured their
            // distribution and it varies along this parameter too.
            if tails.len() >= 2 && varied_axes(&tails).iter().any(|(k, _)| *k == key) {
                group.recs = &tails;
                group.tail = true;
                out.push(group.chart(key, title));
            }
        }
    }
    out
}

/// A latency point as its 99th percentile: the figure is the percentile (no bars: it is one
/// figure of all the repetitions' operations), its floor kept, its reference (a mean) dropped.
fn tail_of(r: &ResultRecord) -> Option<ResultRecord> {
    let p99 = *r.percentiles.as_ref()?.get("p99")?;
    if r.metric != Metric::Latency || !p99.is_finite() {
        return None;
    }
    let mut t = r.clone();
    let s = &mut t.summary;
    (s.mean, s.median, s.min, s.max, s.stddev, s.cv) = (p99, p99, p99, p99, 0.0, 0.0);
    t.samples = vec![p99];
    t.reference = None;
    Some(t)
}

/// Whether a record is drawn on the sweep charts: a staircase step is drawn on the staircase,
/// and a network test's goodput as its receiver measured it.
fn swept(r: &ResultRecord) -> bool {
    let step = r.params.latency().is_some_and(|l| l.chase.is_some());
    let sender = r.params.net().and_then(|n| n.side) == Some(Side::Sender);
    !step && !sender
}

/// What shares a chart: a workload, or the workloads of one work model that differ only in
/// their order (sequential and random).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Family {
    Ordered(Work),
    One(Workload),
}

fn family(r: &ResultRecord) -> Family {
    match r.workload.spec().work {
        work if work.ordered() => Family::Ordered(work),
        _ => Family::One(r.workload),
    }
}

/// The parameters that can be an x axis and take two values or more among `recs`: (key,
/// axis title).
fn varied_axes(recs: &[&ResultRecord]) -> Vec<(&'static str, &'static str)> {
    let all: Vec<Vec<Field>> = recs.iter().map(|r| fields(&r.params)).collect();
    let mut out: Vec<(&'static str, &'static str)> = Vec::new();
    // Each key is looked at once (whether it varies), at its first field.
    let mut seen: HashSet<&'static str> = HashSet::new();
    for f in all.iter().flatten() {
        if let Drawn::Along(title) = f.drawn
            && seen.insert(f.key)
            && varies(&all, f.key)
        {
            out.push((f.key, title));
        }
    }
    out
}

/// Whether parameter `key` takes two values or more among the points' fields.
fn varies(all: &[Vec<Field>], key: &str) -> bool {
    let mut values = all
        .iter()
        .map(|fs| fs.iter().find(|f| f.key == key).map(|f| &f.value));
    let first = values.next().flatten();
    values.any(|v| v != first)
}

/// The records of one chart family and figure.
struct Group<'a> {
    subsystem: Subsystem,
    workloads: &'a [Workload],
    metric: Metric,
    unit: Unit,
    recs: &'a [&'a ResultRecord],
    /// Drawing the 99th percentiles ([`tail_of`]), not the means.
    tail: bool,
}

impl Group<'_> {
    /// The figure against parameter `key` (axis title `title`).
    fn chart(&self, key: &'static str, title: &'static str) -> Chart {
        let all: Vec<Vec<Field>> = self.recs.iter().map(|r| fields(&r.params)).collect();
        // The lines: the other parameters that vary, and the workload where several share it.
        let apart: Vec<&'static str> = crate::report::distinct(
            all.iter()
                .flatten()
                .filter(|f| f.role == Role::Axis && f.drawn != Drawn::Not && f.key != key)
                .map(|f| f.key),
        )
        .into_iter()
        .filter(|k| varies(&all, k))
        .collect();
        let several = self.workloads.len() > 1;
        let name = |r: &ResultRecord| line_name(r, &apart, several);
        let x = |r: &ResultRecord| {
            let fs = fields(&r.params);
            fs.iter().find(|f| f.key == key)?.value.as_f64()
        };
        let mut series = series_of(self.recs, x, name);
        let left = series.len().saturating_sub(MAX_SERIES);
        series.truncate(MAX_SERIES);
        let on_a_line = |r: &ResultRecord| {
            let n = name(r);
            series
                .iter()
                .any(|s| s.name == n || s.name.starts_with(&format!("{n} · ")))
        };
        let shown: Vec<&ResultRecord> =
            self.recs.iter().copied().filter(|r| on_a_line(r)).collect();
        let mut guides = self.peaks(&shown, &x, &name);
        let mut dashed = Vec::new();
        if !guides.is_empty() {
            dashed.push("the theoretical peak".to_string());
        }
        // A count of workers (threads, streams): the ideal is linear scaling from one.
        let worker = all.iter().flatten().find_map(|f| match f.words {
            Words::Count(one, _) if f.key == key => Some(one),
            _ => None,
        });
        if let Some(one) = worker.filter(|_| !self.metric.lower_is_better()) {
            let ideal = ideal_scaling(&series);
            if !ideal.is_empty() {
                dashed.push(format!("ideal linear scaling from one {one}"));
            }
            guides.extend(ideal);
        }
        series.extend(reference_series(&shown, x, name));
        let names: Vec<&str> = self.workloads.iter().map(|w| w.name()).collect();
        let names = names.join(", ");
        let what = self.what();
        let mut note = String::from(if self.tail {
            "The 99th percentile of every operation timed at the point"
        } else {
            "Bars: the least and greatest repetition"
        });
        if !dashed.is_empty() {
            note.push_str(&format!("; dashed: {}", dashed.join(" and ")));
        }
        note.push('.');
        if left > 0 {
            note.push_str(&format!(" {left} more lines are in the table."));
        }
        Chart {
            slug: slug(&[
                self.subsystem.name(),
                &names,
                if self.tail { "p99" } else { self.metric.name() },
                "vs",
                key,
            ]),
            subsystem: self.subsystem,
            // The axis in a word or two: "N", "queue depth".
            title: format!(
                "{} {names}: {} vs {}",
                self.subsystem.title(),
                what.replace(" per second", "/s"),
                title.split(" (").next().unwrap_or(title)
            ),
            note,
            plot: Plot::Lines {
                x: x_axis(title, key, self.recs, &x),
                y: Axis::new(
                    format!("{what} ({})", self.unit),
                    Scale::Linear,
                    Ticks::Number,
                ),
                series,
                guides,
                markers: Vec::new(),
            },
        }
    }

    /// The figure in words.
    fn what(&self) -> &'static str {
        match (self.metric, self.subsystem) {
            (Metric::Latency, Subsystem::Net) if self.tail => "p99 round-trip time",
            (Metric::Latency, _) if self.tail => "p99 latency",
            (Metric::Throughput, Subsystem::Net) => "goodput",
            (Metric::Throughput, _) => "throughput",
            (Metric::Iops, _) => "IOPS",
            (Metric::Latency, Subsystem::Net) => "round-trip time",
            (Metric::Latency, _) => "mean latency",
            (Metric::Loss, _) => "loss",
            (Metric::Jitter, _) => "jitter",
            (Metric::Rate, _) => "transactions per second",
        }
    }

    /// The theoretical peak as one dashed line where the points share it, else one per line
    /// (up to three, so that the guides stay readable).
    fn peaks(
        &self,
        recs: &[&ResultRecord],
        x: &dyn Fn(&ResultRecord) -> Option<f64>,
        name: &dyn Fn(&ResultRecord) -> String,
    ) -> Vec<Series> {
        if let Some(one) = peak_guide(recs, x, "theoretical peak".into()) {
            return vec![one];
        }
        let lines = group_by(recs, name);
        if lines.len() > 3 {
            return Vec::new();
        }
        lines
            .into_iter()
            .filter_map(|(line, rs)| peak_guide(&rs, x, format!("peak, {line}")))
            .collect()
    }
}

/// A line's name: the varied parameters other than the x axis, in words (the workload first
/// where several share the chart); the workload alone where nothing else varies.
fn line_name(r: &ResultRecord, apart: &[&str], several: bool) -> String {
    let fs = fields(&r.params);
    let mut parts: Vec<String> = Vec::new();
    if several || apart.is_empty() {
        parts.push(r.workload.name().to_string());
    }
    for key in apart {
        let Some(f) = fs.iter().find(|f| f.key == *key) else {
            continue;
        };
        parts.push(f.words().unwrap_or_else(|| {
            format!(
                "{key} {}",
                crate::results::point::shown_value(key, &f.value)
            )
        }));
    }
    parts.join(" · ")
}

/// The x axis of parameter `key`: logarithmic where its values span a factor of four or more
/// (threads 1…16, blocks 4 KiB…1 MiB), sizes ticked as sizes.
fn x_axis(
    title: &str,
    key: &str,
    recs: &[&ResultRecord],
    x: &dyn Fn(&ResultRecord) -> Option<f64>,
) -> Axis {
    let xs: Vec<f64> = recs.iter().filter_map(|r| x(r)).collect();
    let (lo, hi) = xs.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
        (lo.min(v), hi.max(v))
    });
    let scale = if lo > 0.0 && hi / lo >= 4.0 {
        Scale::Log
    } else {
        Scale::Linear
    };
    let ticks = if key.ends_with("_bytes") {
        Ticks::Bytes
    } else {
        Ticks::Count
    };
    Axis::new(title, scale, ticks)
}
