//! `history --trend`: each point's figure over the stored runs, and the runs where it moved to
//! another level and stayed there (docs/history.md, "Trends").
//!
//! A point is followed by its identity (the key `compare` pairs the same machine's points by)
//! through the runs in the order they were stored; a point measured again with a knob changed
//! (`--diagnose`) is not the point. The runs are cut where the hardware changes (another CPU,
//! core count, memory: [`Machines`]), so that a trend never takes another machine for a
//! regression; within a stretch of one machine, its levels are found by
//! [`crate::measure::levels`].

use super::machine::Machines;
use crate::measure::levels::{Settings, levels};
use crate::results::point::{label, point_key};
use crate::results::{Metric, Report, Subsystem, Unit};
use serde::Serialize;

/// One point's figure over the runs.
#[derive(Debug, Clone, Serialize)]
pub struct Trend {
    /// The point, for a person ("TRIAD · 2 threads · 1 GiB").
    pub point: String,
    pub subsystem: Subsystem,
    pub metric: Metric,
    /// The figures' unit (a base unit).
    pub unit: Unit,
    /// Each run that measured it, oldest first, with its mean.
    pub runs: Vec<i64>,
    pub values: Vec<f64>,
    /// Its levels, in order: every run in one of them.
    pub levels: Vec<TrendLevel>,
}

/// A stretch of runs at one level of the figure.
#[derive(Debug, Clone, Serialize)]
pub struct TrendLevel {
    /// The first and last run of the stretch.
    pub from_run: i64,
    pub to_run: i64,
    /// The runs in it.
    pub count: usize,
    /// The median of its figures.
    pub median: f64,
    /// Why it begins: `first` (the first run), `level` (the figure moved and stayed), or
    /// `machine` (the hardware changed at its first run).
    pub begins: Begins,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Begins {
    First,
    Level,
    Machine,
}

impl Trend {
    /// Whether a smaller figure is the better one.
    pub fn lower_is_better(&self) -> bool {
        self.metric.lower_is_better()
    }

    /// The levels after the first that began with a shift of the figure on one machine.
    pub fn shifts(&self) -> impl Iterator<Item = (&TrendLevel, &TrendLevel)> {
        self.levels
            .windows(2)
            .filter(|w| w[1].begins == Begins::Level)
            .map(|w| (&w[0], &w[1]))
    }
}

/// A point of a run as the trends read it: its identity ([`point_key`]), its mean, and whether
/// it measures another point again with a knob changed (`--diagnose`).
#[derive(Debug, Clone)]
pub struct TrendPoint {
    pub key: String,
    pub mean: f64,
    pub rerun: bool,
}

/// What a point is, from one of its records.
#[derive(Debug, Clone)]
pub struct PointInfo {
    pub point: String,
    pub subsystem: Subsystem,
    pub metric: Metric,
    pub unit: Unit,
}

impl PointInfo {
    /// `rec`'s identity and what it is.
    pub fn of(rec: &crate::results::ResultRecord) -> (String, PointInfo) {
        let info = PointInfo {
            point: label(rec),
            subsystem: rec.subsystem,
            metric: rec.metric,
            unit: rec.unit,
        };
        (point_key(rec), info)
    }
}

/// A run as the trends read it: its id, whether its hardware differs from the run before's
/// ([`Machines::hardware_differs`]), its points in the order measured. The database reads these
/// from its columns ([`super::Store::trend_runs`]) without reading every record.
#[derive(Debug, Clone)]
pub struct TrendRun {
    pub id: i64,
    pub new_machine: bool,
    pub points: Vec<TrendPoint>,
}

impl TrendRun {
    /// Run `id` from its report, each point's identity put in `infos` the first time it is met.
    pub fn of(
        id: i64,
        report: &Report,
        new_machine: bool,
        infos: &mut std::collections::HashMap<String, PointInfo>,
    ) -> TrendRun {
        let points = report
            .results
            .iter()
            .map(|rec| {
                let (key, info) = PointInfo::of(rec);
                infos.entry(key.clone()).or_insert(info);
                TrendPoint {
                    key,
                    mean: rec.summary.mean,
                    rerun: rec.rerun.is_some(),
                }
            })
            .collect();
        TrendRun {
            id,
            new_machine,
            points,
        }
    }
}

/// The trends of the points of `runs` (each a run's id and report, oldest first): see
/// [`trends_of`].
pub fn trends(runs: &[(i64, Report)], point: Option<&str>, settings: &Settings) -> Vec<Trend> {
    let mut infos = std::collections::HashMap::new();
    let lean: Vec<TrendRun> = runs
        .iter()
        .enumerate()
        .map(|(i, (id, r))| {
            let new_machine = i > 0 && Machines::hardware_differs(&runs[i - 1].1, r);
            TrendRun::of(*id, r, new_machine, &mut infos)
        })
        .collect();
    trends_of(&lean, &infos, point, settings)
}

/// The trends of the points of `runs` (oldest first; `infos`: what each point is) whose label
/// contains `point` (case-insensitive; every point where None), in the order the points were
/// first measured; `settings` says how a level is found.
pub fn trends_of(
    runs: &[TrendRun],
    infos: &std::collections::HashMap<String, PointInfo>,
    point: Option<&str>,
    settings: &Settings,
) -> Vec<Trend> {
    let wanted = point.map(str::to_lowercase);
    let machine_starts: Vec<bool> = runs.iter().map(|r| r.new_machine).collect();
    let mut order: Vec<String> = Vec::new();
    let mut found: std::collections::HashMap<String, Trend> = std::collections::HashMap::new();
    // Per trend, the index in `runs` of each of its runs (to find the machine changes).
    let mut at: std::collections::HashMap<String, Vec<usize>> = std::collections::HashMap::new();
    for (i, run) in runs.iter().enumerate() {
        let mut seen = std::collections::HashSet::new();
        for p in run.points.iter().filter(|p| !p.rerun) {
            if !p.mean.is_finite() {
                continue;
            }
            // A point measured twice in one run (verify's clean runs) counts once: its first.
            if !seen.insert(p.key.as_str()) {
                continue;
            }
            let Some(info) = infos.get(&p.key) else {
                continue;
            };
            let entry = found.entry(p.key.clone()).or_insert_with(|| {
                order.push(p.key.clone());
                Trend {
                    point: info.point.clone(),
                    subsystem: info.subsystem,
                    metric: info.metric,
                    unit: info.unit,
                    runs: Vec::new(),
                    values: Vec::new(),
                    levels: Vec::new(),
                }
            });
            entry.runs.push(run.id);
            entry.values.push(p.mean);
            at.entry(p.key.clone()).or_default().push(i);
        }
    }
    order
        .into_iter()
        .filter_map(|key| {
            let mut t = found.remove(&key)?;
            if let Some(w) = &wanted
                && !t.point.to_lowercase().contains(w)
            {
                return None;
            }
            let idx = &at[&key];
            t.levels = levels_of(&t, idx, &machine_starts, settings);
            Some(t)
        })
        .collect()
}

/// The levels of trend `t`, whose values were measured by the runs at `idx`: cut first where
/// the hardware changed since the trend's previous run, then each stretch by its figures.
fn levels_of(
    t: &Trend,
    idx: &[usize],
    machine_starts: &[bool],
    settings: &Settings,
) -> Vec<TrendLevel> {
    let mut out = Vec::new();
    let mut start = 0;
    let n = t.values.len();
    for end in 1..=n {
        let changed = end < n && (idx[end - 1] + 1..=idx[end]).any(|i| machine_starts[i]);
        if end < n && !changed {
            continue;
        }
        let begins = if start == 0 {
            Begins::First
        } else {
            Begins::Machine
        };
        for (j, l) in levels(&t.values[start..end], settings).iter().enumerate() {
            out.push(TrendLevel {
                from_run: t.runs[start + l.start],
                to_run: t.runs[start + l.end - 1],
                count: l.end - l.start,
                median: l.median,
                begins: if j == 0 { begins } else { Begins::Level },
            });
        }
        start = end;
    }
    out
}
