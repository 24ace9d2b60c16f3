//! `peakbench report RUN… [--html FILE] [--png DIR] [--csv FILE] [--markdown FILE] [--json
//! FILE]`: a stored run (or a JSON document) in any format again; with two runs or more, the
//! comparison report (`report::compare`); with `--as assignment`, the run laid out as the
//! assignment's hand-in (`report::assignment`). `peakbench history export RUN …` is the same.

use crate::files::{check_output_dir, create_output_dir};
use crate::report;
use crate::results::Report;
use anyhow::Context;
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
#[command(group(
    clap::ArgGroup::new("output")
        .args(["html", "png", "csv", "markdown", "json"])
        .multiple(true)
))]
pub struct ReportArgs {
    /// The run: a run of the results database (an id from `peakbench history`, latest,
    /// latest~N) or a JSON document written by `--json`. Two or more: the comparison report,
    /// the first being the baseline.
    #[arg(value_name = "RUN", required = true, num_args = 1..=16)]
    pub inputs: Vec<String>,
    /// Write the HTML report (inline SVG charts, no script, nothing fetched) to FILE, or `-` for
    /// stdout.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write every chart as a PNG file (1440 × 840 for a line chart, for slides) into DIR,
    /// created if missing (its parent must exist).
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,
    /// Write the run as CSV (one row per point, each parameter in its own column) to FILE, or
    /// `-`; with several runs, one row per common point with each run's mean.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// The --csv file has one row per repetition instead of one per point (one run).
    #[arg(long, requires = "csv")]
    pub csv_samples: bool,
    /// Write the run's tables as Markdown to FILE, or `-`.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write the run as its JSON document (base units) to FILE, or `-` (one run).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Comparison: the family-wise significance level (Holm–Bonferroni over the points).
    #[arg(long, default_value = "0.05", value_parser = super::common::parse_alpha)]
    pub alpha: f64,
    /// Comparison: the least change called better or worse, in percent.
    #[arg(long, value_name = "PERCENT", default_value = "3", value_parser = super::common::parse_positive)]
    pub threshold: f64,
    /// The tables pivoted: parameters down the rows and across the columns (e.g.
    /// rows=threads,cols=block_size; names as in the JSON document, `_bytes` optional;
    /// `workload`, `metric` and `protocol` too; several joined by +, as
    /// rows=threads+block_size,cols=workload), one table per figure, workload and value of the
    /// other parameters where no side has them, in every format and on the terminal (one run).
    #[arg(long, value_name = "rows=A,cols=B", value_parser = parse_pivot)]
    pub pivot: Option<report::pivot::Pivot>,
    /// Lay the run out as VIEW, with --html FILE or --markdown FILE (one run): `assignment`,
    /// the course assignment's hand-in — the machine, the theoretical values and their formulas,
    /// per subsystem the tables, pivots, charts, the reference tools' command lines and output,
    /// and the findings (with --png DIR, the Markdown links the charts' PNG files); `card`, a
    /// machine's card — with --png DIR its summary image DIR/card.png, with --html FILE the
    /// page (what `peakbench card` writes, from any run).
    #[arg(long = "as", value_name = "VIEW", value_enum)]
    pub view: Option<View>,
    /// Without a format: print every row of every table, the notes and the peaks' formulas
    /// instead of the summary.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    #[command(flatten)]
    pub db: super::common::DbArgs,
    #[command(flatten)]
    pub display: super::common::DisplayArgs,
    #[command(flatten)]
    pub limit: super::common::InputArgs,
}

/// A layout of the whole run (`--as`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum View {
    /// The assignment's hand-in: the five reports' tables and charts in their order.
    Assignment,
    /// A machine's card: its summary image (--png DIR) and its page (--html FILE).
    Card,
}

fn parse_pivot(s: &str) -> Result<report::pivot::Pivot, String> {
    s.parse()
}

impl ReportArgs {
    /// No format asked for: the terminal view.
    fn to_terminal(&self) -> bool {
        [&self.html, &self.png, &self.csv, &self.markdown, &self.json]
            .iter()
            .all(|o| o.is_none())
    }
}

/// Writes `bytes` to `path` (or standard output for `-`), and says so on standard error.
fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    crate::files::write_output(path, bytes).with_context(|| {
        if path.as_os_str() == "-" {
            "cannot write to standard output".to_string()
        } else {
            format!("cannot write {}", path.display())
        }
    })?;
    if path.as_os_str() != "-" {
        eprintln!(
            "wrote {}",
            crate::text::printable(&path.display().to_string())
        );
    }
    Ok(())
}

pub fn run(args: ReportArgs) -> anyhow::Result<()> {
    // The rules of every command's outputs: one format at most on standard output, each file's
    // directory there.
    crate::app::Outputs {
        json: args.json.clone(),
        csv: args.csv.clone(),
        markdown: args.markdown.clone(),
        html: args.html.clone(),
        ..crate::app::Outputs::silent()
    }
    .validate()?;
    if let Some(dir) = &args.png {
        check_output_dir(dir)?;
    }
    if let Some(view) = args.view {
        check_view(&args, view)?;
    }
    let display = args.display.display();
    let runs: Vec<Report> = args
        .inputs
        .iter()
        .map(|i| super::common::load_run(i, &args.db, &args.limit))
        .collect::<anyhow::Result<_>>()?;
    if runs.len() > 1 {
        return compare(&args, &runs, &display);
    }
    let stored = &runs[0];
    let report = stored.displayed(&display);
    if let Some(pivot) = &args.pivot {
        return pivoted(&args, &report, pivot);
    }
    match args.view {
        Some(View::Assignment) => return hand_in(&args, &report),
        Some(View::Card) => return card(&args, &report),
        None => {}
    }
    if args.to_terminal() {
        let width = crate::text::terminal_width();
        let mut text = if args.verbose {
            report::table::render(&report, width)
        } else {
            let mut t = report::summary::render(&report, width);
            t.push_str(&crate::text::wrap(
                "Every row, the peaks' formulas and the notes: -v; the charts: --html FILE",
                width,
                "  ",
            ));
            t.push('\n');
            t
        };
        if report.results.is_empty() {
            text = "the run has no points\n".into();
        }
        return crate::files::print(&text);
    }
    if let Some(dir) = &args.png {
        pngs(dir, &report)?;
    }
    if let Some(path) = &args.html {
        write(path, &report::html::render(&report))?;
    }
    if let Some(path) = &args.csv {
        let render = if args.csv_samples {
            report::csv::render_samples
        } else {
            report::csv::render
        };
        write(path, &render(&report))?;
    }
    if let Some(path) = &args.markdown {
        write(path, &report::markdown::render(&report))?;
    }
    if let Some(path) = &args.json {
        write(path, &report::json::render(stored))?;
    }
    Ok(())
}

/// What `--as VIEW` is written with: --html or --markdown, one run, no other layout.
fn check_view(args: &ReportArgs, view: View) -> anyhow::Result<()> {
    let (name, formats) = match view {
        View::Assignment => ("assignment", "--html FILE or --markdown FILE"),
        View::Card => ("card", "--png DIR or --html FILE"),
    };
    let refuse = |what: &str| -> anyhow::Result<()> {
        Err(crate::error::UsageError(format!(
            "--as {name} lays out one run with {formats}; {what}"
        ))
        .into())
    };
    if args.inputs.len() > 1 {
        return refuse("give one RUN");
    }
    if args.pivot.is_some() {
        return refuse("its pivots are its own: drop --pivot");
    }
    if args.csv.is_some() || args.csv_samples {
        return refuse("drop --csv (report RUN --csv FILE writes the points)");
    }
    if args.json.is_some() {
        return refuse("drop --json (report RUN --json FILE writes the document)");
    }
    let given = match view {
        View::Assignment => args.html.is_some() || args.markdown.is_some(),
        View::Card => {
            if args.markdown.is_some() {
                return refuse("drop --markdown");
            }
            args.html.is_some() || args.png.is_some()
        }
    };
    if !given {
        return refuse("give one of them");
    }
    Ok(())
}

/// `--as assignment`: the hand-in as HTML and Markdown, and the charts as PNG files (which the
/// Markdown links).
fn hand_in(args: &ReportArgs, report: &Report) -> anyhow::Result<()> {
    if let Some(dir) = &args.png {
        pngs(dir, report)?;
    }
    if let Some(path) = &args.html {
        write(path, &report::assignment::html::render(report))?;
    }
    if let Some(path) = &args.markdown {
        write(
            path,
            &report::assignment::markdown::render(report, args.png.as_deref()),
        )?;
    }
    Ok(())
}

/// `--as card`: the card's summary image as DIR/card.png, its page as HTML.
fn card(args: &ReportArgs, report: &Report) -> anyhow::Result<()> {
    if let Some(dir) = &args.png {
        create_output_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        match report::card::png(report).context("cannot draw the card's summary")? {
            Some(bytes) => write(&dir.join("card.png"), &bytes)?,
            None => {
                return Err(crate::error::UsageError(
                    "the run has no figure with a peak or a tool's figure: no card image".into(),
                )
                .into());
            }
        }
    }
    if let Some(path) = &args.html {
        write(path, &report::html::render(report))?;
    }
    Ok(())
}

/// Every chart of `report` as a PNG file in `dir` (created if missing).
fn pngs(dir: &Path, report: &Report) -> anyhow::Result<()> {
    create_output_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut count = 0;
    for (name, png) in report::charts::pngs(report) {
        let bytes = png.with_context(|| format!("cannot draw {name}"))?;
        crate::files::write_output(&dir.join(&name), &bytes)
            .with_context(|| format!("cannot write {}", dir.join(&name).display()))?;
        count += 1;
    }
    eprintln!(
        "wrote {count} charts into {}",
        crate::text::printable(&dir.display().to_string())
    );
    Ok(())
}

/// The run's tables pivoted, in the formats asked for (the terminal without one).
fn pivoted(args: &ReportArgs, report: &Report, pivot: &report::pivot::Pivot) -> anyhow::Result<()> {
    let refuse = |what: &str| -> anyhow::Result<()> {
        Err(crate::error::UsageError(format!(
            "{what} writes the run's points, not a pivot; drop --pivot or {what}"
        ))
        .into())
    };
    if args.json.is_some() {
        return refuse("--json");
    }
    if args.png.is_some() {
        return refuse("--png");
    }
    if args.csv_samples {
        return refuse("--csv-samples");
    }
    let doc = pivot.document(report).map_err(crate::error::UsageError)?;
    if args.to_terminal() {
        let width = crate::text::terminal_width();
        return crate::files::print(&report::table::render_doc(&doc, width));
    }
    if let Some(path) = &args.html {
        write(path, &report::html::render_doc(&doc))?;
    }
    if let Some(path) = &args.csv {
        write(path, &report::pivot::csv(&doc.tables))?;
    }
    if let Some(path) = &args.markdown {
        write(path, &report::markdown::render_doc(&doc))?;
    }
    Ok(())
}

/// Two runs or more: the comparison report in HTML, CSV or Markdown.
fn compare(
    args: &ReportArgs,
    runs: &[Report],
    display: &crate::units::Display,
) -> anyhow::Result<()> {
    let refuse = |what: &str| -> anyhow::Result<()> {
        Err(crate::error::UsageError(format!(
            "{what} shows one run; give one RUN, or --html, --csv or --markdown for the comparison"
        ))
        .into())
    };
    if args.png.is_some() {
        return refuse("--png");
    }
    if args.json.is_some() {
        return refuse("--json");
    }
    if args.csv_samples {
        return refuse("--csv-samples");
    }
    if args.pivot.is_some() {
        return refuse("--pivot");
    }
    if args.to_terminal() {
        return Err(crate::error::UsageError(
            "a comparison is written with --html, --csv or --markdown FILE; on the terminal, use peakbench compare A B".into(),
        )
        .into());
    }
    let criteria = crate::history::compare::Criteria {
        alpha: args.alpha,
        threshold: args.threshold / 100.0,
        // Decided for each later run against the baseline, by their hardware.
        same_machine: true,
    };
    let names: Vec<String> = args
        .inputs
        .iter()
        .map(|i| crate::text::printable(i))
        .collect();
    let cmp = report::compare::Comparison::of(runs, &names, criteria, display);
    if cmp.rows.is_empty() {
        return Err(crate::error::UsageError(format!(
            "runs {} have no point in common (same workload, metric and parameters)",
            names.join(", ")
        ))
        .into());
    }
    if let Some(path) = &args.html {
        write(path, &cmp.html())?;
    }
    if let Some(path) = &args.csv {
        write(path, &cmp.csv())?;
    }
    if let Some(path) = &args.markdown {
        write(path, &cmp.markdown())?;
    }
    Ok(())
}
