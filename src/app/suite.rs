//! A list of jobs run one after the other into one recorder: `peakbench run --profile`, and a
//! cluster rank's node-local profile.

use super::recorder::Recorder;
use crate::error::Interrupted;
use std::time::Duration;

/// What a job does: measures its points into the recorder.
pub type Measure = Box<dyn FnOnce(&mut Recorder) -> anyhow::Result<()>>;

/// One job: the command line it stands for (`line[0]` is its subsystem), its estimated time,
/// and the measurement.
pub struct Job {
    /// The experiment it reproduces, where the profile names it.
    pub experiment: Option<String>,
    pub line: Vec<String>,
    pub estimate: Duration,
    /// The least timed work of one repetition of its points, where they have one.
    pub least_timed: Option<Duration>,
    /// With `--reference`: which tool will measure which of its points, and the tools' time
    /// (in `estimate`).
    pub references: Option<crate::reference::plan::Coverage>,
    pub measure: Measure,
}

/// The estimated time of all the jobs (saturating: an estimate may be `Duration::MAX`).
pub fn total(jobs: &[Job]) -> Duration {
    crate::units::sum_estimates(jobs.iter().map(|j| j.estimate))
}

/// Runs the jobs one after the other into `rec`. A job that fails (io_uring disabled, a
/// missing directory, an absent server) is reported and the suite goes on with the next one;
/// the failed jobs are returned ("3 (disk)" and the error). An interruption stops the suite at
/// once (Err).
pub fn run_jobs(jobs: Vec<Job>, rec: &mut Recorder) -> anyhow::Result<Vec<(String, String)>> {
    run_jobs_refitted(jobs, rec, &mut |_, _, _| None)
}

/// Fits the jobs left again while a run goes (`run --budget`): given the index of the next
/// job, the time spent and the jobs left's estimate, the jobs from that index on (fewer where
/// the last are dropped) and what the reference tools may take, or None to keep the plan.
pub type Refit<'a> =
    dyn FnMut(usize, Duration, Duration) -> Option<(Vec<Job>, crate::reference::Limits)> + 'a;

/// [`run_jobs`], asking `refit` before each job after the first.
pub fn run_jobs_refitted(
    jobs: Vec<Job>,
    rec: &mut Recorder,
    refit: &mut Refit,
) -> anyhow::Result<Vec<(String, String)>> {
    let planned = jobs.len();
    let mut n = planned;
    let mut failed = Vec::new();
    rec.set_in_suite();
    let width = crate::text::terminal_width();
    let started = std::time::Instant::now();
    let mut left: std::collections::VecDeque<Job> = jobs.into();
    for i in 0..planned {
        if i > 0
            && let Some((jobs, limits)) = refit(i, started.elapsed(), total(left.make_contiguous()))
            && !jobs.is_empty()
            && jobs.len() <= left.len()
        {
            // The jobs the new fit drops are not run.
            n = i + jobs.len();
            left = jobs.into();
            rec.set_reference_limits(limits);
        }
        let Some(job) = left.pop_front() else { break };
        if crate::runner::stop::requested() {
            return Err(Interrupted.into());
        }
        if !rec.quiet() {
            // One line a job, cut to the terminal's width (-v: whole, and its time after).
            let line = format!(
                "job {}/{n} ({}about {}): peakbench {}",
                i + 1,
                job.experiment
                    .as_ref()
                    .map_or(String::new(), |e| format!("{e}; ")),
                crate::units::format_duration(job.estimate),
                // The options as the profile wrote them: escaped for the terminal.
                crate::text::printable(&job.line.join(" "))
            );
            if rec.verbose() {
                eprintln!("{}", crate::text::wrap(&line, width, "  "));
            } else {
                eprintln!("{}", crate::text::truncate(&line, width));
            }
        }
        let subsystem = job.line.first().cloned().unwrap_or_default();
        let start = std::time::Instant::now();
        let outcome = (job.measure)(rec);
        // The reference tools' files of this job are not the next job's.
        rec.release_reference_files();
        if rec.verbose() {
            eprintln!(
                "job {}/{n}: {} (estimated {})",
                i + 1,
                crate::units::format_duration(start.elapsed()),
                crate::units::format_duration(job.estimate)
            );
        }
        match outcome {
            Ok(()) => {}
            Err(e) if e.downcast_ref::<Interrupted>().is_some() => return Err(e),
            Err(e) => {
                eprintln!(
                    "peakbench: job {}/{n} ({subsystem}) failed: {e:#}; going on with the next job",
                    i + 1,
                );
                failed.push((format!("{} ({subsystem})", i + 1), format!("{e:#}")));
            }
        }
    }
    Ok(failed)
}

/// Runs a whole suite and says whether every job succeeded: an error names the failed jobs
/// (the other jobs' points are kept).
pub fn run(jobs: Vec<Job>, rec: &mut Recorder) -> anyhow::Result<()> {
    run_refitted(jobs, rec, &mut |_, _, _| None)
}

/// [`run`], the jobs left fitted again as it goes (see [`run_jobs_refitted`]).
pub fn run_refitted(jobs: Vec<Job>, rec: &mut Recorder, refit: &mut Refit) -> anyhow::Result<()> {
    let n = jobs.len();
    let failed = run_jobs_refitted(jobs, rec, refit)?;
    if failed.is_empty() {
        return Ok(());
    }
    let which: Vec<&str> = failed.iter().map(|(job, _)| job.as_str()).collect();
    Err(anyhow::anyhow!(
        "{} of {n} jobs failed: job {}; the other jobs' points are kept",
        failed.len(),
        which.join(", job ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(estimate: Duration) -> Job {
        Job {
            experiment: None,
            line: vec!["cpu".into()],
            estimate,
            least_timed: None,
            references: None,
            measure: Box::new(|_| Ok(())),
        }
    }

    /// Finding 5: jobs whose estimates saturated add up to the longest time, not a panic.
    #[test]
    fn the_total_of_saturated_estimates_saturates() {
        assert_eq!(
            total(&[job(Duration::MAX), job(Duration::MAX)]),
            Duration::MAX
        );
        assert_eq!(
            total(&[job(Duration::from_secs(1)), job(Duration::from_secs(2))]),
            Duration::from_secs(3)
        );
        assert_eq!(total(&[]), Duration::ZERO);
    }
}
