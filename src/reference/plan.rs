//! Which tool will give which planned point its reference figure, which points will have none
//! and why, and about how long the tools will run: for `run --dry-run` and `--budget` with
//! `--reference`. The points are the ones a request will measure, as records without figures
//! ([`crate::app::Request::planned`]); each is asked of the adapters exactly as the measured
//! record will be.

use super::{Availability, Job, Limits, MAX_RUNS, RefContext, jobs, none_installed};
use crate::results::ResultRecord;
use std::time::Duration;

/// Points named in one line before "and N more".
const NAMED: usize = 6;

/// The reference plan of some points.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Coverage {
    /// "sysbench: RS 8 B, WS 8 B (4 points)", "none: RWR 1 KiB (mbw cannot run this point: …)".
    pub lines: Vec<String>,
    /// Points that will get a figure, and points in all.
    pub covered: usize,
    pub points: usize,
    /// About how long the tools run: each distinct run once per repetition.
    pub time: Duration,
}

/// The plan for `records` (planned points, each with as many samples as it will have
/// repetitions) with the tools `ctx` finds, within `limits`.
pub fn coverage(records: &[ResultRecord], ctx: &RefContext, limits: Limits) -> Coverage {
    ctx.set_limits(limits);
    let mut by_tool: Vec<(String, Vec<String>, usize)> = Vec::new();
    let mut missing: Vec<(String, Vec<String>, usize)> = Vec::new();
    let mut runs: Vec<(Job, usize)> = Vec::new();
    let mut covered = 0;
    for r in records {
        let name = point_name(r);
        let (group, key) = match jobs(r, ctx) {
            None => (
                &mut missing,
                format!("no tool measures {} {}", r.workload, r.metric),
            ),
            Some(Err(e)) => (&mut missing, e.to_string()),
            Some(Ok(candidates)) => {
                let absent = none_installed(&candidates).to_string();
                // The first tool found, and the others found where they run beside it.
                let found = candidates
                    .into_iter()
                    .filter(|j| matches!(ctx.availability(j.tool()), Availability::Found(_)));
                let usable: Vec<Job> = found
                    .enumerate()
                    .filter(|(i, j)| *i == 0 || (limits.others && j.tool().runs_beside()))
                    .map(|(_, j)| j)
                    .collect();
                if usable.is_empty() {
                    (&mut missing, absent)
                } else {
                    covered += 1;
                    let tools: Vec<&str> = usable.iter().map(|j| j.name(r)).collect();
                    let n = r.samples.len().clamp(1, limits.runs.clamp(1, MAX_RUNS));
                    for job in usable.iter() {
                        match runs.iter_mut().find(|(j, _)| j == job) {
                            Some((_, m)) => *m = (*m).max(n),
                            None => runs.push((job.clone(), n)),
                        }
                    }
                    (&mut by_tool, tools.join(" and "))
                }
            }
        };
        match group.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, names, count)) => {
                *count += 1;
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            None => group.push((key, vec![name], 1)),
        }
    }
    let list = |names: &[String]| {
        let mut shown = names[..names.len().min(NAMED)].join(", ");
        if names.len() > NAMED {
            shown.push_str(&format!(" and {} more", names.len() - NAMED));
        }
        shown
    };
    let plural = |n: usize| if n == 1 { "point" } else { "points" };
    let mut lines: Vec<String> = by_tool
        .iter()
        .map(|(tool, names, n)| format!("{tool}: {} ({n} {})", list(names), plural(*n)))
        .collect();
    lines.extend(
        missing
            .iter()
            .map(|(why, names, n)| format!("none: {} ({n} {}): {why}", list(names), plural(*n))),
    );
    Coverage {
        lines,
        covered,
        points: records.len(),
        time: crate::units::sum_estimates(
            runs.iter().map(|(job, n)| {
                crate::units::estimate_secs(job.estimate().as_secs_f64() * *n as f64)
            }),
        )
        .saturating_add(layouts(runs.iter().map(|(job, _)| job))),
    }
}

/// The time of laying out the files the runs share: once each time a run needs another
/// directory or size than the run before (see [`Job::layout`]).
fn layouts<'a>(runs: impl Iterator<Item = &'a Job>) -> Duration {
    // Each tool keeps its own file: its last directory and size.
    let mut last: Vec<(crate::ids::Tool, std::path::PathBuf, u64)> = Vec::new();
    let mut time = Duration::ZERO;
    for (tool, dir, size, t) in runs.filter_map(Job::layout) {
        match last.iter_mut().find(|(k, _, _)| *k == tool) {
            Some(kept) if (kept.1.as_path(), kept.2) == (dir.as_path(), size) => {}
            Some(kept) => {
                time = time.saturating_add(t);
                *kept = (tool, dir, size);
            }
            None => {
                time = time.saturating_add(t);
                last.push((tool, dir, size));
            }
        }
    }
    time
}

/// A point as a plan names it: its workload and what it sweeps but the threads ("RS 8 B
/// blocks", "THROUGHPUT TCP 128 KiB messages").
fn point_name(r: &ResultRecord) -> String {
    use crate::results::point::{Drawn, Role, fields};
    // A staircase is planned before its working sets are known: its probe names it.
    if let crate::results::params::Params::MemLatency(p) = &r.params {
        let probe = match p.probe {
            crate::results::params::Probe::Chase => "staircase".to_string(),
            other => other.to_string(),
        };
        return crate::text::printable(&format!("{} {probe}", r.workload));
    }
    let words: Vec<String> = fields(&r.params)
        .iter()
        .filter(|f| (f.role == Role::Axis && f.drawn != Drawn::Not) || f.key == "protocol")
        .filter(|f| !matches!(f.key, "threads" | "streams" | "server" | "target_rate_bps"))
        .filter_map(|f| f.words())
        .collect();
    crate::text::printable(
        &std::iter::once(r.workload.name().to_string())
            .chain(words)
            .collect::<Vec<_>>()
            .join(" "),
    )
}
