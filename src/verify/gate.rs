//! The gate's power and false alarms (`--only gate`): for a CPU, a network and a disk point,
//! slowdowns of 3, 5 and 10 % imposed on purpose — a CPU quota just below the one CPU the
//! point's thread uses, a token bucket just below the link's rate, a read IOPS cap just below
//! the device's — and none, each judged by `compare --gate`'s test against a baseline run
//! measured just before, with the noise of a calibration of the same point made first.
//!
//! A trial is a baseline run, then (in an order rotated from trial to trial, so that a drift
//! of the host favours none) an unchanged run and a run under each slowdown; the gate decides
//! each against the baseline. The checks: the 10 % slowdown caught in every trial, the 5 % one
//! in 8 of 10 at least (the 3 % one reported beside it), and the unchanged run failed in 2 of
//! 10 at most (the gate's alpha is 5 %: more than 2 of 10 happens by chance about once in 90
//! runs of this check).
//!
//! The runs are measured apart from the report (a recorder of their own, which stores
//! nothing): the report holds the checks, each naming its command line and every trial's
//! change.

use super::checks::{Checks, Group, command_line, dp_thread, interrupted, skipped};
use crate::app::setting::{Benchmark, Setting};
use crate::app::{Outputs, Recorder};
use crate::history::compare::{Criteria, Pairing, RunToRun, compare_noisy};
use crate::history::run_noise::PointNoise;
use crate::results::params::Proto;
use crate::results::verify::{Check, Status};
use crate::results::{Metric, ResultRecord, Subsystem, Unit};
use crate::workload::disk::DiskWorkload;

/// The slowdowns imposed, as fractions of the baseline's rate.
pub(super) const SLOWDOWNS: [f64; 3] = [0.03, 0.05, 0.10];

/// The calibration's runs of each point, before the trials.
pub(super) const CALIBRATION_RUNS: usize = 8;

/// The CPU quota's period: a run's repetition of 500 ms sees five of them.
const PERIOD_US: u64 = 100_000;

/// The gate's significance level (compare's default).
const ALPHA: f64 = 0.05;

/// What the gate found over the trials: for the unchanged run and each slowdown, the trials
/// it failed, and each trial's changes (for the reason).
#[derive(Debug, Default)]
struct Tally {
    trials: usize,
    /// [unchanged, 3 %, 5 %, 10 %]: the trials the gate failed.
    failed: [usize; 4],
    /// [unchanged, 3 %, 5 %, 10 %]: each trial's measured change, in percent.
    changes: [Vec<f64>; 4],
    /// The calibration's noise of the point: its runs' CV, the gate's threshold (the largest
    /// change of its runs) and the smallest slowdown it catches, as fractions.
    noise: (f64, f64, f64),
}

/// Runs the gate's checks: the CPU's, the network's, then the disk's (each skipped with its
/// reason where the machine cannot impose its slowdowns).
pub(super) fn checks(c: &mut Checks) -> anyhow::Result<()> {
    cpu(c)?;
    if crate::runner::stop::requested() {
        return Err(crate::error::Interrupted.into());
    }
    super::net::in_pair(
        c,
        |c, pair, _| net(c, pair),
        |c, why| c.skip_all(bases(Subsystem::Net, "network"), &why),
    )?;
    if crate::runner::stop::requested() {
        return Err(crate::error::Interrupted.into());
    }
    disk(c)
}

/// The three checks of a subsystem's point, not run yet.
fn bases(subsystem: Subsystem, what: &str) -> Vec<Check> {
    let imposed = |s: &str| format!("{s} of a {what} point's rate");
    let sub = subsystem.name();
    vec![
        skipped(
            &format!("gate {sub} unchanged"),
            Group::Gate,
            &imposed("no slowdown"),
            (subsystem, Unit::Percent),
            "",
        ),
        skipped(
            &format!("gate {sub} 5 %"),
            Group::Gate,
            &imposed("a 5 % slowdown (3 % reported)"),
            (subsystem, Unit::Percent),
            "",
        ),
        skipped(
            &format!("gate {sub} 10 %"),
            Group::Gate,
            &imposed("a 10 % slowdown"),
            (subsystem, Unit::Percent),
            "",
        ),
    ]
}

/// The CPU's trials: one thread's DP throughput in a control group of the run's, its quota
/// two CPUs (none it can use) for the baseline and (1 − slowdown) of a CPU for the others.
fn cpu(c: &mut Checks) -> anyhow::Result<()> {
    let mut group = match super::cpu::free_group() {
        Ok(g) => g,
        Err(why) => return c.skip_all(bases(Subsystem::Cpu, "CPU"), &why),
    };
    if let Err(why) = group
        .limit_cpu(2 * PERIOD_US, PERIOD_US)
        .and_then(|()| group.join())
    {
        return c.skip_all(
            bases(Subsystem::Cpu, "CPU"),
            &format!("cannot join a CPU control group: {why}"),
        );
    }
    // Ten quota periods a repetition at least: a window that is not a whole number of them
    // reads one throttled slice more or less (±1 % of 500 ms at a 5 % slowdown).
    let bench = dp_thread()
        .with(Setting::Warmup(0))
        .with_all(timing_at_least(c, "duration", PERIOD_US * 10));
    let how = format!(
        "a CPU quota of (1 − slowdown) × {} ms every {} ms ({})",
        PERIOD_US / 1000,
        PERIOD_US / 1000,
        if group.v2 {
            "cpu.max"
        } else {
            "cpu.cfs_quota_us"
        }
    );
    let mut set = |slowdown: f64| {
        let quota = if slowdown == 0.0 {
            2 * PERIOD_US
        } else {
            ((1.0 - slowdown) * PERIOD_US as f64) as u64
        };
        group.limit_cpu(quota, PERIOD_US)
    };
    let outcome = trials(c, &bench, Metric::Throughput, &mut set);
    group.leave().map_err(|e| anyhow::anyhow!(e))?;
    judge(c, Subsystem::Cpu, "CPU", &bench, &how, outcome)
}

/// The network's trials: one TCP stream through the namespace pair, both ends shaped by a
/// token bucket at the verify rate for the baseline and (1 − slowdown) of it for the others.
fn net(c: &mut Checks, pair: &super::sandbox::NetPair) -> anyhow::Result<()> {
    let rate = super::net::RATE_BPS;
    let bench = super::net::throughput(Proto::Tcp)
        .with(Setting::Time("omit", std::time::Duration::from_millis(250)))
        .with_all(timing(c, "duration"));
    let how = format!(
        "tc tbf at (1 − slowdown) × {} Mbit/s on both ends of a veth pair",
        rate / 1_000_000
    );
    let mut set = |slowdown: f64| pair.limit_rate(((1.0 - slowdown) * rate as f64) as u64);
    let outcome = trials(c, &bench, Metric::Throughput, &mut set);
    let _ = pair.unlimit_rate();
    judge(c, Subsystem::Net, "network", &bench, &how, outcome)
}

/// The disk's trials: 4 KiB random reads at queue depth 1 on a loop device over a tmpfs of
/// the run's, its read IOPS capped at the verify cap for the baseline and (1 − slowdown) of it
/// for the others.
fn disk(c: &mut Checks) -> anyhow::Result<()> {
    let cap = super::disk::IOPS_CAP;
    let disk = match super::loop_disk::LoopDisk::new(super::disk::DISK_BYTES) {
        Ok(d) => d,
        Err(why) => {
            return c.skip_all(
                bases(Subsystem::Disk, "disk"),
                &format!("no loop device over tmpfs: {why}"),
            );
        }
    };
    let name = super::names::group(std::process::id());
    let mut group = match super::cgroups::Group::new(super::cgroups::Controller::Io, &name) {
        Ok(g) => g,
        Err(why) => {
            return c.skip_all(
                bases(Subsystem::Disk, "disk"),
                &format!("no block I/O control group: {why}"),
            );
        }
    };
    let capped = super::disk::cap(&group, &disk.number, super::disk::Cap::ReadIops(cap))
        .and_then(|()| group.join());
    if let Err(why) = capped {
        return c.skip_all(
            bases(Subsystem::Disk, "disk"),
            &format!("cannot cap the loop device: {why}"),
        );
    }
    let bench = super::disk::one_thread(
        &disk.device,
        DiskWorkload::Rr,
        4 << 10,
        std::time::Duration::from_secs(1),
    )
    .with_all(timing(c, "runtime"));
    let how = format!(
        "a read IOPS cap of (1 − slowdown) × {cap} on a loop device over a tmpfs ({})",
        if group.v2 { "io.max" } else { "blkio.throttle" }
    );
    let number = disk.number.clone();
    let mut set = |slowdown: f64| {
        let iops = ((1.0 - slowdown) * cap as f64).round() as u64;
        super::disk::cap(&group, &number, super::disk::Cap::ReadIops(iops))
    };
    let outcome = trials(c, &bench, Metric::Iops, &mut set);
    group.leave().map_err(|e| anyhow::anyhow!(e))?;
    judge(c, Subsystem::Disk, "disk", &bench, &how, outcome)
}

/// The timing options of a gate run: --duration (or --runtime) and --repeat as given, else
/// the gate's own (4 repetitions of 500 ms, as a ci profile's point).
fn timing(c: &Checks, key: &'static str) -> [Setting; 2] {
    timing_at_least(c, key, 0)
}

/// [`timing`] with each repetition `least_us` microseconds long at least.
fn timing_at_least(c: &Checks, key: &'static str, least_us: u64) -> [Setting; 2] {
    let (duration, repeat) = c.opts.gate_run;
    let duration = duration.max(std::time::Duration::from_micros(least_us));
    super::checks::timing(key, duration, repeat)
}

/// The calibration, then the trials, of the point `bench` measures (its record of `metric`),
/// each slowdown imposed by `set`; the tally, or why there is none.
fn trials(
    c: &mut Checks,
    bench: &Benchmark,
    metric: Metric,
    set: &mut dyn FnMut(f64) -> Result<(), String>,
) -> anyhow::Result<Result<Tally, String>> {
    let mut scratch = Recorder::new(Vec::new(), Outputs::silent()).with_system(c.rec.system());
    let mut measure =
        |c: &mut Checks, slowdown: f64| -> anyhow::Result<Result<ResultRecord, String>> {
            if crate::runner::stop::requested() {
                return Err(crate::error::Interrupted.into());
            }
            if let Err(why) = set(slowdown) {
                return Ok(Err(format!(
                    "cannot impose a {} % slowdown: {why}",
                    slowdown * 100.0
                )));
            }
            let before = scratch.results().len();
            let request = (c.build)(bench)?;
            match request.run(&mut scratch) {
                Ok(()) => {}
                Err(e) if interrupted(&e) => return Err(e),
                Err(e) => return Ok(Err(format!("the benchmark failed: {e:#}"))),
            }
            Ok(scratch.results()[before..]
                .iter()
                .find(|r| r.metric == metric && r.samples.len() >= 2)
                .cloned()
                .ok_or_else(|| "the benchmark gave no such figure".to_string()))
        };
    let mut calibration = Vec::new();
    for _ in 0..CALIBRATION_RUNS {
        match measure(c, 0.0)? {
            Ok(r) => calibration.push(r),
            Err(why) => return Ok(Err(why)),
        }
    }
    let refs: Vec<&ResultRecord> = calibration.iter().collect();
    let Some(noise) = PointNoise::of(&refs) else {
        return Ok(Err(
            "the calibration's runs gave no figure to compare".into()
        ));
    };
    let catches = noise
        .detectable(ALPHA, crate::history::compare::POWER)
        .max(noise.largest_change);
    let described = (noise.run_cv, noise.largest_change, catches);
    let points = [(noise.key.clone(), noise)].into_iter().collect();
    let gate = RunToRun {
        points: &points,
        gate: true,
    };
    let criteria = Criteria {
        alpha: ALPHA,
        threshold: 0.0,
        same_machine: true,
    };
    let mut tally = Tally {
        noise: described,
        ..Tally::default()
    };
    // The unchanged run and each slowdown, by index into the tally.
    let imposed: [f64; 4] = [0.0, SLOWDOWNS[0], SLOWDOWNS[1], SLOWDOWNS[2]];
    for trial in 0..c.opts.trials {
        let baseline = match measure(c, 0.0)? {
            Ok(r) => r,
            Err(why) => return Ok(Err(why)),
        };
        for k in 0..imposed.len() {
            let which = (k + trial) % imposed.len();
            let mut b = match measure(c, imposed[which])? {
                Ok(r) => r,
                Err(why) => return Ok(Err(why)),
            };
            // The same point: what was imposed (a CPU quota its record notes) is no parameter
            // of it here.
            b.params = baseline.params.clone();
            let ch = compare_noisy(
                std::slice::from_ref(&baseline),
                std::slice::from_ref(&b),
                criteria,
                Pairing::Identity,
                Some(gate),
            );
            let Some(ch) = ch.first() else {
                return Ok(Err("the runs' points did not pair".into()));
            };
            tally.changes[which].push(ch.change * 100.0);
            if ch.regression || ch.improvement {
                tally.failed[which] += 1;
            }
        }
        tally.trials += 1;
    }
    let _ = set(0.0);
    Ok(Ok(tally))
}

/// The subsystem's three checks from its tally (or each failed with the reason there is
/// none).
fn judge(
    c: &mut Checks,
    subsystem: Subsystem,
    what: &str,
    bench: &Benchmark,
    how: &str,
    outcome: anyhow::Result<Result<Tally, String>>,
) -> anyhow::Result<()> {
    let [unchanged, five, ten] =
        <[Check; 3]>::try_from(bases(subsystem, what)).expect("three checks");
    let tally = match outcome? {
        Ok(t) if t.trials > 0 => t,
        Ok(_) => return c.skip_all([unchanged, five, ten], "no trial was run (--trials 0)"),
        Err(why) => {
            for base in [unchanged, five, ten] {
                c.push(Check {
                    status: Status::Fail,
                    reason: why.clone(),
                    commands: vec![command_line(bench)],
                    ..base
                })?;
            }
            return Ok(());
        }
    };
    let n = tally.trials as f64;
    let share = |i: usize| 100.0 * tally.failed[i] as f64 / n;
    let changes = |i: usize| {
        tally.changes[i]
            .iter()
            .map(|x| format!("{x:+.1}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (cv, gate, catches) = tally.noise;
    let head = format!(
        "{how}; {CALIBRATION_RUNS} baseline runs calibrate the gate (runs CV {:.2} %, gate {:.1} %, catches {:.1} %), then each of {} trials compares a baseline run with an unchanged run and one under each slowdown (compare --gate's test, alpha {ALPHA})",
        cv * 100.0,
        gate * 100.0,
        catches * 100.0,
        tally.trials
    );
    let checks = [
        (
            unchanged,
            0,
            0.0,
            20.0,
            "at most 2 of 10 trials failed",
            format!("the unchanged runs' changes (%): {}", changes(0)),
        ),
        (
            five,
            2,
            100.0,
            20.0,
            "caught in 8 of 10 trials at least",
            format!(
                "the 5 % slowdown read (%): {}; a 3 % slowdown, reported only: caught in {} of {} trials, read (%): {}",
                changes(2),
                tally.failed[1],
                tally.trials,
                changes(1)
            ),
        ),
        (
            ten,
            3,
            100.0,
            0.0,
            "caught in every trial",
            format!("the 10 % slowdown read (%): {}", changes(3)),
        ),
    ];
    for (base, i, expected, tolerance, text, detail) in checks {
        let measured = share(i);
        c.push(Check {
            status: Check::judged(expected, measured, tolerance + 1e-9),
            reason: format!(
                "{head}; the gate failed {} of {} trials; {detail}",
                tally.failed[i], tally.trials
            ),
            expected: Some(expected),
            measured: Some(measured),
            tolerance: Some(tolerance),
            tolerance_text: text.into(),
            commands: vec![command_line(bench)],
            ..base
        })?;
    }
    Ok(())
}
