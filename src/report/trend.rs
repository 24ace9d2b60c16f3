//! `history --trend`'s terminal output: a line saying what was followed, then a table for each
//! subsystem: the point, its figure's unit, the runs that measured it, its first and last
//! figure, its levels (median of each, and the run each began at) and what changed.

use crate::history::trend::{Begins, Trend, TrendLevel};
use crate::text::Align;
use crate::units::{self, format_sig};

/// What the trends over `runs` runs (ids `first` to `last`) found, in one sentence.
pub fn headline(trends: &[Trend], (runs, first, last): (usize, i64, i64)) -> String {
    let moved = trends
        .iter()
        .filter(|t| t.shifts().next().is_some())
        .count();
    let machines = trends
        .iter()
        .flat_map(|t| &t.levels)
        .filter(|l| l.begins == Begins::Machine)
        .map(|l| l.from_run)
        .collect::<std::collections::BTreeSet<_>>();
    let mut head = format!(
        "Trend of {} point{} over {runs} run{} ({first} to {last}): {moved} moved to another level and stayed",
        trends.len(),
        if trends.len() == 1 { "" } else { "s" },
        if runs == 1 { "" } else { "s" },
    );
    if !machines.is_empty() {
        head.push_str(&format!(
            "; the hardware changed at run{} {} (each machine's runs are judged apart)",
            if machines.len() == 1 { "" } else { "s" },
            machines
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    head
}

/// The trends over the runs of `span` ([`headline`]), in at most `width` columns.
pub fn tables(
    trends: &[Trend],
    span: (usize, i64, i64),
    display: &units::Display,
    width: usize,
) -> String {
    let head = headline(trends, span);
    let mut out = format!("{}\n", crate::text::wrap(&head, width, "  "));
    let header: Vec<String> = [
        "Point", "Figure", "Runs", "First", "Last", "Levels", "Change",
    ]
    .map(String::from)
    .to_vec();
    let align = [
        Align::Left,
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
        Align::Left,
    ];
    let subsystems = super::grouping::distinct(trends.iter().map(|x| x.subsystem));
    for sub in subsystems {
        let rows: Vec<Vec<String>> = trends
            .iter()
            .filter(|t| t.subsystem == sub)
            .map(|t| row(t, display))
            .collect();
        out.push_str(&super::changes::subsystem_table(
            sub,
            &header,
            rows,
            &align,
            width,
            &[0, 5, 6],
        ));
    }
    out
}

/// A trend's row, in display units.
fn row(t: &Trend, display: &units::Display) -> Vec<String> {
    let first = t.values.first().copied().unwrap_or(f64::NAN);
    let last = t.values.last().copied().unwrap_or(f64::NAN);
    let (conversion, unit) = shown_in(t, display);
    let shown = |v: f64| format_sig(conversion.map_or(v, |c| c.apply(v)));
    let levels = t
        .levels
        .iter()
        .map(|l| match l.begins {
            Begins::First => shown(l.median),
            Begins::Level => format!("{} (run {})", shown(l.median), l.from_run),
            Begins::Machine => format!("{} (run {}, other machine)", shown(l.median), l.from_run),
        })
        .collect::<Vec<_>>()
        .join(" → ");
    vec![
        t.point.clone(),
        super::summary::metric_header(t.subsystem, t.metric, unit),
        t.runs.len().to_string(),
        shown(first),
        shown(last),
        levels,
        change(t),
    ]
}

/// How trend `t`'s figures are shown in `display`'s units (a time in the unit that fits its
/// first figure): the conversion from its base unit, and the unit shown.
fn shown_in(t: &Trend, display: &units::Display) -> (Option<units::Conversion>, crate::ids::Unit) {
    let mut display = *display;
    if t.unit == crate::ids::Unit::Seconds {
        let first = t.values.first().copied().unwrap_or(f64::NAN);
        display.time[t.subsystem.index()] = Some(units::time_unit_for(first));
    }
    let conversion = display.conversion(t.subsystem, t.unit);
    (conversion, conversion.map_or(t.unit, |c| c.unit))
}

/// What changed: each shift of the figure on one machine, "worse from run 12 (-16 %)", or
/// "steady".
fn change(t: &Trend) -> String {
    let words: Vec<String> = t.shifts().map(|(a, b)| shift(t, a, b)).collect();
    if words.is_empty() {
        "steady".into()
    } else {
        words.join(", ")
    }
}

fn shift(t: &Trend, before: &TrendLevel, after: &TrendLevel) -> String {
    let change = after.median / before.median - 1.0;
    let worse = (change < 0.0) != t.lower_is_better();
    format!(
        "{} from run {} ({:+.0} %)",
        if worse { "worse" } else { "better" },
        after.from_run,
        change * 100.0
    )
}

/// The trends as one self-contained HTML page, in the report page's style: the table's line
/// above, then a chart per point (each run's figure, its levels as dashed lines, a marker at
/// each run where it moved or the hardware changed) with the table's row below it.
pub fn html(trends: &[Trend], span: (usize, i64, i64)) -> Vec<u8> {
    use super::html::{STYLE, figure};
    use crate::text::xml_escape;
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>peakbench trends — runs {} to {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <header>\n<h1>peakbench trends</h1>\n<p class=\"meta\">{}</p>\n</header>\n",
        span.1,
        span.2,
        xml_escape(&headline(trends, span)),
    );
    out.push_str("<section id=\"trends\">\n<div class=\"charts\">\n");
    for (i, t) in trends.iter().enumerate() {
        out.push_str(&figure(&chart(t, i)));
    }
    out.push_str("</div>\n</section>\n</body>\n</html>\n");
    out.into_bytes()
}

/// Trend `t`'s chart (the `i`-th): its figure per run, its levels and their beginnings.
fn chart(t: &Trend, i: usize) -> super::plot::Chart {
    use super::plot::{Axis, Chart, Marker, Plot, Scale, Series, Ticks};
    let (conversion, unit) = shown_in(t, &units::Display::default());
    let shown = |v: f64| conversion.map_or(v, |c| c.apply(v));
    let figure = super::summary::metric_header(t.subsystem, t.metric, unit);
    let points: Vec<(f64, f64)> = t
        .runs
        .iter()
        .zip(&t.values)
        .map(|(r, v)| (*r as f64, shown(*v)))
        .collect();
    let series = Series::of_figures("each run's mean".into(), points, |x, y| {
        format!("run {x:.0}: {} {unit}", format_sig(y))
    });
    let guides = t
        .levels
        .iter()
        .enumerate()
        .map(|(j, l)| Series {
            name: format!("level {}: {} {unit}", j + 1, format_sig(shown(l.median))),
            points: vec![
                (l.from_run as f64, shown(l.median)),
                (l.to_run as f64, shown(l.median)),
            ],
            details: Vec::new(),
        })
        .collect();
    let markers = t
        .levels
        .iter()
        .skip(1)
        .map(|l| Marker {
            x: l.from_run as f64,
            label: match l.begins {
                Begins::Machine => format!("run {}: other machine", l.from_run),
                _ => format!("run {}", l.from_run),
            },
        })
        .collect();
    Chart {
        slug: format!("trend-{i}"),
        subsystem: t.subsystem,
        title: t.point.clone(),
        note: change(t),
        plot: Plot::Lines {
            x: Axis::new("run", Scale::Linear, Ticks::Number),
            y: Axis::new(figure.clone(), Scale::Linear, Ticks::Number),
            series: vec![series],
            guides,
            markers,
        },
    }
}
