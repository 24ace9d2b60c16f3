//! Two runs side by side: every point they have in common, the change of its mean, and whether
//! the change is significant and a regression.
//!
//! Each point is tested with Welch's t-test on its repetitions; as a run has tens of points,
//! the p-values are corrected for the number of points tested (Holm–Bonferroni: the family-wise
//! error rate stays at `alpha`, so two runs of the same machine do not "regress" by chance on one
//! point out of twenty). A significant change is reported as a regression or an improvement only
//! beyond a minimum effect size (`threshold`). Points that share workload, metric and sweep
//! parameters but were measured under different conditions (another sync mode, array size, unit)
//! are paired but not tested: the reason is said instead.
//!
//! Where both runs have the same reference tool's figure for a point, its change is tested the
//! same way on the tool's runs (Holm over the references compared): a regression that the tool
//! shows too is the machine's, one it does not show is peakbench's.

use crate::history::run_noise::{PointNoise, Source, Spread};
use crate::measure::welch;
use crate::results::point::{conditions, label, label_except, point_key, shown_value};
use crate::results::{Metric, ResultRecord, Subsystem, Unit, Workload};
use std::collections::BTreeMap;

/// How a test decides.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Criteria {
    /// Family-wise significance level over all the points tested (e.g. 0.05).
    pub alpha: f64,
    /// A significant change counts as a regression only beyond this fraction (e.g. 0.03).
    pub threshold: f64,
    /// Both runs measured the same machine (the same hardware, or said so): a significant
    /// change beyond the threshold is a regression or an improvement; between different
    /// machines it is B slower or faster than A, never a regression.
    pub same_machine: bool,
}

/// The confidence of the interval given for each pair's ratio B ÷ A.
pub const CONFIDENCE: f64 = 0.95;

/// The chance of detecting a change of the threshold's size that a point's repetitions must
/// give before "no significant change" is said of it (the usual 80 %); below it the verdict is
/// "inconclusive".
pub const POWER: f64 = 0.8;

/// The machine's run-to-run noise that a comparison of two of its runs uses beside the
/// repetitions' spread ([`crate::history::run_noise`]).
#[derive(Debug, Clone, Copy)]
pub struct RunToRun<'a> {
    /// Each point's noise, by key.
    pub points: &'a BTreeMap<String, PointNoise>,
    /// A gate: each point's threshold is at least the largest change the machine's runs made
    /// by themselves, and a point without noise is never a regression.
    pub gate: bool,
}

/// One common point.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Change {
    pub subsystem: Subsystem,
    pub workload: Workload,
    pub metric: Metric,
    pub unit: Unit,
    /// The point's identity parameters, as a JSON object's text.
    pub point: String,
    /// The key the pair was matched by ([`point_key`]).
    #[serde(skip)]
    pub key: String,
    /// The point for a person: "DP · 2 threads · avx512".
    pub label: String,
    pub mean_a: f64,
    pub mean_b: f64,
    pub n_a: usize,
    pub n_b: usize,
    /// mean_b / mean_a − 1.
    pub change: f64,
    /// The [`CONFIDENCE`] interval of mean_b ÷ mean_a (low, high); None with fewer than two
    /// repetitions on a side, a mean that is not positive, or where not comparable.
    pub ratio_interval: Option<[f64; 2]>,
    /// Two-sided p-value of Welch's test; None with fewer than two repetitions on a side or
    /// where the point is not comparable.
    pub p: Option<f64>,
    /// `p` corrected by Holm–Bonferroni for the number of points tested.
    pub p_adjusted: Option<f64>,
    /// `p_adjusted` below `alpha`.
    pub significant: bool,
    /// Significant, beyond the threshold, and worse in B (lower throughput, higher latency).
    pub slower: bool,
    /// Significant, beyond the threshold, and better in B.
    pub faster: bool,
    /// Slower, on the same machine.
    pub regression: bool,
    /// Faster, on the same machine.
    pub improvement: bool,
    /// Why the point was paired but not compared (another unit or condition), if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_comparable: Option<String>,
    /// The spread the test used: the repetitions' (`within_run`) or the machine's run-to-run
    /// noise (`between_runs`, [`RunToRun`]); None where not tested.
    pub spread: Option<Source>,
    /// The least change (a fraction) that makes this point slower or faster: the criteria's
    /// threshold, and under a gate at least the largest change the machine's runs made by
    /// themselves.
    pub threshold: f64,
    /// Under a gate, a point the calibration did not measure: tested on its repetitions, never
    /// a regression.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub uncalibrated: bool,
    /// Under a gate, the smallest change (a fraction) the gate catches on this point with
    /// [`POWER`]: what its run-to-run noise lets a test at Holm's strictest level detect, and
    /// no less than its threshold; None elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catches: Option<f64>,
    /// The smallest change (a fraction of `mean_a`) that these repetitions detect with
    /// [`POWER`] at the strictest level Holm–Bonferroni applies (alpha ÷ the points tested);
    /// None where not tested.
    pub detectable_change: Option<f64>,
    /// Not significant, and the repetitions could not have detected a change of the
    /// threshold's size: nothing can be said either way.
    pub inconclusive: bool,
    /// The reference tool's figures for the point in both runs, when the same tool measured it
    /// in each.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<RefChange>,
}

/// The change of a point's reference figure between two runs, tested as the points are.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RefChange {
    pub tool: String,
    pub mean_a: f64,
    pub mean_b: f64,
    /// mean_b / mean_a − 1.
    pub change: f64,
    /// Welch's p on the tool's runs, corrected by Holm–Bonferroni for the references compared;
    /// None with fewer than two runs on a side.
    pub p_adjusted: Option<f64>,
    /// `p_adjusted` below alpha, and beyond the threshold.
    pub significant: bool,
}

impl RefChange {
    /// "−4.8*" (a significant change beyond the threshold), "+0.3", "+12 ?" (untested).
    pub fn cell(&self) -> String {
        let mark = match (self.p_adjusted, self.significant) {
            (None, _) => " ?",
            (Some(_), true) => "*",
            (Some(_), false) => "",
        };
        format!("{:+.1}{mark}", self.change * 100.0)
    }
}

/// The reference change of a pair, when the same tool measured the point in both runs.
fn reference_change(ra: &ResultRecord, rb: &ResultRecord) -> Option<(RefChange, Option<f64>)> {
    let (a, b) = (ra.reference.as_ref()?, rb.reference.as_ref()?);
    if a.tool != b.tool || !a.mean.is_finite() || !b.mean.is_finite() {
        return None;
    }
    let p = welch::test(&a.samples, &b.samples).map(|w| w.p);
    Some((
        RefChange {
            tool: a.tool.clone(),
            mean_a: a.mean,
            mean_b: b.mean,
            change: if a.mean != 0.0 {
                b.mean / a.mean - 1.0
            } else {
                f64::NAN
            },
            p_adjusted: None,
            significant: false,
        },
        p,
    ))
}

/// What a comparison says of one point.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Another unit or condition: paired, not tested.
    NotComparable(String),
    Regression,
    Improvement,
    /// B slower than A, on another machine.
    Slower,
    /// B faster than A, on another machine.
    Faster,
    /// Significant, but smaller than the threshold.
    WithinThreshold,
    /// Fewer than two repetitions on a side.
    NotTested,
    /// Under a gate, slower or faster beyond the threshold on a point the calibration did not
    /// measure: never a regression.
    Uncalibrated,
    /// Not significant, and a change of the threshold's size could not have been detected: the
    /// smallest detectable change (a fraction).
    Inconclusive(f64),
    NoChange,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::NotComparable(why) => write!(f, "not comparable: {why}"),
            Verdict::Regression => f.write_str("REGRESSION"),
            Verdict::Improvement => f.write_str("improvement"),
            Verdict::Slower => f.write_str("slower"),
            Verdict::Faster => f.write_str("faster"),
            Verdict::WithinThreshold => f.write_str("significant, within threshold"),
            Verdict::NotTested => f.write_str("not tested (< 2 repetitions)"),
            Verdict::Uncalibrated => f.write_str("changed, not gated (not calibrated)"),
            Verdict::Inconclusive(d) if d.is_finite() && *d < 100.0 => {
                write!(f, "inconclusive (detects ≥ {})", percent(*d))
            }
            Verdict::Inconclusive(_) => f.write_str("inconclusive (too few repetitions)"),
            Verdict::NoChange => f.write_str("no significant change"),
        }
    }
}

impl Verdict {
    /// The verdict in a table's cell: as [`Display`](std::fmt::Display) says it, shorter —
    /// "inconclusive (≥ 26 %)", the smallest change the repetitions detect.
    pub fn brief(&self) -> String {
        match self {
            Verdict::WithinThreshold => "within threshold".into(),
            Verdict::NotTested => "not tested (< 2 reps)".into(),
            Verdict::Uncalibrated => "not calibrated".into(),
            Verdict::Inconclusive(d) if d.is_finite() && *d < 100.0 => {
                format!("inconclusive (≥ {})", percent(*d))
            }
            Verdict::Inconclusive(_) => "inconclusive (too few reps)".into(),
            other => other.to_string(),
        }
    }
}

/// A fraction as a percentage with two significant digits: 0.034 → "3.4 %", 0.5 → "50 %".
fn percent(x: f64) -> String {
    let p = x * 100.0;
    if p < 10.0 {
        format!("{p:.1} %")
    } else {
        format!("{p:.0} %")
    }
}

impl Change {
    pub fn verdict(&self) -> Verdict {
        if let Some(why) = &self.not_comparable {
            Verdict::NotComparable(why.clone())
        } else if self.regression {
            Verdict::Regression
        } else if self.uncalibrated && (self.slower || self.faster) {
            Verdict::Uncalibrated
        } else if self.improvement {
            Verdict::Improvement
        } else if self.slower {
            Verdict::Slower
        } else if self.faster {
            Verdict::Faster
        } else if self.significant {
            Verdict::WithinThreshold
        } else if self.p.is_none() {
            Verdict::NotTested
        } else if self.inconclusive {
            Verdict::Inconclusive(self.detectable_change.unwrap_or(f64::INFINITY))
        } else {
            Verdict::NoChange
        }
    }
}

/// A point that only one of two runs has.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Unpaired {
    pub subsystem: Subsystem,
    pub workload: Workload,
    pub metric: Metric,
    /// The point for a person.
    pub label: String,
}

/// How two runs' points are matched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pairing {
    /// One machine: by the points' identity ([`point_key`]).
    Identity,
    /// Two machines: by what each point measures of its machine — the instruction set left out
    /// (each machine's widest), the threads as one, all the CPUs the run could use (`a`, `b`),
    /// or their count — so that a card's "all threads" on 2 CPUs meets another's on 16.
    Machines { a: usize, b: usize },
}

/// The identity parameters a pairing across machines puts its own words in place of.
const MACHINE_DEPENDENT: [&str; 2] = ["isa", "threads"];

impl Pairing {
    /// The pairing of runs `a` and `b`: by identity on the same machine, else across them.
    pub fn of(a: &crate::results::Report, b: &crate::results::Report, same_machine: bool) -> Self {
        if same_machine {
            Pairing::Identity
        } else {
            Pairing::Machines {
                a: a.system.cpu.allowed_count(),
                b: b.system.cpu.allowed_count(),
            }
        }
    }

    /// How many threads a point of run A (`first`) or B ran, across machines: "1 thread",
    /// "all threads" (every CPU its run could use), or "N threads".
    fn threads(self, rec: &ResultRecord, first: bool) -> Option<String> {
        let Pairing::Machines { a, b } = self else {
            return None;
        };
        let all = if first { a } else { b };
        Some(match rec.params.threads() {
            1 => "1 thread".into(),
            n if n == all => "all threads".into(),
            n => format!("{n} threads"),
        })
    }

    /// The key `rec` of run A (`first`) or B is matched by: its subsystem, workload and
    /// metric, then its identity as JSON text (across machines, `threads` in words).
    pub fn key(self, rec: &ResultRecord, first: bool) -> String {
        match self.threads(rec, first) {
            None => point_key(rec),
            Some(t) => {
                let mut ident = crate::results::point::identity(&rec.params, &MACHINE_DEPENDENT);
                ident.insert("threads".into(), serde_json::Value::String(t));
                format!(
                    "{}/{}/{} {}",
                    rec.subsystem,
                    rec.workload,
                    rec.metric,
                    serde_json::Value::Object(ident)
                )
            }
        }
    }

    /// The point for a person: its label, across machines with its threads in words.
    pub fn label(self, rec: &ResultRecord, first: bool) -> String {
        match self.threads(rec, first) {
            None => label(rec),
            Some(t) => format!("{} · {t}", label_except(rec, &MACHINE_DEPENDENT)),
        }
    }
}

/// A baseline's points (`runs[0]`'s) with each run's point paired with them: how a comparison
/// and a ranking line runs up.
pub struct Alignment<'a> {
    /// Each run's pairing with the baseline, and whether its hardware is the baseline's (the
    /// baseline's own: by identity, true).
    pub pairings: Vec<(Pairing, bool)>,
    /// Every point of the baseline, in its order.
    pub points: Vec<Aligned<'a>>,
}

/// A point of the baseline and its counterpart in each run.
pub struct Aligned<'a> {
    pub base: &'a ResultRecord,
    /// Its key in each run's pairing.
    pub keys: Vec<String>,
    /// Each run's point with that key (the baseline's own first); None where a run lacks it.
    pub points: Vec<Option<&'a ResultRecord>>,
}

impl<'a> Alignment<'a> {
    /// `runs` lined up with the first: a run of the same hardware pairs by identity, another
    /// by what its points measure of its machine ([`Pairing::Machines`]).
    pub fn of(runs: &[&'a crate::results::Report]) -> Alignment<'a> {
        let Some(&base) = runs.first() else {
            return Alignment {
                pairings: Vec::new(),
                points: Vec::new(),
            };
        };
        let pairings: Vec<(Pairing, bool)> = runs
            .iter()
            .map(|r| {
                let same = super::machine::Machines::of(&[base, r])
                    .hardware_differences()
                    .is_empty();
                (Pairing::of(base, r, same), same)
            })
            .collect();
        let by_key: Vec<BTreeMap<String, &'a ResultRecord>> = runs
            .iter()
            .zip(&pairings)
            .map(|(r, (p, _))| r.results.iter().map(|x| (p.key(x, false), x)).collect())
            .collect();
        let points = base
            .results
            .iter()
            .map(|rec| {
                let keys: Vec<String> = pairings.iter().map(|(p, _)| p.key(rec, true)).collect();
                let points = by_key
                    .iter()
                    .zip(&keys)
                    .map(|(m, k)| m.get(k).copied())
                    .collect();
                Aligned {
                    base: rec,
                    keys,
                    points,
                }
            })
            .collect();
        Alignment { pairings, points }
    }
}

/// The points of `a` that `b` lacks (by [`point_key`]), in `a`'s order.
pub fn only_in(a: &[ResultRecord], b: &[ResultRecord]) -> Vec<Unpaired> {
    only_in_paired(a, b, Pairing::Identity, true)
}

/// The points of `a` (run A where `a_first`, else B) that `b` lacks, matched by `pairing`.
pub fn only_in_paired(
    a: &[ResultRecord],
    b: &[ResultRecord],
    pairing: Pairing,
    a_first: bool,
) -> Vec<Unpaired> {
    let keys: std::collections::BTreeSet<String> =
        b.iter().map(|r| pairing.key(r, !a_first)).collect();
    a.iter()
        .filter(|r| !keys.contains(&pairing.key(r, a_first)))
        .map(|r| Unpaired {
            subsystem: r.subsystem,
            workload: r.workload,
            metric: r.metric,
            label: pairing.label(r, a_first),
        })
        .collect()
}

/// Why `a` and `b`, paired by their key, cannot be compared: another unit or another value of
/// one of their conditions ([`conditions`]).
fn incomparable(a: &ResultRecord, b: &ResultRecord) -> Option<String> {
    if a.unit != b.unit {
        return Some(format!("unit {} against {}", a.unit, b.unit));
    }
    let (pa, pb) = (conditions(&a.params), conditions(&b.params));
    let null = serde_json::Value::Null;
    let keys = pa.keys().chain(pb.keys().filter(|k| !pa.contains_key(*k)));
    let differ: Vec<String> = keys
        .filter_map(|k| {
            let (va, vb) = (pa.get(k).unwrap_or(&null), pb.get(k).unwrap_or(&null));
            (va != vb).then(|| format!("{k} {} against {}", shown_value(k, va), shown_value(k, vb)))
        })
        .collect();
    (!differ.is_empty()).then(|| differ.join(", "))
}

/// Holm–Bonferroni adjusted p-values, in the order given: the i-th smallest of m is multiplied
/// by m − i + 1 (i from 1), made non-decreasing in that order, and capped at 1.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut adjusted = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// Welch's spread of the difference of `a`'s and `b`'s means; None with fewer than two finite
/// samples a side.
fn repetitions_spread(a: &[f64], b: &[f64]) -> Option<Spread> {
    let (_, se2, df) = welch::difference(a, b)?;
    Some(Spread {
        se2,
        df,
        source: Source::WithinRun,
    })
}

/// The common points of `a` and `b` (matched by [`point_key`]), in `a`'s order.
pub fn compare(a: &[ResultRecord], b: &[ResultRecord], c: Criteria) -> Vec<Change> {
    compare_paired(a, b, c, Pairing::Identity)
}

/// The common points of `a` and `b`, matched by `pairing`, in `a`'s order.
pub fn compare_paired(
    a: &[ResultRecord],
    b: &[ResultRecord],
    c: Criteria,
    pairing: Pairing,
) -> Vec<Change> {
    compare_noisy(a, b, c, pairing, None)
}

/// [`compare_paired`], each point of the same machine that `noise` has tested with the larger
/// of its run-to-run noise and its repetitions' spread.
pub fn compare_noisy(
    a: &[ResultRecord],
    b: &[ResultRecord],
    c: Criteria,
    pairing: Pairing,
    noise: Option<RunToRun>,
) -> Vec<Change> {
    let by_key: BTreeMap<String, &ResultRecord> =
        b.iter().map(|r| (pairing.key(r, false), r)).collect();
    // The machine's noise is of this machine's runs alone.
    let noise = noise.filter(|_| c.same_machine);
    // Under a gate, each pair's noise (for what the gate catches, below).
    let mut knowns: Vec<Option<&PointNoise>> = Vec::new();
    // Each pair's change and the spread of its difference (for the detectable change below).
    let (mut changes, spreads): (Vec<Change>, Vec<Option<Spread>>) = a
        .iter()
        .filter_map(|ra| {
            let key = pairing.key(ra, true);
            let rb = by_key.get(&key)?;
            let (ma, mb) = (ra.summary.mean, rb.summary.mean);
            let change = if ma != 0.0 { mb / ma - 1.0 } else { f64::NAN };
            let not_comparable = incomparable(ra, rb);
            let known = noise.and_then(|n| n.points.get(&key));
            let spread = match known {
                _ if not_comparable.is_some() => None,
                Some(n) => Some(n.spread(&ra.samples, &rb.samples, ma)),
                None => repetitions_spread(&ra.samples, &rb.samples),
            };
            let p = spread.map(|s| welch::p_of(mb - ma, s.se2, s.df));
            let ratio_interval = match &not_comparable {
                Some(_) => None,
                None => welch::ratio_interval(&ra.samples, &rb.samples, CONFIDENCE)
                    .map(|(lo, hi)| [lo, hi]),
            };
            knowns.push(known.filter(|_| noise.is_some_and(|n| n.gate)));
            let threshold = match (noise, known) {
                (Some(n), Some(k)) if n.gate => c.threshold.max(k.largest_change),
                _ => c.threshold,
            };
            let change = Change {
                subsystem: ra.subsystem,
                workload: ra.workload,
                metric: ra.metric,
                unit: ra.unit,
                point: key
                    .split_once(' ')
                    .map(|(_, p)| p.to_string())
                    .unwrap_or_default(),
                key: key.clone(),
                label: pairing.label(ra, true),
                mean_a: ma,
                mean_b: mb,
                n_a: ra.samples.len(),
                n_b: rb.samples.len(),
                change,
                ratio_interval,
                p,
                p_adjusted: None,
                significant: false,
                slower: false,
                faster: false,
                regression: false,
                improvement: false,
                not_comparable,
                spread: spread.map(|s| s.source),
                threshold,
                uncalibrated: noise.is_some_and(|n| n.gate) && known.is_none(),
                catches: None,
                detectable_change: None,
                inconclusive: false,
                reference: None,
            };
            Some((change, spread))
        })
        .unzip();
    let tested: Vec<usize> = (0..changes.len())
        .filter(|&i| changes[i].p.is_some())
        .collect();
    let p: Vec<f64> = tested.iter().filter_map(|&i| changes[i].p).collect();
    // The strictest level Holm applies is alpha ÷ m: a point's repetitions detect a change for
    // sure only if they do at that level.
    let level = c.alpha / tested.len().max(1) as f64;
    for (&i, adjusted) in tested.iter().zip(holm(&p)) {
        let ch = &mut changes[i];
        let mean_a = ch.mean_a;
        ch.detectable_change = spreads[i]
            .map(|s| welch::detectable_of(s.se2, s.df, level, POWER))
            .map(|d| {
                if d == 0.0 {
                    0.0
                } else if mean_a != 0.0 {
                    d / mean_a.abs()
                } else {
                    f64::INFINITY
                }
            });
        ch.catches = knowns[i].map(|k| k.detectable(level, POWER).max(ch.threshold));
        ch.p_adjusted = Some(adjusted);
        ch.significant = adjusted < c.alpha;
        let worse = if ch.metric.lower_is_better() {
            ch.change > 0.0
        } else {
            ch.change < 0.0
        };
        let beyond = ch.change.abs() > ch.threshold;
        ch.slower = ch.significant && beyond && worse;
        ch.faster = ch.significant && beyond && !worse;
        ch.regression = ch.slower && c.same_machine && !ch.uncalibrated;
        ch.improvement = ch.faster && c.same_machine && !ch.uncalibrated;
        ch.inconclusive = !ch.significant
            && ch
                .detectable_change
                .is_none_or(|d| d > ch.threshold.max(1e-9));
    }
    add_references(&mut changes, a, &by_key, c, pairing);
    changes
}

/// Each change's reference change, the p-values corrected over the references tested.
fn add_references(
    changes: &mut [Change],
    a: &[ResultRecord],
    b: &BTreeMap<String, &ResultRecord>,
    c: Criteria,
    pairing: Pairing,
) {
    let by_a: BTreeMap<String, &ResultRecord> =
        a.iter().map(|r| (pairing.key(r, true), r)).collect();
    let mut tested = Vec::new();
    for (i, ch) in changes.iter_mut().enumerate() {
        let pair = by_a.get(&ch.key).zip(b.get(&ch.key));
        if let Some((r, p)) = pair.and_then(|(ra, rb)| reference_change(ra, rb)) {
            ch.reference = Some(r);
            if let Some(p) = p {
                tested.push((i, p));
            }
        }
    }
    let p: Vec<f64> = tested.iter().map(|(_, p)| *p).collect();
    for ((i, _), adjusted) in tested.iter().zip(holm(&p)) {
        if let Some(r) = changes[*i].reference.as_mut() {
            r.p_adjusted = Some(adjusted);
            r.significant = adjusted < c.alpha && r.change.abs() > c.threshold;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(metric: &str, samples: Vec<f64>) -> ResultRecord {
        let metric: Metric = metric.parse().unwrap();
        let params = crate::results::params::Params::with_defaults(
            crate::results::Workload::Net(crate::workload::net::NetWorkload::Throughput),
            serde_json::json!({}),
        )
        .unwrap();
        ResultRecord::new(
            crate::results::Workload::Net(crate::workload::net::NetWorkload::Throughput),
            params,
            metric,
            Unit::MbitPerSec,
            samples,
            Err("none".into()),
        )
    }

    const C: Criteria = Criteria {
        alpha: 0.05,
        threshold: 0.03,
        same_machine: true,
    };

    /// A disk point with `threads` and a sync mode, its samples in MB/s.
    fn disk(threads: usize, sync: &str, samples: Vec<f64>) -> ResultRecord {
        let params = crate::results::params::Params::with_defaults(
            crate::results::Workload::Disk(crate::workload::disk::DiskWorkload::Rr),
            serde_json::json!({"threads": threads, "iodepth": 1, "block_size_bytes": 4096,
                "engine": "psync", "io_mode": "direct", "sync": sync, "pattern": "random"}),
        )
        .unwrap();
        ResultRecord::new(
            crate::results::Workload::Disk(crate::workload::disk::DiskWorkload::Rr),
            params,
            Metric::Throughput,
            Unit::BytesPerSec,
            samples,
            Err("none".into()),
        )
    }

    #[test]
    fn holm_multiplies_the_smallest_by_the_count_and_keeps_the_order() {
        let adj = holm(&[0.01, 0.04, 0.03, 0.5]);
        // Sorted: 0.01×4 = 0.04, 0.03×3 = 0.09, 0.04×2 = 0.08 → 0.09 (monotone), 0.5×1.
        let want = [0.04, 0.09, 0.09, 0.5];
        for (a, w) in adj.iter().zip(want) {
            assert!((a - w).abs() < 1e-12, "{adj:?}");
        }
        assert_eq!(holm(&[0.9, 0.8]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }

    /// Forty points, each with its own noise: a copy 1 % worse is no regression, 20 % worse
    /// is forty; a point whose p alone would pass at 0.05 no longer does among forty.
    #[test]
    fn many_points_are_corrected_for_their_number() {
        let noisy = |i: usize, scale: f64| {
            let base = 100.0 + i as f64;
            // About 2 % spread, different on every point.
            let s: Vec<f64> = (0..5)
                .map(|k| scale * base * (1.0 + 0.02 * (((i * 7 + k * 3) % 5) as f64 - 2.0) / 2.0))
                .collect();
            disk(i + 1, "none", s)
        };
        let a: Vec<_> = (0..40).map(|i| noisy(i, 1.0)).collect();
        let worse1: Vec<_> = (0..40).map(|i| noisy(i, 0.99)).collect();
        let worse20: Vec<_> = (0..40).map(|i| noisy(i, 0.80)).collect();
        let ch = compare(&a, &worse1, C);
        assert_eq!(ch.len(), 40);
        assert!(
            ch.iter().all(|c| !c.regression),
            "1 % worse is not a regression"
        );
        let ch = compare(&a, &worse20, C);
        assert_eq!(ch.iter().filter(|c| c.regression).count(), 40);
        // A lone borderline point: p < 0.05 unadjusted, not after forty tests.
        let p = ch[0].p.unwrap();
        assert!(ch[0].p_adjusted.unwrap() >= p);
        let borderline = (0..40)
            .map(|i| if i == 0 { 0.01 } else { 0.9 })
            .collect::<Vec<_>>();
        assert!(holm(&borderline)[0] > 0.05);
        // The label is for a person.
        assert_eq!(
            ch[1].label,
            "RR · 2 threads · 4 KiB blocks · QD 1 · psync · direct · random"
        );
    }

    #[test]
    fn points_under_other_conditions_are_paired_but_not_compared() {
        let a = [disk(1, "none", vec![100.0, 101.0, 99.0])];
        let b = [disk(1, "fsync-each", vec![10.0, 10.1, 9.9])];
        let ch = compare(&a, &b, C);
        assert_eq!(ch.len(), 1);
        let why = ch[0].not_comparable.as_deref().unwrap();
        assert_eq!(why, "sync none against fsync-each");
        assert!(ch[0].p.is_none() && !ch[0].regression && !ch[0].significant);
        let mut other_unit = disk(1, "none", vec![100.0, 101.0]);
        other_unit.unit = Unit::BitsPerSec;
        let ch = compare(&[disk(1, "none", vec![1.0, 2.0])], &[other_unit], C);
        assert_eq!(
            ch[0].not_comparable.as_deref(),
            Some("unit B/s against bit/s")
        );
    }

    #[test]
    fn a_20_percent_drop_is_a_significant_regression() {
        let a = [rec("throughput", vec![100.0, 101.0, 99.0, 100.5, 99.5])];
        let b = [rec("throughput", vec![80.0, 81.0, 79.0, 80.5, 79.5])];
        let ch = compare(&a, &b, C);
        assert_eq!(ch.len(), 1);
        assert!((ch[0].change + 0.2).abs() < 1e-9);
        assert!(ch[0].significant && ch[0].regression && !ch[0].improvement);
        // The same drop in latency is an improvement.
        let a = [rec("latency", vec![100.0, 101.0, 99.0])];
        let b = [rec("latency", vec![80.0, 81.0, 79.0])];
        let ch = compare(&a, &b, C);
        assert!(ch[0].improvement && !ch[0].regression);
    }

    /// Across machines a point of all A's CPUs meets one of all B's, one thread meets one
    /// thread, and a count that is neither on both is unpaired; on one machine the counts pair
    /// as they are.
    #[test]
    fn across_machines_all_threads_meet_all_threads() {
        let s = || vec![100.0, 101.0, 99.0];
        let a = [
            disk(1, "none", s()),
            disk(2, "none", s()),
            disk(4, "none", s()),
        ];
        let b = [
            disk(1, "none", s()),
            disk(16, "none", s()),
            disk(4, "none", s()),
        ];
        let across = Pairing::Machines { a: 2, b: 16 };
        let other = Criteria {
            same_machine: false,
            ..C
        };
        let ch = compare_paired(&a, &b, other, across);
        let labels: Vec<&str> = ch.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(ch.len(), 3, "{labels:?}");
        assert!(labels[1].ends_with("all threads"), "{labels:?}");
        assert!(labels[2].ends_with("4 threads"), "{labels:?}");
        assert!(only_in_paired(&a, &b, across, true).is_empty());
        // On one machine, 2 and 16 threads are two points.
        assert_eq!(compare(&a, &b, C).len(), 2);
        assert_eq!(only_in(&a, &b).len(), 1);
        // A run of 4 CPUs: its 4 threads are all of them (B's 16), B's 4 threads are not, and
        // neither is A's 2.
        let across = Pairing::Machines { a: 4, b: 16 };
        assert_eq!(compare_paired(&a, &b, other, across).len(), 2);
        assert_eq!(only_in_paired(&a, &b, across, true).len(), 1);
        assert_eq!(only_in_paired(&b, &a, across, false).len(), 1);
    }

    /// Between different machines the same drop is B slower than A, with its ratio's interval
    /// around 0.8, and never a regression.
    #[test]
    fn between_machines_a_drop_is_slower_not_a_regression() {
        let a = [rec("throughput", vec![100.0, 101.0, 99.0, 100.5, 99.5])];
        let b = [rec("throughput", vec![80.0, 81.0, 79.0, 80.5, 79.5])];
        let other = Criteria {
            same_machine: false,
            ..C
        };
        let ch = compare(&a, &b, other);
        assert!(ch[0].slower && !ch[0].faster && !ch[0].regression);
        assert_eq!(ch[0].verdict(), Verdict::Slower);
        let [lo, hi] = ch[0].ratio_interval.unwrap();
        assert!(lo < 0.8 && 0.8 < hi && hi - lo < 0.03, "{lo} {hi}");
        let ch = compare(&b, &a, other);
        assert_eq!(ch[0].verdict(), Verdict::Faster);
        assert!(!ch[0].improvement);
    }

    #[test]
    fn noise_and_small_changes_are_not_regressions() {
        let a = [rec("throughput", vec![100.0, 110.0, 90.0])];
        let b = [rec("throughput", vec![95.0, 108.0, 88.0])];
        let ch = compare(&a, &b, C);
        assert!(!ch[0].significant && !ch[0].regression);
        // Significant but within the threshold.
        let a = [rec("throughput", vec![100.0, 100.1, 99.9])];
        let b = [rec("throughput", vec![98.0, 98.1, 97.9])];
        let ch = compare(&a, &b, C);
        assert!(ch[0].significant && !ch[0].regression);
        // One repetition: no test, never a regression.
        let ch = compare(
            &[rec("throughput", vec![100.0])],
            &[rec("throughput", vec![50.0])],
            C,
        );
        assert!(ch[0].p.is_none() && !ch[0].regression);
    }

    /// Two repetitions of a noisy point cannot tell a 3 % change from noise: "inconclusive",
    /// with the smallest change they could detect, never "no significant change". The same
    /// point with many steady repetitions is decided.
    #[test]
    fn too_few_repetitions_are_inconclusive() {
        let ch = compare(
            &[rec("throughput", vec![100.0, 106.0])],
            &[rec("throughput", vec![99.0, 104.0])],
            C,
        );
        assert!(ch[0].inconclusive && !ch[0].regression && !ch[0].significant);
        let d = ch[0].detectable_change.unwrap();
        assert!(d > 0.15, "two noisy samples detect only large changes: {d}");
        match ch[0].verdict() {
            Verdict::Inconclusive(x) => assert_eq!(x, d),
            v => panic!("{v:?}"),
        }
        assert!(ch[0].verdict().to_string().starts_with("inconclusive"));
        let steady: Vec<f64> = (0..10).map(|i| 100.0 + 0.1 * (i % 3) as f64).collect();
        let ch = compare(
            &[rec("throughput", steady.clone())],
            &[rec("throughput", steady)],
            C,
        );
        assert!(!ch[0].inconclusive, "{:?}", ch[0].detectable_change);
        assert_eq!(ch[0].verdict(), Verdict::NoChange);
        assert!(ch[0].detectable_change.unwrap() < 0.01);
    }

    #[test]
    fn points_of_one_run_only_are_listed() {
        let a = [
            rec("throughput", vec![1.0, 2.0]),
            rec("loss", vec![0.0, 0.1]),
        ];
        let b = [rec("throughput", vec![1.0, 2.0])];
        let only = only_in(&a, &b);
        assert_eq!(only.len(), 1);
        assert_eq!(
            (only[0].metric.name(), only[0].workload.name()),
            ("loss", "THROUGHPUT")
        );
        assert!(only_in(&b, &a).is_empty());
    }

    /// A point's reference figures are compared as the points are: a tool that fell in B by
    /// 20 % over three runs each is a significant change; another tool in B, or a single run,
    /// is shown but not tested.
    #[test]
    fn reference_figures_are_compared_with_their_spread() {
        let with_ref = |samples: Vec<f64>, tool: &str, runs: Vec<f64>| {
            let mut r = rec("throughput", samples);
            r.reference = Some(crate::results::Reference::measured(
                tool,
                "3.12",
                runs,
                |_| None,
                (Vec::new(), String::new()),
            ));
            r
        };
        let a = [with_ref(
            vec![100.0, 101.0, 99.0],
            "iperf3",
            vec![90.0, 91.0, 89.0],
        )];
        let b = [with_ref(
            vec![100.0, 99.5, 100.5],
            "iperf3",
            vec![72.0, 73.0, 71.0],
        )];
        let ch = &compare(&a, &b, C)[0];
        let r = ch.reference.as_ref().unwrap();
        assert_eq!(r.tool, "iperf3");
        assert!((r.change + 0.2).abs() < 1e-9, "{r:?}");
        assert!(r.significant && r.p_adjusted.unwrap() < 0.05, "{r:?}");
        assert_eq!(r.cell(), "-20.0*");
        // peakbench's own figure did not move: no regression of its own.
        assert!(!ch.regression);
        let b = [with_ref(vec![100.0, 99.5, 100.5], "iperf3", vec![72.0])];
        let r = compare(&a, &b, C)[0].reference.clone().unwrap();
        assert_eq!((r.p_adjusted, r.significant), (None, false));
        assert!(r.cell().ends_with(" ?"), "{}", r.cell());
        let b = [with_ref(
            vec![100.0, 99.5, 100.5],
            "sockperf",
            vec![72.0, 73.0],
        )];
        assert!(compare(&a, &b, C)[0].reference.is_none());
        let b = [rec("throughput", vec![100.0, 99.5, 100.5])];
        assert!(compare(&a, &b, C)[0].reference.is_none());
    }

    #[test]
    fn only_common_points_are_compared() {
        let a = [
            rec("throughput", vec![1.0, 2.0]),
            rec("loss", vec![0.0, 0.1]),
        ];
        let b = [rec("throughput", vec![1.0, 2.0])];
        assert_eq!(compare(&a, &b, C).len(), 1);
        assert_eq!(compare(&b, &a, C).len(), 1);
    }
}
