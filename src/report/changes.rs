//! `peakbench compare`'s terminal output: how the runs' machines differ, then the changes
//! between two runs, a table for each subsystem (the point, its figure, A, B, the change — or
//! between different machines the ratio B ÷ A with its interval —, p and the verdict, the
//! reference tools' change where both runs have one), and the points only one run has.

use crate::history::compare::{Change, Unpaired, Verdict};
use crate::history::machine::Machines;
use crate::history::run_noise::Source;
use crate::text::Align;
use crate::units::{self, format_sig};

/// The runs' machines (the runs lettered `letters`), first in the comparison: one line where
/// nothing differs; else what the difference means for the verdicts (`same_machine`, and
/// `forced` where the user said so), a table of the properties that differ, and the names of
/// those that do not.
pub fn machines(
    m: &Machines,
    letters: &[&str],
    same_machine: bool,
    forced: bool,
    width: usize,
) -> String {
    let wrap = |line: &str| format!("{}\n", crate::text::wrap(line, width, "  "));
    let value = |name: &str| {
        m.properties
            .iter()
            .find(|p| p.name == name)
            .and_then(|p| p.values.first().cloned())
            .unwrap_or_default()
    };
    let differing: Vec<_> = m.differences().collect();
    if differing.is_empty() {
        return wrap(&format!(
            "Machine: the same in {}: {} ({}), {}, {}, host {}, kernel {}",
            letters.join(" and "),
            value("CPU"),
            value("microarchitecture"),
            value("cores"),
            value("memory"),
            value("host"),
            value("kernel")
        ));
    }
    let hardware = m.hardware_differences();
    let meaning = match (same_machine, hardware.is_empty(), forced) {
        (true, true, _) => format!(
            "the same hardware, so a significant slowdown beyond the threshold is a regression (--different-machines to read them as machines); they differ in {}",
            names(&differing)
        ),
        (true, false, _) => format!(
            "they differ in {}, taken as the same machine (--same-machine): a significant slowdown beyond the threshold is a regression",
            names(&differing)
        ),
        (false, _, true) => format!(
            "taken as different machines (--different-machines): B is faster or slower than A, with B ÷ A and its 95 % interval, never a regression; they differ in {}",
            names(&differing)
        ),
        (false, _, false) => format!(
            "different machines (their {} differ{}): B is faster or slower than A, with B ÷ A and its 95 % interval, never a regression (--same-machine to test for one)",
            hardware.join(", "),
            if hardware.len() == 1 { "s" } else { "" }
        ),
    };
    let mut out = wrap(&format!("Machines: {meaning}"));
    out.push_str(&machine_table(m, letters, width));
    out
}

/// The properties in which the machines (lettered `letters`) differ, a column each, and a line
/// naming those that do not; empty where none differs.
pub fn machine_table(m: &Machines, letters: &[&str], width: usize) -> String {
    let wrap = |line: &str| format!("{}\n", crate::text::wrap(line, width, "  "));
    let differing: Vec<_> = m.differences().collect();
    if differing.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let mut header = vec![String::new()];
    header.extend(letters.iter().map(|l| l.to_string()));
    let rows: Vec<Vec<String>> = differing
        .iter()
        .map(|p| {
            let mut row = vec![p.name.to_string()];
            row.extend(p.values.iter().cloned());
            row
        })
        .collect();
    let align = vec![Align::Left; header.len()];
    let wrapped: Vec<usize> = (1..header.len()).collect();
    out.push_str(&crate::text::columns_wrapped(
        &header, &rows, &align, width, &wrapped,
    ));
    let same: Vec<&str> = m
        .properties
        .iter()
        .filter(|p| !p.differs && p.values.iter().any(|v| v != "unknown"))
        .map(|p| p.name)
        .collect();
    if !same.is_empty() {
        out.push_str(&wrap(&format!("  the same: {}", same.join(", "))));
    }
    out
}

/// "host, kernel".
fn names(properties: &[&crate::history::machine::Property]) -> String {
    properties
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The changes, a table for each subsystem under its title, in at most `width` columns: the
/// point (wrapped in its column), its figure's unit, A, B, the change (between different
/// machines, not `same_machine`: B ÷ A and its interval), p and the verdict.
pub fn tables(
    changes: &[Change],
    display: &units::Display,
    width: usize,
    same_machine: bool,
    gate: bool,
) -> String {
    // The reference tools' change, where both runs have one for some point.
    let references = changes.iter().any(|c| c.reference.is_some());
    let change = if same_machine {
        "Δ %"
    } else {
        "B ÷ A (95 %)"
    };
    let mut header: Vec<String> = ["Point", "Figure", "A", "B", change, "p", "Verdict"]
        .map(String::from)
        .to_vec();
    // Which spread each test used, where the machine's run-to-run noise was known.
    // (Under a gate its line says which: the run-to-run noise, or the repetitions' where
    // larger; the columns go to what the gate decides by.)
    let spread = !gate
        && changes
            .iter()
            .any(|c| c.spread == Some(Source::BetweenRuns));
    if spread {
        header.insert(6, "Spread".into());
    }
    if gate {
        header.insert(6, "Catch %".into());
        header.insert(6, "Gate %".into());
    }
    if references {
        header.insert(6, "Ref %".into());
    }
    let mut align = vec![Align::Left, Align::Left];
    align.resize(header.len() - 1, Align::Right);
    align.push(Align::Left);
    let subsystems = super::grouping::distinct(changes.iter().map(|x| x.subsystem));
    let mut out = String::new();
    for sub in subsystems {
        let rows: Vec<Vec<String>> = changes
            .iter()
            .filter(|c| c.subsystem == sub)
            .map(|c| row(c, display, [references, gate, spread], same_machine))
            .collect();
        let last = header.len() - 1;
        out.push_str(&subsystem_table(
            sub,
            &header,
            rows,
            &align,
            width,
            &[0, last],
        ));
    }
    out
}

/// A subsystem's table of points under its title: what every point's label shares said once
/// above it ([`common_parts`]), the columns fitted to `width`, those in `wrap` going on over
/// lines of their own.
pub(super) fn subsystem_table(
    sub: crate::results::Subsystem,
    header: &[String],
    mut rows: Vec<Vec<String>>,
    align: &[Align],
    width: usize,
    wrap: &[usize],
) -> String {
    let mut out = format!("{}\n", sub.title());
    let common = common_parts(&mut rows);
    if !common.is_empty() {
        let line = format!("  every point: {common}");
        out.push_str(&format!("{}\n", crate::text::wrap(&line, width, "    ")));
    }
    out.push_str(&crate::text::columns_wrapped(
        header, &rows, align, width, wrap,
    ));
    out
}

/// The parts of the points' labels (first cells, "DP · 2 threads · avx512") after the
/// workload that every row of two or more has, once each, taken out of the rows and joined.
pub(super) fn common_parts(rows: &mut [Vec<String>]) -> String {
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
/// `shown`: the optional columns (Ref %, Gate %, Spread) shown.
fn row(c: &Change, display: &units::Display, shown: [bool; 3], same_machine: bool) -> Vec<String> {
    let [references, gate, spread] = shown;
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
        if same_machine {
            format!("{:+.1}", c.change * 100.0)
        } else {
            ratio(c)
        },
        c.p_adjusted
            .map_or_else(|| "—".into(), |p| format!("{p:.3}")),
        match c.verdict() {
            // Two machines' figures differ or not; neither changed.
            Verdict::NoChange if !same_machine => "no significant difference".into(),
            v => v.brief(),
        },
    ];
    if spread {
        row.insert(
            6,
            c.spread
                .map_or("—", |s| match s {
                    Source::WithinRun => "reps",
                    Source::BetweenRuns => "runs",
                })
                .into(),
        );
    }
    if gate {
        let percent =
            |x: Option<f64>| x.map_or_else(|| "—".into(), |x| format!("{:.1}", x * 100.0));
        row.insert(
            6,
            c.catches
                .map_or_else(|| "—".into(), |x| catch_cell(x, c.metric)),
        );
        row.insert(6, percent((!c.uncalibrated).then_some(c.threshold)));
    }
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

/// B ÷ A and its interval: "0.80 (0.79–0.81)", "0.80" where no interval could be had.
fn ratio(c: &Change) -> String {
    let r = c.change + 1.0;
    let digits = |x: f64| {
        if (0.1..10.0).contains(&x) {
            format!("{x:.2}")
        } else {
            format_sig(x)
        }
    };
    match c.ratio_interval {
        Some([lo, hi]) => format!("{} ({}–{})", digits(r), digits(lo), digits(hi)),
        None => digits(r),
    }
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

/// What a gate catches, in percent: "never" where a rate would have to fall by all of itself
/// or more (a slowdown of a rate is less than 100 %).
pub fn catch_cell(catches: f64, metric: crate::results::Metric) -> String {
    if catches >= 1.0 && !metric.lower_is_better() {
        "never".into()
    } else {
        format!("{:.1}", catches * 100.0)
    }
}
