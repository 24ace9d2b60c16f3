//! `peakbench run --profile quick|assignment|FILE`: a whole suite in one run, one report.

use super::common::{OutputArgs, UsageError};
use super::recorder::Recorder;
use super::{Cli, Command, clap_message};
use crate::profile::{BUILT_IN, Profile};
use clap::{Args, CommandFactory, Parser};
use std::time::Duration;

#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// A built-in profile (quick: every subsystem's headline points in under a minute;
    /// assignment: SPEC §1's whole matrix) or a profile file (TOML, see profiles/quick.toml).
    #[arg(long, default_value = "quick")]
    pub profile: String,
    /// List the jobs, their command lines and the estimated time; measure nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn load(name: &str) -> anyhow::Result<Profile> {
    if let Some((n, text)) = BUILT_IN.iter().find(|(n, _)| *n == name) {
        return Profile::parse(n, text).map_err(|e| anyhow::anyhow!(e));
    }
    let path = std::path::Path::new(name);
    if !path.is_file() {
        let names: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
        return Err(UsageError(format!(
            "no profile '{name}': give {} or a profile file (TOML)",
            names.join(", ")
        ))
        .into());
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("cannot read the profile {name}: {e}")))?;
    Profile::parse(name, &text).map_err(|e| UsageError(e).into())
}

/// Whether subcommand `sub` has the long option `key`.
fn accepts(sub: &str, key: &str) -> bool {
    Cli::command()
        .find_subcommand(sub)
        .is_some_and(|c| c.get_arguments().any(|a| a.get_long() == Some(key)))
}

pub(super) fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}

/// One job of a profile: its command line, estimated time and parsed command.
pub(super) struct Job {
    pub line: Vec<String>,
    pub estimate: Duration,
    pub command: Command,
}

/// Loads a profile and parses every job before anything runs: a typo in the last job fails at
/// once.
pub(super) fn plan(name: &str) -> anyhow::Result<(Profile, Vec<Job>)> {
    let profile = load(name)?;
    let hw = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut jobs = Vec::new();
    for (i, job) in profile.jobs.iter().enumerate() {
        let line = job.argv(&profile.defaults, |k| accepts(&job.subsystem, k), hw);
        let command = parse_job(&line).map_err(|e| {
            UsageError(format!(
                "profile {}, job {} ({}): {e}",
                profile.name,
                i + 1,
                job.subsystem
            ))
        })?;
        jobs.push(Job {
            estimate: job.estimate(&profile.defaults, hw),
            line,
            command,
        });
    }
    Ok((profile, jobs))
}

pub(super) fn total(jobs: &[Job]) -> Duration {
    jobs.iter().map(|j| j.estimate).sum()
}

pub fn run(args: SuiteArgs, argv: Vec<String>) -> anyhow::Result<()> {
    args.output.validate()?;
    let (profile, jobs) = plan(&args.profile)?;
    if !args.output.quiet || args.dry_run {
        eprintln!(
            "peakbench run: profile {} — {}; {} jobs, estimated {}",
            profile.name,
            profile.description,
            jobs.len(),
            format_duration(total(&jobs))
        );
    }
    if args.dry_run {
        for (i, job) in jobs.iter().enumerate() {
            println!(
                "job {}: peakbench {}  (about {})",
                i + 1,
                job.line.join(" "),
                format_duration(job.estimate)
            );
        }
        return Ok(());
    }
    let mut rec = Recorder::new(argv, &args.output);
    let n = jobs.len();
    let outcome = run_jobs(jobs, &mut rec).and_then(|failed| {
        if failed.is_empty() {
            Ok(())
        } else {
            let which: Vec<&str> = failed.iter().map(|(job, _)| job.as_str()).collect();
            Err(anyhow::anyhow!(
                "{} of {n} jobs failed: job {}; the other jobs' points are kept",
                failed.len(),
                which.join(", job ")
            ))
        }
    });
    rec.finish(outcome)
}

/// Runs the jobs one after the other into `rec`. A job that fails (io_uring disabled, a
/// missing directory, an absent server) is reported and the suite goes on with the next one;
/// the failed jobs are returned ("3 (disk)" and the error). An interruption stops the suite at
/// once (Err).
pub(super) fn run_jobs(
    jobs: Vec<Job>,
    rec: &mut Recorder,
) -> anyhow::Result<Vec<(String, String)>> {
    let n = jobs.len();
    let mut failed = Vec::new();
    for (i, job) in jobs.into_iter().enumerate() {
        if !rec.quiet() {
            eprintln!("job {}/{n}: peakbench {}", i + 1, job.line.join(" "));
        }
        let result = match job.command {
            Command::Cpu(a) => super::cpu::run_into(*a, rec),
            Command::Mem(a) => super::mem::run_into(*a, rec),
            Command::Disk(a) => super::disk::run_into(*a, rec),
            Command::Net(a) => super::net::run_into(*a, rec),
            _ => Err(UsageError(format!("job {}: not a benchmark", i + 1)).into()),
        };
        match result {
            Ok(()) => {}
            Err(e) if e.downcast_ref::<super::Interrupted>().is_some() => return Err(e),
            Err(e) => {
                eprintln!(
                    "peakbench: job {}/{n} ({}) failed: {e:#}; going on with the next job",
                    i + 1,
                    job.line[0]
                );
                failed.push((format!("{} ({})", i + 1, job.line[0]), format!("{e:#}")));
            }
        }
    }
    Ok(failed)
}

/// Parses one job's command line (without the program name).
fn parse_job(line: &[String]) -> Result<Command, String> {
    let full = std::iter::once("peakbench".to_string()).chain(line.iter().cloned());
    Cli::try_parse_from(full)
        .map(|c| c.command)
        .map_err(|e| clap_message(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_job_is_a_valid_command_line() {
        for (name, _) in BUILT_IN {
            let p = Profile::built_in(name).unwrap();
            for (i, job) in p.jobs.iter().enumerate() {
                let line = job.argv(&p.defaults, |k| accepts(&job.subsystem, k), 2);
                if let Err(e) = parse_job(&line) {
                    panic!("profile {name} job {}: {line:?}: {e}", i + 1);
                }
            }
        }
    }

    #[test]
    fn defaults_go_only_where_accepted() {
        assert!(accepts("cpu", "repeat") && accepts("disk", "iodepth"));
        assert!(!accepts("cpu", "iodepth") && !accepts("nope", "repeat"));
    }
}
