//! `peakbench compare`'s terminal output: the changes between two runs, a table for each
//! subsystem (the point, its figure, A, B, the change, p and the verdict, the reference tools'
//! change where both runs have one), and the points only one run has.

use crate::history::compare::{Change, Unpaired};
use crate::units::{self, format_sig};

/// The changes, a table for each subsystem under its title, in at most `width` columns: the
/// point (wrapped in its column), its figure's unit, A, B, the change, p and the verdict.
pub fn tables(changes: &[Change], display: &units::Display, width: usize) -> String {
    use crate::text::Align;
    // The reference tools' change, where both runs have one for some point.
    let references = changes.iter().any(|c| c.reference.is_some());
    let mut header: Vec<String> = ["Point", "Figure", "A", "B", "Δ %", "p", "Verdict"]
        .map(String::from)
        .to_vec();
    if references {
        header.insert(6, "Ref %".into());
    }
    let mut align = vec![Align::Left, Align::Left];
    align.resize(header.len() - 1, Align::Right);
    align.push(Align::Left);
    let mut subsystems: Vec<crate::results::Subsystem> = Vec::new();
    for c in changes {
        if !subsystems.contains(&c.subsystem) {
            subsystems.push(c.subsystem);
        }
    }
    let mut out = String::new();
    for sub in subsystems {
        let mut rows: Vec<Vec<String>> = changes
            .iter()
            .filter(|c| c.subsystem == sub)
            .map(|c| row(c, display, references))
            .collect();
        out.push_str(sub.title());
        out.push('\n');
        let common = common_parts(&mut rows);
        if !common.is_empty() {
            let line = format!("  every point: {common}");
            out.push_str(&format!("{}\n", crate::text::wrap(&line, width, "    ")));
        }
        let last = header.len() - 1;
        out.push_str(&crate::text::columns_wrapped(
            &header,
            &rows,
            &align,
            width,
            &[0, last],
        ));
    }
    out
}

/// The parts of the points' labels (first cells, "DP · 2 threads · avx512") after the
/// workload that every row of two or more has, once each, taken out of the rows and joined.
fn common_parts(rows: &mut [Vec<String>]) -> String {
    if rows.len() < 2 {
        return String::new();
    }
    // Each label's parts after its workload, split once.
    let split: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r[0].split(" · ").map(str::to_string).collect())
        .collect();
    let common: Vec<String> = split[0][1..]
        .iter()
        .filter(|p| {
            split
                .iter()
                .all(|r| r[1..].iter().filter(|q| q == p).count() == 1)
        })
        .cloned()
        .collect();
    for (row, parts) in rows.iter_mut().zip(split) {
        let kept: Vec<String> = parts
            .into_iter()
            .enumerate()
            .filter(|(i, p)| *i == 0 || !common.contains(p))
            .map(|(_, p)| p)
            .collect();
        row[0] = kept.join(" · ");
    }
    common.join(" · ")
}

/// A change's row of [`tables`], in display units.
fn row(c: &Change, display: &units::Display, references: bool) -> Vec<String> {
    let time = (c.unit == crate::ids::Unit::Seconds).then(|| units::time_unit_for(c.mean_a));
    let mut display = *display;
    display.time[c.subsystem.index()] = time;
    let (a, b, unit) = match display.conversion(c.subsystem, c.unit) {
        Some(d) => (d.apply(c.mean_a), d.apply(c.mean_b), d.unit),
        None => (c.mean_a, c.mean_b, c.unit),
    };
    let mut row = vec![
        c.label.clone(),
        super::summary::metric_header(c.subsystem, c.metric, unit),
        format_sig(a),
        format_sig(b),
        format!("{:+.1}", c.change * 100.0),
        c.p_adjusted
            .map_or_else(|| "—".into(), |p| format!("{p:.3}")),
        c.verdict().brief(),
    ];
    if references {
        row.insert(
            6,
            c.reference
                .as_ref()
                .map_or_else(|| "—".into(), |r| r.cell()),
        );
    }
    row
}

/// "only in A (3): cpu DP · 4 threads (throughput); …", one line per point after the first.
pub fn unpaired(run: &str, points: &[Unpaired]) -> String {
    if points.is_empty() {
        return String::new();
    }
    let mut out = format!("only in {run} ({} points, not compared):\n", points.len());
    for p in points {
        out.push_str(&format!("  {} {} ({})\n", p.subsystem, p.label, p.metric));
    }
    out
}
