//! Options shared by the benchmark subcommands, their parsers, and the outputs they write.

use crate::report;
use crate::results::Report;
use crate::units;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// A user error: bad input that the user can fix; exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Timed repetitions of every point (after the warm-up).
    #[arg(long, default_value = "3", value_parser = parse_repeat)]
    pub repeat: usize,
    /// Untimed warm-up rounds before the repetitions.
    #[arg(long, default_value = "1", value_parser = parse_warmup)]
    pub warmup: usize,
    /// Target time of one repetition, e.g. 200ms or 1s.
    #[arg(long, default_value = "250ms", value_parser = parse_duration)]
    pub duration: std::time::Duration,
}

/// An exporter: a pure function from a report to bytes.
type Exporter = fn(&Report) -> Vec<u8>;

/// How figures are printed. Records always store base units (op/s, B/s, bit/s, s); these
/// options change only the tables, CSV, Markdown, HTML and charts.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct DisplayArgs {
    /// Print disk throughput in MiB/s instead of MB/s.
    #[arg(long)]
    pub mib: bool,
    /// Print network goodput in Gbit/s instead of Mbit/s.
    #[arg(long)]
    pub gbit: bool,
}

impl DisplayArgs {
    pub fn display(&self) -> units::Display {
        units::Display {
            mib: self.mib,
            gbit: self.gbit,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Write the results as JSON (schema: docs/json-schema.md) to FILE, or `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the results as CSV to FILE, or `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write the results as Markdown to FILE, or `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write a self-contained HTML report with charts to FILE, or `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// No progress bar and no table on the terminal.
    #[arg(long)]
    pub quiet: bool,
    /// Also run the standard tool of each point where one applies (likwid-bench, STREAM, fio,
    /// iperf3, sockperf; `peakbench reference check` lists them) and show its figure beside.
    #[arg(long)]
    pub reference: bool,
    /// Do not store the run in the results database.
    #[arg(long)]
    pub no_history: bool,
    #[command(flatten)]
    pub db: super::history::DbArgs,
    #[command(flatten)]
    pub display: DisplayArgs,
}

impl OutputArgs {
    /// No files, no terminal output, no database: a run whose report is used elsewhere (a
    /// cluster rank's node-local profile).
    pub fn silent() -> OutputArgs {
        OutputArgs {
            json: None,
            csv: None,
            markdown: None,
            html: None,
            quiet: true,
            reference: false,
            no_history: true,
            db: super::history::DbArgs { db: None },
            display: DisplayArgs::default(),
        }
    }

    /// True when some output goes to standard output, so the table must not.
    pub fn stdout_taken(&self) -> bool {
        [&self.json, &self.csv, &self.markdown, &self.html]
            .into_iter()
            .flatten()
            .any(|p| p.as_os_str() == "-")
    }

    /// Checks that each output file can be created before any benchmark runs.
    pub fn validate(&self) -> anyhow::Result<()> {
        for path in [&self.json, &self.csv, &self.markdown, &self.html]
            .into_iter()
            .flatten()
        {
            check_output_file(path)?;
        }
        Ok(())
    }

    /// Each output option with its exporter, and whether it prints in display units (the
    /// JSON document keeps the stored base units).
    fn outputs(&self) -> [(&Option<PathBuf>, Exporter, bool); 4] {
        [
            (&self.json, report::json::render, false),
            (&self.csv, report::csv::render, true),
            (&self.markdown, report::markdown::render, true),
            (&self.html, report::html::render, true),
        ]
    }

    /// Renders `report` for one output: in display units where the exporter prints.
    fn render(&self, report: &Report, render: Exporter, displayed: bool) -> Vec<u8> {
        if displayed {
            render(&report.displayed(&self.display.display()))
        } else {
            render(report)
        }
    }

    /// Writes every requested file from the report as it stands (called after every point).
    pub fn write_files(&self, report: &Report) -> anyhow::Result<()> {
        for (path, render, displayed) in self.outputs() {
            if let Some(path) = path.as_ref().filter(|p| p.as_os_str() != "-") {
                report::write_output(path, &self.render(report, render, displayed))
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
        }
        Ok(())
    }

    /// Writes the outputs that go to standard output (once, at the end).
    pub fn write_stdout(&self, report: &Report) -> anyhow::Result<()> {
        for (path, render, displayed) in self.outputs() {
            if path.as_ref().is_some_and(|p| p.as_os_str() == "-") {
                report::write_output(
                    std::path::Path::new("-"),
                    &self.render(report, render, displayed),
                )
                .context("cannot write to standard output")?;
            }
        }
        Ok(())
    }

    /// The terminal table of `report`, in display units.
    pub fn table(&self, report: &Report) -> String {
        report::table::render(&report.displayed(&self.display.display()))
    }
}

/// Checks that an output file can be created (`-`, standard output, always can): its
/// directory exists and it is not itself a directory.
pub fn check_output_file(path: &std::path::Path) -> anyhow::Result<()> {
    if path.as_os_str() == "-" {
        return Ok(());
    }
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(dir) = dir
        && !dir.is_dir()
    {
        return Err(UsageError(format!(
            "cannot write {}: directory {} does not exist; create it or choose another path",
            path.display(),
            dir.display()
        ))
        .into());
    }
    if path.is_dir() {
        return Err(UsageError(format!(
            "cannot write {}: it is a directory; give a file name",
            path.display()
        ))
        .into());
    }
    Ok(())
}

/// A count within `lo..=hi` as the integer type a value parser returns (the range keeps it in
/// that type); the message says what is wrong.
pub fn count_in<T: TryFrom<u64>>(s: &str, lo: u64, hi: u64) -> Result<T, String> {
    let n = units::parse_count(s, lo, hi).map_err(|e| e.to_string())?;
    T::try_from(n).map_err(|_| format!("'{s}' is out of range: {lo} to {hi}"))
}

pub fn parse_repeat(s: &str) -> Result<usize, String> {
    count_in(s, 1, 1000)
}

pub fn parse_warmup(s: &str) -> Result<usize, String> {
    count_in(s, 0, 100)
}

pub fn parse_threads(s: &str) -> Result<usize, String> {
    count_in(s, 1, 4096)
}

pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let d = units::parse_duration(s).map_err(|e| e.to_string())?;
    if d > std::time::Duration::from_secs(600) {
        return Err(format!(
            "'{s}' is out of range: at most 600s per repetition"
        ));
    }
    Ok(d)
}

/// Parses a positive finite number.
pub fn parse_positive(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a positive number")),
    }
}

/// Parses `NAME=VALUE` where NAME parses as `T` and VALUE is a positive number.
pub fn parse_assignment<T: std::str::FromStr<Err = String>>(s: &str) -> Result<(T, f64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}' is not WORKLOAD=VALUE, e.g. DP=16"))?;
    Ok((name.parse()?, parse_positive(value)?))
}
