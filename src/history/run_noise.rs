//! A point's run-to-run noise on one machine: how far its figure moves from one run to the
//! next, which a shared VM's neighbours, its host's turbo and its caches move far more than the
//! spread of one run's repetitions says (two quick runs 40 minutes apart on a 2-core guest read
//! TRIAD +101 %, each run's repetitions within 3 %).
//!
//! Each of `k` runs of the same machine gives the point's mean; the spread of those means (their
//! standard deviation over their mean, `run_cv`) holds everything that moves a run: the
//! repetitions' own spread and what moves between runs. Two runs of an unchanged machine then
//! differ by a difference whose variance is 2·run_cv²·mean², known to k − 1 degrees of freedom;
//! a comparison takes that, or the repetitions' own (Welch's s²ₐ/nₐ + s²ᵦ/nᵦ) where those are
//! larger, and says which it used ([`Spread`]).

use crate::measure::welch::{self, mean_var};
use crate::results::point::{label, point_key};
use crate::results::{Metric, ResultRecord, Subsystem, Unit};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The fewest runs a point's run-to-run noise is estimated from (two degrees of freedom).
pub const MIN_RUNS: usize = 3;

/// One point's run-to-run noise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointNoise {
    /// The point's key ([`point_key`]), by which a comparison finds it.
    pub key: String,
    /// The point for a person: "DP · 2 threads · avx512".
    pub label: String,
    pub subsystem: Subsystem,
    pub metric: Metric,
    pub unit: Unit,
    /// The runs it was measured in.
    pub runs: usize,
    /// The mean of the runs' means.
    pub mean: f64,
    /// The standard deviation of the runs' means over their mean.
    pub run_cv: f64,
    /// The runs' coefficients of variation of their repetitions, averaged (0 with one
    /// repetition a run).
    pub within_cv: f64,
    /// The largest change between two of the runs: the highest mean over the lowest, less 1.
    pub largest_change: f64,
    /// The fewest repetitions a run had of the point.
    pub repetitions: usize,
}

/// Where a comparison's spread of a pair came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The repetitions of the two runs (Welch's test).
    WithinRun,
    /// The point's run-to-run noise on the machine, larger than the repetitions'.
    BetweenRuns,
}

impl Source {
    pub fn words(self) -> &'static str {
        match self {
            Source::WithinRun => "within run",
            Source::BetweenRuns => "between runs",
        }
    }
}

/// The spread of a pair's difference of means.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Its squared standard error.
    pub se2: f64,
    /// Its degrees of freedom.
    pub df: f64,
    pub source: Source,
}

impl PointNoise {
    /// The noise of a point measured once in each of `records` (one per run, the same key),
    /// or `None` with fewer than [`MIN_RUNS`] or a mean that is not a positive finite figure.
    pub fn of(records: &[&ResultRecord]) -> Option<PointNoise> {
        let first = records.first()?;
        if records.len() < MIN_RUNS {
            return None;
        }
        let means: Vec<f64> = records.iter().map(|r| r.summary.mean).collect();
        if means.iter().any(|m| !(m.is_finite() && *m > 0.0)) {
            return None;
        }
        let (mean, var) = mean_var(&means);
        let (lowest, highest) = means.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), m| {
            (lo.min(*m), hi.max(*m))
        });
        let within: Vec<f64> = records
            .iter()
            .map(|r| match mean_var(&r.samples) {
                (m, v) if v.is_finite() && m > 0.0 => v.sqrt() / m,
                _ => 0.0,
            })
            .collect();
        Some(PointNoise {
            key: point_key(first),
            label: label(first),
            subsystem: first.subsystem,
            metric: first.metric,
            unit: first.unit,
            runs: records.len(),
            mean,
            run_cv: var.sqrt() / mean,
            within_cv: within.iter().sum::<f64>() / within.len() as f64,
            largest_change: highest / lowest - 1.0,
            repetitions: records.iter().map(|r| r.samples.len()).min().unwrap_or(0),
        })
    }

    /// The spread of the difference of two runs' means of this point, A's repetitions `a`
    /// (mean `mean_a`) and B's `b`: twice the run-to-run variance at A's level, or Welch's
    /// where the repetitions' own spread is larger (a run noisier than the calibration's).
    pub fn spread(&self, a: &[f64], b: &[f64], mean_a: f64) -> Spread {
        let between = 2.0 * (self.run_cv * mean_a).powi(2);
        let (qa, qb) = (quarter(a), quarter(b));
        let within = qa.0 + qb.0;
        if within > between && qa.1 > 0.0 && qb.1 > 0.0 {
            let df = within * within / (qa.0 * qa.0 / qa.1 + qb.0 * qb.0 / qb.1);
            Spread {
                se2: within,
                df,
                source: Source::WithinRun,
            }
        } else {
            Spread {
                se2: between,
                df: (self.runs - 1) as f64,
                source: Source::BetweenRuns,
            }
        }
    }

    /// The smallest change, a fraction of the mean, that a comparison of two runs of this
    /// point detects at `level` with probability `power` (the runs as noisy as the
    /// calibration's).
    pub fn detectable(&self, level: f64, power: f64) -> f64 {
        let se2 = 2.0 * self.run_cv * self.run_cv;
        welch::detectable_of(se2, (self.runs - 1) as f64, level, power)
    }
}

/// s²/n of `x` and its degrees of freedom n − 1 (0, 0 with fewer than two finite values).
fn quarter(x: &[f64]) -> (f64, f64) {
    if x.len() < 2 || x.iter().any(|v| !v.is_finite()) {
        return (0.0, 0.0);
    }
    let (_, v) = mean_var(x);
    (v / x.len() as f64, x.len() as f64 - 1.0)
}

/// Every point measured in at least [`MIN_RUNS`] of `runs` (each a run's records), by key; a
/// run with two records of one key (nodes, reruns) gives the first.
pub fn of_runs(runs: &[&[ResultRecord]]) -> BTreeMap<String, PointNoise> {
    let mut by_key: BTreeMap<String, Vec<&ResultRecord>> = BTreeMap::new();
    for records in runs {
        let mut seen = std::collections::BTreeSet::new();
        for r in records.iter() {
            let key = point_key(r);
            if seen.insert(key.clone()) {
                by_key.entry(key).or_default().push(r);
            }
        }
    }
    by_key
        .into_iter()
        .filter_map(|(k, recs)| PointNoise::of(&recs).map(|n| (k, n)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(samples: &[f64]) -> ResultRecord {
        let workload = crate::results::Workload::Net(crate::workload::net::NetWorkload::Throughput);
        let params =
            crate::results::params::Params::with_defaults(workload, serde_json::json!({})).unwrap();
        ResultRecord::new(
            workload,
            params,
            crate::results::Metric::Throughput,
            Unit::MbitPerSec,
            samples.to_vec(),
            Err("none".into()),
        )
    }

    /// Three runs of means 100, 102 and 98: run_cv 2 %, largest change 102/98 − 1; a pair of
    /// quiet runs is tested with the run-to-run spread (2 × (2 %·100)² at 2 degrees of freedom);
    /// a pair noisier than that with its own.
    #[test]
    fn the_runs_means_give_the_noise_and_the_larger_spread_is_used() {
        let runs = [
            record(&[99.9, 100.0, 100.1]),
            record(&[101.9, 102.0, 102.1]),
            record(&[97.9, 98.0, 98.1]),
        ];
        let refs: Vec<&ResultRecord> = runs.iter().collect();
        let n = PointNoise::of(&refs).unwrap();
        // Mbit/s are stored as bit/s.
        let m = n.mean;
        assert!((m / 1e8 - 1.0).abs() < 1e-9, "{n:?}");
        assert!((n.run_cv - 0.02).abs() < 1e-9, "{}", n.run_cv);
        assert!((n.largest_change - (102.0 / 98.0 - 1.0)).abs() < 1e-12);
        assert_eq!((n.runs, n.repetitions), (3, 3));
        let quiet = n.spread(&[100.0, 100.1], &[95.0, 95.1], 100.05);
        assert_eq!(quiet.source, Source::BetweenRuns);
        assert!((quiet.se2 / (2.0 * (0.02 * 100.05_f64).powi(2)) - 1.0).abs() < 1e-9);
        assert_eq!(quiet.df, 2.0);
        let noisy = n.spread(&[80.0, 120.0], &[70.0, 130.0], 100.0);
        assert_eq!(noisy.source, Source::WithinRun);
        assert!((noisy.se2 - (800.0 / 2.0 + 1800.0 / 2.0)).abs() < 1e-9);
        // Welch–Satterthwaite: 1300² / (400² + 900²).
        assert!((noisy.df - 1300.0 * 1300.0 / (400.0 * 400.0 + 900.0 * 900.0)).abs() < 1e-9);
        // Two runs are too few; a mean of 0 is no figure.
        assert!(PointNoise::of(&refs[..2]).is_none());
        let zero = record(&[0.0, 0.0]);
        assert!(PointNoise::of(&[&runs[0], &runs[1], &zero]).is_none());
    }

    /// More runs detect less: the t quantile at k − 1 degrees of freedom falls.
    #[test]
    fn more_runs_detect_smaller_changes() {
        let mut n = PointNoise {
            key: String::new(),
            label: String::new(),
            subsystem: Subsystem::Cpu,
            metric: Metric::Throughput,
            unit: Unit::OpsPerSec,
            runs: 3,
            mean: 1.0,
            run_cv: 0.01,
            within_cv: 0.0,
            largest_change: 0.02,
            repetitions: 6,
        };
        let three = n.detectable(0.05, 0.8);
        n.runs = 10;
        let ten = n.detectable(0.05, 0.8);
        assert!(ten < three, "{ten} {three}");
        // (t(0.975, 9) + t(0.8, 9)) × √2 × 1 % ≈ (2.262 + 0.883) × 1.414 %.
        assert!((ten - 0.04448).abs() < 2e-4, "{ten}");
    }
}
