//! `peakbench card`: a machine's card in one command — the built-in profile `card` run with its
//! reference tools and fitted to a budget, written into one directory as card.json (the run),
//! card.html (the page: every subsystem's tables and charts, the findings, the peaks and the
//! system) and card.png (the summary image, `report::card`), and stored like any run.

use super::common::{DbArgs, DisplayArgs, OutputArgs, UsageError};
use super::run::SuiteArgs;
use crate::profile::Value;
use crate::results::Subsystem;
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Args)]
pub struct CardArgs {
    /// The directory the card is written into (created where missing; its parent must exist):
    /// card.json, card.html and card.png. Default: card-HOST-DATE in the current directory.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The wall time the card fits in, its probes and reference tools included (e.g. 3m, 600s;
    /// `run --budget` says how a profile is fitted).
    #[arg(long, default_value = "270s", value_parser = super::run::parse_budget)]
    pub budget: Duration,
    /// The network points against this server (HOST[:PORT], where `peakbench net serve
    /// --references` runs) instead of loopback.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub server: Option<String>,
    /// List the card's jobs as they would run, with their reference tools and the estimate,
    /// and measure nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress bar and no table on the terminal: one line saying where the card is.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Do not store the card's run in the results database.
    #[arg(long)]
    pub no_history: bool,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub display: DisplayArgs,
}

/// The card's files in `dir`.
fn files(dir: &Path) -> [PathBuf; 3] {
    ["card.json", "card.html", "card.png"].map(|f| dir.join(f))
}

/// card-HOST-2026-11-29T0652: the host's name kept to letters, digits, `.` and `-`.
fn default_dir(sys_host: Option<&str>) -> PathBuf {
    let host: String = sys_host
        .unwrap_or("host")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
        .take(64)
        .collect();
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    // 2026-11-29T06:52:10Z → 2026-11-29T0652.
    let stamp: String = now.get(..16).unwrap_or(&now).replace(':', "");
    PathBuf::from(format!(
        "card-{}-{stamp}",
        if host.is_empty() { "host" } else { &host }
    ))
}

pub fn run(args: CardArgs, argv: Vec<String>) -> anyhow::Result<()> {
    let mut profile = super::run::load("card")?;
    if let Some(server) = &args.server {
        for job in profile
            .jobs
            .iter_mut()
            .filter(|j| j.subsystem == Subsystem::Net)
        {
            job.options
                .retain(|(k, _)| k != "server" && k != "loopback");
            job.options
                .push(("server".into(), Value::Text(server.clone())));
        }
    }
    let dir = match &args.dir {
        Some(d) => d.clone(),
        None => {
            default_dir(crate::sysinfo::sysfs::read_trimmed("/proc/sys/kernel/hostname").as_deref())
        }
    };
    crate::files::check_output_dir(&dir)?;
    let [json, html, png] = files(&dir);
    if !args.dry_run {
        crate::files::create_output_dir(&dir)
            .map_err(|e| UsageError(format!("cannot create {}: {e}", dir.display())))?;
    }
    let suite = SuiteArgs {
        profile: "card".into(),
        dry_run: args.dry_run,
        budget: Some(args.budget),
        allow_overwrite: false,
        destructive: false,
        output: OutputArgs {
            // A dry run writes nothing (and makes no directory to write into).
            json: (!args.dry_run).then(|| json.clone()),
            json_stream: None,
            csv: None,
            csv_samples: false,
            markdown: None,
            html: (!args.dry_run).then_some(html),
            quiet: args.quiet,
            verbose: false,
            reference: true,
            no_history: args.no_history,
            db: args.db,
            display: args.display,
            strict: false,
            given: Default::default(),
        },
    };
    let outcome = super::run::run_profile(profile, suite, argv);
    if args.dry_run {
        return outcome;
    }
    // The summary of what was measured, also where the run ended early (its points are kept).
    if json.is_file() {
        // The document just written, read as any input is: at most --max-input's default.
        let report = super::common::read_json(&json, 256 << 20)?;
        match crate::report::card::png(&report)
            .map_err(|e| anyhow::anyhow!("cannot draw the card's summary: {e}"))?
        {
            Some(bytes) => {
                crate::files::write_output(&png, &bytes)
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", png.display()))?;
                eprintln!("peakbench card: wrote {}", png.display());
            }
            None => eprintln!(
                "peakbench card: no figure has a peak or a tool's figure: no summary image"
            ),
        }
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default directory names the host, kept to a file name's safe letters, and the
    /// minute.
    #[test]
    fn the_default_directory_is_safe_to_name() {
        let d = default_dir(Some("../evil\u{1b}[31m host"));
        let name = d.to_string_lossy();
        assert!(name.starts_with("card-..evil31mhost-20"), "{name}");
        assert!(!name.contains('/') && !name.contains(':'), "{name}");
        assert!(
            default_dir(None)
                .to_string_lossy()
                .starts_with("card-host-")
        );
        assert!(
            default_dir(Some("///"))
                .to_string_lossy()
                .starts_with("card-host-")
        );
    }
}
