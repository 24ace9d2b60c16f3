//! `peakbench verify`: ceilings imposed on purpose, each measured by the normal benchmarks and
//! judged against the figure it implies within a stated tolerance. In a network namespace pair
//! of its own (a veth pair shaped by tc tbf, a TUN delay line, datagrams dropped by iptables'
//! statistic match), on a loop device over a tmpfs of its own capped by the block I/O
//! controller, and under a CPU quota of a control group of its own. Everything is made for the
//! run and removed after it, also on Ctrl-C, SIGTERM and SIGHUP (which cut the check under way
//! short) and on failure; a check the machine cannot impose is skipped with the reason. What a
//! run could not remove (a second Ctrl-C, SIGKILL) `verify --cleanup` finds by its names
//! ([`names`]) and removes.

mod cgroups;
mod cleanup;
mod delay_line;
mod loop_disk;
mod names;
mod net;
mod sandbox;

pub use cleanup::{Outcome as CleanupOutcome, run_cleanup};

use crate::app::{Recorder, Request};
use crate::measure::stats::Summary;
use crate::results::verify::{Check, Status, Verification};
use crate::results::{Metric, ResultRecord, Subsystem, Unit};
use std::time::Duration;

/// The groups of checks `--only` chooses from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Group {
    /// A link's rate (TCP, UDP), a delay, a loss rate.
    Net,
    /// A disk's IOPS and bandwidth caps.
    Disk,
    /// A CPU quota.
    Cpu,
}

impl Group {
    pub fn name(self) -> &'static str {
        match self {
            Group::Net => "net",
            Group::Disk => "disk",
            Group::Cpu => "cpu",
        }
    }
}

/// What `verify` runs.
#[derive(Debug, Clone)]
pub struct VerifyOptions {
    pub groups: Vec<Group>,
    /// Each repetition's measured time.
    pub duration: Duration,
    pub repeat: usize,
}

/// Makes a benchmark's request from its command line (without the program's name): the
/// command line's own parser, so that each check runs exactly what a user would type.
pub type Build<'a> = &'a dyn Fn(&[String]) -> anyhow::Result<Box<dyn Request>>;

/// The disk's caps and size.
const IOPS_CAP: u64 = 2000;
const BPS_CAP: u64 = 50_000_000;
const DISK_BYTES: u64 = 64 << 20;
/// The CPU quota: half a CPU, in periods of 100 ms (the kernel's, Docker's and Kubernetes'
/// default period; a 1 s repetition sees 10 of them). Each period the thread is throttled and
/// comes back to its core: at 20 ms periods (50 returns a second) a KVM guest's thread read
/// 0.942 × half its unlimited rate with a CV of 0.8 %, and 2 ms periods cost 8 % on another.
const QUOTA_US: u64 = 50_000;
const PERIOD_US: u64 = 100_000;

/// The run's checks so far, and how to measure one.
pub(crate) struct Checks<'a> {
    opts: &'a VerifyOptions,
    build: Build<'a>,
    rec: &'a mut Recorder,
    done: Vec<Check>,
}

impl Checks<'_> {
    /// Runs the benchmark of command line `line` into the recorder; the indexes of the records
    /// it added.
    fn measure(&mut self, line: &[String]) -> anyhow::Result<Vec<usize>> {
        let before = self.rec.results().len();
        let request = (self.build)(line)?;
        request.run(self.rec)?;
        Ok((before..self.rec.results().len()).collect())
    }

    /// The record at `index` of the report.
    fn record(&self, index: usize) -> Option<&ResultRecord> {
        self.rec.results().get(index)
    }

    /// The first of `points` that `pick` takes.
    fn find(&self, points: &[usize], pick: impl Fn(&ResultRecord) -> bool) -> Option<usize> {
        points
            .iter()
            .copied()
            .find(|i| self.record(*i).is_some_and(&pick))
    }

    /// Adds a check, says it on standard error and stores the checks so far (an interrupted
    /// run keeps them).
    fn push(&mut self, check: Check) -> anyhow::Result<()> {
        if !self.rec.quiet() {
            // In the units the user chose (--gbit, --mib), as the tables.
            let mut shown = check.clone();
            let figures = [check.expected, check.measured]
                .into_iter()
                .flatten()
                .map(|v| (check.subsystem, check.unit, v));
            let display = self.rec.display().fitted(figures);
            shown.convert(&|sub, unit| display.conversion(sub, unit));
            let line = format!(
                "peakbench verify: {}",
                crate::report::verify::one_line(&shown)
            );
            eprintln!(
                "{}",
                crate::text::wrap(&line, crate::text::terminal_width(), "  ")
            );
        }
        self.done.push(check);
        self.rec.set_verification(Verification {
            checks: self.done.clone(),
        })
    }

    /// The duration and repetition options of every benchmark line.
    fn timing(&self, duration_flag: &str) -> Vec<String> {
        self.timing_at_least(duration_flag, Duration::ZERO)
    }

    /// [`Checks::timing`] with each repetition `least` long at least.
    fn timing_at_least(&self, duration_flag: &str, least: Duration) -> Vec<String> {
        vec![
            duration_flag.into(),
            format!("{}ms", self.opts.duration.max(least).as_millis()),
            "--repeat".into(),
            self.opts.repeat.to_string(),
        ]
    }
}

/// A check not run, with the reason.
fn skipped(
    name: &str,
    group: Group,
    imposed: &str,
    (subsystem, unit): (Subsystem, Unit),
    why: &str,
) -> Check {
    Check {
        name: name.into(),
        group: group.name().into(),
        imposed: imposed.into(),
        status: Status::Skip,
        reason: why.into(),
        subsystem,
        unit,
        expected: None,
        measured: None,
        tolerance: None,
        tolerance_text: String::new(),
        commands: Vec::new(),
        points: Vec::new(),
    }
}

/// What a check expects and how it judges.
struct Judge {
    expected: f64,
    tolerance: f64,
    tolerance_text: String,
    /// How the expected figure follows from what was imposed.
    reason: String,
}

/// A check that measured: `measured` is the mean of record `point` (None: the benchmark gave
/// no such record), judged by `judge`.
fn judged(
    base: Check,
    line: &[String],
    points: Vec<usize>,
    measured: Option<f64>,
    judge: Judge,
) -> Check {
    let status = match measured {
        Some(m) => Check::judged(judge.expected, m, judge.tolerance),
        None => Status::Fail,
    };
    Check {
        status,
        reason: match measured {
            Some(_) => judge.reason,
            None => format!("{}; the benchmark gave no such figure", judge.reason),
        },
        expected: Some(judge.expected),
        measured,
        tolerance: Some(judge.tolerance),
        tolerance_text: judge.tolerance_text,
        commands: vec![command_line(line)],
        points,
        ..base
    }
}

/// A check whose benchmark failed: the error is its reason.
fn failed(base: Check, line: &[String], e: &anyhow::Error) -> Check {
    Check {
        status: Status::Fail,
        reason: format!("the benchmark failed: {e:#}"),
        commands: vec![command_line(line)],
        ..base
    }
}

/// Whether `e` is the user's Ctrl-C (which ends the run), not a check's failure.
fn interrupted(e: &anyhow::Error) -> bool {
    e.downcast_ref::<crate::error::Interrupted>().is_some()
}

/// "peakbench net --server …", as typed.
fn command_line(line: &[String]) -> String {
    std::iter::once("peakbench".to_string())
        .chain(line.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// Refuses, with one line, where `verify` cannot run: it needs root (namespaces, a loop device,
/// control groups) on Linux.
pub fn refuse_unless_able() -> anyhow::Result<()> {
    if !cfg!(target_os = "linux") {
        return Err(crate::error::UsageError("peakbench verify runs on Linux only".into()).into());
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err(crate::error::UsageError(
            "peakbench verify needs root: it makes network namespaces, a loop device and control groups of its own (run it with sudo)".into(),
        )
        .into());
    }
    Ok(())
}

/// Runs the checks of `opts` into `rec`; their outcome is in the report
/// ([`crate::results::Report::verification`]). An interruption (SIGINT, SIGTERM, SIGHUP) cuts
/// the check under way short and ends the run, with every check so far kept and everything
/// made removed.
pub fn run(opts: &VerifyOptions, build: Build, rec: &mut Recorder) -> anyhow::Result<()> {
    // A check judges whole points: one cut short is worth nothing, and its benchmark ends at
    // once instead of at the end of its time.
    crate::runner::stop::abandon_points();
    let mut checks = Checks {
        opts,
        build,
        rec,
        done: Vec::new(),
    };
    for group in [Group::Net, Group::Disk, Group::Cpu] {
        if !opts.groups.contains(&group) {
            continue;
        }
        if crate::runner::stop::requested() {
            return Err(crate::error::Interrupted.into());
        }
        match group {
            Group::Net => net::checks(&mut checks)?,
            Group::Disk => disk(&mut checks)?,
            Group::Cpu => cpu(&mut checks)?,
        }
    }
    let failed = checks
        .done
        .iter()
        .filter(|c| c.status == Status::Fail)
        .count();
    if failed > 0 {
        anyhow::bail!(
            "{failed} of {} checks failed (their figures and the reasons are in the table)",
            checks.done.len()
        );
    }
    Ok(())
}

/// The disk's checks: read IOPS and write bandwidth under the block I/O controller's caps.
fn disk(c: &mut Checks) -> anyhow::Result<()> {
    let iops_imposed = format!("{IOPS_CAP} read IOPS");
    let bps_imposed = format!("{} MB/s writes", BPS_CAP / 1_000_000);
    let iops_base = skipped(
        "disk iops",
        Group::Disk,
        &iops_imposed,
        (Subsystem::Disk, Unit::Iops),
        "",
    );
    let bps_base = skipped(
        "disk bandwidth",
        Group::Disk,
        &bps_imposed,
        (Subsystem::Disk, Unit::BytesPerSec),
        "",
    );
    let skip_both = |c: &mut Checks, why: &str| -> anyhow::Result<()> {
        for base in [&iops_base, &bps_base] {
            c.push(Check {
                reason: why.into(),
                ..base.clone()
            })?;
        }
        Ok(())
    };
    let disk = match loop_disk::LoopDisk::new(DISK_BYTES) {
        Ok(d) => d,
        Err(why) => return skip_both(c, &format!("no loop device over tmpfs: {why}")),
    };
    let name = names::group(std::process::id());
    let mut group = match cgroups::Group::new(cgroups::Controller::Io, &name) {
        Ok(g) => g,
        Err(why) => return skip_both(c, &format!("no block I/O control group: {why}")),
    };
    let caps = if group.v2 {
        group.set(
            "io.max",
            &format!("{} riops={IOPS_CAP} wbps={BPS_CAP}", disk.number),
        )
    } else {
        group
            .set(
                "blkio.throttle.read_iops_device",
                &format!("{} {IOPS_CAP}", disk.number),
            )
            .and_then(|()| {
                group.set(
                    "blkio.throttle.write_bps_device",
                    &format!("{} {BPS_CAP}", disk.number),
                )
            })
    };
    if let Err(why) = caps.and_then(|()| group.join()) {
        return skip_both(c, &format!("cannot cap the loop device: {why}"));
    }
    let device = disk.device.to_string_lossy().into_owned();
    for (base, workload, block, metric, cap) in [
        (&iops_base, "RR", "4K", Metric::Iops, IOPS_CAP as f64),
        // Blocks small enough that a second holds hundreds of them.
        (&bps_base, "WS", "64K", Metric::Throughput, BPS_CAP as f64),
    ] {
        let mut line = strings(&[
            "disk",
            "--file",
            &device,
            "--destructive",
            "--size",
            "64M",
            "--workload",
            workload,
            "--block-size",
            block,
            "--threads",
            "1",
            "--iodepth",
            "1",
            "--engine",
            "psync",
            // The controller lets a group start with a slice's worth at once and takes it back
            // after: past a second it runs at its cap.
            "--ramp",
            "1s",
        ]);
        line.extend(c.timing("--runtime"));
        let check = match c.measure(&line) {
            Ok(points) => {
                let unit = base.unit;
                let at = c.find(&points, |r| r.metric == metric && r.unit == unit);
                let measured = at.and_then(|i| c.record(i)).map(|r| r.summary.mean);
                judged(
                    base.clone(),
                    &line,
                    points,
                    measured,
                    Judge {
                        expected: cap,
                        tolerance: 0.03 * cap,
                        tolerance_text: "±3 %".into(),
                        reason: format!(
                            "the block I/O controller caps this process on a loop device over a file in a tmpfs of the run's, which is far faster uncapped; expected: the cap ({})",
                            if group.v2 { "io.max" } else { "blkio.throttle" }
                        ),
                    },
                )
            }
            Err(e) if interrupted(&e) => return Err(e),
            Err(e) => failed(base.clone(), &line, &e),
        };
        c.push(check)?;
    }
    group.leave().map_err(|e| anyhow::anyhow!(e))?;
    Ok(())
}

/// The CPU's check: one thread's DP throughput under a quota of half a CPU against the same
/// without it, measured just before and just after. A shared host moves the thread's own rate
/// from run to run (on a KVM guest, 57–76 GOPS between runs a few seconds apart), so the
/// expectation is the mean of every unlimited repetition and the tolerance widens to twice
/// their coefficient of variation where that exceeds 8 %: the check says how noisy it was
/// instead of crying wolf (the higher of the two runs, taken before, read the quota 8 % stingy
/// in 3 runs of 4 on such a guest).
fn cpu(c: &mut Checks) -> anyhow::Result<()> {
    let share = QUOTA_US as f64 / PERIOD_US as f64;
    let base = skipped(
        "cpu quota",
        Group::Cpu,
        &format!("{share} CPU quota"),
        (Subsystem::Cpu, Unit::OpsPerSec),
        "",
    );
    if let Some(q) = crate::sysinfo::cgroup::own_cpu_quota().filter(|q| q.cpus() < 1.0) {
        return c.push(Check {
            reason: format!(
                "this process runs under a CPU quota of {:.2} CPUs already: one unlimited thread cannot be measured",
                q.cpus()
            ),
            ..base
        });
    }
    let name = names::group(std::process::id());
    let mut group = match cgroups::Group::new(cgroups::Controller::Cpu, &name) {
        Ok(g) => g,
        Err(why) => {
            return c.push(Check {
                reason: format!("no CPU control group: {why}"),
                ..base
            });
        }
    };
    let mut line = strings(&["cpu", "--workload", "DP", "--threads", "1"]);
    // Ten periods at least: a repetition that is not a whole number of them gets a share of
    // one more or one less, up to ±33 % of a 150 ms repetition.
    line.extend(c.timing_at_least("--duration", Duration::from_micros(10 * PERIOD_US)));
    // The throughput point's repetitions.
    let samples = |c: &Checks, points: &[usize]| -> Vec<f64> {
        c.find(points, |r| r.metric == Metric::Throughput)
            .and_then(|i| c.record(i))
            .map(|r| r.samples.clone())
            .unwrap_or_default()
    };
    let free = match c.measure(&line) {
        Ok(points) => (samples(c, &points), points),
        Err(e) if interrupted(&e) => return Err(e),
        Err(e) => return c.push(failed(base, &line, &e)),
    };
    let limits = if group.v2 {
        group.set("cpu.max", &format!("{QUOTA_US} {PERIOD_US}"))
    } else {
        group
            .set("cpu.cfs_period_us", &PERIOD_US.to_string())
            .and_then(|()| group.set("cpu.cfs_quota_us", &QUOTA_US.to_string()))
    };
    if let Err(why) = limits.and_then(|()| group.join()) {
        return c.push(Check {
            reason: format!("cannot impose the quota: {why}"),
            ..base
        });
    }
    let limited = c.measure(&line);
    group.leave().map_err(|e| anyhow::anyhow!(e))?;
    let after = match c.measure(&line) {
        Ok(points) => (samples(c, &points), points),
        Err(e) if interrupted(&e) => return Err(e),
        Err(_) => (Vec::new(), Vec::new()),
    };
    let unlimited: Vec<f64> = free.0.iter().chain(&after.0).copied().collect();
    let check = match (limited, Summary::of(&unlimited)) {
        (Ok(points), Some(u)) if u.mean > 0.0 => {
            let expected = share * u.mean;
            let measured = Summary::of(&samples(c, &points)).map(|s| s.mean);
            let (relative, tolerance_text) = quota_tolerance(u.cv);
            let mut all = free.1.clone();
            all.extend(&points);
            all.extend(&after.1);
            let runs = |s: &[f64]| {
                Summary::of(s).map_or("none".to_string(), |s| {
                    crate::units::format_sig(s.mean / 1e9)
                })
            };
            judged(
                base,
                &line,
                all,
                measured,
                Judge {
                    expected,
                    tolerance: relative * expected,
                    tolerance_text,
                    reason: format!(
                        "a control group of the run's allows {QUOTA_US} µs of CPU time every {PERIOD_US} µs ({}); expected: {share} × the same thread without the quota, the mean of its {} repetitions just before and after ({} and {} GOPS, CV {:.1} %)",
                        if group.v2 {
                            "cpu.max"
                        } else {
                            "cpu.cfs_quota_us"
                        },
                        unlimited.len(),
                        runs(&free.0),
                        runs(&after.0),
                        100.0 * u.cv
                    ),
                },
            )
        }
        (Ok(_), _) => Check {
            status: Status::Fail,
            reason: "the run without the quota gave no throughput".into(),
            ..base
        },
        (Err(e), _) if interrupted(&e) => return Err(e),
        (Err(e), _) => failed(base, &line, &e),
    };
    c.push(check)
}

/// The quota check's relative tolerance and its words: ±8 % (a throttled thread's returns to
/// its core cost it a few per cent on virtual machines: see [`PERIOD_US`]), or twice the
/// coefficient of variation of the unlimited repetitions where the machine was noisier than
/// that allows. A quota not applied reads 2 × the expectation, one applied twice 0.5 ×.
fn quota_tolerance(cv: f64) -> (f64, String) {
    let noise = 2.0 * cv;
    if noise.is_finite() && noise > QUOTA_TOLERANCE {
        (noise, format!("±{:.0} % (noisy: 2 × CV)", 100.0 * noise))
    } else {
        (
            QUOTA_TOLERANCE,
            format!("±{:.0} %", 100.0 * QUOTA_TOLERANCE),
        )
    }
}

/// The quota check's tolerance on a quiet machine.
const QUOTA_TOLERANCE: f64 = 0.08;

#[cfg(test)]
mod tests {
    use super::*;

    /// The quota check passes a thread that lost a few per cent to its throttling and fails
    /// a quota not applied (twice the expectation) or applied twice (half of it), however
    /// noisy the unlimited runs were up to a CV of 20 %.
    #[test]
    fn the_quota_tolerance_catches_a_quota_not_applied() {
        for cv in [0.0, 0.008, 0.05, 0.2] {
            let (relative, text) = quota_tolerance(cv);
            let tolerance = relative * 1.0;
            assert_eq!(Check::judged(1.0, 0.942, tolerance), Status::Pass, "{text}");
            assert_eq!(Check::judged(1.0, 2.0, tolerance), Status::Fail, "{text}");
            assert_eq!(Check::judged(1.0, 0.5, tolerance), Status::Fail, "{text}");
        }
        assert_eq!(quota_tolerance(0.008).1, "±8 %");
        assert_eq!(quota_tolerance(0.1).1, "±20 % (noisy: 2 × CV)");
        assert_eq!(quota_tolerance(f64::NAN).1, "±8 %");
    }
}
