//! `peakbench calibrate`'s terminal output: what the gate can tell on this machine — a line
//! with its false alarms, then a table for each subsystem: each point's figure, its runs' mean,
//! how far it moves between runs and within one, the largest change its runs made by
//! themselves (the gate's threshold) and the smallest slowdown the gate catches.

use crate::history::calibration::Calibration;
use crate::text::Align;
use crate::units::{self, format_sig};

/// The calibration's headline: its runs and the false alarms its own pairs gave.
pub fn headline(c: &Calibration) -> String {
    let seen = if c.pairs_tested > 0 {
        format!(
            "the gate failed {} of the {} A/A pairs of these runs, each judged with the other runs' noise ({:.1} %)",
            c.pairs_failed,
            c.pairs_tested,
            100.0 * c.pairs_failed as f64 / c.pairs_tested as f64
        )
    } else {
        "too few runs (under 5) to test the gate on pairs of them".into()
    };
    format!(
        "Calibration {} of this machine: profile {}, {} runs ({}); false alarms expected in at most {} % of comparisons (Holm's family-wise level over {} points); {seen}",
        c.id,
        crate::text::printable(&c.profile),
        c.runs.len(),
        c.runs
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        c.alpha * 100.0,
        c.points.len(),
    )
}

/// The calibration in at most `width` columns: [`headline`], a table for each subsystem, and
/// how to use it.
pub fn tables(c: &Calibration, display: &units::Display, width: usize) -> String {
    let mut out = format!("{}\n", crate::text::wrap(&headline(c), width, "  "));
    let header: Vec<String> = [
        "Point",
        "Figure",
        "Mean",
        "Runs CV %",
        "Reps CV %",
        "Gate %",
        "Catch %",
    ]
    .map(String::from)
    .to_vec();
    let mut align = vec![Align::Left, Align::Left];
    align.resize(header.len(), Align::Right);
    let subsystems = super::grouping::distinct(c.points.iter().map(|x| x.subsystem));
    for sub in subsystems {
        let rows: Vec<Vec<String>> = c
            .points
            .iter()
            .filter(|p| p.subsystem == sub)
            .map(|p| {
                let time =
                    (p.unit == crate::ids::Unit::Seconds).then(|| units::time_unit_for(p.mean));
                let mut display = *display;
                display.time[p.subsystem.index()] = time;
                let (mean, unit) = match display.conversion(p.subsystem, p.unit) {
                    Some(d) => (d.apply(p.mean), d.unit),
                    None => (p.mean, p.unit),
                };
                vec![
                    p.label.clone(),
                    super::summary::metric_header(p.subsystem, p.metric, unit),
                    format_sig(mean),
                    format!("{:.2}", p.run_cv * 100.0),
                    format!("{:.2}", p.within_cv * 100.0),
                    format!("{:.1}", p.largest_change * 100.0),
                    super::changes::catch_cell(c.catches(p), p.metric),
                ]
            })
            .collect();
        out.push_str(&super::changes::subsystem_table(
            sub,
            &header,
            rows,
            &align,
            width,
            &[0],
        ));
    }
    let note = "Runs CV: the runs' means' spread; Reps CV: a run's repetitions' spread (averaged); Gate: the largest change between two of the runs, below which the gate fails no point; Catch: the smallest slowdown the gate catches 8 times in 10 (Holm's strictest level). Gate a later run with: peakbench compare --gate BASELINE latest";
    out.push_str(&format!("{}\n", crate::text::wrap(note, width, "  ")));
    out
}
