//! A machine's calibration (`peakbench calibrate`): a profile run N times, each point's
//! run-to-run noise ([`run_noise`](crate::history::run_noise)) from those runs, the smallest
//! change a gate catches on each, and the gate's false alarms measured on the runs themselves.
//!
//! The false alarms are measured by leaving two runs out: each pair of the calibration's runs
//! is an A/A comparison (nothing changed between them) decided by the gate with the noise of
//! the other runs alone, as a later pair is decided with the noise of the calibration. The
//! share of pairs the gate fails is the false-alarm rate seen; Holm's family-wise level
//! (alpha) is the rate expected where each point's figure moves between runs as a normal
//! variable does.

use crate::history::Store;
use crate::history::compare::{Criteria, POWER, Pairing, RunToRun, compare_noisy};
use crate::history::machine::Machines;
use crate::history::run_noise::{MIN_RUNS, PointNoise, of_runs};
use crate::results::{Report, ResultRecord};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The most runs a calibration holds (its pairs are tested one by one: 4,950 at 100 runs).
pub const MAX_RUNS: usize = 100;

/// A machine's calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Its id in the database (0 before it is stored).
    #[serde(default)]
    pub id: i64,
    /// When it was made (RFC 3339, UTC).
    pub created_at: String,
    /// The profile that was run.
    pub profile: String,
    /// The runs it was made of, by id.
    pub runs: Vec<i64>,
    /// The gate's family-wise significance level it was judged at.
    pub alpha: f64,
    /// Each point measured in at least three of the runs.
    pub points: Vec<PointNoise>,
    /// A/A pairs of the runs tested by the gate, each with the other runs' noise (none with
    /// fewer than five runs: three must remain).
    pub pairs_tested: usize,
    /// Those the gate failed (a point slower or faster beyond its threshold).
    pub pairs_failed: usize,
}

impl Calibration {
    /// The calibration of `runs` (id and report, oldest first), each point judged at `alpha`.
    pub fn of(runs: &[(i64, Report)], profile: &str, alpha: f64) -> Calibration {
        let records: Vec<&[ResultRecord]> =
            runs.iter().map(|(_, r)| r.results.as_slice()).collect();
        let points = of_runs(&records);
        let (pairs_tested, pairs_failed) = false_alarms(&records, alpha);
        // In the first run's order of points.
        let order: BTreeMap<String, usize> = records
            .first()
            .map(|recs| {
                recs.iter()
                    .enumerate()
                    .map(|(i, r)| (crate::results::point::point_key(r), i))
                    .collect()
            })
            .unwrap_or_default();
        let mut points: Vec<PointNoise> = points.into_values().collect();
        points.sort_by_key(|p| order.get(&p.key).copied().unwrap_or(usize::MAX));
        Calibration {
            id: 0,
            created_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            profile: profile.to_string(),
            runs: runs.iter().map(|(id, _)| *id).collect(),
            alpha,
            points,
            pairs_tested,
            pairs_failed,
        }
    }

    /// Each point's noise, by key.
    pub fn noise(&self) -> BTreeMap<String, PointNoise> {
        self.points
            .iter()
            .map(|p| (p.key.clone(), p.clone()))
            .collect()
    }

    /// The smallest change the gate catches on `point` with [`POWER`]: what its noise lets a
    /// test at Holm's strictest level (alpha ÷ the points) detect, and no less than the largest
    /// change its runs made by themselves (the gate's threshold).
    pub fn catches(&self, point: &PointNoise) -> f64 {
        let level = self.alpha / self.points.len().max(1) as f64;
        point.detectable(level, POWER).max(point.largest_change)
    }

    /// Whether a calibration read from the database holds together: figures finite and in
    /// range, runs and points within bounds (a database is a file anyone may have written).
    pub fn plausible(&self) -> bool {
        let fraction = |x: f64| x.is_finite() && (0.0..1e6).contains(&x);
        (MIN_RUNS..=MAX_RUNS).contains(&self.runs.len())
            && self.alpha > 0.0
            && self.alpha < 1.0
            && self.pairs_failed <= self.pairs_tested
            && self.pairs_tested <= MAX_RUNS * (MAX_RUNS - 1) / 2
            && self.points.len() <= 100_000
            && self.points.iter().all(|p| {
                (MIN_RUNS..=self.runs.len()).contains(&p.runs)
                    && p.mean.is_finite()
                    && p.mean > 0.0
                    && fraction(p.run_cv)
                    && fraction(p.within_cv)
                    && fraction(p.largest_change)
            })
    }
}

/// The run-to-run noise a comparison of two runs of one machine found, and where.
#[derive(Debug, Clone)]
pub struct Known {
    pub points: BTreeMap<String, PointNoise>,
    /// Where from, for a person: "calibration 2 (8 runs of profile ci, 2026-11-30T05:00:00Z)".
    pub from: String,
    /// The calibration, when it came from one.
    pub calibration: Option<Calibration>,
}

/// The most stored runs read for a machine's noise when it has no calibration.
pub const HISTORY_RUNS: usize = 20;

/// The newest calibration of `a`'s machine (the same hardware as its first run's) in `store`.
pub fn of_machine(store: &Store, a: &Report) -> anyhow::Result<Option<Calibration>> {
    for c in store.calibrations()? {
        let Some(first) = c.runs.first() else {
            continue;
        };
        // A calibration whose runs were removed cannot say which machine it measured.
        if let Ok(r) = store.load(*first)
            && !Machines::hardware_differs(a, &r)
        {
            return Ok(Some(c));
        }
    }
    Ok(None)
}

/// The run-to-run noise of `a`'s machine: its newest calibration's and that of its newest
/// [`HISTORY_RUNS`] complete stored runs, the larger of the two for each point (a calibration
/// made in a quiet hour does not speak for a busier one: the stored runs say how the machine
/// moves now), or either alone where the other has none; None where neither has any. The runs
/// compared are left out — `ids`, the compared runs of the database, and the stored runs the
/// compared `documents` were written from (the same start and command line) — and a point
/// needs three runs.
pub fn known(
    store: &Store,
    a: &Report,
    ids: &[i64],
    documents: &[&Report],
) -> anyhow::Result<Option<Known>> {
    let calibration = of_machine(store, a)?;
    let history = stored_noise(store, a, ids, documents)?;
    let described = |c: &Calibration| {
        format!(
            "calibration {} ({} runs of profile {}, {})",
            c.id,
            c.runs.len(),
            crate::text::printable(&c.profile),
            crate::text::printable(&c.created_at)
        )
    };
    Ok(match (calibration, history) {
        (None, None) => None,
        (None, Some((points, from))) => Some(Known {
            points,
            from,
            calibration: None,
        }),
        (Some(c), None) => Some(Known {
            points: c.noise(),
            from: described(&c),
            calibration: Some(c),
        }),
        (Some(c), Some((stored, from))) => {
            let points = c
                .noise()
                .into_iter()
                .map(|(key, cal)| {
                    let larger = match stored.get(&key) {
                        Some(s) if s.run_cv > cal.run_cv => PointNoise {
                            largest_change: s.largest_change.max(cal.largest_change),
                            ..s.clone()
                        },
                        Some(s) => PointNoise {
                            largest_change: s.largest_change.max(cal.largest_change),
                            ..cal
                        },
                        None => cal,
                    };
                    (key, larger)
                })
                .collect();
            Some(Known {
                points,
                from: format!("{} and of {from}, the larger for each point", described(&c)),
                calibration: Some(c),
            })
        }
    })
}

/// The run-to-run noise of `a`'s machine's newest [`HISTORY_RUNS`] complete stored runs other
/// than those compared ([`known`]), and where it came from; None where no point is in three.
fn stored_noise(
    store: &Store,
    a: &Report,
    ids: &[i64],
    documents: &[&Report],
) -> anyhow::Result<Option<(BTreeMap<String, PointNoise>, String)>> {
    let mut loaded: Vec<(i64, Report)> = Vec::new();
    // A bounded number of runs read, whatever the history holds of other machines.
    for run in store.runs()?.iter().rev().take(4 * HISTORY_RUNS) {
        if loaded.len() == HISTORY_RUNS {
            break;
        }
        let written_from =
            |r: &&Report| r.started_at == run.started_at && r.command_line == run.command_line;
        if run.status != "complete" || ids.contains(&run.id) || documents.iter().any(written_from) {
            continue;
        }
        if let Ok(r) = store.load(run.id)
            && !Machines::hardware_differs(a, &r)
        {
            loaded.push((run.id, r));
        }
    }
    let records: Vec<&[ResultRecord]> = loaded.iter().map(|(_, r)| r.results.as_slice()).collect();
    let points = of_runs(&records);
    if points.is_empty() {
        return Ok(None);
    }
    let mut ids: Vec<i64> = loaded.iter().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    let shown = if ids.len() <= 5 {
        ids.iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        format!("{} to {}", ids[0], ids[ids.len() - 1])
    };
    let from = format!(
        "{} stored runs of this machine (runs {shown})",
        loaded.len()
    );
    Ok(Some((points, from)))
}

/// The A/A pairs of `runs` the gate fails, each pair judged with the noise of the other runs:
/// (pairs tested, pairs failed); (0, 0) with fewer than [`MIN_RUNS`] + 2 runs.
fn false_alarms(runs: &[&[ResultRecord]], alpha: f64) -> (usize, usize) {
    if runs.len() < MIN_RUNS + 2 {
        return (0, 0);
    }
    let criteria = Criteria {
        alpha,
        threshold: 0.0,
        same_machine: true,
    };
    let (mut tested, mut failed) = (0, 0);
    for i in 0..runs.len() {
        for j in i + 1..runs.len() {
            let others: Vec<&[ResultRecord]> = runs
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != i && *k != j)
                .map(|(_, r)| *r)
                .collect();
            let noise = of_runs(&others);
            let gate = RunToRun {
                points: &noise,
                gate: true,
            };
            let changes = compare_noisy(runs[i], runs[j], criteria, Pairing::Identity, Some(gate));
            tested += 1;
            if changes.iter().any(|c| c.regression || c.improvement) {
                failed += 1;
            }
        }
    }
    (tested, failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report of one point whose repetitions are `samples`.
    fn run(samples: &[f64]) -> Report {
        let mut r: Report = serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/history/base.json"
        )))
        .unwrap();
        r.results.truncate(1);
        let rec = &mut r.results[0];
        rec.samples = samples.to_vec();
        rec.summary = crate::measure::stats::Summary::of(samples).unwrap();
        r
    }

    /// Eight runs of one point whose means move 1 % between runs: every leave-two-out pair is
    /// decided (28) and none fails, and one run 30 % slower is caught against the others' noise; the stored
    /// form reads back the same and a tampered one is refused.
    #[test]
    fn a_calibration_measures_its_false_alarms_and_catches_a_real_change() {
        let level = [100.0, 101.0, 99.0, 100.8, 99.3, 100.2, 99.6, 100.5];
        let runs: Vec<(i64, Report)> = level
            .iter()
            .enumerate()
            .map(|(i, m)| (i as i64 + 1, run(&[m - 0.1, *m, m + 0.1])))
            .collect();
        let cal = Calibration::of(&runs, "ci", 0.05);
        assert_eq!(cal.points.len(), 1);
        assert_eq!(cal.pairs_tested, 28);
        assert_eq!(cal.pairs_failed, 0, "{cal:?}");
        assert!(cal.plausible());
        let p = &cal.points[0];
        assert!(cal.catches(p) >= p.largest_change);
        assert!(cal.catches(p) < 0.1, "{}", cal.catches(p));
        // A run 30 % slower is a regression under the gate; 1 % is not.
        let noise = cal.noise();
        let gate = RunToRun {
            points: &noise,
            gate: true,
        };
        let c = Criteria {
            alpha: 0.05,
            threshold: 0.0,
            same_machine: true,
        };
        for (factor, regression) in [(0.7, true), (0.99, false)] {
            let b = run(&[100.0 * factor - 0.1, 100.0 * factor, 100.0 * factor + 0.1]);
            let ch = compare_noisy(
                &runs[0].1.results,
                &b.results,
                c,
                Pairing::Identity,
                Some(gate),
            );
            assert_eq!(ch[0].regression, regression, "{factor}: {:?}", ch[0]);
            assert_eq!(
                ch[0].spread,
                Some(crate::history::run_noise::Source::BetweenRuns)
            );
        }
        let back: Calibration =
            serde_json::from_str(&serde_json::to_string(&cal).unwrap()).unwrap();
        assert_eq!(back, cal);
        let mut bad = cal.clone();
        bad.points[0].run_cv = f64::NAN;
        assert!(!bad.plausible());
        let mut bad = cal.clone();
        bad.points[0].runs = 1000;
        assert!(!bad.plausible());
        let mut bad = cal;
        bad.runs.truncate(2);
        assert!(!bad.plausible());
    }
}
