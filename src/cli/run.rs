//! `peakbench run --profile quick|ci|assignment|FILE`: a whole suite in one run, one report.

use super::benchmark::{NOT_A_BENCHMARK, apply, request};
use super::calibration::Calibration;
use super::common::{OutputArgs, UsageError};
use super::fit::{Fit, POINT_FLOOR};
use super::{Cli, Command, clap_message};
use crate::app::setting::Setting;
use crate::app::suite::{self, Job};
use crate::app::{Recorder, suite::total};
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
    /// two minutes; card: a machine's card, what `peakbench card` runs) or a profile file
    /// (TOML, see profiles/quick.toml).
    #[arg(long, default_value = "quick")]
    pub profile: String,
    /// Check every job against this machine as it would run (options used, sizes, memory,
    /// places, servers' addresses), list the jobs with their command lines and estimated time,
    /// and measure nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Fit the run in this wall time (e.g. 5m, 30m), its estimates calibrated on the machine
    /// first (a second of probes): every job's measured time, warm-up, ramp and omit are
    /// shortened alike (down to each point's floor of timed work), then its repetitions to 2,
    /// then with --reference each tool's runs to one a point and none longer than a 40th of the
    /// budget, then repetitions to 1, sweeps thinned to their ends and the last jobs dropped
    /// (listed), until the estimate fits; a profile whose first job alone cannot fit is refused
    /// with the least budget.
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

/// Refuses `profile` where it sets a destructive option that `given` (the command line's
/// flags) does not permit, and a flag that no job of it uses (never ignored).
pub(super) fn refuse_destructive(profile: &Profile, given: &[&str]) -> anyhow::Result<()> {
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

pub(super) fn load(name: &str) -> anyhow::Result<Profile> {
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

pub(super) fn parse_budget(s: &str) -> Result<Duration, String> {
    crate::units::parse_duration_within(s, Duration::from_secs(7 * 24 * 3600), "a week")
        .map_err(|e| e.to_string())
}

/// A profile read once: its jobs, each parsed once by its subcommand's own parser (a job is
/// a command line written in TOML, and accepts what the command line does), as written and
/// with every sweep thinned to its ends (what a budget's fit may ask). The plans a budget
/// tries set what they fit on these parsed options: they never read the file or parse again.
pub(super) struct Read {
    pub profile: Profile,
    /// Each job's line and parsed options, as written.
    written: Vec<Parsed>,
    /// Each job with its sweeps thinned ([`cut`]): the written one where that changes nothing,
    /// or the refusal of its thinned line (said only where a fit thins).
    thinned: Vec<Result<Parsed, String>>,
}

/// A job's command line (without the program's name) and its parsed options.
struct Parsed {
    line: Vec<String>,
    command: Command,
}

impl Parsed {
    /// A copy (`None` for a command that is not a benchmark, which [`Read::of`] refuses).
    fn copy(&self) -> Option<Parsed> {
        Some(Parsed {
            line: self.line.clone(),
            command: clone_job(&self.command)?,
        })
    }
}

impl Read {
    /// `profile`'s jobs parsed, as written and thinned; the first refusal of a job as written.
    pub(super) fn of(profile: Profile) -> anyhow::Result<Read> {
        let hw = std::thread::available_parallelism().map_or(1, |n| n.get());
        let parse = |p: &Profile, i: usize| -> Result<Parsed, String> {
            let job = &p.jobs[i];
            let line = job.argv(&p.defaults, |k| accepts(job.subsystem, k), hw);
            let inherited: Vec<&str> = job
                .inherited(&p.defaults, |k| accepts(job.subsystem, k))
                .collect();
            #[cfg(test)]
            tests::PARSES.with(|n| n.set(n.get() + 1));
            let command = parse_job(&line, &inherited).map_err(|e| which(p, i, &e))?;
            if clone_job(&command).is_none() {
                return Err(which(p, i, &NOT_A_BENCHMARK));
            }
            Ok(Parsed { line, command })
        };
        let written = (0..profile.jobs.len())
            .map(|i| parse(&profile, i))
            .collect::<Result<Vec<_>, _>>()
            .map_err(UsageError)?;
        let mut thin = profile.clone();
        cut(
            &mut thin,
            Fit {
                thin_sweeps: true,
                ..Fit::default()
            },
        );
        let thinned = (0..thin.jobs.len())
            .map(|i| {
                let job = &thin.jobs[i];
                let line = job.argv(&thin.defaults, |k| accepts(job.subsystem, k), hw);
                if line == written[i].line {
                    written[i]
                        .copy()
                        .ok_or_else(|| which(&thin, i, &NOT_A_BENCHMARK))
                } else {
                    parse(&thin, i)
                }
            })
            .collect();
        Ok(Read {
            profile,
            written,
            thinned,
        })
    }
}

/// A job's error, saying which job of which profile.
fn which(p: &Profile, i: usize, e: &dyn std::fmt::Display) -> String {
    format!(
        "profile {}, job {} ({}): {e}",
        p.name,
        i + 1,
        p.jobs[i].subsystem
    )
}

/// Checks every job of the profile `read` on `sys` as it would run (`fit` applied: its sweeps
/// thinned and its last jobs dropped where it says so) before anything runs: a typo or an
/// impossible size in the last job fails at once. Each job's estimate is its own subsystem's
/// with its tools', scaled by the subsystem's factor in `cal`. Returns the profile as `fit`
/// cuts it, and its jobs.
pub(super) fn plan(
    read: &Read,
    sys: &SystemInfo,
    fit: Fit,
    refs: Option<&RefContext>,
    cal: &Calibration,
) -> anyhow::Result<(Profile, Vec<Job>)> {
    let mut profile = read.profile.clone();
    cut(&mut profile, fit);
    let mut jobs = Vec::new();
    for (i, job) in profile.jobs.iter().enumerate() {
        let refused = |e: &dyn std::fmt::Display| UsageError(which(&profile, i, e));
        let parsed = if fit.thin_sweeps {
            match &read.thinned[i] {
                Ok(p) => p,
                Err(e) => return Err(UsageError(e.clone()).into()),
            }
        } else {
            &read.written[i]
        };
        let Some(Parsed { line, mut command }) = parsed.copy() else {
            return Err(refused(&NOT_A_BENCHMARK).into());
        };
        // The job's options fitted, on its parsed options and in its line alike (an option
        // set here is the job's own, as on a command line copied from it): the line printed is
        // the job that runs.
        let changed = fitted(&command, &fit, sys);
        apply(&mut command, &changed).map_err(|e| refused(&e))?;
        let line = with_options(line, &changed);
        let checked = request(&command, sys).and_then(|r| Ok((r.check(sys)?, r)));
        let (estimate, request) = checked.map_err(|e| refused(&super::one_line(&e)))?;
        // With --reference: the tools' plan for the job's points, and their time (their own
        // estimates: most run for their point's time whatever the machine's speed, and the
        // run fits the jobs left again where one was slower).
        let references =
            refs.map(|ctx| coverage(&request.planned(sys), ctx, fit.reference_limits()));
        let tools = references.as_ref().map_or(Duration::ZERO, |c| c.time);
        // peakbench's own points at this machine's speed (the calibration's factor).
        let estimate = cal.scale(job.subsystem, estimate).saturating_add(tools);
        jobs.push(Job {
            experiment: job.experiment.clone(),
            estimate: estimate.saturating_add(JOB_OVERHEAD),
            least_timed: request.least_timed(sys),
            references,
            line,
            measure: Box::new(move |rec: &mut Recorder| request.run(rec)),
        });
    }
    Ok((profile, jobs))
}

/// The options of a job that sweep a parameter: [`cut`] keeps each one's ends.
const SWEEPS: &[&str] = &[
    "threads",
    "block-size",
    "iodepth",
    "streams",
    "message-size",
    "n",
    "array-size",
];

/// `profile` as `fit` cuts it: every sweep thinned to its first and last values, and only
/// its first jobs kept. Returns what it dropped, each with the index of its job: a job's
/// experiment (or "job N") and the values of each sweep ("D4 threads 2,4,8,12,24"), and the
/// jobs dropped whole (at the first one's index).
fn cut(profile: &mut Profile, fit: Fit) -> Vec<(usize, String)> {
    let id = |i: usize, job: &crate::profile::Job| match &job.experiment {
        Some(e) => e.split(':').next().unwrap_or(e).trim().to_string(),
        None => format!("job {}", i + 1),
    };
    let ids: Vec<String> = profile
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| id(i, j))
        .collect();
    // An experiment of several jobs (the assignment's two N2) names each by its number too.
    let name = |i: usize, _: &crate::profile::Job| {
        if ids.iter().filter(|n| **n == ids[i]).count() > 1 {
            format!("{} (job {})", ids[i], i + 1)
        } else {
            ids[i].clone()
        }
    };
    let mut dropped = Vec::new();
    if fit.thin_sweeps {
        for (i, job) in profile.jobs.iter_mut().enumerate() {
            let id = name(i, job);
            for (key, value) in job.options.iter_mut() {
                if let Some(inner) = thin(key, value) {
                    dropped.push((i, format!("{id} {key} {inner}")));
                }
            }
        }
        // A sweep the jobs inherit: said at the first job's index (before any job runs).
        for (key, value) in profile.defaults.iter_mut() {
            if let Some(inner) = thin(key, value) {
                dropped.push((0, format!("[defaults] {key} {inner}")));
            }
        }
    }
    if let Some(kept) = fit.jobs_kept
        && kept < profile.jobs.len()
    {
        let whole: Vec<String> = profile.jobs[kept..]
            .iter()
            .enumerate()
            .map(|(i, job)| name(kept + i, job))
            .collect();
        // A job dropped whole is not also listed as thinned.
        dropped.retain(|(i, _)| *i < kept);
        dropped.push((kept, format!("whole {}", whole.join(", "))));
        profile.jobs.truncate(kept);
    }
    dropped
}

/// A sweep (`key` one of [`SWEEPS`], a list of more than two values, or a text of them
/// separated by commas) cut to its ends; the values it dropped, joined by commas. A range
/// (`1..8`) is left whole.
fn thin(key: &str, value: &mut crate::profile::Value) -> Option<String> {
    if !SWEEPS.contains(&key) {
        return None;
    }
    match value {
        crate::profile::Value::List(l) if l.len() > 2 => {
            let inner = l[1..l.len() - 1].join(",");
            *l = vec![l[0].clone(), l[l.len() - 1].clone()];
            Some(inner)
        }
        crate::profile::Value::Text(t) => {
            let parts: Vec<&str> = t.split(',').map(str::trim).collect();
            if parts.len() <= 2 || parts.iter().any(|p| p.contains("..")) {
                return None;
            }
            let inner = parts[1..parts.len() - 1].join(",");
            *t = format!("{},{}", parts[0], parts[parts.len() - 1]);
            Some(inner)
        }
        _ => None,
    }
}

/// What `fit` drops of the jobs of the profile `read` from index `from` on (see [`cut`]; those before
/// have run), for the plan's line: "dropped: C3 threads 2,4; …", or nothing.
fn dropped(read: &Read, fit: Fit, from: usize) -> String {
    let cuts: Vec<String> = cut(&mut read.profile.clone(), fit)
        .into_iter()
        .filter(|(i, _)| *i >= from)
        .map(|(_, c)| c)
        .collect();
    if cuts.is_empty() {
        return String::new();
    }
    format!("dropped: {}", cuts.join("; "))
}

/// The options of a job that `fit` changes, at their fitted values (none for one that is not a
/// benchmark).
fn fitted(command: &Command, fit: &Fit, sys: &SystemInfo) -> Vec<Setting> {
    match command {
        Command::Cpu(a) => super::cpu::fitted(a, fit, sys),
        Command::Mem(a) => super::mem::fitted(a, fit, sys),
        Command::Disk(a) => super::disk::fitted(a, fit),
        Command::Net(a) => super::net::fitted(a, fit),
        _ => Vec::new(),
    }
}

/// A job's line (`--key=value` words, as [`crate::profile::Job::argv`] writes them) with each
/// of `options` set: its own word replaced, or added at the end.
fn with_options(line: Vec<String>, options: &[Setting]) -> Vec<String> {
    let mut line: Vec<String> = line
        .into_iter()
        .filter(|word| {
            !options.iter().any(|f| {
                word.strip_prefix("--")
                    .and_then(|w| w.strip_prefix(f.key()))
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('='))
            })
        })
        .collect();
    line.extend(options.iter().map(|f| match f.value() {
        Some(v) => format!("--{}={v}", f.key()),
        None => format!("--{}", f.key()),
    }));
    line
}

/// A copy of a benchmark's parsed options (a job is one; nothing else is kept).
fn clone_job(command: &Command) -> Option<Command> {
    Some(match command {
        Command::Cpu(a) => Command::Cpu(a.clone()),
        Command::Mem(a) => Command::Mem(a.clone()),
        Command::Disk(a) => Command::Disk(a.clone()),
        Command::Net(a) => Command::Net(a.clone()),
        _ => return None,
    })
}

/// The plan of the profile `read` that fits `budget` on this machine (`cal`): as written where it
/// does; else with every job's times scaled by the largest factor that fits (found by
/// bisection on the estimate; no point below its floor), then with at most 2 repetitions too,
/// then (with `--reference`) with each tool run once per point, then without the tools' runs
/// longer than a 40th of the budget, then with 1 repetition; where even that does not fit at
/// the floors, with every sweep thinned to its ends, then with the profile's last jobs
/// dropped, last first. An error with the least budget where even its first job alone does
/// not fit.
pub(super) fn fit_budget(
    read: &Read,
    sys: &SystemInfo,
    budget: Duration,
    refs: Option<&RefContext>,
    cal: &Calibration,
) -> anyhow::Result<(Profile, Vec<Job>, Fit)> {
    let full = plan(read, sys, Fit::default(), refs, cal)?;
    if total(&full.1) <= budget {
        return Ok((full.0, full.1, Fit::default()));
    }
    let longest = refs.map(|_| budget / 40);
    if let Some(fit) = fit_from(read, sys, budget, refs, cal, 0, longest)? {
        let (profile, jobs) = plan(read, sys, fit, refs, cal)?;
        return Ok((profile, jobs, fit));
    }
    Err(too_small(
        &read.profile.name,
        least(read, sys, refs, cal, longest)?,
        longest,
    ))
}

/// The least time the profile `read` takes on this machine: its first job alone at its
/// shortest.
fn least(
    read: &Read,
    sys: &SystemInfo,
    refs: Option<&RefContext>,
    cal: &Calibration,
    longest: Option<Duration>,
) -> anyhow::Result<Duration> {
    Ok(total(
        &plan(read, sys, shortest(refs, longest, Some(1)), refs, cal)?.1,
    ))
}

/// The refusal of a budget under the `least` profile `name` takes.
fn too_small(name: &str, least: Duration, longest: Option<Duration>) -> anyhow::Error {
    UsageError(format!(
        "profile {name} takes at least {} on this machine (its first job alone, its sweeps cut to their ends, 1 repetition of each point at its floor{}): give --budget {} or more",
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
    .into()
}

/// The shortest plan but for the jobs dropped: every point at its floor, 1 repetition, each
/// tool run once a point and none longer than `longest`, the sweeps thinned, the first
/// `jobs_kept` jobs kept.
fn shortest(refs: Option<&RefContext>, longest: Option<Duration>, kept: Option<usize>) -> Fit {
    Fit {
        time_scale: 0.0,
        max_repeat: Some(1),
        reference_runs: refs.map(|_| 1),
        reference_longest: longest,
        thin_sweeps: true,
        jobs_kept: kept,
    }
}

/// The fit under which the jobs of the profile `read` from index `from` on take `budget` at
/// most (the stages of [`fit_budget`], a tool's run at most `longest` from the fourth): None
/// where even job `from` alone, at its shortest, does not.
fn fit_from(
    read: &Read,
    sys: &SystemInfo,
    budget: Duration,
    refs: Option<&RefContext>,
    cal: &Calibration,
    from: usize,
    longest: Option<Duration>,
) -> anyhow::Result<Option<Fit>> {
    let estimate = |fit: Fit| -> anyhow::Result<Duration> {
        let jobs = plan(read, sys, fit, refs, cal)?.1;
        Ok(total(jobs.get(from..).unwrap_or_default()))
    };
    // The largest time scale under which `fit` fits (None where not even at the floors).
    let scale = |fit: Fit| -> anyhow::Result<Option<Fit>> {
        let at = |time_scale| Fit { time_scale, ..fit };
        if estimate(at(0.0))? > budget {
            return Ok(None);
        }
        let (mut lo, mut hi) = (0.0, 1.0);
        for _ in 0..20 {
            let mid = (lo + hi) / 2.0;
            if estimate(at(mid))? <= budget {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(Some(at(lo)))
    };
    let once = refs.map(|_| 1);
    let stages = [
        (None, None, None),
        (Some(2), None, None),
        (Some(2), once, None),
        (Some(2), once, longest),
        (Some(1), once, longest),
    ];
    // The first stage that leaves the points a tenth of their time; else the one that leaves
    // them most (the tools' runs are cut before the points are cut to their floors).
    let mut best: Option<Fit> = None;
    for (max_repeat, reference_runs, reference_longest) in stages {
        let Some(fit) = scale(Fit {
            time_scale: 0.0,
            max_repeat,
            reference_runs,
            reference_longest,
            ..Fit::default()
        })?
        else {
            continue;
        };
        if fit.time_scale >= MIN_TIME_SCALE {
            return Ok(Some(fit));
        }
        if best.is_none_or(|b| fit.time_scale > b.time_scale) {
            best = Some(fit);
        }
    }
    if best.is_some() {
        return Ok(best);
    }
    // Every point at its floor does not fit: the sweeps thinned, then the last jobs dropped
    // (not those already run).
    let jobs = read.profile.jobs.len();
    for kept in std::iter::once(None).chain(((from + 1)..jobs).rev().map(Some)) {
        if let Some(fit) = scale(Fit {
            time_scale: 0.0,
            ..shortest(refs, longest, kept)
        })? {
            return Ok(Some(fit));
        }
    }
    Ok(None)
}

/// A dry run's note on a job whose points, as the profile wrote them, time less than the
/// floor of a budget's fit ([`POINT_FLOOR`]): a budget never shortens them further, nor
/// lengthens work the profile fixed (the assignment's C3 is 10⁹ operations, whatever the
/// machine), so their figures are mostly the harness's start and stop on a fast machine.
fn below_floor(job: &Job) -> Option<String> {
    let t = job.least_timed?;
    (t < POINT_FLOOR).then(|| {
        format!(
            "(as written, a repetition's timed work is {:.2} ms at the rate its estimate assumes, under the {} ms floor of a budget's fit: kept as the profile fixed it)",
            t.as_secs_f64() * 1e3,
            POINT_FLOOR.as_millis()
        )
    })
}

/// The plan's words for a cap on repetitions: ", at most 2 repetitions", ", 1 repetition".
fn at_most_repetitions(r: usize) -> String {
    if r == 1 {
        ", 1 repetition".into()
    } else {
        format!(", at most {r} repetitions")
    }
}

/// The share of their time below which the points are cut only when the stages that cut
/// repetitions and the tools' runs do not leave more.
const MIN_TIME_SCALE: f64 = 0.1;

/// After each job of a run fitted to `budget`: when the jobs left are estimated to take more
/// than the time left (an estimate that was short on this machine), they are fitted again to
/// it — at their shortest where nothing fits — so that the run ends near its budget; the jobs
/// the new fit drops are not run.
/// `budget` is what the jobs have (the user's, less the calibration's probes), `first` the
/// plan's fit: a job a fit dropped stays dropped (the suite runs no more jobs than its last
/// plan has).
fn refit_as_it_goes<'a>(
    read: &'a Read,
    sys: &'a SystemInfo,
    budget: Duration,
    refs: Option<&'a RefContext>,
    cal: &'a Calibration,
    (first, quiet): (Fit, bool),
) -> impl FnMut(usize, Duration, Duration) -> Option<(Vec<Job>, crate::reference::Limits)> + 'a {
    let longest = refs.map(|_| budget / 40);
    let mut last = first;
    move |from, elapsed, planned_left| {
        let left = budget.saturating_sub(elapsed);
        // Within 5 % of the budget: not worth a new plan.
        if planned_left <= left + budget / 20 {
            return None;
        }
        let mut fit = match fit_from(read, sys, left, refs, cal, from, longest) {
            Ok(Some(fit)) => fit,
            Ok(None) => shortest(refs, longest, Some(from + 1)),
            Err(_) => return None,
        };
        if let Some(kept) = last.jobs_kept {
            fit.jobs_kept = Some(fit.jobs_kept.map_or(kept, |k| k.min(kept)));
        }
        let mut jobs = plan(read, sys, fit, refs, cal).ok()?.1;
        if jobs.len() <= from {
            return None;
        }
        let jobs = jobs.split_off(from);
        // Said once a fit: at the shortest, the next jobs keep it.
        if !quiet && last != fit {
            let cuts = dropped(read, fit, from);
            let line = format!(
                "peakbench run: {} left of --budget {} and the jobs left estimated at {}: jobs {}–{} fitted again (times × {:.3}{}{})",
                format_duration(left),
                format_duration(budget.saturating_add(cal.took())),
                format_duration(planned_left),
                from + 1,
                from + jobs.len(),
                fit.time_scale,
                fit.max_repeat.map_or(String::new(), at_most_repetitions),
                if cuts.is_empty() {
                    String::new()
                } else {
                    format!("; {cuts}")
                }
            );
            eprintln!(
                "{}",
                crate::text::wrap(
                    &crate::text::printable(&line),
                    crate::text::terminal_width(),
                    "  "
                )
            );
        }
        last = fit;
        Some((jobs, fit.reference_limits()))
    }
}

/// The subsystems of the profile `read` probed on this machine (the profile checked first), the disk's
/// where its disk jobs write.
fn calibrate(read: &Read, sys: &SystemInfo) -> anyhow::Result<Calibration> {
    let (profile, _) = plan(read, sys, Fit::default(), None, &Calibration::default())?;
    let mut used: Vec<Subsystem> = Vec::new();
    for job in &profile.jobs {
        if !used.contains(&job.subsystem) {
            used.push(job.subsystem);
        }
    }
    let disk = super::calibration::disk_settings(read.written.iter().map(|p| &p.command));
    Ok(Calibration::measure(&used, sys, disk.as_deref()))
}

/// The plan line's words on `budget` (the user's): how the plan was fitted to it and what the
/// calibration found, or that it fits as written; nothing without one.
fn budget_words(read: &Read, budget: Option<Duration>, fit: Fit, cal: &Calibration) -> String {
    match (budget, fit != Fit::default()) {
        (Some(b), true) => format!(
            " (to fit --budget {}, {}: times × {:.3}{}{}{})",
            format_duration(b),
            cal.describe(),
            fit.time_scale,
            fit.max_repeat.map_or(String::new(), at_most_repetitions),
            match (fit.reference_runs, fit.reference_longest) {
                (_, Some(l)) => format!(
                    ", each reference tool run once a point and none longer than {}",
                    format_duration(l)
                ),
                (Some(_), None) => ", each reference tool run once a point".into(),
                _ => String::new(),
            },
            match dropped(read, fit, 0) {
                d if d.is_empty() => d,
                d => format!("; {d}"),
            }
        ),
        (Some(b), false) => format!(
            " (within --budget {} as written, {})",
            format_duration(b),
            cal.describe()
        ),
        _ => String::new(),
    }
}

/// With `--budget` (not in a dry run, which measures nothing: its plan is fitted to the
/// estimates as they are), this machine's speed measured first; a budget no machine could
/// meet is refused before.
fn calibrated(
    args: &SuiteArgs,
    read: &Read,
    sys: &SystemInfo,
    refs: Option<&RefContext>,
) -> anyhow::Result<Calibration> {
    match args.budget {
        Some(b) if !args.dry_run => {
            let longest = refs.map(|_| b / 40);
            let least = least(read, sys, refs, &Calibration::default(), longest)?;
            if least > b {
                return Err(too_small(&read.profile.name, least, longest));
            }
            calibrate(read, sys)
        }
        _ => Ok(Calibration::default()),
    }
}

pub fn run(args: SuiteArgs, argv: Vec<String>) -> anyhow::Result<()> {
    let profile = load(&args.profile)?;
    run_profile(profile, args, argv)
}

/// Runs `profile` (read already: `args.profile` names it) as `args` say.
pub(super) fn run_profile(
    profile: Profile,
    args: SuiteArgs,
    argv: Vec<String>,
) -> anyhow::Result<()> {
    args.output.validate()?;
    refuse_destructive(&profile, &args.permits())?;
    // The profile is read and its jobs parsed here, once.
    let read = Read::of(profile)?;
    let sys = crate::sysinfo::collect(crate::sysinfo::ClockBudget::default());
    // The tools are looked up once for every plan the budget tries.
    let refs = args.output.reference.then(|| RefContext::new("."));
    let cal = calibrated(&args, &read, &sys, refs.as_ref())?;
    // The probes' time is spent out of the budget.
    let budget = args.budget.map(|b| b.saturating_sub(cal.took()));
    let (profile, jobs, fit) = match budget {
        Some(b) => fit_budget(&read, &sys, b, refs.as_ref(), &cal)?,
        None => {
            let (p, j) = plan(&read, &sys, Fit::default(), refs.as_ref(), &cal)?;
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
            budget_words(&read, args.budget, fit, &cal)
        );
        // The profile's words (its description, the sweeps cut) escaped for the terminal.
        eprintln!(
            "{}",
            crate::text::wrap(&crate::text::printable(&line), width, "  ")
        );
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
                let refs = match args.budget.and_then(|_| below_floor(job)) {
                    Some(note) => format!(
                        "{}\n{refs}",
                        crate::text::wrap(&format!("  {note}"), width, "    ")
                    ),
                    None => refs,
                };
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
                            crate::text::wrap(&crate::text::printable(&head), width, "    "),
                            crate::text::wrap(
                                &crate::text::printable(&format!("  {command}")),
                                width,
                                "    "
                            )
                        )
                    }
                    None => {
                        let line = format!(
                            "job {}: {command}  (about {})",
                            i + 1,
                            format_duration(job.estimate)
                        );
                        format!(
                            "{}\n{refs}",
                            crate::text::wrap(&crate::text::printable(&line), width, "    ")
                        )
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
    let outcome = match budget {
        Some(budget) => {
            let mut refit =
                refit_as_it_goes(&read, &sys2, budget, refs.as_ref(), &cal, (fit, quiet));
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
mod tests;
