//! A machine among others (`peakbench rank RUN DIR`): for each of its figures, where it stands
//! among other runs — the share of them it beats, among all and among those of its
//! microarchitecture — and, among the runs of its own kind of machine (the same hardware, as
//! `compare` decides it), how far each lies from their median: the outliers of a fleet, by the
//! rule `cluster` flags a node with.

use crate::history::compare::{Alignment, Pairing};
use crate::measure::stats::median;
use crate::results::fleet::OutlierRule;
use crate::results::{Metric, Report, Subsystem, Unit};
use crate::text::Align;
use crate::units::{Display, format_sig};

/// A run of the ranking: the one ranked (first) or one of the others.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Entrant {
    /// How the user named it (an id, latest, a file).
    pub name: String,
    pub host: String,
    pub machine: String,
    pub microarchitecture: Option<String>,
    /// Its hardware is the ranked run's (the ranked run's own: true).
    pub same_kind: bool,
}

/// A figure of the ranked run and where it stands. Figures in base units.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Standing {
    pub subsystem: Subsystem,
    /// The point as it pairs across machines ("DP · all threads").
    pub label: String,
    pub metric: Metric,
    pub unit: Unit,
    /// The ranked run's mean.
    pub value: f64,
    /// Each other run's mean (None where it lacks the point), in the order of `others`.
    pub values: Vec<Option<f64>>,
    /// The other runs that have the point, and their median.
    pub runs: usize,
    pub median: Option<f64>,
    /// The share of those runs the ranked run's figure is better than (higher for a rate,
    /// lower for a latency; a tie counts half): 1 is the best of them all.
    pub better_than: Option<f64>,
    /// The same among the runs of its microarchitecture.
    pub runs_same_microarchitecture: usize,
    pub better_than_same_microarchitecture: Option<f64>,
    /// The runs of its own kind that have the point, the ranked run included, and their
    /// median; the ranked run's deviation from it ((value − median) / median).
    pub kind_runs: usize,
    pub kind_median: Option<f64>,
    pub deviation: Option<f64>,
    /// The runs of its kind that the outlier rule flags (0 the ranked run, k the k-th other).
    pub outliers: Vec<KindOutlier>,
}

/// A run of the ranked run's kind far from the kind's median for one figure.
#[derive(Debug, Clone, serde::Serialize)]
pub struct KindOutlier {
    pub run: usize,
    pub deviation: f64,
    /// The deviation is in the bad direction (a lower rate, a higher latency).
    pub worse: bool,
}

/// The ranking of `runs[0]` among the others.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Ranking {
    pub run: Entrant,
    pub others: Vec<Entrant>,
    pub outlier_rule: OutlierRule,
    pub rows: Vec<Standing>,
}

impl Ranking {
    /// `runs[0]` ranked among `runs[1..]`, `names` as the user gave them.
    pub fn of(runs: &[&Report], names: &[String], rule: OutlierRule) -> Ranking {
        let aligned = Alignment::of(runs);
        let entrants: Vec<Entrant> = runs
            .iter()
            .zip(names)
            .zip(&aligned.pairings)
            .map(|((r, name), (_, same))| Entrant {
                name: name.clone(),
                host: super::model::host_name(&r.system),
                machine: super::model::machine_line(&r.system),
                microarchitecture: r
                    .system
                    .cpu
                    .microarchitecture
                    .value
                    .as_deref()
                    .map(crate::text::printable),
                same_kind: *same,
            })
            .collect();
        let Some((run, others)) = entrants.split_first() else {
            return Ranking {
                run: Entrant {
                    name: String::new(),
                    host: String::new(),
                    machine: String::new(),
                    microarchitecture: None,
                    same_kind: true,
                },
                others: Vec::new(),
                outlier_rule: rule,
                rows: Vec::new(),
            };
        };
        // Labelled as a pairing across machines labels them: threads in words.
        let labelling = Pairing::Machines {
            a: runs[0].system.cpu.allowed_count(),
            b: 0,
        };
        let arch = run.microarchitecture.as_deref();
        let rows = aligned
            .points
            .iter()
            .filter(|a| a.points[1..].iter().any(Option::is_some))
            .map(|a| {
                let rec = a.base;
                let value = rec.summary.mean;
                let values: Vec<Option<f64>> = a.points[1..]
                    .iter()
                    .map(|p| p.map(|r| r.summary.mean).filter(|v| v.is_finite()))
                    .collect();
                let lower = rec.metric.lower_is_better();
                let among = |pick: &dyn Fn(&Entrant) -> bool| -> (usize, Option<f64>) {
                    let them: Vec<f64> = values
                        .iter()
                        .zip(others)
                        .filter(|(_, e)| pick(e))
                        .filter_map(|(v, _)| *v)
                        .collect();
                    (them.len(), better_than(value, &them, lower))
                };
                let (runs_all, better) = among(&|_| true);
                let (runs_arch, better_arch) =
                    among(&|e| arch.is_some() && e.microarchitecture.as_deref() == arch);
                // The kind: the ranked run and the others of its hardware that have the point.
                let kind: Vec<(usize, f64)> = std::iter::once((0, value))
                    .chain(
                        values
                            .iter()
                            .zip(others)
                            .enumerate()
                            .filter(|(_, (v, e))| e.same_kind && v.is_some())
                            .filter_map(|(k, (v, _))| v.map(|v| (k + 1, v))),
                    )
                    .collect();
                let kind_values: Vec<f64> = kind.iter().map(|(_, v)| *v).collect();
                let kind_median = finite(median(&mut kind_values.clone()));
                let outliers = rule
                    .judge(&kind_values)
                    .into_iter()
                    .map(|(i, _, _, deviation)| KindOutlier {
                        run: kind[i].0,
                        deviation,
                        worse: (deviation > 0.0) == lower,
                    })
                    .collect();
                let mut present: Vec<f64> = values.iter().flatten().copied().collect();
                Standing {
                    subsystem: rec.subsystem,
                    label: labelling.label(rec, true),
                    metric: rec.metric,
                    unit: rec.unit,
                    value,
                    runs: runs_all,
                    median: finite(median(&mut present)),
                    better_than: better,
                    runs_same_microarchitecture: runs_arch,
                    better_than_same_microarchitecture: better_arch,
                    kind_runs: kind.len(),
                    deviation: kind_median
                        .filter(|m| *m != 0.0 && kind.len() > 1)
                        .map(|m| (value - m) / m),
                    kind_median,
                    outliers,
                    values,
                }
            })
            .collect();
        Ranking {
            run: run.clone(),
            others: others.to_vec(),
            outlier_rule: rule,
            rows,
        }
    }

    /// The runs of the ranked run's kind (0 itself, k the k-th other) the outlier rule flags
    /// for at least one figure: (run, how many figures, the median of their deviations), the
    /// most often flagged first.
    pub fn outlying_runs(&self) -> Vec<(usize, usize, f64)> {
        let mut by_run: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
        for o in self.rows.iter().flat_map(|r| &r.outliers) {
            by_run.entry(o.run).or_default().push(o.deviation);
        }
        let mut out: Vec<(usize, usize, f64)> = by_run
            .into_iter()
            .map(|(run, mut d)| (run, d.len(), median(&mut d)))
            .collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }

    /// The ranking for a person, in at most `width` columns: who is ranked among whom, a table
    /// per subsystem, then the runs of its kind that lie far from the others.
    pub fn text(&self, display: &Display, width: usize) -> String {
        let wrap = |s: &str| format!("{}\n", crate::text::wrap(s, width, "  "));
        let kind = self.others.iter().filter(|o| o.same_kind).count();
        let arch = self.run.microarchitecture.as_ref().map_or(0, |a| {
            self.others
                .iter()
                .filter(|o| o.microarchitecture.as_ref() == Some(a))
                .count()
        });
        let mut out = wrap(&format!(
            "Ranked: {} ({}): {}",
            self.run.name, self.run.host, self.run.machine
        ));
        out.push_str(&wrap(&format!(
            "Among {} other run(s): {kind} of its kind (the same hardware), {arch} of its microarchitecture ({})",
            self.others.len(),
            self.run.microarchitecture.as_deref().unwrap_or("unknown"),
        )));
        out.push_str(&wrap(
            "Better than: the share of the runs with the point whose figure this run beats (higher for a rate, lower for a latency; a tie counts half); Kind: its deviation from the median of its kind's runs, this one included (n), ! where the outlier rule flags it",
        ));
        let header: Vec<String> = [
            "Point",
            "Figure",
            "This run",
            "Median (n)",
            "Better than",
            "Same µarch",
            "Kind",
        ]
        .map(String::from)
        .to_vec();
        let mut align = vec![Align::Left, Align::Left];
        align.resize(header.len(), Align::Right);
        let percent = |f: Option<f64>| f.map_or("—".into(), |f| format!("{:.0} %", 100.0 * f));
        for sub in Subsystem::ALL {
            let table: Vec<Vec<String>> = self
                .rows
                .iter()
                .filter(|r| r.subsystem == sub)
                .map(|r| {
                    let conv = display.conversion(r.subsystem, r.unit);
                    let shown = |v: f64| format_sig(conv.map_or(v, |c| c.apply(v)));
                    let flagged = r.outliers.iter().any(|o| o.run == 0);
                    vec![
                        r.label.clone(),
                        conv.map_or(r.unit, |c| c.unit).to_string(),
                        shown(r.value),
                        r.median
                            .map_or("—".into(), |m| format!("{} ({})", shown(m), r.runs)),
                        percent(r.better_than),
                        if r.runs_same_microarchitecture == 0 {
                            "—".into()
                        } else {
                            format!(
                                "{} of {}",
                                percent(r.better_than_same_microarchitecture),
                                r.runs_same_microarchitecture
                            )
                        },
                        r.deviation.map_or("—".into(), |d| {
                            format!(
                                "{:+.1} %{} ({})",
                                100.0 * d,
                                if flagged { " !" } else { "" },
                                r.kind_runs
                            )
                        }),
                    ]
                })
                .collect();
            if table.is_empty() {
                continue;
            }
            out.push_str(&super::changes::subsystem_table(
                sub,
                &header,
                table,
                &align,
                width,
                &[0],
            ));
        }
        let outlying = self.outlying_runs();
        let most = self.rows.iter().map(|r| r.kind_runs).max().unwrap_or(0);
        if most < self.outlier_rule.min_peers as usize {
            out.push_str(&wrap(&format!(
                "Outliers of its kind: not judged: {most} run(s) of its hardware with a figure, the rule needs {}.",
                self.outlier_rule.min_peers
            )));
        } else if outlying.is_empty() {
            out.push_str(&wrap(&format!(
                "Outliers of its kind: none ({}).",
                self.rule_words()
            )));
        } else {
            out.push_str(&wrap(&format!(
                "Outliers of its kind ({}):",
                self.rule_words()
            )));
            for (run, figures, deviation) in outlying {
                let who = if run == 0 {
                    format!("this run ({})", self.run.name)
                } else {
                    let o = &self.others[run - 1];
                    format!("{} ({})", o.name, o.host)
                };
                out.push_str(&wrap(&format!(
                    "- {who}: {figures} of {} figure(s), their median deviation {:+.1} %",
                    self.rows.len(),
                    100.0 * deviation
                )));
            }
        }
        out
    }

    fn rule_words(&self) -> String {
        let r = self.outlier_rule;
        format!(
            "more than {} scaled MADs and {:.0} % from the median of at least {} runs of the same hardware",
            r.mad_factor,
            100.0 * r.min_deviation,
            r.min_peers
        )
    }
}

/// The share of `others` that `value` beats (a tie counts half); None where there are none.
fn better_than(value: f64, others: &[f64], lower_is_better: bool) -> Option<f64> {
    if others.is_empty() || !value.is_finite() {
        return None;
    }
    let score: f64 = others
        .iter()
        .map(|&o| {
            if o == value {
                0.5
            } else if (value < o) == lower_is_better {
                1.0
            } else {
                0.0
            }
        })
        .sum();
    Some(score / others.len() as f64)
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn better_than_counts_ties_half_and_knows_a_latency() {
        assert_eq!(
            better_than(10.0, &[5.0, 10.0, 20.0, 1.0], false),
            Some(0.625)
        );
        assert_eq!(
            better_than(10.0, &[5.0, 10.0, 20.0, 1.0], true),
            Some(0.375)
        );
        assert_eq!(better_than(10.0, &[], false), None);
        assert_eq!(better_than(f64::NAN, &[1.0], false), None);
    }
}
