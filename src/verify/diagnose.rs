//! The diagnosis's checks: a fault imposed on purpose on a point that runs without it, both
//! measured in the same run, and the faulted point's diagnosis judged against the fault: the
//! cause named first must be the fault's, and its share of the gap within ±20 % of the share
//! the fault took (ln(faulted / clean) / ln(faulted): the effect measured with and without
//! it). docs/diagnosis.md lists the faults and what each proves.

use super::checks::{Checks, Group, dp_thread, interrupted, skipped, twice};
use crate::app::setting::{Benchmark, Setting};
use crate::results::params::Side;
use crate::results::verify::{Check, Status};
use crate::results::{Metric, ResultRecord, Subsystem, Unit};
use std::time::Duration;

mod cpu;
mod disk;
mod memory;
mod net;

/// A cause's share may differ from the fault's effect by this much of the effect.
const SHARE_TOLERANCE: f64 = 0.20;

/// A faulted point this much below its clean one at least: a fault with less effect leaves
/// nothing to diagnose (the point stays within the host's noise of the clean one).
const LEAST_EFFECT: f64 = 0.85;

/// The faults, by the cause each must be diagnosed as, and what is imposed. More threads than
/// CPUs are imposed on a memory latency, not on a rate: a peak counts the cores a rate's
/// threads run on, so threads taking turns on them cost the point only their switches (4 DP
/// threads on 2 CPUs read 93.5 % of the peak against 91.9 % at 2 on one guest), where each
/// load's time counts the other threads' turns.
const FAULTS: [(&str, &str, Subsystem); 10] = [
    ("co-runner", "a busy process on its CPU", Subsystem::Cpu),
    ("cpu-quota", "a quota of half a CPU", Subsystem::Cpu),
    ("oversubscription", "2 threads on 1 CPU", Subsystem::Mem),
    ("isa", "a narrower ISA (--isa)", Subsystem::Cpu),
    (
        "problem-size",
        "LINPACK N = 200 vs a large N",
        Subsystem::Cpu,
    ),
    (
        "working-set",
        "TRIAD arrays in memory vs in L2",
        Subsystem::Mem,
    ),
    (
        "queue-depth",
        "4 KiB reads at QD 1 vs QD 32",
        Subsystem::Disk,
    ),
    (
        "page-cache",
        "rereads through the page cache",
        Subsystem::Disk,
    ),
    ("window", "a 64 KiB window, 10 ms RTT", Subsystem::Net),
    ("loss", "1 % of UDP datagrams dropped", Subsystem::Net),
];

/// A fault's check not run yet: its figures are shares of a gap, %.
fn base(cause: &str, imposed: &str, sub: Subsystem) -> Check {
    skipped(
        &format!("diagnose {cause}"),
        Group::Diagnose,
        imposed,
        (sub, Unit::Percent),
        "",
    )
}

/// The diagnosis's checks, one per fault (or its reason for being skipped).
pub(super) fn diagnose(c: &mut Checks) -> anyhow::Result<()> {
    for (cause, imposed, sub) in FAULTS {
        if crate::runner::stop::requested() {
            return Err(crate::error::Interrupted.into());
        }
        let base = base(cause, imposed, sub);
        let check = match cause {
            "co-runner" => cpu::co_runner(c, base)?,
            "cpu-quota" => cpu::quota(c, base)?,
            "isa" => cpu::isa(c, base)?,
            "window" => net::window(c, base)?,
            "queue-depth" => disk::queue_depth(c, base)?,
            "working-set" => memory::working_set(c, base)?,
            "page-cache" => disk::page_cache(c, base)?,
            "oversubscription" => cpu::oversubscription(c, base)?,
            "loss" => net::loss(c, base)?,
            _ => cpu::problem_size(c, base)?,
        };
        c.push(check)?;
    }
    Ok(())
}

/// One DP thread with `extra` set, and the run's timing (each repetition `least` long at
/// least).
fn one_thread(c: &mut Checks, extra: &[Setting], least: Duration) -> Benchmark {
    dp_thread()
        .with_all(extra.iter().cloned())
        .with_all(clock(c))
        .with_all(c.timing_at_least("duration", least))
}

/// `--clock-ghz` at the run's measured one-thread clock, where it is known: the peak of every
/// CPU point of the checks at one clock. A point's own clock probes, disturbed by the fault
/// or by the host, would otherwise leave its peak unknown now and then (a LINPACK point on a
/// shared host read "the probes disagree by more than 3 %", once in three runs).
fn clock(c: &mut Checks) -> Option<Setting> {
    let sys = c.rec.system();
    sys.cpu
        .measured_clock_ghz
        .get()
        .filter(|g| g.is_finite() && **g > 0.0)
        .map(|g| Setting::Number("clock-ghz", thousandths(*g)))
}

/// `x` to three decimals, as a check's line gives a figure.
fn thousandths(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The record of a run's points that a check judges: its first throughput with an efficiency
/// (a stream's receiver's, what arrived), else its first latency with one (a LATENCY point's
/// first level).
fn rated(c: &Checks, points: &[usize]) -> Option<usize> {
    let with = |metric: Metric| {
        c.find(points, |r| {
            r.metric == metric
                && r.efficiency.is_some_and(|e| e > 0.0)
                && r.params.net().is_none_or(|n| n.side != Some(Side::Sender))
        })
    };
    with(Metric::Throughput).or_else(|| with(Metric::Latency))
}

/// A measured benchmark: its points, or the check it ends (the benchmark failed).
enum Measured {
    Points(Vec<usize>),
    Ended(Check),
}

fn measure(c: &mut Checks, bench: &Benchmark, base: &Check) -> anyhow::Result<Measured> {
    match c.measure(bench) {
        Ok(p) => Ok(Measured::Points(p)),
        Err(e) if interrupted(&e) => Err(e),
        Err(e) => Ok(Measured::Ended(super::checks::failed(
            base.clone(),
            bench,
            &e,
        ))),
    }
}

/// How a fault is imposed around its point: `on` before it, `off` after (each may fail,
/// saying why: the check is then skipped).
trait Fault {
    fn on(&mut self) -> Result<(), String>;
    fn off(&mut self) -> anyhow::Result<()>;
}

/// A fault of the point's options alone (another ISA, another N): nothing to impose.
struct InTheLine;

impl Fault for InTheLine {
    fn on(&mut self) -> Result<(), String> {
        Ok(())
    }
    fn off(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
}

/// The point's clean benchmark just before and just after its faulted one (a shared host moves a
/// thread's rate from run to run: the clean figure is the mean of both); a check off its mark
/// is measured once more, and the second try is the verdict, saying what the first read.
fn interleaved(
    c: &mut Checks,
    base: Check,
    (clean_bench, faulted_bench): (&Benchmark, &Benchmark),
    fault: &mut dyn Fault,
    how: &str,
) -> anyhow::Result<Check> {
    let read = |first: &Check| {
        format!(
            "{} % of the gap against {} %",
            first.measured.map_or("no".into(), |m| format!("{m:.0}")),
            first.expected.map_or("no".into(), |e| format!("{e:.0}"))
        )
    };
    let (mut kept, outcome) = twice(c, read, |c| {
        attempt(c, &base, (clean_bench, faulted_bench), fault, how)
    });
    match outcome {
        Ok(()) => kept
            .pop()
            .ok_or_else(|| anyhow::anyhow!("internal: a diagnosis's try gave no check")),
        // Cut short: what the first try found is kept.
        Err(e) => {
            c.push_tried((kept, Ok(())))?;
            Err(e)
        }
    }
}

/// One try of [`interleaved`].
fn attempt(
    c: &mut Checks,
    base: &Check,
    (clean_bench, faulted_bench): (&Benchmark, &Benchmark),
    fault: &mut dyn Fault,
    how: &str,
) -> anyhow::Result<Check> {
    let before = match measure(c, clean_bench, base)? {
        Measured::Points(p) => p,
        Measured::Ended(check) => return Ok(check),
    };
    if let Err(why) = fault.on() {
        return Ok(Check {
            reason: why,
            ..base.clone()
        });
    }
    let faulted = measure(c, faulted_bench, base);
    fault.off()?;
    let faulted = match faulted? {
        Measured::Points(p) => p,
        Measured::Ended(check) => return Ok(check),
    };
    let after = match measure(c, clean_bench, base)? {
        Measured::Points(p) => p,
        Measured::Ended(check) => return Ok(check),
    };
    Ok(judge(
        c,
        base.clone(),
        (clean_bench, &[&before, &after]),
        (faulted_bench, &faulted),
        how,
    ))
}

/// A record's mean in its unit's base (operations or bytes a second).
fn in_base(r: &ResultRecord) -> f64 {
    crate::units::Conversion::to_base(r.unit).map_or(r.summary.mean, |k| k.apply(r.summary.mean))
}

/// The mean of the first record of `metric` among `points`, in its unit's base over `per`
/// (1e9: giga), where it is a positive number: the rate a clean run sets a fault's peak at.
fn rate_of(c: &Checks, points: &[usize], metric: Metric, per: f64) -> Option<f64> {
    c.find(points, |r| r.metric == metric)
        .and_then(|i| c.record(i))
        .map(|r| in_base(r) / per)
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// A check whose benchmark gave no figure with an efficiency.
fn no_figure(base: Check, lines: &[&Benchmark], points: Vec<usize>) -> Check {
    Check {
        status: Status::Fail,
        reason:
            "the point gave no throughput with a known peak (its peak is needed for a diagnosis)"
                .into(),
        commands: lines
            .iter()
            .map(|l| super::checks::command_line(l))
            .collect(),
        points,
        ..base
    }
}

/// The judgement of a fault: the faulted point diagnosed beside its clean one (those two
/// points alone: the run's other checks' points are no part of it), its first cause against
/// the fault's, and that cause's share against the fault's effect.
fn judge(
    c: &mut Checks,
    base: Check,
    (clean_bench, clean): (&Benchmark, &[&[usize]]),
    (faulted_bench, faulted): (&Benchmark, &[usize]),
    how: &str,
) -> Check {
    let mut points = clean.concat();
    points.extend(faulted);
    let commands = vec![
        super::checks::command_line(clean_bench),
        super::checks::command_line(faulted_bench),
    ];
    // Every clean run's rated record (one per run of the clean benchmark).
    let cleans: Vec<ResultRecord> = clean
        .iter()
        .filter_map(|run| rated(c, run))
        .filter_map(|i| c.record(i).cloned())
        .collect();
    let at = rated(c, faulted);
    let faulted_rec = at.and_then(|i| c.record(i).cloned());
    let Some(faulted_rec) = faulted_rec.filter(|_| !cleans.is_empty()) else {
        return no_figure(base, &[clean_bench, faulted_bench], points);
    };
    // The faulted point's other records (a disk point's latency, which Little's law reads).
    let beside: Vec<ResultRecord> = faulted
        .iter()
        .filter(|i| Some(**i) != at)
        .filter_map(|i| c.record(*i).cloned())
        .collect();
    let sys = c.rec.system();
    let verdict = verdict(
        &base.name["diagnose ".len()..],
        &cleans,
        (&faulted_rec, &beside),
        sys,
    );
    Check {
        status: verdict.status,
        reason: format!("{how}; {}", verdict.reason),
        expected: verdict.expected,
        measured: verdict.measured,
        tolerance: verdict.expected.map(|e| SHARE_TOLERANCE * e),
        tolerance_text: if verdict.expected.is_some() {
            format!("±{:.0} % of the effect", SHARE_TOLERANCE * 100.0)
        } else {
            String::new()
        },
        commands,
        points,
        ..base
    }
}

/// What a fault's check found: the effect's share of the gap (%), the cause's share (%), the
/// status and why.
#[derive(Debug)]
struct Verdict {
    expected: Option<f64>,
    measured: Option<f64>,
    status: Status,
    reason: String,
}

/// The verdict on the point `faulted` against `clean` (the same point without the fault, each
/// run of it: their mean efficiency is the clean one) for the fault whose cause is `cause`, on
/// the machine `sys`; `beside`: the faulted point's other records (its latency), diagnosed
/// with it.
fn verdict(
    cause: &str,
    clean: &[ResultRecord],
    (faulted, beside): (&ResultRecord, &[ResultRecord]),
    sys: crate::sysinfo::SystemInfo,
) -> Verdict {
    let efficiencies: Vec<f64> = clean.iter().filter_map(|r| r.efficiency).collect();
    let ec = if efficiencies.is_empty() {
        f64::NAN
    } else {
        efficiencies.iter().sum::<f64>() / efficiencies.len() as f64
    };
    let ef = faulted.efficiency.unwrap_or(f64::NAN);
    let pct = |e: f64| format!("{:.1} %", 100.0 * e);
    let figures = match efficiencies.as_slice() {
        [a, b] => format!(
            "clean {} of its peak (mean of {} before and {} after), faulted {}",
            pct(ec),
            pct(*a),
            pct(*b),
            pct(ef)
        ),
        _ => format!("clean {} of its peak, faulted {}", pct(ec), pct(ef)),
    };
    // A fault moves the point down (a gap) or, the page cache's, up (an excess over the peak).
    if !(ef > 0.0 && ec > 0.0) || (ef / ec).ln().abs() <= -LEAST_EFFECT.ln() {
        return Verdict {
            expected: None,
            measured: None,
            status: Status::Skip,
            reason: format!(
                "{figures}: the fault moved this machine's figure by less than {:.0} % (nothing to diagnose)",
                100.0 * (1.0 - LEAST_EFFECT)
            ),
        };
    }
    // The share of the faulted point's gap (or excess) that the fault took.
    let effect = if ef != 1.0 {
        ((ef / ec).ln() / ef.ln()).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut report = crate::results::Report::new(sys, Vec::new());
    report.results = clean.to_vec();
    report.results.extend(beside.iter().cloned());
    report.results.push(faulted.clone());
    let diagnosis = crate::report::diagnosis::of_report(&report).pop().flatten();
    let Some(d) = diagnosis else {
        return Verdict {
            expected: Some(100.0 * effect),
            measured: None,
            status: Status::Fail,
            reason: format!("{figures}: the faulted point got no diagnosis"),
        };
    };
    let named: Vec<String> = d
        .causes
        .iter()
        .map(|x| match x.share {
            Some(s) => format!("{} {:.0} %", x.cause, 100.0 * s),
            None => x.cause.clone(),
        })
        .collect();
    let first = d.causes.first().map(|x| x.cause.as_str());
    let share = d
        .causes
        .iter()
        .find(|x| x.cause == cause)
        .and_then(|x| x.share);
    let status = match (first == Some(cause), share) {
        (true, Some(s)) => {
            Check::judged(100.0 * effect, 100.0 * s, SHARE_TOLERANCE * 100.0 * effect)
        }
        _ => Status::Fail,
    };
    Verdict {
        expected: Some(100.0 * effect),
        measured: share.map(|s| 100.0 * s),
        status,
        reason: format!(
            "{figures}; expected: `{cause}` named first with the fault's share of the faulted point's {}, ln(faulted / clean) / ln(faulted); diagnosed: {} ({:.0} % unexplained)",
            if ef > 1.0 {
                "excess over its peak"
            } else {
                "gap"
            },
            if named.is_empty() {
                "no cause".to_string()
            } else {
                named.join(", ")
            },
            100.0 * d.unexplained
        ),
    }
}

#[cfg(test)]
mod tests;
