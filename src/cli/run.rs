//! `peakbench run --profile quick|assignment|FILE`: a whole suite in one run, one report.

use super::common::{OutputArgs, UsageError};
use super::{Cli, Command, clap_message};
use crate::app::suite::{self, Job};
use crate::app::{Recorder, suite::total};
use crate::profile::{BUILT_IN, Profile};
use crate::units::format_duration;
use clap::{Args, CommandFactory};

#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// A built-in profile (quick: every subsystem's headline points in under a minute;
    /// assignment: every workload of every subsystem at the assignment's sizes) or a profile
    /// file (TOML, see profiles/quick.toml).
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
    let bytes = crate::files::read_input(path, 1 << 20, "a profile is a short TOML file")
        .map_err(|e| UsageError(format!("the profile: {e}")))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| UsageError(format!("the profile {name} is not UTF-8 text")))?;
    Profile::parse(name, &text).map_err(|e| UsageError(e).into())
}

/// Whether subcommand `sub` has the long option `key`.
fn accepts(sub: &str, key: &str) -> bool {
    Cli::command()
        .find_subcommand(sub)
        .is_some_and(|c| c.get_arguments().any(|a| a.get_long() == Some(key)))
}

/// Loads a profile and parses every job before anything runs: a typo in the last job fails at
/// once.
pub(super) fn plan(name: &str) -> anyhow::Result<(Profile, Vec<Job>)> {
    let profile = load(name)?;
    let hw = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut jobs = Vec::new();
    for (i, job) in profile.jobs.iter().enumerate() {
        let line = job.argv(&profile.defaults, |k| accepts(&job.subsystem, k), hw);
        let inherited: Vec<&str> = job
            .inherited(&profile.defaults, |k| accepts(&job.subsystem, k))
            .collect();
        let command = parse_job(&line, &inherited).map_err(|e| {
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
            measure: measure(command),
        });
    }
    Ok((profile, jobs))
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
        let lines: String = jobs
            .iter()
            .enumerate()
            .map(|(i, job)| {
                format!(
                    "job {}: peakbench {}  (about {})\n",
                    i + 1,
                    job.line.join(" "),
                    format_duration(job.estimate)
                )
            })
            .collect();
        return crate::files::print(&lines);
    }
    let mut rec = Recorder::new(argv, args.output.outputs());
    let outcome = suite::run(jobs, &mut rec);
    rec.finish(outcome)
}

/// What a job's parsed command measures.
fn measure(command: Command) -> suite::Measure {
    Box::new(move |rec: &mut Recorder| match command {
        Command::Cpu(a) => super::cpu::run_into(*a, rec),
        Command::Mem(a) => super::mem::run_into(*a, rec),
        Command::Disk(a) => super::disk::run_into(*a, rec),
        Command::Net(a) => super::net::run_into(*a, rec),
        _ => {
            Err(UsageError("a profile job must be a benchmark (cpu, mem, disk, net)".into()).into())
        }
    })
}

/// Parses one job's command line (without the program name); the `inherited` options (from
/// the profile's [defaults]) count as not given by the job.
fn parse_job(line: &[String], inherited: &[&str]) -> Result<Command, String> {
    let full = std::iter::once("peakbench".to_string()).chain(line.iter().cloned());
    let mut command = Cli::parse_noting(full)
        .map(|c| c.command)
        .map_err(|e| clap_message(&e))?;
    let given = match &mut command {
        Command::Cpu(a) => Some(&mut a.output.given),
        Command::Mem(a) => Some(&mut a.output.given),
        Command::Disk(a) => Some(&mut a.output.given),
        Command::Net(a) => Some(&mut a.client.output.given),
        _ => None,
    };
    if let Some(g) = given {
        for key in inherited {
            g.forget(key);
        }
    }
    Ok(command)
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
                if let Err(e) = parse_job(&line, &[]) {
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
