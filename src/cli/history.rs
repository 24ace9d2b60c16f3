//! `peakbench history` and `peakbench compare`: the results database on the command line.

use super::common::{
    DbArgs, InputArgs, UsageError, load_run, parse_alpha, parse_positive, read_json,
};
use crate::history::compare::{
    Change, Criteria, Pairing, RunToRun, Unpaired, compare_noisy, only_in_paired,
};
use crate::history::machine::{Machines, Property};
use crate::report::changes;
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub command: Option<HistoryCommand>,
    /// Store these JSON documents (written by --json) as runs first, e.g. from other machines:
    /// files, or directories of them (their *.json files and their subdirectories', as a
    /// directory of cards holds them). A document changed since it was written is refused.
    #[arg(long, value_name = "FILE|DIR", num_args = 1..)]
    pub import: Vec<PathBuf>,
    /// Write the runs as JSON to FILE, or to standard output for - (also when FILE is left
    /// out) instead of the table.
    #[arg(short = 'o', long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
    /// Each point's figure over the stored runs, and the runs where it moved to another level
    /// and stayed (a run's hardware change starts the point anew); POINT: only the points whose
    /// label contains it, e.g. TRIAD or "DP · 2 threads". With --json, the trends as JSON
    #[arg(long, value_name = "POINT", num_args = 0..=1, default_missing_value = "")]
    pub trend: Option<String>,
    /// With --trend: the last N runs only (by default every stored run)
    #[arg(long, value_name = "N", requires = "trend", value_parser = parse_last)]
    pub last: Option<usize>,
    /// With --trend: also write the trends as a self-contained HTML page with a chart per
    /// point to FILE (or - for standard output)
    #[arg(long, value_name = "FILE", requires = "trend")]
    pub html: Option<PathBuf>,
    /// With --trend: the least change of a point's level, in percent, that makes a new level
    #[arg(long, value_name = "PERCENT", default_value = "5", requires = "trend", value_parser = parse_positive)]
    pub min_shift: f64,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub input: InputArgs,
}

/// At most the runs a history may hold in practice (a run a minute for a week).
fn parse_last(s: &str) -> Result<usize, String> {
    super::common::count_in(s, 2, 100_000)
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The runs: a run id from `peakbench history`, latest, latest~N, or a JSON file. Two: B
    /// against the baseline A, point by point; three or more (or with --per or --price): the
    /// machines side by side, each figure's ratio to A's.
    #[arg(value_name = "RUN", num_args = 2.., required = true)]
    pub runs: Vec<String>,
    /// Side by side: each figure per core its threads ran on (CPU and memory rates), per GHz
    /// of the measured clock (CPU rates: operations per cycle) or as a percentage of its peak.
    #[arg(long, value_enum)]
    pub per: Option<crate::report::side_by_side::Per>,
    /// Side by side: a machine's price per hour, NAME=PRICE (NAME its letter, A, B…, or its
    /// host name), for a row of each rate per price; repeat for each machine.
    #[arg(long, value_name = "NAME=PRICE", value_parser = parse_price)]
    pub price: Vec<(String, f64)>,
    /// The least change reported as a regression or an improvement, in percent: a significant
    /// change smaller than this is said to be within it (default 3; with --gate, none beyond
    /// each point's own).
    #[arg(long, value_name = "PERCENT", value_parser = parse_positive)]
    pub threshold: Option<f64>,
    /// Gate on this machine's calibration (`peakbench calibrate`): each point tested with its
    /// run-to-run noise, a regression only where significant and larger than any change its
    /// runs made by themselves; says the gate's false-alarm rate and what each point catches.
    /// Refused without a calibration of A's machine, and for runs of two machines.
    #[arg(long, conflicts_with = "different_machines")]
    pub gate: bool,
    /// Family-wise significance level: Welch's t-test on each point's repetitions, its p-value
    /// corrected for the number of points tested (Holm–Bonferroni).
    #[arg(long, default_value = "0.05", value_parser = parse_alpha)]
    pub alpha: f64,
    /// Take A and B as the same machine whatever their system sections say (a CPU, cores or
    /// memory that differ): a significant slowdown beyond the threshold is a regression (exit 3).
    #[arg(long, conflicts_with = "different_machines")]
    pub same_machine: bool,
    /// Take A and B as different machines although their hardware is the same (two hosts of
    /// one kind): B is faster or slower than A, never a regression.
    #[arg(long)]
    pub different_machines: bool,
    /// Write the comparison as JSON (base units) to FILE, or to standard output for - (also
    /// when FILE is left out) instead of the table.
    #[arg(short = 'o', long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
    /// Also write the comparison of two runs to FILE as a JUnit XML report, as CI systems read
    /// test results: a test case per point, a regression a failure, an undecided point skipped.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub display: super::common::DisplayArgs,
    #[command(flatten)]
    pub input: InputArgs,
}

/// `compare --threshold`'s default, in percent (with --gate: none beyond each point's own).
const DEFAULT_THRESHOLD: f64 = 3.0;

/// A comparison found a significant regression beyond the threshold. Exit code 3.
#[derive(Debug, thiserror::Error)]
#[error("{0} significant regression(s) beyond the threshold")]
pub struct Regression(pub usize);

#[derive(Debug, clap::Subcommand)]
pub enum HistoryCommand {
    /// A stored run as CSV, Markdown, HTML, PNG charts or its JSON document (the same as
    /// `peakbench report RUN …`): `history export latest --csv run.csv`.
    Export(super::report::ReportArgs),
}

pub fn run_history(args: HistoryArgs) -> anyhow::Result<()> {
    if let Some(HistoryCommand::Export(export)) = args.command {
        return super::report::run(export);
    }
    // Listing only reads: a read-only database (or file system) is fine, and a missing one is
    // not created.
    let runs = if !args.import.is_empty() {
        let files = import_files(&args.import)?;
        // Every document is read and checked before any is stored: one that is not a run, or
        // was changed since it was written, stops the import with nothing stored.
        for path in &files {
            super::common::read_as_written(
                path,
                args.input.max_input,
                "import",
                "import the document as peakbench wrote it",
            )?;
        }
        let mut store = args.db.open()?;
        for path in &files {
            let report = read_json(path, args.input.max_input)?;
            let id = store.import(&report)?;
            eprintln!(
                "imported {} as run {id}{}",
                crate::text::printable(&path.display().to_string()),
                if report.sha256.is_none() {
                    " (no sha256: written before peakbench kept one, not checked)"
                } else {
                    ""
                }
            );
        }
        store.runs()?
    } else if args.db.path()?.is_file() {
        args.db.open_read_only()?.runs()?
    } else {
        Vec::new()
    };
    if let Some(point) = &args.trend {
        return trend(&args, point, &runs);
    }
    if let Some(path) = &args.json {
        return write_json(path, &runs);
    }
    if runs.is_empty() {
        return crate::files::print(&format!(
            "no runs in {} yet: every benchmark command stores its run there\n",
            args.db.path()?.display()
        ));
    }
    let mut table = crate::report::table::new_table(crate::text::terminal_width());
    table.set_header(["Run", "Started", "Status", "Host", "Points", "Command"]);
    for r in &runs {
        let status = if r.status == "running" {
            "incomplete (running or killed)".to_string()
        } else {
            r.status.clone()
        };
        let command = r
            .command_line
            .iter()
            .skip(1)
            .cloned()
            .collect::<Vec<_>>()
            .join(" ");
        table.add_row([
            r.id.to_string(),
            r.started_at.clone(),
            status,
            r.hostname.clone(),
            r.points.to_string(),
            command,
        ]);
    }
    crate::files::print(&format!("{table}\n"))
}

/// `history --trend [POINT]`: the points' figures over the runs (`runs`, the last `--last`).
fn trend(
    args: &HistoryArgs,
    point: &str,
    runs: &[crate::history::RunSummary],
) -> anyhow::Result<()> {
    if args.html.as_deref() == Some(Path::new("-")) && args.json.as_deref() == Some(Path::new("-"))
    {
        return Err(UsageError(
            "--json and --html cannot both go to standard output: give one of them a file".into(),
        )
        .into());
    }
    let take = args.last.unwrap_or(usize::MAX).min(runs.len());
    let chosen = &runs[runs.len() - take..];
    let (loaded, infos) = if chosen.is_empty() {
        Default::default()
    } else {
        let ids: Vec<i64> = chosen.iter().map(|r| r.id).collect();
        args.db.open_read_only()?.trend_runs(&ids)?
    };
    let settings = crate::measure::levels::Settings {
        min_shift: args.min_shift / 100.0,
        ..Default::default()
    };
    let point = (!point.is_empty()).then_some(point);
    let trends = crate::history::trend::trends_of(&loaded, &infos, point, &settings);
    if trends.is_empty() {
        return Err(UsageError(match (point, loaded.is_empty()) {
            (_, true) => "no runs stored yet: every benchmark command stores its run".into(),
            (Some(p), false) => format!(
                "no point of the {} run(s) has '{}' in its label; `peakbench report latest` shows the points",
                loaded.len(),
                crate::text::printable(p)
            ),
            (None, false) => "the runs have no measured point".into(),
        })
        .into());
    }
    let span = (
        loaded.len(),
        loaded.first().map_or(0, |r| r.id),
        loaded.last().map_or(0, |r| r.id),
    );
    if let Some(path) = &args.html {
        crate::files::write_output(path, &crate::report::trend::html(&trends, span))
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        if path != Path::new("-") {
            eprintln!("wrote {}", path.display());
        }
    }
    if let Some(path) = &args.json {
        return write_json(path, &trends);
    }
    if args.html.as_deref() == Some(Path::new("-")) {
        return Ok(());
    }
    let display = crate::units::Display::default();
    crate::files::print(&crate::report::trend::tables(
        &trends,
        span,
        &display,
        crate::text::terminal_width(),
    ))
}

/// `compare --json` side by side: the runs, their machines, the normalisation and the rows.
#[derive(serde::Serialize)]
struct SideDocument<'a> {
    runs: Vec<SideRun>,
    machines: &'a [Property],
    per: Option<crate::report::side_by_side::Per>,
    rows: &'a [crate::report::side_by_side::SideRow],
}

#[derive(serde::Serialize)]
struct SideRun {
    letter: String,
    name: String,
    host: String,
    machine: String,
    price_per_hour: Option<f64>,
}

/// `compare A B C …`: the machines side by side.
fn side_by_side(args: &CompareArgs) -> anyhow::Result<()> {
    use crate::report::side_by_side;
    let runs: Vec<crate::results::Report> = args
        .runs
        .iter()
        .map(|r| load_run(r, &args.db, &args.input))
        .collect::<anyhow::Result<_>>()?;
    let names: Vec<String> = args
        .runs
        .iter()
        .map(|r| crate::text::printable(r))
        .collect();
    let criteria = Criteria {
        alpha: args.alpha,
        threshold: args.threshold.unwrap_or(DEFAULT_THRESHOLD) / 100.0,
        same_machine: true,
    };
    let display = args.display.display();
    let cmp = crate::report::compare::Comparison::of(&runs, &names, criteria, &display);
    if cmp.rows.is_empty() {
        return Err(UsageError(format!(
            "runs {} have no point in common with the first (same workload, metric and parameters)",
            names.join(", ")
        ))
        .into());
    }
    // Each price by its machine's letter or host name.
    let mut prices: Vec<Option<f64>> = vec![None; runs.len()];
    for (name, price) in &args.price {
        let k = cmp
            .runs
            .iter()
            .position(|r| r.letter == *name || r.host == *name)
            .ok_or_else(|| {
                let letters: Vec<&str> = cmp.runs.iter().map(|r| r.letter.as_str()).collect();
                UsageError(format!(
                    "--price {}: no run is {}: give a letter ({}) or a host name",
                    crate::text::printable(name),
                    crate::text::printable(name),
                    letters.join(", ")
                ))
            })?;
        prices[k] = Some(*price);
    }
    let rows = side_by_side::rows(&cmp, &runs, args.per, &prices);
    if let Some(path) = &args.json {
        let doc = SideDocument {
            runs: cmp
                .runs
                .iter()
                .zip(&prices)
                .map(|(r, p)| SideRun {
                    letter: r.letter.clone(),
                    name: r.name.clone(),
                    host: r.host.clone(),
                    machine: r.machine.clone(),
                    price_per_hour: *p,
                })
                .collect(),
            machines: &cmp.machines.properties,
            per: args.per,
            rows: &rows,
        };
        return write_json(path, &doc);
    }
    let width = crate::text::terminal_width();
    let letters: Vec<String> = cmp.runs.iter().map(|r| r.letter.clone()).collect();
    let mut text = String::new();
    for r in &cmp.runs {
        let line = format!(
            "{}: {} ({}, {}): {}",
            r.letter, r.name, r.host, r.started_at, r.machine
        );
        text.push_str(&format!("{}\n", crate::text::wrap(&line, width, "  ")));
    }
    let refs: Vec<&str> = letters.iter().map(String::as_str).collect();
    text.push_str(&changes::machine_table(&cmp.machines, &refs, width));
    let how = "Each cell: the machine's figure, then its ratio to A's (×); a point pairs across machines by what it measures of each (all threads with all)";
    text.push_str(&format!("{}\n", crate::text::wrap(how, width, "  ")));
    text.push_str(&crate::report::side_by_side::render(&rows, &letters, width));
    crate::files::print(&text)
}

/// The documents `--import` names: each file as given, each directory's *.json files and its
/// subdirectories', by name; a directory with none is refused.
pub(super) fn import_files(given: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let json_in = |dir: &Path| -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
            .collect();
        files.sort();
        files
    };
    let mut out = Vec::new();
    for path in given {
        if !path.is_dir() {
            out.push(path.clone());
            continue;
        }
        let mut found = json_in(path);
        let mut subdirs: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| UsageError(format!("cannot read {}: {e}", path.display())))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
            .collect();
        subdirs.sort();
        for d in subdirs {
            found.extend(json_in(&d));
        }
        if found.is_empty() {
            return Err(UsageError(format!(
                "{} holds no .json document (nor do its subdirectories): give the runs' files or their directory",
                crate::text::printable(&path.display().to_string())
            ))
            .into());
        }
        out.extend(found);
    }
    Ok(out)
}

/// Writes `value` as JSON to `path` (standard output for -), saying where.
fn write_json(path: &Path, value: &impl serde::Serialize) -> anyhow::Result<()> {
    let text = format!("{}\n", serde_json::to_string_pretty(value)?);
    crate::files::write_output(path, text.as_bytes())
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    if path != Path::new("-") {
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// `compare --json`: the machines, the criteria, every pair, and the points only one run has.
#[derive(serde::Serialize)]
struct CompareDocument<'a> {
    a: &'a str,
    b: &'a str,
    /// Each property of the machines, its value in A and B, and whether it differs.
    machines: &'a [Property],
    /// Why `criteria.same_machine` is what it is: "hardware", "--same-machine" or
    /// "--different-machines".
    same_machine_by: &'static str,
    criteria: Criteria,
    /// The confidence of each pair's `ratio_interval`.
    confidence: f64,
    power: f64,
    /// Where the run-to-run noise the tests used came from (a calibration, the stored runs of
    /// the machine); null where the repetitions alone were used.
    run_to_run: Option<&'a str>,
    /// With --gate: its calibration and false alarms.
    #[serde(skip_serializing_if = "Option::is_none")]
    gate: Option<GateDocument>,
    changes: &'a [Change],
    only_in_a: &'a [Unpaired],
    only_in_b: &'a [Unpaired],
}

/// `--price NAME=PRICE`: a name and a positive, finite price.
fn parse_price(s: &str) -> Result<(String, f64), String> {
    let (name, price) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}' is not NAME=PRICE (e.g. A=0.96)"))?;
    let p: f64 = price
        .trim()
        .parse()
        .map_err(|_| format!("'{price}' is not a price: give a number, e.g. A=0.96"))?;
    if !(p.is_finite() && p > 0.0 && p < 1e9) {
        return Err(format!(
            "'{price}' is out of range: a price above 0 and below 10⁹"
        ));
    }
    Ok((name.trim().to_string(), p))
}

pub fn run_compare(args: CompareArgs) -> anyhow::Result<()> {
    let side_by_side_asked = args.runs.len() > 2 || args.per.is_some() || !args.price.is_empty();
    match &args.junit {
        Some(_) if side_by_side_asked => {
            return Err(UsageError(
                "--junit reports a comparison of two runs (each point passed or failed); more runs, --per and --price lay machines side by side: drop --junit".into(),
            )
            .into());
        }
        Some(p) if p == Path::new("-") => {
            return Err(UsageError(
                "--junit writes a file, as CI systems read it: give a path".into(),
            )
            .into());
        }
        _ => {}
    }
    if side_by_side_asked {
        if args.gate {
            return Err(UsageError(
                "--gate decides a comparison of two runs of one machine; more runs, --per and --price lay machines side by side: drop --gate".into(),
            )
            .into());
        }
        return side_by_side(&args);
    }
    let (name_a, name_b) = (&args.runs[0], &args.runs[1]);
    let a = load_run(name_a, &args.db, &args.input)?;
    let b = load_run(name_b, &args.db, &args.input)?;
    let machines = Machines::of(&[&a, &b]);
    let (same_machine, same_machine_by) = if args.same_machine {
        (true, "--same-machine")
    } else if args.different_machines {
        (false, "--different-machines")
    } else {
        (machines.hardware_differences().is_empty(), "hardware")
    };
    if args.gate && !same_machine {
        return Err(UsageError(format!(
            "--gate compares two runs of one machine, and A and B differ in {}: calibrate and gate each machine on its own (or --same-machine if they are one)",
            machines.hardware_differences().join(", ")
        ))
        .into());
    }
    let threshold = args
        .threshold
        .unwrap_or(if args.gate { 0.0 } else { DEFAULT_THRESHOLD });
    let criteria = Criteria {
        alpha: args.alpha,
        threshold: threshold / 100.0,
        same_machine,
    };
    let known = machine_noise(&args, &a, &b, same_machine)?;
    // Across machines, points pair by what they measure of each (all threads with all).
    let pairing = Pairing::of(&a, &b, same_machine);
    let noise = known.as_ref().map(|k| RunToRun {
        points: &k.points,
        gate: args.gate,
    });
    let changes = compare_noisy(&a.results, &b.results, criteria, pairing, noise);
    if changes.is_empty() {
        return Err(UsageError(format!(
            "runs {} and {} have no point in common (same workload, metric and parameters)",
            crate::text::printable(name_a),
            crate::text::printable(name_b)
        ))
        .into());
    }
    let (only_a, only_b) = (
        only_in_paired(&a.results, &b.results, pairing, true),
        only_in_paired(&b.results, &a.results, pairing, false),
    );
    if let Some(path) = &args.junit {
        let xml = crate::report::junit::compare(name_a, name_b, &changes, [&only_a, &only_b]);
        crate::files::write_output(path, xml.as_bytes())
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &args.json {
        let doc = CompareDocument {
            a: name_a,
            b: name_b,
            machines: &machines.properties,
            same_machine_by,
            criteria,
            confidence: crate::history::compare::CONFIDENCE,
            power: crate::history::compare::POWER,
            run_to_run: known.as_ref().map(|k| k.from.as_str()),
            gate: known
                .as_ref()
                .filter(|_| args.gate)
                .map(|k| GateDocument::of(k, criteria)),
            changes: &changes,
            only_in_a: &only_a,
            only_in_b: &only_b,
        };
        write_json(path, &doc)?;
    } else {
        let runs = [(name_a.as_str(), &a), (name_b.as_str(), &b)];
        let text = compare_text(
            &args,
            runs,
            &machines,
            (same_machine, same_machine_by),
            known.as_ref(),
            criteria,
            &changes,
            [&only_a, &only_b],
        );
        crate::files::print(&text)?;
    }
    let regressions = changes.iter().filter(|c| c.regression).count();
    if regressions > 0 {
        return Err(Regression(regressions).into());
    }
    Ok(())
}

/// The run-to-run noise of A's machine for a comparison of two of its runs
/// ([`crate::history::calibration::known`]): required with --gate (its calibration), looked
/// for otherwise where the database can be read.
fn machine_noise(
    args: &CompareArgs,
    a: &crate::results::Report,
    b: &crate::results::Report,
    same_machine: bool,
) -> anyhow::Result<Option<crate::history::calibration::Known>> {
    use crate::history::calibration;
    if !args.gate {
        if !same_machine {
            return Ok(None);
        }
        // Files compared without a database are compared on their repetitions.
        return Ok(args.db.open_read_only().ok().and_then(|store| {
            let (ids, documents) = compared(args, &store, [a, b]);
            calibration::known(&store, a, &ids, &documents)
                .ok()
                .flatten()
        }));
    }
    let store = args.db.open_read_only()?;
    match calibration::of_machine(&store, a)? {
        Some(_) => {
            let (ids, documents) = compared(args, &store, [a, b]);
            calibration::known(&store, a, &ids, &documents)
        }
        None => Err(UsageError(
            "--gate needs a calibration of A's machine in the database, and there is none: run `peakbench calibrate` on it first (the ci profile 8 times, about 8 minutes on a 2-core VM)".into(),
        )
        .into()),
    }
}

/// The compared runs: the ids of those that are the database's, and the documents given as
/// files (`runs`, A's and B's reports, in the order of the command line).
fn compared<'a>(
    args: &CompareArgs,
    store: &crate::history::Store,
    runs: [&'a crate::results::Report; 2],
) -> (Vec<i64>, Vec<&'a crate::results::Report>) {
    let mut ids = Vec::new();
    let mut documents = Vec::new();
    for (name, report) in args.runs.iter().zip(runs) {
        match super::common::stored_id(name, store) {
            Some(id) => ids.push(id),
            None => documents.push(report),
        }
    }
    (ids, documents)
}

/// The gate's words in `compare --json`.
#[derive(serde::Serialize)]
struct GateDocument {
    calibration: i64,
    /// Holm's family-wise level: the false-alarm rate expected where each point's figure moves
    /// between runs as a normal variable does.
    expected_false_alarm_rate: f64,
    /// The calibration's A/A pairs tested, each with the other runs' noise, and those failed.
    pairs_tested: usize,
    pairs_failed: usize,
}

impl GateDocument {
    fn of(k: &crate::history::calibration::Known, c: Criteria) -> GateDocument {
        let cal = k.calibration.as_ref();
        GateDocument {
            calibration: cal.map_or(0, |c| c.id),
            expected_false_alarm_rate: c.alpha,
            pairs_tested: cal.map_or(0, |c| c.pairs_tested),
            pairs_failed: cal.map_or(0, |c| c.pairs_failed),
        }
    }
}

/// The gate's line: the false alarms expected and seen, and what decides a point.
fn gate_line(k: &crate::history::calibration::Known, c: Criteria) -> String {
    let seen = match k.calibration.as_ref() {
        Some(cal) if cal.pairs_tested > 0 => format!(
            "; of the calibration's own A/A pairs, each judged with the other runs' noise, {} of {} failed",
            cal.pairs_failed, cal.pairs_tested
        ),
        _ => "; the calibration has too few runs (under 5) to have measured its own".into(),
    };
    format!(
        "gate: a regression is significant at {} on the run-to-run noise of {} (or the repetitions' spread where larger) and worse than Gate %, the largest change the point's runs made by themselves{}; false alarms expected in at most {} % of comparisons of an unchanged machine{seen}; Catch %: the smallest slowdown caught 8 times in 10",
        c.alpha,
        k.from,
        if c.threshold > 0.0 {
            format!(" (at least {} %)", c.threshold * 100.0)
        } else {
            String::new()
        },
        c.alpha * 100.0,
    )
}

/// `compare A B`'s text: the machines, how it decided, the tables, the points one run has
/// alone, and advice where points were undecided.
#[allow(clippy::too_many_arguments)]
fn compare_text(
    args: &CompareArgs,
    [(name_a, a), (name_b, b)]: [(&str, &crate::results::Report); 2],
    machines: &Machines,
    (same_machine, same_machine_by): (bool, &str),
    known: Option<&crate::history::calibration::Known>,
    criteria: Criteria,
    changes: &[Change],
    [only_a, only_b]: [&[Unpaired]; 2],
) -> String {
    let threshold = criteria.threshold * 100.0;
    let width = crate::text::terminal_width();
    let inconclusive = changes.iter().filter(|c| c.inconclusive).count();
    let advice = if inconclusive > 0 && !args.gate {
        // Each doubling of the repetitions divides the smallest detectable change by
        // about √2: at least twice as many as these runs had, and 5.
        let had = changes
            .iter()
            .filter(|c| c.inconclusive)
            .map(|c| c.n_a.min(c.n_b))
            .max()
            .unwrap_or(1);
        let text = format!(
            "{inconclusive} of {} points inconclusive: their repetitions ({had} or fewer) cannot detect a {threshold} % change; run both with --repeat {} or more{} on an idle machine to decide them",
            changes.len(),
            (2 * had).max(5),
            if had < 6 { " (or --profile ci)" } else { "" }
        );
        format!("\n{}\n", crate::text::wrap(&text, width, "  "))
    } else {
        String::new()
    };
    let test = match known {
        Some(_) if args.gate => "the gate's test (below)".to_string(),
        Some(k) if same_machine => format!(
            "Welch's t-test on the repetitions or, where larger, on the run-to-run noise of {} (Spread: reps or runs)",
            k.from
        ),
        _ => "Welch's t-test on the repetitions".into(),
    };
    let head = format!(
        "A: {} ({}), B: {} ({}); significance: {test}, p corrected for {} points by Holm–Bonferroni < {}; {}",
        crate::text::printable(name_a),
        crate::text::printable(&a.started_at),
        crate::text::printable(name_b),
        crate::text::printable(&b.started_at),
        changes.iter().filter(|c| c.p.is_some()).count(),
        criteria.alpha,
        match (same_machine, args.gate) {
            (true, true) => "Δ %: B against A".to_string(),
            (true, false) =>
                format!("regression: worse by more than {threshold} %; Δ %: B against A"),
            (false, _) => format!(
                "slower or faster: by more than {threshold} %; B ÷ A: B's figure over A's, with its 95 % interval"
            ),
        },
    );
    let gate = match known {
        Some(k) if args.gate => format!(
            "{}\n",
            crate::text::wrap(&gate_line(k, criteria), width, "  ")
        ),
        _ => String::new(),
    };
    let forced = same_machine_by != "hardware";
    let reference_note = if changes.iter().any(|c| c.reference.is_some()) {
        let text = "Ref %: the reference tool's change between the runs, tested on its runs as the points are (* significant beyond the threshold, ? fewer than 2 runs a side); a change the tool shows too is the machine's";
        format!("{}\n", crate::text::wrap(text, width, "  "))
    } else {
        String::new()
    };
    format!(
        "{}\n{}\n{gate}{}{reference_note}{}{}{}",
        changes::machines(machines, &["A", "B"], same_machine, forced, width),
        crate::text::wrap(&head, width, "  "),
        changes::tables(
            changes,
            &args.display.display(),
            width,
            same_machine,
            args.gate
        ),
        changes::unpaired("A", only_a),
        changes::unpaired("B", only_b),
        advice,
    )
}
