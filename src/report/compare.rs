//! The comparison report (`peakbench report A B [C…]`): runs side by side — the same machine
//! before and after, or several machines — with each common point's figure in every run, its
//! ratio to the baseline (the first run) and whether the difference is significant (Welch's
//! test on the repetitions, Holm–Bonferroni over the points of each pair, as `compare`), and
//! the line charts with every run's series.

use super::charts;
use super::plot::{Chart, Plot};
use crate::history::compare::{
    Alignment, Change, Criteria, Pairing, Unpaired, Verdict, compare_paired, only_in_paired,
};
use crate::history::machine::Machines;
use crate::results::{Metric, Report, Subsystem, Unit};
use crate::units::{Display, format_sig};
use std::collections::BTreeMap;

/// A run of the comparison.
pub struct RunInfo {
    /// A, B, C…
    pub letter: String,
    /// How the user named it (an id, latest, a file).
    pub name: String,
    pub started_at: String,
    pub host: String,
    pub machine: String,
}

/// One point of the baseline found in another run at least.
pub struct Row {
    pub subsystem: Subsystem,
    /// The point in words ("DP · 2 threads · avx512").
    pub label: String,
    pub metric: Metric,
    /// The unit the figures are shown in.
    pub unit: Unit,
    /// Each run's mean, in `unit` (None where the run lacks the point).
    pub values: Vec<Option<f64>>,
    /// Each run's figure as a fraction of its peak (None where it lacks the point or the
    /// peak is unknown).
    pub efficiencies: Vec<Option<f64>>,
    /// The baseline point's threads.
    pub threads: usize,
    /// Each run's point's threads (None where the run lacks the point): all of a machine's
    /// pair with all of another's.
    pub run_threads: Vec<Option<usize>>,
    /// Each later run against the baseline (index 0 is the baseline's own, None).
    pub changes: Vec<Option<Change>>,
}

impl Row {
    /// The verdict of run `k` (≥ 1) against the baseline, in words.
    pub fn verdict(&self, k: usize) -> String {
        match self
            .changes
            .get(k)
            .and_then(Option::as_ref)
            .map(Change::verdict)
        {
            None => "—".into(),
            Some(Verdict::Regression) => "worse".into(),
            Some(Verdict::Improvement) => "better".into(),
            Some(Verdict::WithinThreshold) => "within threshold".into(),
            Some(v) => v.to_string(),
        }
    }

    /// Run `k`'s mean ÷ the baseline's.
    pub fn ratio(&self, k: usize) -> Option<f64> {
        let c = self.changes.get(k)?.as_ref()?;
        (c.change.is_finite()).then_some(1.0 + c.change)
    }
}

pub struct Comparison {
    pub runs: Vec<RunInfo>,
    pub rows: Vec<Row>,
    pub charts: Vec<Chart>,
    pub criteria: Criteria,
    /// The runs' machines, property by property: a later run whose hardware differs from the
    /// baseline's is faster or slower than it, never worse in the sense of a regression.
    pub machines: Machines,
    /// Points that only one side of a pair of runs has: (the run that has them, the run that
    /// lacks them, the points), for the baseline against each later run and back.
    pub unpaired: Vec<(String, String, Vec<Unpaired>)>,
}

impl Comparison {
    /// `runs` compared with the first; `names` as the user gave them.
    pub fn of(runs: &[Report], names: &[String], criteria: Criteria, display: &Display) -> Self {
        // One unit for each subsystem's times across the runs, so that their rows and chart
        // lines compare.
        let display = &display.fitted(
            runs.iter()
                .flat_map(|r| r.results.iter().map(|x| x.figure())),
        );
        let letters = |k: usize| ((b'A' + (k % 26) as u8) as char).to_string();
        let infos: Vec<RunInfo> = runs
            .iter()
            .zip(names)
            .enumerate()
            .map(|(k, (r, name))| RunInfo {
                letter: letters(k),
                name: name.clone(),
                started_at: crate::text::printable(&r.started_at),
                host: super::model::host_name(&r.system),
                machine: super::model::machine_line(&r.system),
            })
            .collect();
        let base = &runs[0];
        let refs: Vec<&Report> = runs.iter().collect();
        let aligned = Alignment::of(&refs);
        let pairings = &aligned.pairings;
        // A point in the words of a pairing across machines where any run is another machine:
        // its threads as "all threads" where they are all of each machine's.
        let labelling = pairings
            .iter()
            .map(|&(p, _)| p)
            .find(|p| matches!(p, Pairing::Machines { .. }))
            .unwrap_or(Pairing::Identity);
        // Each later run's changes against the baseline, by the baseline point's key.
        let changes: Vec<BTreeMap<String, Change>> = runs[1..]
            .iter()
            .zip(&pairings[1..])
            .map(|(r, &(pairing, same_machine))| {
                let criteria = Criteria {
                    same_machine,
                    ..criteria
                };
                compare_paired(&base.results, &r.results, criteria, pairing)
                    .into_iter()
                    .map(|c| (c.key.clone(), c))
                    .collect()
            })
            .collect();
        let rows = aligned
            .points
            .iter()
            .filter_map(|a| {
                let rec = a.base;
                if !changes
                    .iter()
                    .zip(&a.keys[1..])
                    .any(|(m, k)| m.contains_key(k))
                {
                    return None;
                }
                let conv = display.conversion(rec.subsystem, rec.unit);
                let shown = |v: f64| conv.map_or(v, |c| c.apply(v));
                Some(Row {
                    subsystem: rec.subsystem,
                    label: labelling.label(rec, true),
                    metric: rec.metric,
                    unit: conv.map_or(rec.unit, |c| c.unit),
                    values: a
                        .points
                        .iter()
                        .map(|p| p.map(|r| shown(r.summary.mean)))
                        .collect(),
                    efficiencies: a
                        .points
                        .iter()
                        .map(|p| p.and_then(|r| r.efficiency))
                        .collect(),
                    threads: rec.params.threads(),
                    run_threads: a
                        .points
                        .iter()
                        .map(|p| p.map(|r| r.params.threads()))
                        .collect(),
                    changes: std::iter::once(None)
                        .chain(
                            changes
                                .iter()
                                .zip(&a.keys[1..])
                                .map(|(m, k)| m.get(k).cloned()),
                        )
                        .collect(),
                })
            })
            .collect();
        let mut unpaired = Vec::new();
        for ((r, info), &(pairing, _)) in runs[1..].iter().zip(&infos[1..]).zip(&pairings[1..]) {
            for (has, lacks, (x, y), first) in [
                (&infos[0], info, (&base.results, &r.results), true),
                (info, &infos[0], (&r.results, &base.results), false),
            ] {
                let only = only_in_paired(x, y, pairing, first);
                if !only.is_empty() {
                    unpaired.push((has.letter.clone(), lacks.letter.clone(), only));
                }
            }
        }
        Comparison {
            unpaired,
            machines: Machines::of(&runs.iter().collect::<Vec<_>>()),
            charts: merged_charts(runs, &infos, display),
            runs: infos,
            rows,
            criteria,
        }
    }

    /// How many points of the later runs are worse than the baseline's beyond the threshold,
    /// in words: "worse" for runs of the baseline's hardware (regressions), "slower than A's"
    /// for other machines' (never a regression).
    pub fn worse_line(&self) -> String {
        let changes = || self.rows.iter().flat_map(|r| r.changes.iter().flatten());
        let regressions = changes().filter(|c| c.regression).count();
        let slower = changes().filter(|c| c.slower && !c.regression).count();
        match (regressions, slower) {
            (r, 0) => format!("{r} point(s) worse beyond the threshold."),
            (0, s) => {
                format!("{s} point(s) of another machine slower than A's beyond the threshold.")
            }
            (r, s) => format!(
                "{r} point(s) worse beyond the threshold; {s} of another machine slower than A's."
            ),
        }
    }

    /// The properties in which the runs' machines differ, as a table's header (the runs'
    /// letters) and rows (the property, then its value in each run); None where none differs.
    pub fn machine_table(&self) -> Option<(Vec<String>, Vec<Vec<String>>)> {
        let rows: Vec<Vec<String>> = self
            .machines
            .differences()
            .map(|p| {
                let mut row = vec![p.name.to_string()];
                // Made printable where they were read (`history::machine`).
                row.extend(p.values.iter().cloned());
                row
            })
            .collect();
        if rows.is_empty() {
            return None;
        }
        let mut header = vec!["Differs".to_string()];
        header.extend(self.runs.iter().map(|r| r.letter.clone()));
        Some((header, rows))
    }

    /// The later runs (their indexes) that share a reference tool's figure with the baseline
    /// for some point.
    fn with_references(&self) -> Vec<usize> {
        (1..self.runs.len())
            .filter(|&k| {
                self.rows.iter().any(|r| {
                    r.changes
                        .get(k)
                        .and_then(Option::as_ref)
                        .is_some_and(|c| c.reference.is_some())
                })
            })
            .collect()
    }

    /// The header of the table: point, metric, unit, each run's figure, then per later run
    /// its ratio and verdict, then per later run with references the tool's change.
    pub fn headers(&self) -> Vec<String> {
        let mut h = vec!["Point".to_string(), "Metric".into(), "Unit".into()];
        h.extend(self.runs.iter().map(|r| r.letter.clone()));
        for r in &self.runs[1..] {
            h.push(format!("{} / A", r.letter));
            h.push(format!("{} vs A", r.letter));
        }
        for k in self.with_references() {
            h.push(format!("Ref {} vs A %", self.runs[k].letter));
        }
        h
    }

    /// The table's rows as text.
    pub fn cells(&self) -> Vec<Vec<String>> {
        self.rows
            .iter()
            .map(|row| {
                let mut cells = vec![
                    format!("{} {}", row.subsystem.title(), row.label),
                    row.metric.to_string(),
                    row.unit.to_string(),
                ];
                cells.extend(
                    row.values
                        .iter()
                        .map(|v| v.map_or_else(|| "—".into(), format_sig)),
                );
                for k in 1..self.runs.len() {
                    cells.push(
                        row.ratio(k)
                            .map_or_else(|| "—".into(), |r| format!("{r:.3}")),
                    );
                    cells.push(row.verdict(k));
                }
                for k in self.with_references() {
                    cells.push(
                        row.changes[k]
                            .as_ref()
                            .and_then(|c| c.reference.as_ref())
                            .map_or_else(|| "—".into(), |r| r.cell()),
                    );
                }
                cells
            })
            .collect()
    }

    /// The points only one run of a pair has, as a heading ("In A, not in B (3 points)") and
    /// each point in words.
    pub fn unpaired_lists(&self) -> Vec<(String, Vec<String>)> {
        self.unpaired
            .iter()
            .map(|(has, lacks, points)| {
                (
                    format!(
                        "In {has}, not in {lacks} ({} points, not compared)",
                        points.len()
                    ),
                    points
                        .iter()
                        .map(|p| format!("{} {} ({})", p.subsystem.title(), p.label, p.metric))
                        .collect(),
                )
            })
            .collect()
    }

    /// How to read the verdicts.
    pub fn method(&self) -> String {
        let references = if self.with_references().is_empty() {
            ""
        } else {
            " Ref X vs A %: the reference tool's change, tested the same way on the tool's runs \
             (* significant beyond the threshold; ? fewer than 2 runs a side); a change the \
             tool shows too is the machine's."
        };
        format!(
            "Each later run against A: Welch's t-test on each point's repetitions, its p-value \
             corrected for the number of points by Holm–Bonferroni; significant below {}; \
             better or worse only beyond {} %: a regression or an improvement where the run's \
             hardware is A's, faster or slower where it differs.{references}",
            self.criteria.alpha,
            self.criteria.threshold * 100.0
        )
    }

    /// The comparison as CSV: one row per common point, each run's mean, each later run's
    /// ratio, corrected p-value and verdict.
    pub fn csv(&self) -> Vec<u8> {
        let esc = |t: &str| {
            let t = crate::text::printable(t);
            if t.contains([',', '"', '\n']) {
                format!("\"{}\"", t.replace('"', "\"\""))
            } else {
                t
            }
        };
        let mut head = vec!["subsystem", "point", "metric", "unit"]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>();
        head.extend(self.runs.iter().map(|r| format!("mean_{}", r.letter)));
        for r in &self.runs[1..] {
            let l = &r.letter;
            head.extend([
                format!("ratio_{l}"),
                format!("p_adjusted_{l}"),
                format!("verdict_{l}"),
            ]);
        }
        let references = self.with_references();
        for &k in &references {
            let l = &self.runs[k].letter;
            head.extend([format!("ref_change_{l}"), format!("ref_p_adjusted_{l}")]);
        }
        let mut out = head.join(",");
        out.push('\n');
        let num = |v: Option<f64>| {
            v.filter(|v| v.is_finite())
                .map_or_else(String::new, |v| v.to_string())
        };
        for row in &self.rows {
            let mut cells = vec![
                esc(row.subsystem.name()),
                esc(&row.label),
                esc(row.metric.name()),
                esc(row.unit.name()),
            ];
            cells.extend(row.values.iter().map(|v| num(*v)));
            for k in 1..self.runs.len() {
                let p = row.changes[k].as_ref().and_then(|c| c.p_adjusted);
                cells.extend([num(row.ratio(k)), num(p), esc(&row.verdict(k))]);
            }
            for &k in &references {
                let r = row.changes[k].as_ref().and_then(|c| c.reference.as_ref());
                cells.extend([num(r.map(|r| r.change)), num(r.and_then(|r| r.p_adjusted))]);
            }
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out.into_bytes()
    }

    /// The comparison as Markdown: the runs, the method and the table.
    pub fn markdown(&self) -> Vec<u8> {
        let cell = |t: &str| crate::text::printable(t).replace('|', "\\|");
        let mut out = String::from(
            "# peakbench comparison\n\n| Run | Started | Host | Machine |\n|---|---|---|---|\n",
        );
        for r in &self.runs {
            out.push_str(&format!(
                "| {} ({}) | {} | {} | {} |\n",
                r.letter,
                cell(&r.name),
                cell(&r.started_at),
                cell(&r.host),
                cell(&r.machine)
            ));
        }
        if let Some((header, rows)) = self.machine_table() {
            out.push_str(&format!(
                "\n| {} |\n|{}\n",
                header.join(" | "),
                "---|".repeat(header.len())
            ));
            for row in rows {
                let row: Vec<String> = row.iter().map(|c| cell(c)).collect();
                out.push_str(&format!("| {} |\n", row.join(" | ")));
            }
        }
        out.push_str(&format!("\n{}\n\n", self.method()));
        let head = self.headers();
        out.push_str(&format!("| {} |\n", head.join(" | ")));
        out.push_str(&format!("|{}\n", "---|".repeat(head.len())));
        for row in self.cells() {
            let row: Vec<String> = row.iter().map(|c| cell(c)).collect();
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
        for (heading, points) in self.unpaired_lists() {
            out.push_str(&format!("\n{heading}:\n\n"));
            for p in points {
                out.push_str(&format!("- {}\n", cell(&p)));
            }
        }
        out.into_bytes()
    }
}

/// The baseline's line charts with every run's series of the same chart beside its own, each
/// named after its run; titles name the runs.
fn merged_charts(runs: &[Report], infos: &[RunInfo], display: &Display) -> Vec<Chart> {
    let per_run: Vec<Vec<Chart>> = runs
        .iter()
        .map(|r| charts::for_report(&r.displayed(display)))
        .collect();
    let letters: Vec<&str> = infos.iter().map(|i| i.letter.as_str()).collect();
    let tag = format!(" — {}", letters.join(" vs "));
    per_run[0]
        .iter()
        .filter(|c| matches!(c.plot, Plot::Lines { .. }))
        .map(|base| {
            let mut chart = base.clone();
            if let Some(cut) = chart.title.rfind(" — ") {
                chart.title.truncate(cut);
            }
            chart.title.push_str(&tag);
            if let Plot::Lines { series, .. } = &mut chart.plot {
                let mut all = Vec::new();
                for (k, charts) in per_run.iter().enumerate() {
                    let Some(Plot::Lines { series: theirs, .. }) =
                        charts.iter().find(|c| c.slug == base.slug).map(|c| &c.plot)
                    else {
                        continue;
                    };
                    for s in theirs {
                        let mut s = s.clone();
                        s.name = format!("{}: {}", letters[k], s.name);
                        for d in &mut s.details {
                            d.tip = format!("run {}: {}", letters[k], d.tip);
                        }
                        all.push(s);
                    }
                }
                *series = all;
            }
            chart
        })
        .collect()
}
