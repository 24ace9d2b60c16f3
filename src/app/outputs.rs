//! Where a run's results go: the files of each format, the terminal, the results database, and
//! the units they are printed in.

use crate::files::check_output_file;
use crate::report;
use crate::results::Report;
use crate::units::Display;
use anyhow::Context;
use std::path::PathBuf;

/// An exporter: a report written out (a pure function of it).
type Exporter = fn(&Report, &mut dyn std::io::Write) -> std::io::Result<()>;

/// The outputs of a run, as the command line chose them.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    /// Each format's file, or `-` for standard output.
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    /// The CSV file has one row per repetition instead of one per point.
    pub csv_samples: bool,
    pub markdown: Option<PathBuf>,
    pub html: Option<PathBuf>,
    /// No progress bar and no table on the terminal.
    pub quiet: bool,
    /// Every point on standard error as it is measured.
    pub verbose: bool,
    /// Run the reference tool of each point as well.
    pub reference: bool,
    /// Store the run in the results database.
    pub history: bool,
    /// The results database; `None`: the default path.
    pub db: Option<PathBuf>,
    /// How figures are printed (never how they are stored).
    pub display: Display,
    /// Measure a point again (at most [`STRICT_RETRIES`] times) where its noise shows
    /// interference (`--strict`).
    pub strict: bool,
    /// The event stream's file (`--json-stream`), or `-` for standard output.
    pub json_stream: Option<PathBuf>,
}

/// The most times `--strict` measures a point again.
pub const STRICT_RETRIES: usize = 2;

impl Outputs {
    /// No files, no terminal output, no database: a run whose report is used elsewhere (a
    /// cluster rank's node-local profile).
    pub fn silent() -> Outputs {
        Outputs {
            quiet: true,
            ..Outputs::default()
        }
    }

    /// Each output file the options name (or `-`), with its option.
    fn named(&self) -> impl Iterator<Item = (&PathBuf, &'static str)> {
        [
            (&self.json, "--json"),
            (&self.csv, "--csv"),
            (&self.markdown, "--markdown"),
            (&self.html, "--html"),
            (&self.json_stream, "--json-stream"),
        ]
        .into_iter()
        .filter_map(|(p, name)| p.as_ref().map(|p| (p, name)))
    }

    /// True when some output goes to standard output, so the table must not.
    pub fn stdout_taken(&self) -> bool {
        self.named().any(|(p, _)| p.as_os_str() == "-")
    }

    /// Checks that each output file, and a results database the user named, can be created
    /// before any benchmark runs (the rule of [`crate::files::check_output_file`]).
    /// Two formats on standard output are refused: one stream cannot hold two documents.
    pub fn validate(&self) -> anyhow::Result<()> {
        let to_stdout: Vec<&str> = self
            .named()
            .filter(|(p, _)| p.as_os_str() == "-")
            .map(|(_, n)| n)
            .collect();
        if to_stdout.len() > 1 {
            return Err(crate::error::UsageError(format!(
                "{} all write to standard output (-), which can hold one document; give all but one a file name",
                to_stdout.join(" and ")
            ))
            .into());
        }
        for (path, _) in self.named() {
            check_output_file(path)?;
        }
        if let Some(path) = &self.json_stream
            && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err(crate::error::UsageError(format!(
                "--json-stream {}: a symbolic link, which a stream is never written through; give the file itself",
                crate::text::printable(&path.display().to_string())
            ))
            .into());
        }
        if self.history
            && let Some(db) = &self.db
        {
            check_output_file(db)?;
        }
        Ok(())
    }

    /// Each output with its exporter, and whether it prints in display units (the JSON
    /// document keeps the stored base units).
    fn outputs(&self) -> [(&Option<PathBuf>, Exporter, bool); 4] {
        // The JSON document is written as it is made (a multi-node run's is the largest);
        // the others are rendered, then written.
        let csv: Exporter = if self.csv_samples {
            |r, w| w.write_all(&report::csv::render_samples(r))
        } else {
            |r, w| w.write_all(&report::csv::render(r))
        };
        [
            (&self.json, report::json::write, false),
            (&self.csv, csv, true),
            (
                &self.markdown,
                |r, w| w.write_all(&report::markdown::render(r)),
                true,
            ),
            (
                &self.html,
                |r, w| w.write_all(&report::html::render(r)),
                true,
            ),
        ]
    }

    /// Writes the requested outputs that go to files (`stdout` false: after every point) or
    /// to standard output (`stdout` true: once, at the end). The copy in display units is made
    /// once for all the exporters that print, and only when one is asked for.
    fn write(&self, report: &Report, stdout: bool, streams: bool) -> anyhow::Result<()> {
        let mut shown: Option<Report> = None;
        for (path, render, displayed) in self.outputs() {
            let Some(path) = path.as_ref().filter(|p| (p.as_os_str() == "-") == stdout) else {
                continue;
            };
            // A pipe or a device (/dev/stdout, a FIFO) takes what is written to it, never a
            // replacement: it gets the report once, at the end, not a document a point.
            if !stdout && !streams && crate::files::is_stream(path) {
                continue;
            }
            let doc = match displayed {
                true => &*shown.get_or_insert_with(|| report.displayed(&self.display)),
                false => report,
            };
            let written = crate::files::write_output_with(path, |w| render(doc, w));
            if stdout {
                written.context("cannot write to standard output")?;
            } else {
                written.with_context(|| format!("cannot write {}", path.display()))?;
            }
        }
        Ok(())
    }

    /// Writes every requested file from the report as it stands (called after every point),
    /// but for pipes and devices ([`Outputs::write_final_files`] writes those).
    pub fn write_files(&self, report: &Report) -> anyhow::Result<()> {
        self.write(report, false, false)
    }

    /// Writes every requested file, pipes and devices too (once, at the end of the run,
    /// however it ends).
    pub fn write_final_files(&self, report: &Report) -> anyhow::Result<()> {
        self.write(report, false, true)
    }

    /// Writes the outputs that go to standard output (once, at the end).
    pub fn write_stdout(&self, report: &Report) -> anyhow::Result<()> {
        self.write(report, true, true)
    }

    /// What the terminal shows of `report`, in display units, in the terminal's width: every
    /// row with `--verbose`, else the summary (one compact table per subsystem).
    pub fn table(&self, report: Report) -> String {
        let shown = report.into_displayed(&self.display);
        if self.verbose {
            report::table::render(&shown, crate::text::terminal_width())
        } else {
            report::summary::render(&shown, crate::text::terminal_width())
        }
    }

    /// The files this run writes (not standard output), as the user named them.
    pub fn files(&self) -> Vec<String> {
        self.named()
            .filter(|(p, _)| p.as_os_str() != "-")
            .map(|(p, _)| crate::text::printable(&p.display().to_string()))
            .collect()
    }

    /// The results database's path.
    pub fn db_path(&self) -> anyhow::Result<PathBuf> {
        crate::history::db_path(self.db.as_deref())
    }
}
