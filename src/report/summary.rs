//! The terminal's summary of a run: one compact table per subsystem with the headline figures,
//! in the terminal's width. A point's metrics share a row (a disk point's MB/s, IOPS and
//! latency; a UDP test's goodput, loss and jitter), a memory staircase is shown as its levels,
//! and a sweep over threads as its best point with its scaling in a line below. `-v` (and every
//! file format) has every row; the summary says where.

use super::variant;
use crate::results::params::Params;
use crate::results::params::Side;
use crate::results::{Metric, Subsystem, Unit};
use crate::results::{Report, ResultRecord};
use crate::text::{Align, columns, printable, wrap};
use crate::units::format_sig;
use std::collections::HashMap;

/// One row: the records of one point (its metrics), the best of a sweep over threads. A point
/// is named by its identity without the side (sender and receiver of one test are one point).
struct Point<'a> {
    /// Identity without the side and the concurrency: the points of a sweep over threads.
    sweep_key: String,
    records: Vec<&'a ResultRecord>,
    /// How many times the same point was measured before this one in the run (its row says
    /// "run 2", "run 3", …).
    again: usize,
}

impl<'a> Point<'a> {
    /// The record of `metric` (the receiver's goodput before the sender's).
    fn of(&self, metric: Metric, unit: Unit) -> Option<&'a ResultRecord> {
        let mut found = self
            .records
            .iter()
            .filter(|r| r.metric == metric && r.unit == unit);
        let first = found.clone().next().copied();
        found
            .find(|r| {
                r.params
                    .net()
                    .is_some_and(|n| n.side == Some(Side::Receiver))
            })
            .copied()
            .or(first)
    }

    /// The record the row's efficiency, reference and spread are of: the first with a peak,
    /// else the first.
    fn primary(&self) -> &'a ResultRecord {
        self.records
            .iter()
            .find(|r| r.efficiency.is_some())
            .unwrap_or(&self.records[0])
    }
}

/// The identity of `rec` as text, without the parameters in `except`.
fn key_of(rec: &ResultRecord, except: &[&str]) -> String {
    format!(
        "{}/{}",
        rec.workload,
        serde_json::Value::Object(crate::results::point::identity(&rec.params, except))
    )
}

/// A staircase's points are summed up by its levels where the run found them.
fn shown(rec: &ResultRecord, has_levels: bool) -> bool {
    match &rec.params {
        Params::MemLatency(p) => !(has_levels && p.is_step()),
        _ => true,
    }
}

/// A metric's column header, short: "GOPS", "IOPS", "lat µs", "RTT µs", "loss %".
pub fn metric_header(subsystem: Subsystem, metric: Metric, unit: Unit) -> String {
    match metric {
        Metric::Latency if subsystem == Subsystem::Net => format!("RTT {unit}"),
        Metric::Latency => format!("lat {unit}"),
        Metric::Loss => "loss %".into(),
        Metric::Jitter => format!("jitter {unit}"),
        _ => unit.to_string(),
    }
}

/// The summary of `report` (in display units already) in at most `width` columns.
pub fn render(report: &Report, width: usize) -> String {
    let mut subsystems: Vec<Subsystem> = Vec::new();
    for r in &report.results {
        if !subsystems.contains(&r.subsystem) {
            subsystems.push(r.subsystem);
        }
    }
    let has_levels = report
        .results
        .iter()
        .any(|r| matches!(&r.params, Params::MemLatency(p) if p.level.is_some()));
    let mut out = report.verification.as_ref().map_or(String::new(), |v| {
        format!(
            "{}\n",
            super::table::render_verification(&super::verify::view(v), width)
        )
    });
    let mut noisy = false;
    for sub in subsystems {
        let recs: Vec<&ResultRecord> = report
            .results
            .iter()
            .filter(|r| r.subsystem == sub && shown(r, has_levels))
            .collect();
        let (table, notes, any_noisy) = subsystem_table(sub, &recs, width);
        noisy |= any_noisy;
        out.push_str(&table);
        for n in notes {
            out.push_str(&wrap(&format!("  {n}"), width, "    "));
            out.push('\n');
        }
        if sub == Subsystem::Mem {
            for m in super::mem_matrices(&report.results) {
                out.push_str(&matrix_text(&m, width));
            }
        }
    }
    if noisy {
        out.push_str(
            "! noisy: coefficient of variation above 5 % (CV %: the widest of the point's figures)\n",
        );
    }
    if report.results.iter().any(|r| r.burst().is_some()) {
        out.push_str(&wrap(super::rows::BURST_NOTE, width, "  "));
        out.push('\n');
    }
    out.push_str(&findings(report, width));
    for n in super::notice_notes(&report.results) {
        out.push_str(&wrap(&n, width, "  "));
        out.push('\n');
    }
    out
}

/// The findings beyond the sweeps' scaling (which the notes under the tables give): ratios,
/// how close the points come to their peaks, the causes of low efficiency; at most
/// [`FINDINGS`], the rest with -v.
fn findings(report: &Report, width: usize) -> String {
    use super::findings::Kind;
    let found: Vec<_> = super::findings::of(report)
        .into_iter()
        .filter(|f| f.kind != Kind::Scaling)
        .collect();
    if found.is_empty() {
        return String::new();
    }
    let mut out = String::from("Findings:\n");
    for f in found.iter().take(FINDINGS) {
        let line = format!("  {}: {}", f.subsystem.title(), f.text);
        out.push_str(&wrap(&line, width, "    "));
        out.push('\n');
    }
    if found.len() > FINDINGS {
        out.push_str(&format!("  … {} more: -v\n", found.len() - FINDINGS));
    }
    out
}

/// A C2C matrix as text: its title, then the rows aligned right, where it fits `width`
/// (else where to find it).
fn matrix_text(m: &super::matrix::MatrixView, width: usize) -> String {
    let mut cols = vec![0usize; m.headers.len()];
    for row in std::iter::once(&m.headers).chain(&m.rows) {
        for (w, c) in cols.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = wrap(&m.title, width, "  ");
    out.push('\n');
    let line_width: usize = cols.iter().map(|w| w + 2).sum();
    if line_width > width {
        out.push_str("  (wider than the terminal: --html or --markdown FILE shows it)\n");
        return out;
    }
    for row in std::iter::once(&m.headers).chain(&m.rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(&cols)
            .map(|(c, &w)| format!("{c:>w$}"))
            .collect();
        out.push_str(&format!("  {}\n", cells.join("  ")));
    }
    out
}

/// The most findings the summary shows.
const FINDINGS: usize = 6;

/// One subsystem's table, its sweep notes, and whether a row is noisy.
fn subsystem_table(
    sub: Subsystem,
    recs: &[&ResultRecord],
    width: usize,
) -> (String, Vec<String>, bool) {
    let metrics = metric_columns(recs);
    let points = points_of(recs);
    // A bandwidth staircase's sizes each scale over threads: its levels (in the findings) say
    // it per thread count, in a line each.
    let stairs = super::bandwidth_levels::staircases(recs, &[]);
    // A workload that measures the harness alone (NULL) has no scaling to state: its figure
    // is the harness's overhead, not work done.
    let on_stairs = super::bandwidth_levels::on_stairs(&stairs);
    let quiet = |r: &ResultRecord| on_stairs(r) || super::findings::harness_only(r);
    let (rows, mut notes) = sweep_rows(sub, &points, quiet);
    if let Some(first) = stairs.first() {
        let mut names: Vec<&str> = stairs
            .iter()
            .map(|l| l.records[0].workload.name())
            .collect();
        names.dedup();
        let mut counts: Vec<usize> = stairs
            .iter()
            .map(|l| l.records[0].params.threads())
            .collect();
        counts.sort_unstable();
        counts.dedup();
        let folded = if counts.len() > 1 {
            " each row is its best thread count;"
        } else {
            ""
        };
        notes.insert(
            0,
            format!(
                "{}: a bandwidth staircase over {} working sets;{folded} the levels of each line are in the findings, the chart: --html FILE",
                names.join(", "),
                first.points.len()
            ),
        );
    }
    notes.extend(super::reference_gap_notes(recs));
    let with_reference = rows.iter().any(|(p, _)| p.primary().reference.is_some());
    let mut header = vec!["Workload".to_string(), "Thr".into(), "Variant".into()];
    header.extend(metrics.iter().map(|(m, u)| metric_header(sub, *m, *u)));
    header.push("Eff %".into());
    if with_reference {
        header.extend(["Ref".to_string(), "Ref %".into()]);
    }
    // What each point cost in CPU: the machine's CPUs kept busy, where it was measured.
    let busy = |p: &Point| p.primary().params.cpu_use().and_then(|c| c.busy_cpus());
    let with_cpu = rows.iter().any(|(p, _)| busy(p).is_some());
    if with_cpu {
        header.push("CPUs".into());
    }
    header.push("CV %".into());
    let mut any_noisy = false;
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|(p, range)| {
            let (mut row, noisy) = row_cells(p, range.as_deref(), &metrics, with_reference);
            if with_cpu {
                let cell = busy(p).map_or_else(|| "—".into(), |b| format!("{b:.2}"));
                row.insert(row.len() - 1, cell);
            }
            any_noisy |= noisy;
            notes.extend(noisy_elsewhere(sub, p));
            row
        })
        .collect();
    // An efficiency column with no known peak says nothing: the notes say why (-v).
    let eff = 3 + metrics.len();
    let mut cells = cells;
    if cells.iter().all(|r| r[eff] == "—") {
        header.remove(eff);
        cells.iter_mut().for_each(|r| {
            r.remove(eff);
        });
    }
    let mut align = vec![Align::Left; 3];
    align.resize(header.len(), Align::Right);
    let tools = super::reference_tools(recs);
    let title = match tools {
        Some(t) => format!("{} (reference: {})", sub.title(), printable(&t)),
        None => sub.title().to_string(),
    };
    let table = format!("{title}\n{}", columns(&header, &cells, &align, width));
    (table, notes, any_noisy)
}

/// The metric columns, in the order first seen.
fn metric_columns(recs: &[&ResultRecord]) -> Vec<(Metric, Unit)> {
    let mut metrics: Vec<(Metric, Unit)> = Vec::new();
    for r in recs {
        let m = (r.metric, r.unit);
        if !metrics.contains(&m) {
            metrics.push(m);
        }
    }
    metrics
}

/// What a record of a point measures: its metric, unit and side (a network point's).
type Figure = (Metric, Unit, Option<Option<Side>>);

/// The points of `recs`: a record joins the point of its identity (without the side).
/// A point measured again (the same parameters twice in one run, as `verify` measures a round
/// trip without and with a delay) is a row of its own: its records are the ones after the
/// first point's.
///
/// The records of one identity and one figure (metric, unit and side) fill its points in turn:
/// the first goes to the point itself, the next to "run 2", and so on, so a count per identity
/// and figure says which point a record joins (each point found through an index).
fn points_of<'a>(recs: &[&'a ResultRecord]) -> Vec<Point<'a>> {
    let mut points: Vec<Point> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut measured: HashMap<(String, Figure), usize> = HashMap::new();
    for r in recs {
        let identity = key_of(r, &["side"]);
        let sweep = key_of(r, &["side", "threads", "streams"]);
        let figure = (r.metric, r.unit, r.params.net().map(|n| n.side));
        // The measurements of the same point so far, each a row.
        let count = measured.entry((identity.clone(), figure)).or_default();
        let again = *count;
        *count += 1;
        let (key, sweep_key) = if again == 0 {
            (identity, sweep)
        } else {
            (format!("{identity} #{again}"), format!("{sweep} #{again}"))
        };
        match at.get(&key) {
            Some(&i) => points[i].records.push(r),
            None => {
                at.insert(key, points.len());
                points.push(Point {
                    sweep_key,
                    records: vec![r],
                    again,
                });
            }
        }
    }
    points
}

/// The rows of the table, each with its range of threads where it stands for a sweep, and the
/// sweeps' notes. Sweeps over threads: the best point stands for them; its scaling goes in a
/// note.
fn sweep_rows<'p, 'a>(
    sub: Subsystem,
    points: &'p [Point<'a>],
    quiet: impl Fn(&ResultRecord) -> bool,
) -> (Vec<(&'p Point<'a>, Option<String>)>, Vec<String>) {
    let mut rows: Vec<(&Point, Option<String>)> = Vec::new();
    let mut notes = Vec::new();
    for (_, sweep) in super::grouped(points, |&p| p.sweep_key.as_str()) {
        let p = sweep[0];
        if sweep.len() < 2 {
            rows.push((p, None));
            continue;
        }
        let (best, range, note) = sweep_summary(sub, p, &sweep);
        if !quiet(p.primary()) {
            notes.push(note);
        }
        rows.push((best, Some(range)));
    }
    (rows, notes)
}

/// A sweep over threads that starts at `p`: its best point, its range of threads and the
/// note of its scaling.
fn sweep_summary<'p, 'a>(
    sub: Subsystem,
    p: &'p Point<'a>,
    sweep: &[&'p Point<'a>],
) -> (&'p Point<'a>, String, String) {
    let value = |q: &Point| q.primary().headline();
    let lower = p.primary().metric.lower_is_better();
    let best = sweep
        .iter()
        .copied()
        .filter(|q| value(q).is_finite())
        .max_by(|a, b| {
            let o = value(a).total_cmp(&value(b));
            if lower { o.reverse() } else { o }
        })
        .unwrap_or(p);
    let threads = |q: &Point| q.primary().params.threads();
    let first = sweep
        .iter()
        .copied()
        .min_by_key(|q| threads(q))
        .unwrap_or(p);
    let last = sweep
        .iter()
        .copied()
        .max_by_key(|q| threads(q))
        .unwrap_or(p);
    let range = format!("{}–{}", threads(first), threads(last));
    let rec = first.primary();
    let what = [rec.workload.name().to_string(), variant(rec)]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let counted = if sub == Subsystem::Net {
        "streams"
    } else {
        "threads"
    };
    let note = format!(
        "{what}: {} → {} {} from {} to {} {counted} ({:.2}×); best at {}",
        format_sig(value(first)),
        format_sig(value(last)),
        rec.unit,
        threads(first),
        threads(last),
        value(last) / value(first),
        threads(best)
    );
    (best, range, note)
}

/// A row's cells (printable) and whether it is noisy: the workload, its threads (or the
/// sweep's `range`), its variant, each metric's mean, the efficiency, the reference's figure
/// and efficiency (`with_reference`), and the spread.
fn row_cells(
    p: &Point,
    range: Option<&str>,
    metrics: &[(Metric, Unit)],
    with_reference: bool,
) -> (Vec<String>, bool) {
    let primary = p.primary();
    let mut v = variant(primary);
    if p.again > 0 {
        v = format!("{v} (run {})", p.again + 1)
            .trim_start()
            .to_string();
    }
    let mut row = vec![
        primary.workload.name().to_string(),
        range.map_or_else(|| primary.params.threads().to_string(), str::to_string),
        if v.is_empty() { "—".into() } else { v },
    ];
    for (m, u) in metrics {
        row.push(
            p.of(*m, *u)
                .map_or_else(String::new, super::rows::headline_cell),
        );
    }
    row.push(
        primary
            .headline_efficiency()
            .map_or_else(|| "—".into(), |e| format!("{:.1}", e * 100.0)),
    );
    if with_reference {
        let r = primary.reference.as_ref();
        row.push(r.map_or_else(|| "—".into(), |r| format_sig(r.mean)));
        row.push(
            r.and_then(|r| r.efficiency)
                .map_or_else(|| "—".into(), |e| format!("{:.1}", e * 100.0)),
        );
    }
    // The point's widest spread, the one its mark judges (a disk point's latency may vary
    // where its throughput does not).
    let noisy = p.records.iter().any(|r| r.summary.noisy);
    let cv = p
        .records
        .iter()
        .map(|r| r.summary.cv)
        .filter(|cv| cv.is_finite())
        .fold(primary.summary.cv, f64::max);
    row.push(format!(
        "{:.1}{}",
        cv * 100.0,
        if noisy { " !" } else { "  " }
    ));
    (row.into_iter().map(|c| printable(&c)).collect(), noisy)
}

/// Where a point is marked noisy by a figure other than its headline (a UDP point's loss,
/// which varies with the few datagrams it counts, where its Mbit/s does not), which one and
/// what the headline's own spread is: the row's CV alone reads as if the headline varied.
fn noisy_elsewhere(sub: Subsystem, p: &Point) -> Option<String> {
    let primary = p.primary();
    let widest = p
        .records
        .iter()
        .filter(|r| r.summary.cv.is_finite())
        .max_by(|a, b| a.summary.cv.total_cmp(&b.summary.cv))?;
    if !widest.summary.noisy || primary.summary.noisy || widest.metric == primary.metric {
        return None;
    }
    let name = |r: &ResultRecord| metric_header(sub, r.metric, r.unit);
    let v = variant(primary);
    Some(format!(
        "{}{}{}: the CV of {:.1} % is its {} figure's; its {} has a CV of {:.1} %",
        primary.workload.name(),
        if v.is_empty() { "" } else { " " },
        v,
        widest.summary.cv * 100.0,
        name(widest),
        name(primary),
        primary.summary.cv * 100.0
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::params::Params;

    fn rec(threads: usize, gops: f64) -> ResultRecord {
        let params = Params::with_defaults(
            crate::results::Workload::Cpu(crate::workload::cpu::CpuWorkload::Dp),
            serde_json::json!({"threads": threads, "cpus": [0], "cores": 1, "isa": "avx2",
                "scaling": "weak", "instruction": "x", "operation": "fp64 FMA",
                "ops_per_iteration": 1, "iterations_per_thread": 1}),
        )
        .unwrap();
        ResultRecord::new(
            crate::results::Workload::Cpu(crate::workload::cpu::CpuWorkload::Dp),
            params,
            Metric::Throughput,
            Unit::Gops,
            vec![gops, gops * 1.01],
            Err("none".into()),
        )
    }

    /// A report of this machine with no results yet.
    fn empty_report() -> crate::results::Report {
        crate::results::Report::new(
            crate::sysinfo::collect(crate::sysinfo::ClockBudget {
                warmup: std::time::Duration::ZERO,
                sample: std::time::Duration::from_millis(1),
                samples: 1,
            }),
            vec!["peakbench".into()],
        )
    }

    /// A sweep over threads is one row, its best point, with its scaling in a note.
    #[test]
    fn a_sweep_is_its_best_point_and_its_scaling() {
        let mut report = empty_report();
        report.results = vec![rec(1, 50.0), rec(2, 99.0), rec(4, 98.0)];
        let text = render(&report.displayed(&Default::default()), 100);
        assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
        let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("DP")).collect();
        assert_eq!(rows.len(), 1, "{text}");
        assert!(
            rows[0].contains("1–4") && rows[0].contains("99.50"),
            "{text}"
        );
        assert!(
            text.contains("from 1 to 4 threads (1.96×); best at 2"),
            "{text}"
        );
    }

    /// A point's CV is its widest figure's, the one its mark judges: a steady throughput with
    /// a latency that varies shows the latency's spread beside the "!", and a note says whose
    /// spread it is and what the headline's is; a steady point has neither.
    #[test]
    fn a_points_cv_is_its_widest_figures() {
        let mut report = empty_report();
        let steady = rec(1, 50.0);
        let varying = ResultRecord::new(
            steady.workload,
            steady.params.clone(),
            Metric::Latency,
            Unit::Nanos,
            vec![100.0, 200.0],
            Err("none".into()),
        );
        report.results = vec![steady, varying];
        let text = render(&report.displayed(&Default::default()), 100);
        let row = text.lines().find(|l| l.starts_with("DP")).unwrap();
        assert!(row.trim_end().ends_with("47.1 !"), "{text}");
        assert!(
            text.contains("DP avx2 fp64 FMA: the CV of 47.1 % is its lat ns figure's; its GOPS has a CV of 0.7 %"),
            "{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
        report.results.truncate(1);
        let text = render(&report.displayed(&Default::default()), 100);
        let row = text.lines().find(|l| l.starts_with("DP")).unwrap();
        assert!(row.trim_end().ends_with("0.7"), "{text}");
        assert!(!text.contains("the CV of"), "{text}");
    }

    /// Points that measured their CPU cost get a CPUs column (the machine's CPUs kept busy);
    /// a table of points without it has none.
    #[test]
    fn points_with_a_cpu_cost_show_it_in_a_column() {
        let mut report = empty_report();
        let params = Params::with_defaults(
            crate::results::Workload::Net(crate::workload::net::NetWorkload::Throughput),
            serde_json::json!({"side": "receiver", "cpu": {
                "window_s": 1.0, "process_user_cpus": 0.1, "process_system_cpus": 1.8,
                "user_cpus": 0.11, "system_cpus": 1.6, "irq_cpus": 0.0, "softirq_cpus": 0.26,
                "online_cpus": 2, "service_demand_us_per_kb": 0.54
            }}),
        )
        .unwrap();
        report.results = vec![ResultRecord::new(
            crate::results::Workload::Net(crate::workload::net::NetWorkload::Throughput),
            params,
            Metric::Throughput,
            Unit::MbitPerSec,
            vec![30000.0, 30100.0],
            Err("none".into()),
        )];
        let text = render(&report.displayed(&Default::default()), 100);
        let header = text.lines().find(|l| l.starts_with("Workload")).unwrap();
        assert!(header.contains("CPUs"), "{text}");
        let row = text.lines().find(|l| l.starts_with("THROUGHPUT")).unwrap();
        assert!(row.contains("1.97"), "{text}");
        // The full tables: a column in Markdown (and HTML), in the terminal where it fits.
        let shown = report.displayed(&Default::default());
        let md = String::from_utf8(crate::report::markdown::render(&shown)).unwrap();
        assert!(
            md.contains("| CPUs busy |") && md.contains("| 1.97 |"),
            "{md}"
        );
        let wide = crate::report::table::render(&shown, 200);
        assert!(wide.contains("CPUs busy"), "{wide}");
        let narrow = crate::report::table::render(&shown, 100);
        assert!(narrow.lines().all(|l| l.chars().count() <= 100), "{narrow}");
        report.results = vec![rec(1, 50.0)];
        let text = render(&report.displayed(&Default::default()), 100);
        assert!(!text.contains("CPUs"), "{text}");
    }

    /// The recorded points run's summary and full tables: NULL (the harness alone) gets no
    /// scaling note (its 0.020 → 9.29 µs is overhead, not "464.70×"), while DP's sweep keeps
    /// its note; a read-only memory kernel's row never says "none stores".
    #[test]
    fn recorded_null_has_no_scaling_and_no_row_says_none_stores() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
        let r = Report::from_json(&std::fs::read(dir.join("points.json")).unwrap()).unwrap();
        let shown = r.displayed(&Default::default());
        let text = render(&shown, 100);
        assert!(
            !text.contains("464.70") && !text.contains("NULL:"),
            "{text}"
        );
        assert!(
            text.contains("DP avx512 fp64 FMA: 58.55 → 58.48 GOPS"),
            "{text}"
        );
        let full = crate::report::table::render(&shown, 100);
        for t in [&text, &full] {
            assert!(!t.contains("none stores"), "{t}");
        }
        assert!(full.contains("nt stores"), "{full}");
    }
}
