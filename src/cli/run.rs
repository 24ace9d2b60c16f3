//! `peakbench run --profile quick|ci|assignment|FILE`: a whole suite in one run, one report.

use super::common::Fit;
use super::common::{OutputArgs, UsageError};
use super::{Cli, Command, clap_message};
use crate::app::suite::{self, Job};
use crate::app::{Recorder, Request, suite::total};
use crate::profile::{BUILT_IN, Profile};
use crate::reference::RefContext;
use crate::reference::plan::coverage;
use crate::results::Subsystem;
use crate::sysinfo::SystemInfo;
use crate::units::format_duration;
use clap::{Args, CommandFactory};
use std::time::Duration;

#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// A built-in profile (quick: every subsystem's headline points in under a minute; ci:
    /// the same points with six repetitions each, for `compare`; assignment: every experiment of
    /// the assignment's five reports, one job each; memory: the latency and bandwidth
    /// staircases, read/write mixes, loaded latency, the core-to-core and NUMA matrices in under
    /// two minutes) or a profile file (TOML,
    /// see profiles/quick.toml).
    #[arg(long, default_value = "quick")]
    pub profile: String,
    /// Check every job against this machine as it would run (options used, sizes, memory,
    /// places, servers' addresses), list the jobs with their command lines and estimated time,
    /// and measure nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Fit the run in this wall time (e.g. 5m, 30m): every job's measured time, warm-up, ramp
    /// and omit are shortened alike (down to each one's floor), then its repetitions to 2, then
    /// with --reference each tool's runs to one a point and none longer than a 40th of the
    /// budget, until the estimate fits; a profile that cannot fit is refused with the least
    /// budget.
    #[arg(long, value_parser = parse_budget)]
    pub budget: Option<Duration>,
    /// Let a profile file's disk jobs set `allow_overwrite = true` (an existing --file's
    /// contents are destroyed): a profile cannot decide that alone.
    #[arg(long)]
    pub allow_overwrite: bool,
    /// Let a profile file's disk jobs set `destructive = true` (a block device's data are
    /// destroyed): a profile cannot decide that alone.
    #[arg(long)]
    pub destructive: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl SuiteArgs {
    /// The destructive flags given, by their profile keys.
    fn permits(&self) -> Vec<&'static str> {
        [
            ("allow-overwrite", self.allow_overwrite),
            ("destructive", self.destructive),
        ]
        .into_iter()
        .filter_map(|(k, on)| on.then_some(k))
        .collect()
    }
}

/// `run`'s one-liner: the built-in profiles, by name.
pub fn about() -> String {
    let names: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
    format!(
        "A whole suite in one run, one report: a built-in profile ({}; `--help` says what \
         each measures) or a profile file (TOML); `--budget` fits it in a wall time",
        names.join(", ")
    )
}

/// Refuses profile `name` where it sets a destructive option that `given` (the command line's
/// flags) does not permit, and a flag that no job of it uses (never ignored).
pub(super) fn refuse_destructive(name: &str, given: &[&str]) -> anyhow::Result<()> {
    let profile = load(name)?;
    profile.refuse_destructive(given).map_err(UsageError)?;
    let sets = |key: &str| {
        let on = |o: &[(String, crate::profile::Value)]| {
            o.iter()
                .any(|(k, v)| k == key && *v != crate::profile::Value::Flag(false))
        };
        on(&profile.defaults) || profile.jobs.iter().any(|j| on(&j.options))
    };
    if let Some(unused) = given.iter().find(|k| !sets(k)) {
        return Err(UsageError(format!(
            "--{unused} lets a profile's job set {} = true, and no job of profile {} does; drop it",
            unused.replace('-', "_"),
            profile.name
        ))
        .into());
    }
    Ok(())
}

fn load(name: &str) -> anyhow::Result<Profile> {
    if let Some((n, text)) = BUILT_IN.iter().find(|(n, _)| *n == name) {
        return Profile::parse(n, text).map_err(|e| anyhow::anyhow!(e));
    }
    let path = std::path::Path::new(name);
    // Anything of that name is read as a profile file; read_input refuses what is not a
    // regular file (a FIFO, a device) before it is opened for long.
    if !path.exists() {
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
fn accepts(sub: Subsystem, key: &str) -> bool {
    Cli::command()
        .find_subcommand(sub.name())
        .is_some_and(|c| c.get_arguments().any(|a| a.get_long() == Some(key)))
}

/// A profile's time beyond its jobs' (each job's start and its banner).
const JOB_OVERHEAD: Duration = Duration::from_millis(100);

fn parse_budget(s: &str) -> Result<Duration, String> {
    crate::units::parse_duration_within(s, Duration::from_secs(7 * 24 * 3600), "a week")
        .map_err(|e| e.to_string())
}

/// Loads a profile and checks every job on `sys` as it would run (`fit` applied) before
/// anything runs: a typo or an impossible size in the last job fails at once. Each job's
/// estimate is its own subsystem's.
pub(super) fn plan(
    name: &str,
    sys: &SystemInfo,
    fit: Fit,
    refs: Option<&RefContext>,
) -> anyhow::Result<(Profile, Vec<Job>)> {
    let profile = load(name)?;
    let hw = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut jobs = Vec::new();
    for (i, job) in profile.jobs.iter().enumerate() {
        let line = job.argv(&profile.defaults, |k| accepts(job.subsystem, k), hw);
        let inherited: Vec<&str> = job
            .inherited(&profile.defaults, |k| accepts(job.subsystem, k))
            .collect();
        let which = |e: &dyn std::fmt::Display| {
            UsageError(format!(
                "profile {}, job {} ({}): {e}",
                profile.name,
                i + 1,
                job.subsystem
            ))
        };
        let mut command = parse_job(&line, &inherited).map_err(|e| which(&e))?;
        // The job's options fitted in its line: the line printed is the job that runs.
        let changed = fitted(&command, &fit);
        let line = if changed.is_empty() {
            line
        } else {
            let line = with_options(line, &changed);
            // An option set here is the job's own now, as on a command line copied from it.
            let inherited: Vec<&str> = inherited
                .into_iter()
                .filter(|k| !changed.iter().any(|(c, _)| c == k))
                .collect();
            command = parse_job(&line, &inherited).map_err(|e| which(&e))?;
            line
        };
        let checked = request(&command, sys).and_then(|r| Ok((r.check(sys)?, r)));
        let (estimate, request) = checked.map_err(|e| which(&super::one_line(&e)))?;
        // With --reference: the tools' plan for the job's points, and their time.
        let references =
            refs.map(|ctx| coverage(&request.planned(sys), ctx, fit.reference_limits()));
        let tools = references.as_ref().map_or(Duration::ZERO, |c| c.time);
        jobs.push(Job {
            experiment: job.experiment.clone(),
            estimate: estimate.saturating_add(tools).saturating_add(JOB_OVERHEAD),
            references,
            line,
            measure: Box::new(move |rec: &mut Recorder| request.run(rec)),
        });
    }
    Ok((profile, jobs))
}

/// The options of a job that `fit` changes, at their fitted values (none for one that is not a
/// benchmark).
fn fitted(command: &Command, fit: &Fit) -> Vec<(&'static str, String)> {
    match command {
        Command::Cpu(a) => super::cpu::fitted(a, fit),
        Command::Mem(a) => super::mem::fitted(a, fit),
        Command::Disk(a) => super::disk::fitted(a, fit),
        Command::Net(a) => super::net::fitted(a, fit),
        _ => Vec::new(),
    }
}

/// A job's line (`--key=value` words, as [`crate::profile::Job::argv`] writes them) with each
/// of `options` set: its own word replaced, or added at the end.
fn with_options(line: Vec<String>, options: &[(&str, String)]) -> Vec<String> {
    let mut line: Vec<String> = line
        .into_iter()
        .filter(|word| {
            !options.iter().any(|(key, _)| {
                word.strip_prefix("--")
                    .and_then(|w| w.strip_prefix(key))
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('='))
            })
        })
        .collect();
    line.extend(
        options
            .iter()
            .map(|(key, value)| format!("--{key}={value}")),
    );
    line
}

/// A job's request (its line already fitted).
pub(super) fn request(command: &Command, sys: &SystemInfo) -> anyhow::Result<Box<dyn Request>> {
    match command {
        Command::Cpu(a) => super::cpu::job(a),
        Command::Mem(a) => super::mem::job(a, sys),
        Command::Disk(a) => super::disk::job(a),
        Command::Net(a) => super::net::job(a),
        _ => {
            Err(UsageError("a profile job must be a benchmark (cpu, mem, disk, net)".into()).into())
        }
    }
}

/// The plan of profile `name` that fits `budget`: as written where it does; else with every
/// job's times scaled by the largest factor that fits (found by bisection on the estimate),
/// then with at most 2 repetitions too, then (with `--reference`) with each tool run once per
/// point, then without the tools' runs longer than a 40th of the budget; an error with the
/// least budget where even the shortest does not fit.
pub(super) fn fit_budget(
    name: &str,
    sys: &SystemInfo,
    budget: Duration,
    refs: Option<&RefContext>,
) -> anyhow::Result<(Profile, Vec<Job>, Fit)> {
    let full = plan(name, sys, Fit::default(), refs)?;
    if total(&full.1) <= budget {
        return Ok((full.0, full.1, Fit::default()));
    }
    let longest = refs.map(|_| budget / 40);
    if let Some(fit) = fit_from(name, sys, budget, refs, 0, longest)? {
        let (profile, jobs) = plan(name, sys, fit, refs)?;
        return Ok((profile, jobs, fit));
    }
    let once = refs.map(|_| 1);
    let estimate =
        |fit: Fit| -> anyhow::Result<Duration> { Ok(total(&plan(name, sys, fit, refs)?.1)) };
    let least = estimate(Fit {
        time_scale: 0.0,
        max_repeat: Some(2),
        reference_runs: once,
        reference_longest: longest,
    })?;
    Err(UsageError(format!(
        "profile {name} takes at least {} on this machine (each job at its shortest, 2 repetitions{}): give --budget {} or more",
        format_duration(least),
        match longest {
            Some(l) => format!(
                ", each reference tool run once a point and none longer than {}",
                format_duration(l)
            ),
            None => String::new(),
        },
        format_duration(least)
    ))
    .into())
}

/// The fit under which the jobs of profile `name` from index `from` on take `budget` at
/// most (the stages of [`fit_budget`], a tool's run at most `longest` in the last): None where
/// even the shortest does not.
fn fit_from(
    name: &str,
    sys: &SystemInfo,
    budget: Duration,
    refs: Option<&RefContext>,
    from: usize,
    longest: Option<Duration>,
) -> anyhow::Result<Option<Fit>> {
    let estimate = |fit: Fit| -> anyhow::Result<Duration> {
        let jobs = plan(name, sys, fit, refs)?.1;
        Ok(total(jobs.get(from..).unwrap_or_default()))
    };
    let once = refs.map(|_| 1);
    let stages = [
        (None, None, None),
        (Some(2), None, None),
        (Some(2), once, None),
        (Some(2), once, longest),
    ];
    // The first stage that leaves the points a tenth of their time; else the one that leaves
    // them most (the tools' runs are cut before the points are cut to nothing).
    let mut best: Option<Fit> = None;
    for (max_repeat, reference_runs, reference_longest) in stages {
        let fit = |time_scale| Fit {
            time_scale,
            max_repeat,
            reference_runs,
            reference_longest,
        };
        if estimate(fit(0.0))? > budget {
            continue;
        }
        let (mut lo, mut hi) = (0.0, 1.0);
        for _ in 0..20 {
            let mid = (lo + hi) / 2.0;
            if estimate(fit(mid))? <= budget {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        if lo >= MIN_TIME_SCALE {
            return Ok(Some(fit(lo)));
        }
        if best.is_none_or(|b| lo > b.time_scale) {
            best = Some(fit(lo));
        }
    }
    Ok(best)
}

/// The share of their time below which the points are cut only when the stages that cut
/// repetitions and the tools' runs do not leave more.
const MIN_TIME_SCALE: f64 = 0.1;

/// After each job of a run fitted to `budget`: when the jobs left are estimated to take more
/// than the time left (an estimate that was short on this machine), they are fitted again to
/// it — at their shortest where nothing fits — so that the run ends near its budget.
fn refit_as_it_goes<'a>(
    name: &'a str,
    sys: &'a SystemInfo,
    budget: Duration,
    refs: Option<&'a RefContext>,
    quiet: bool,
) -> impl FnMut(usize, Duration, Duration) -> Option<(Vec<Job>, crate::reference::Limits)> + 'a {
    let longest = refs.map(|_| budget / 40);
    let mut last: Option<Fit> = None;
    move |from, elapsed, planned_left| {
        let left = budget.saturating_sub(elapsed);
        // Within 5 % of the budget: not worth a new plan.
        if planned_left <= left + budget / 20 {
            return None;
        }
        let fit = match fit_from(name, sys, left, refs, from, longest) {
            Ok(Some(fit)) => fit,
            Ok(None) => Fit {
                time_scale: 0.0,
                max_repeat: Some(2),
                reference_runs: refs.map(|_| 1),
                reference_longest: longest,
            },
            Err(_) => return None,
        };
        let jobs = plan(name, sys, fit, refs).ok()?.1.split_off(from);
        // Said once a fit: at the shortest, the next jobs keep it.
        if !quiet && last != Some(fit) {
            eprintln!(
                "peakbench run: {} left of --budget {} and the jobs left estimated at {}: jobs {}–{} fitted again (times × {:.3})",
                format_duration(left),
                format_duration(budget),
                format_duration(planned_left),
                from + 1,
                from + jobs.len(),
                fit.time_scale
            );
        }
        last = Some(fit);
        Some((jobs, fit.reference_limits()))
    }
}

pub fn run(args: SuiteArgs, argv: Vec<String>) -> anyhow::Result<()> {
    args.output.validate()?;
    refuse_destructive(&args.profile, &args.permits())?;
    let sys = crate::sysinfo::collect(crate::sysinfo::ClockBudget::default());
    // The tools are looked up once for every plan the budget tries.
    let refs = args.output.reference.then(|| RefContext::new("."));
    let (profile, jobs, fit) = match args.budget {
        Some(b) => fit_budget(&args.profile, &sys, b, refs.as_ref())?,
        None => {
            let (p, j) = plan(&args.profile, &sys, Fit::default(), refs.as_ref())?;
            (p, j, Fit::default())
        }
    };
    let estimated = total(&jobs);
    let width = crate::text::terminal_width();
    if !args.output.quiet || args.dry_run {
        let line = format!(
            "peakbench run: profile {}{}; {} jobs, estimated {}{}",
            profile.name,
            if profile.description.is_empty() {
                String::new()
            } else {
                format!(" — {}", profile.description)
            },
            jobs.len(),
            format_duration(estimated),
            match (args.budget, fit.time_scale < 1.0) {
                (Some(b), true) => format!(
                    " (to fit --budget {}: times × {:.3}{}{})",
                    format_duration(b),
                    fit.time_scale,
                    fit.max_repeat
                        .map_or(String::new(), |r| format!(", at most {r} repetitions")),
                    match (fit.reference_runs, fit.reference_longest) {
                        (_, Some(l)) => format!(
                            ", each reference tool run once a point and none longer than {}",
                            format_duration(l)
                        ),
                        (Some(_), None) => ", each reference tool run once a point".into(),
                        _ => String::new(),
                    }
                ),
                (Some(b), false) => format!(" (within --budget {} as written)", format_duration(b)),
                _ => String::new(),
            }
        );
        eprintln!("{}", crate::text::wrap(&line, width, "  "));
        let machine = format!("machine: {}", crate::report::table::machine_line(&sys));
        eprintln!("{}", crate::text::wrap(&machine, width, "  "));
        let planned: Vec<_> = jobs.iter().filter_map(|j| j.references.as_ref()).collect();
        if !planned.is_empty() {
            let (covered, points) = planned
                .iter()
                .fold((0, 0), |(c, p), x| (c + x.covered, p + x.points));
            let time = crate::units::sum_estimates(planned.iter().map(|c| c.time));
            let line = format!(
                "references: a tool's figure for {covered} of {points} points; the tools run about {} (in the estimate)",
                format_duration(time)
            );
            eprintln!("{}", crate::text::wrap(&line, width, "  "));
        }
    }
    if args.dry_run {
        let lines: String = jobs
            .iter()
            .enumerate()
            .map(|(i, job)| {
                let command = format!("peakbench {}", job.line.join(" "));
                let refs: String = job
                    .references
                    .iter()
                    .flat_map(|c| &c.lines)
                    .map(|l| {
                        format!(
                            "{}\n",
                            crate::text::wrap(&format!("  reference {l}"), width, "    ")
                        )
                    })
                    .collect();
                match &job.experiment {
                    // The experiment, then the command line under it.
                    Some(e) => {
                        let head = format!(
                            "job {} — {e} (about {}):",
                            i + 1,
                            format_duration(job.estimate)
                        );
                        format!(
                            "{}\n{}\n{refs}",
                            crate::text::wrap(&head, width, "    "),
                            crate::text::wrap(&format!("  {command}"), width, "    ")
                        )
                    }
                    None => {
                        let line = format!(
                            "job {}: {command}  (about {})",
                            i + 1,
                            format_duration(job.estimate)
                        );
                        format!("{}\n{refs}", crate::text::wrap(&line, width, "    "))
                    }
                }
            })
            .collect();
        return crate::files::print(&lines);
    }
    let start = std::time::Instant::now();
    let quiet = args.output.quiet;
    let sys2 = sys.clone();
    let mut rec = Recorder::new(argv, args.output.outputs()).with_system(sys);
    rec.set_reference_limits(fit.reference_limits());
    let outcome = match args.budget {
        Some(budget) => {
            let mut refit = refit_as_it_goes(&args.profile, &sys2, budget, refs.as_ref(), quiet);
            suite::run_refitted(jobs, &mut rec, &mut refit)
        }
        None => suite::run(jobs, &mut rec),
    };
    if !quiet {
        eprintln!(
            "peakbench run: {} in {} (estimated {})",
            if outcome.is_ok() { "done" } else { "ended" },
            format_duration(start.elapsed()),
            format_duration(estimated)
        );
    }
    rec.finish(outcome)
}

/// Parses one job's command line (without the program name); the `inherited` options (from
/// the profile's [defaults]) count as not given by the job.
pub(super) fn parse_job(line: &[String], inherited: &[&str]) -> Result<Command, String> {
    let full = std::iter::once("peakbench".to_string()).chain(line.iter().cloned());
    let mut command = Cli::parse_noting(full)
        .map(|c| c.command)
        .map_err(|e| clap_message(&e))?;
    if let Some(output) = command.output_mut() {
        for key in inherited {
            output.given.forget(key);
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
                let line = job.argv(&p.defaults, |k| accepts(job.subsystem, k), 2);
                if let Err(e) = parse_job(&line, &[]) {
                    panic!("profile {name} job {}: {line:?}: {e}", i + 1);
                }
            }
        }
    }

    /// A fitted option replaces the job's own word (written `--key=value`), else is added;
    /// a longer option that starts with the key's name is left alone.
    #[test]
    fn fitted_options_replace_the_jobs_own() {
        let line: Vec<String> = ["mem", "--duration=1s", "--duration-x=1", "--repeat=5"]
            .map(String::from)
            .to_vec();
        let fitted = with_options(
            line,
            &[("duration", "250ms".into()), ("omit", "10ms".into())],
        );
        assert_eq!(
            fitted,
            [
                "mem",
                "--duration-x=1",
                "--repeat=5",
                "--duration=250ms",
                "--omit=10ms"
            ]
        );
    }

    /// Under a fit, a cpu job's line carries its fitted duration and repetitions, a LINPACK
    /// job's (whose duration is its solve's) only its repetitions; without one, nothing.
    #[test]
    fn a_jobs_fitted_options_are_those_the_fit_changes() {
        let fit = Fit {
            time_scale: 0.25,
            max_repeat: Some(2),
            reference_runs: None,
            reference_longest: None,
        };
        let parse = |words: &[&str]| {
            let line: Vec<String> = words.iter().map(|w| w.to_string()).collect();
            parse_job(&line, &[]).unwrap()
        };
        let dp = parse(&["cpu", "--workload=DP", "--duration=1s", "--repeat=3"]);
        assert_eq!(
            fitted(&dp, &fit),
            [("duration", "250ms".to_string()), ("repeat", "2".into())]
        );
        let linpack = parse(&["cpu", "--workload=LINPACK", "--n=1000", "--repeat=3"]);
        assert_eq!(fitted(&linpack, &fit), [("repeat", "2".to_string())]);
        assert!(fitted(&dp, &Fit::default()).is_empty());
        let latency = parse(&["mem", "--workload=LATENCY", "--repeat=2"]);
        // Its samples' 25 ms × 0.25, at least 5 ms.
        assert_eq!(fitted(&latency, &fit), [("duration", "6ms".to_string())]);
    }

    #[test]
    fn defaults_go_only_where_accepted() {
        assert!(accepts(Subsystem::Cpu, "repeat") && accepts(Subsystem::Disk, "iodepth"));
        assert!(!accepts(Subsystem::Cpu, "iodepth") && !accepts(Subsystem::Net, "nope"));
    }
}
