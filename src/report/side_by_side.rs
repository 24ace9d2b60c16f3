//! Machines side by side (`peakbench compare A B C …`): one table per subsystem, the machines
//! across and the figures down, each cell a machine's figure and its ratio to the first
//! machine's; normalised per core, per GHz or as a percentage of the point's peak (`--per`), and
//! with a figure per price where the machines' prices are given (`--price`).

use super::compare::Comparison;
use crate::results::{Metric, Report, Subsystem};
use crate::text::Align;
use crate::units::format_sig;

/// What each figure is divided by (`--per`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Per {
    /// A CPU or memory rate per physical core its threads ran on: the point's threads, at
    /// most the machine's cores (its hardware threads where the cores are unknown); a
    /// one-thread figure is its own.
    Core,
    /// A CPU rate per GHz of the machine's measured clock (with one thread for a one-thread
    /// point, with all for the others): operations per cycle.
    Ghz,
    /// Every figure with a known peak as its percentage of that peak (its efficiency).
    Peak,
}

/// One row: a point, and its figure on each machine (normalised), None where a machine lacks
/// it or the normalisation does not apply.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SideRow {
    pub subsystem: Subsystem,
    pub label: String,
    pub metric: Metric,
    /// The unit of `values` ("GOPS per core", "% of peak").
    pub unit: String,
    pub values: Vec<Option<f64>>,
}

/// The side-by-side rows of `cmp` (its runs `runs`, in order), normalised by `per`, then a row
/// per price for each rate where `prices` (one per run, None where not given) has any.
pub fn rows(
    cmp: &Comparison,
    runs: &[Report],
    per: Option<Per>,
    prices: &[Option<f64>],
) -> Vec<SideRow> {
    let mut out = Vec::new();
    for row in &cmp.rows {
        let rate = !row.metric.lower_is_better();
        let (unit, values): (String, Vec<Option<f64>>) = match per {
            None => (row.unit.to_string(), row.values.clone()),
            Some(Per::Peak) => (
                "% of peak".into(),
                row.efficiencies
                    .iter()
                    .map(|e| e.map(|e| e * 100.0))
                    .collect(),
            ),
            Some(Per::Core) if rate && row.subsystem != Subsystem::Disk => (
                format!("{} per core", row.unit),
                row.values
                    .iter()
                    .zip(&row.run_threads)
                    .zip(runs)
                    .map(|((v, t), r)| Some(v.as_ref()? / point_cores(r, (*t)?)?))
                    .collect(),
            ),
            Some(Per::Ghz) if rate && row.subsystem == Subsystem::Cpu => (
                format!("{} per GHz", row.unit),
                row.values
                    .iter()
                    .zip(runs)
                    .map(|(v, r)| Some(v.as_ref()? / clock(r, row.threads)?))
                    .collect(),
            ),
            // Normalisation does not apply: the figure as it is.
            Some(_) => (row.unit.to_string(), row.values.clone()),
        };
        let priced = rate && prices.iter().any(Option::is_some);
        let per_price: Vec<Option<f64>> = values
            .iter()
            .zip(prices)
            .map(|(v, p)| Some(v.as_ref()? / p.as_ref()?))
            .collect();
        out.push(SideRow {
            subsystem: row.subsystem,
            label: row.label.clone(),
            metric: row.metric,
            unit: unit.clone(),
            values,
        });
        if priced {
            out.push(SideRow {
                subsystem: row.subsystem,
                label: format!("{} · per price", row.label),
                metric: row.metric,
                unit: format!("{unit} per price/h"),
                values: per_price,
            });
        }
    }
    out
}

/// The physical cores a point's `threads` ran on: as many as its threads, at most the
/// machine's (its hardware threads where its cores are unknown).
fn point_cores(r: &Report, threads: usize) -> Option<f64> {
    let c = &r.system.cpu;
    let n = (c.cores.get().copied().unwrap_or(c.threads) as usize).min(threads);
    (n > 0).then_some(n as f64)
}

/// The machine's measured clock in GHz: with one thread for a one-thread point, with all for
/// the others (the one-thread clock where that was not measured).
fn clock(r: &Report, threads: usize) -> Option<f64> {
    let c = &r.system.cpu;
    let one = c.measured_clock_ghz.get().copied();
    let ghz = if threads == 1 {
        one
    } else {
        c.all_core_clock_ghz.get().copied().or(one)
    };
    ghz.filter(|g| g.is_finite() && *g > 0.0)
}

/// A cell: the figure, and after the first machine its ratio to the first's ("1204 ×11.4").
fn cell(v: Option<f64>, first: Option<f64>, k: usize) -> String {
    match (v, first) {
        (None, _) => "—".into(),
        (Some(v), Some(f)) if k > 0 && f != 0.0 && v.is_finite() => {
            format!("{} ×{}", format_sig(v), format_sig(v / f))
        }
        (Some(v), _) => format_sig(v),
    }
}

/// The table, one per subsystem under its title, in at most `width` columns: the point, the
/// figure's unit, then each machine's cell (`letters` its header).
pub fn render(rows: &[SideRow], letters: &[String], width: usize) -> String {
    let mut header = vec!["Point".to_string(), "Figure".to_string()];
    header.extend(letters.iter().cloned());
    let mut align = vec![Align::Left, Align::Left];
    align.resize(header.len(), Align::Right);
    let mut out = String::new();
    for sub in Subsystem::ALL {
        let table: Vec<Vec<String>> = rows
            .iter()
            .filter(|r| r.subsystem == sub)
            .map(|r| {
                let mut cells = vec![r.label.clone(), r.unit.clone()];
                cells.extend(
                    r.values
                        .iter()
                        .enumerate()
                        .map(|(k, v)| cell(*v, r.values[0], k)),
                );
                cells
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
    out
}

/// The comparison's figures as bars, one per machine, each figure on a scale of its own (its
/// largest value or peak), the machine's peak marked where it is known: an HTML section for
/// the comparison page, in the runs' chart colours, with a legend naming every run.
pub fn bars_html(cmp: &Comparison) -> String {
    use crate::text::xml_escape as esc;
    let colour = |k: usize| {
        let c = super::plot::PALETTE[k % super::plot::PALETTE.len()];
        format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
    };
    let mut out = String::from(
        "<section id=\"side-by-side\">\n<h2>Machines side by side</h2>\n<p class=\"note\">Each \
         figure as a bar per run, on a scale of its own (its largest value or peak); the dark \
         tick is that machine's peak where it is known; after each value, its ratio to A's and \
         its share of the peak.</p>\n<p class=\"legend\">",
    );
    for (k, r) in cmp.runs.iter().enumerate() {
        out.push_str(&format!(
            "<span class=\"swatch\" style=\"background:{}\"></span>{} {} ({}) ",
            colour(k),
            esc(&r.letter),
            esc(&r.name),
            esc(&r.host)
        ));
    }
    out.push_str(
        "</p>\n<div class=\"scroll\"><table class=\"bars\">\n<thead><tr><th>Point</th>\
         <th>Figure</th><th>Each run</th></tr></thead>\n<tbody>\n",
    );
    for row in &cmp.rows {
        let rate = !row.metric.lower_is_better();
        let peaks: Vec<Option<f64>> = row
            .values
            .iter()
            .zip(&row.efficiencies)
            .map(|(v, e)| match (v, e) {
                (Some(v), Some(e)) if rate && *e > 0.0 && e.is_finite() => Some(v / e),
                _ => None,
            })
            .collect();
        let scale = row
            .values
            .iter()
            .chain(&peaks)
            .flatten()
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
            .fold(0.0_f64, f64::max);
        if scale <= 0.0 {
            continue;
        }
        let unit = if rate {
            row.unit.to_string()
        } else {
            format!("{} (lower is better)", row.unit)
        };
        out.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>",
            esc(&row.label),
            esc(&unit)
        ));
        for (k, (v, peak)) in row.values.iter().zip(&peaks).enumerate() {
            let letter = esc(&cmp.runs[k].letter);
            let Some(v) = v.filter(|v| v.is_finite()) else {
                out.push_str(&format!(
                    "<div class=\"bar-row\"><span class=\"who\">{letter}</span><span class=\"track\"></span><span class=\"val\">—</span></div>"
                ));
                continue;
            };
            let width = 100.0 * (v.max(0.0) / scale).min(1.0);
            let tick = peak.map_or(String::new(), |p| {
                format!(
                    "<span class=\"peak\" style=\"left:{:.2}%\" title=\"peak {}\"></span>",
                    100.0 * (p / scale).min(1.0),
                    format_sig(p)
                )
            });
            let mut words = format_sig(v);
            if let (true, Some(first)) = (k > 0, row.values[0].filter(|f| *f != 0.0)) {
                words.push_str(&format!(" ×{}", format_sig(v / first)));
            }
            if let Some(e) = row.efficiencies[k].filter(|_| rate) {
                words.push_str(&format!(" · {:.0} % of peak", 100.0 * e));
            }
            out.push_str(&format!(
                "<div class=\"bar-row\"><span class=\"who\">{letter}</span><span class=\"track\">\
                 <span class=\"bar\" style=\"width:{width:.2}%;background:{}\"></span>{tick}</span>\
                 <span class=\"val\">{}</span></div>",
                colour(k),
                esc(&words)
            ));
        }
        out.push_str("</td></tr>\n");
    }
    out.push_str("</tbody></table></div>\n</section>\n");
    out
}

/// The bars' style, added to the comparison page's.
pub const BARS_STYLE: &str = "\
.legend .swatch { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 10px; \
vertical-align: -1px; border-radius: 2px; }
table.bars td:first-child { max-width: 380px; }
.bar-row { white-space: nowrap; line-height: 18px; }
.bar-row .who { display: inline-block; width: 18px; font-weight: 600; }
.bar-row .track { position: relative; display: inline-block; width: 340px; height: 12px; \
background: #f4f6f8; vertical-align: -1px; }
.bar-row .bar { position: absolute; left: 0; top: 0; bottom: 0; }
.bar-row .peak { position: absolute; top: -3px; bottom: -3px; width: 2px; margin-left: -1px; \
background: #1d2329; }
.bar-row .val { margin-left: 8px; font-variant-numeric: tabular-nums; }
";
