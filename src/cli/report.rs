//! `peakbench report INPUT --html FILE [--png DIR]`: the self-contained HTML report of a run and
//! its charts as PNG files, from the JSON document the run wrote.

use crate::files::{check_output_dir, check_output_file, create_output_dir};
use crate::report;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(group(
    clap::ArgGroup::new("output")
        .args(["html", "png"])
        .required(true)
        .multiple(true)
))]
pub struct ReportArgs {
    /// The run: a run of the results database (an id from `peakbench history`, latest,
    /// latest~N) or a JSON document written by `--json`.
    #[arg(value_name = "INPUT")]
    pub input: String,
    /// Write the HTML report (inline SVG charts, no script, nothing fetched) to FILE, or `-` for
    /// stdout.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write every chart as a PNG file (1440 × 840 for a line chart, for slides) into DIR,
    /// created if missing (its parent must exist).
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,
    #[command(flatten)]
    pub db: super::history::DbArgs,
    #[command(flatten)]
    pub display: super::common::DisplayArgs,
    #[command(flatten)]
    pub limit: super::history::InputArgs,
}

pub fn run(args: ReportArgs) -> anyhow::Result<()> {
    if let Some(path) = &args.html {
        check_output_file(path)?;
    }
    if let Some(dir) = &args.png {
        check_output_dir(dir)?;
    }
    let report = super::history::load_run(&args.input, &args.db, &args.limit)?
        .displayed(&args.display.display());
    if let Some(dir) = &args.png {
        create_output_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for (name, png) in report::charts::pngs(&report) {
            let bytes = png.with_context(|| format!("cannot draw {name}"))?;
            let path = dir.join(&name);
            crate::files::write_output(&path, &bytes)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    if let Some(path) = &args.html {
        crate::files::write_output(path, &report::html::render(&report))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
