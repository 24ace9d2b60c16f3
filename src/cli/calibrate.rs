//! `peakbench calibrate`: how far this machine's figures move from run to run by themselves —
//! a profile (the `ci` one by default) run N times into the history, each point's run-to-run
//! noise, the gate's threshold and the smallest slowdown it catches, and the false alarms the
//! gate gives on pairs of those runs ([`crate::history::calibration`]); stored for
//! `compare --gate`.

use super::common::{DbArgs, DisplayArgs, OutputArgs, UsageError, count_in, parse_alpha};
use super::run::SuiteArgs;
use crate::history::calibration::{Calibration, MAX_RUNS};
use clap::Args;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// The profile run each time (a built-in one or a file, as `run --profile`): the one the
    /// gated runs will use.
    #[arg(long, default_value = "ci")]
    pub profile: String,
    /// How many runs (3 to 100): the more, the smaller the change the gate catches (its
    /// t quantile has runs − 1 degrees of freedom); from 5 on, the gate's false alarms are
    /// measured on pairs of them.
    #[arg(long, value_name = "N", default_value = "8", value_parser = parse_runs)]
    pub runs: usize,
    /// Fit the calibration in this wall time (e.g. 10m): after the first run, only as many
    /// runs as its time fits in the budget (3 at least, else refused with the budget needed).
    #[arg(long, value_parser = super::run::parse_budget)]
    pub budget: Option<Duration>,
    /// The gate's family-wise significance level the calibration is judged at.
    #[arg(long, default_value = "0.05", value_parser = parse_alpha)]
    pub alpha: f64,
    /// Also write the calibration as JSON to FILE (or - for standard output, instead of the
    /// table).
    #[arg(short = 'o', long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub display: DisplayArgs,
}

fn parse_runs(s: &str) -> Result<usize, String> {
    count_in(
        s,
        crate::history::run_noise::MIN_RUNS as u64,
        MAX_RUNS as u64,
    )
}

/// The runs a budget fits after a first run of `first` took, at most `asked`: the first and as
/// many more of its length as the rest holds.
fn runs_within(budget: Duration, first: Duration, asked: usize) -> usize {
    if first.is_zero() {
        return asked;
    }
    let rest = budget.saturating_sub(first).as_secs_f64() / first.as_secs_f64();
    (1 + rest.floor().min(MAX_RUNS as f64) as usize).min(asked)
}

pub fn run(args: CalibrateArgs, argv: Vec<String>) -> anyhow::Result<()> {
    let profile = super::run::load(&args.profile)?;
    // Refused before any run where the database cannot be written.
    let mut store = args.db.open()?;
    let mut runs: Vec<i64> = Vec::new();
    let mut planned = args.runs;
    let started = Instant::now();
    let mut first = Duration::ZERO;
    while runs.len() < planned {
        if crate::runner::stop::requested() {
            return Err(crate::error::Interrupted.into());
        }
        eprintln!(
            "peakbench calibrate: run {} of {planned} (profile {})",
            runs.len() + 1,
            crate::text::printable(&args.profile)
        );
        let before = store.runs()?.last().map_or(0, |r| r.id);
        let began = Instant::now();
        super::run::run_profile(profile.clone(), suite(&args), argv.clone())?;
        let id = store
            .runs()?
            .into_iter()
            .rev()
            .find(|r| r.id > before && r.command_line == argv)
            .map(|r| r.id)
            .ok_or_else(|| anyhow::anyhow!("the run was not stored in the results database"))?;
        runs.push(id);
        if runs.len() == 1 {
            first = began.elapsed();
            if let Some(budget) = args.budget {
                planned = runs_within(budget, first, args.runs);
                if planned < crate::history::run_noise::MIN_RUNS {
                    return Err(UsageError(format!(
                        "--budget {} fits {planned} run(s) of this profile ({} each here); a calibration needs 3 at least: give --budget {} or more (run {id} is stored)",
                        crate::units::format_duration(budget),
                        crate::units::format_duration(first),
                        crate::units::format_duration(first * 3)
                    ))
                    .into());
                }
            }
        }
    }
    let loaded = runs
        .iter()
        .map(|id| Ok((*id, store.load(*id)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut cal = Calibration::of(&loaded, &args.profile, args.alpha);
    if cal.points.is_empty() {
        return Err(anyhow::anyhow!(
            "no point was measured in 3 of the runs: nothing to calibrate"
        ));
    }
    cal.id = store.add_calibration(&cal)?;
    if let Some(path) = &args.json {
        let text = format!("{}\n", serde_json::to_string_pretty(&cal)?);
        crate::files::write_output(path, text.as_bytes())
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        if path.as_os_str() == "-" {
            return Ok(());
        }
        eprintln!("wrote {}", path.display());
    }
    let width = crate::text::terminal_width();
    crate::files::print(&crate::report::calibration::tables(
        &cal,
        &args.display.display(),
        width,
    ))?;
    eprintln!(
        "{}",
        crate::text::wrap(
            &format!(
                "stored as calibration {} ({} runs in {}, the first {})",
                cal.id,
                runs.len(),
                crate::units::format_duration(started.elapsed()),
                crate::units::format_duration(first)
            ),
            width,
            "  "
        )
    );
    Ok(())
}

/// One run of the profile: quiet (a line each), stored in the database.
fn suite(args: &CalibrateArgs) -> SuiteArgs {
    SuiteArgs {
        profile: args.profile.clone(),
        dry_run: false,
        budget: None,
        allow_overwrite: false,
        destructive: false,
        output: OutputArgs {
            json: None,
            json_stream: None,
            csv: None,
            csv_samples: false,
            markdown: None,
            html: None,
            quiet: true,
            verbose: false,
            reference: false,
            no_history: false,
            db: args.db.clone(),
            display: args.display,
            strict: false,
            given: Default::default(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A budget fits the first run and as many more of its length as remain, never more than
    /// asked; a first run of no time fits all.
    #[test]
    fn a_budget_fits_whole_runs_after_the_first() {
        let s = Duration::from_secs;
        assert_eq!(runs_within(s(600), s(60), 8), 8);
        assert_eq!(runs_within(s(300), s(60), 8), 5);
        assert_eq!(runs_within(s(100), s(60), 8), 1);
        assert_eq!(runs_within(s(30), s(60), 8), 1);
        assert_eq!(runs_within(s(30), Duration::ZERO, 8), 8);
    }
}
