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
    /// Shared by every run's point of the same identity (10,000 runs: one string, not 10,000).
    pub key: std::rc::Rc<str>,
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
                let key: std::rc::Rc<str> = key.into();
                infos.entry(key.to_string()).or_insert(info);
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
    // The trends in the order their points were first measured, each with the index in `runs`
    // of each of its runs (to find the machine changes) and the last run that gave it a value;
    // a point's trend found by one lookup of its key.
    let mut found: Vec<(Trend, Vec<usize>, Option<usize>)> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, run) in runs.iter().enumerate() {
        for p in run.points.iter().filter(|p| !p.rerun) {
            if !p.mean.is_finite() {
                continue;
            }
            let t = match index.get(&*p.key) {
                Some(&t) => t,
                None => {
                    let Some(info) = infos.get(&*p.key) else {
                        continue;
                    };
                    let trend = Trend {
                        point: info.point.clone(),
                        subsystem: info.subsystem,
                        metric: info.metric,
                        unit: info.unit,
                        runs: Vec::new(),
                        values: Vec::new(),
                        levels: Vec::new(),
                    };
                    found.push((trend, Vec::new(), None));
                    index.insert(&p.key, found.len() - 1);
                    found.len() - 1
                }
            };
            let (trend, at, last) = &mut found[t];
            // A point measured twice in one run (verify's clean runs) counts once: its first.
            if *last == Some(i) {
                continue;
            }
            *last = Some(i);
            trend.runs.push(run.id);
            trend.values.push(p.mean);
            at.push(i);
        }
    }
    found
        .into_iter()
        .filter_map(|(mut t, idx, _)| {
            if let Some(w) = &wanted
                && !t.point.to_lowercase().contains(w)
            {
                return None;
            }
            t.levels = levels_of(&t, &idx, &machine_starts, settings);
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
