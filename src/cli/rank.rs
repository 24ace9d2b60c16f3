//! `peakbench rank RUN DIR…`: a machine among others (the ranking itself is
//! `report::rank`).

use super::common::{DbArgs, DisplayArgs, InputArgs, UsageError, load_run, parse_positive};
use crate::report::rank::Ranking;
use crate::results::fleet::OutlierRule;
use clap::Args;
use std::path::PathBuf;

/// The most runs a ranking reads: each document is bounded by --max-input, their number by
/// this.
pub const MAX_RUNS: usize = 1000;

#[derive(Debug, Args)]
pub struct RankArgs {
    /// The run ranked: a run id from `peakbench history`, latest, latest~N, or a JSON file.
    #[arg(value_name = "RUN")]
    pub run: String,
    /// The runs it is ranked among: JSON documents, or directories of them (their *.json files
    /// and their subdirectories', as a directory of cards holds them); the ranked run's own
    /// document among them is left out.
    #[arg(value_name = "DIR|FILE", num_args = 1.., required = true)]
    pub among: Vec<PathBuf>,
    /// A run of the ranked run's kind is an outlier for a figure when it is more than this many
    /// scaled median absolute deviations from the kind's median ...
    #[arg(long, default_value = "3.5", value_parser = parse_positive)]
    pub outlier_mad: f64,
    /// ... and more than this many percent away from it.
    #[arg(long, default_value = "10", value_parser = parse_positive)]
    pub outlier_percent: f64,
    /// Write the ranking as JSON (base units) to FILE, or to standard output for - (also when
    /// FILE is left out) instead of the table.
    #[arg(short = 'o', long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub display: DisplayArgs,
    #[command(flatten)]
    pub input: InputArgs,
}

pub fn run(args: RankArgs) -> anyhow::Result<()> {
    let ranked = load_run(&args.run, &args.db, &args.input)?;
    let files = super::history::import_files(&args.among)?;
    if files.len() > MAX_RUNS {
        return Err(UsageError(format!(
            "{} documents to rank among, more than {MAX_RUNS}: give fewer files or a smaller directory",
            files.len()
        ))
        .into());
    }
    let own = std::fs::canonicalize(&args.run).ok();
    let mut runs = vec![ranked];
    let mut names = vec![crate::text::printable(&args.run)];
    for path in &files {
        if own.is_some() && std::fs::canonicalize(path).ok() == own {
            continue;
        }
        let shown = crate::text::printable(&path.display().to_string());
        let report = super::common::read_as_written(
            path,
            args.input.max_input,
            "rank among",
            "give the documents as peakbench wrote them",
        )?;
        // The ranked run's own document, found by its content.
        if report.sha256.is_some() && report.sha256 == runs[0].sha256 {
            continue;
        }
        runs.push(report);
        names.push(shown);
    }
    if runs.len() < 2 {
        return Err(UsageError(
            "no other run to rank among: give the other machines' documents or their directory"
                .into(),
        )
        .into());
    }
    let rule = OutlierRule {
        mad_factor: args.outlier_mad,
        min_deviation: args.outlier_percent / 100.0,
        ..OutlierRule::default()
    };
    let refs: Vec<&crate::results::Report> = runs.iter().collect();
    let ranking = Ranking::of(&refs, &names, rule);
    if ranking.rows.is_empty() {
        return Err(UsageError(format!(
            "no other run has a point of {} (the same workload, metric and parameters)",
            names[0]
        ))
        .into());
    }
    if let Some(path) = &args.json {
        let text = format!("{}\n", serde_json::to_string_pretty(&ranking)?);
        return crate::files::write_output(path, text.as_bytes())
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()));
    }
    let display = args.display.display();
    crate::files::print(&ranking.text(&display, crate::text::terminal_width()))
}
