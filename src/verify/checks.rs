//! What a check is made of: the groups, the options, the run's checks so far and how one is
//! measured (a benchmark made of typed settings, the line it shows a user written from them),
//! judged, skipped or failed.

use crate::app::setting::{Benchmark, Setting};
use crate::app::{Recorder, Request};
use crate::results::verify::{Check, Status, Verification};
use crate::results::{ResultRecord, Subsystem, Unit};
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
    /// Faults imposed on purpose, each diagnosed.
    Diagnose,
    /// Bursts imposed (a token bucket with a large bucket), each found in a point's phases.
    Burst,
    /// Slowdowns of 3, 5 and 10 % imposed (a CPU quota, a token bucket, an IOPS cap), each
    /// judged by `compare --gate`'s test: how often the gate catches them, and how often it
    /// fails an unchanged run.
    Gate,
}

impl Group {
    pub fn name(self) -> &'static str {
        match self {
            Group::Net => "net",
            Group::Disk => "disk",
            Group::Cpu => "cpu",
            Group::Diagnose => "diagnose",
            Group::Burst => "burst",
            Group::Gate => "gate",
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
    /// The gate's runs: each repetition's measured time and the repetitions (`--duration`
    /// and `--repeat` where given, else its own).
    pub gate_run: (Duration, usize),
    /// The gate's trials of each point.
    pub trials: usize,
}

/// Makes a benchmark's request: its command's own options, the benchmark's settings set on
/// them (nothing parsed), so that each check runs exactly the line it shows a user.
pub type Build<'a> = &'a dyn Fn(&Benchmark) -> anyhow::Result<Box<dyn Request>>;

/// The run's checks so far, and how to measure one.
pub(super) struct Checks<'a> {
    pub(super) opts: &'a VerifyOptions,
    pub(super) build: Build<'a>,
    pub(super) rec: &'a mut Recorder,
    pub(super) done: Vec<Check>,
}

impl Checks<'_> {
    /// Runs `bench` into the recorder; the indexes of the records it added.
    pub(super) fn measure(&mut self, bench: &Benchmark) -> anyhow::Result<Vec<usize>> {
        let before = self.rec.results().len();
        let request = (self.build)(bench)?;
        request.run(self.rec)?;
        Ok((before..self.rec.results().len()).collect())
    }

    /// Adds each check of `bases`, not run, for `why`.
    pub(super) fn skip_all(
        &mut self,
        bases: impl IntoIterator<Item = Check>,
        why: &str,
    ) -> anyhow::Result<()> {
        for base in bases {
            self.push(Check {
                reason: why.into(),
                ..base
            })?;
        }
        Ok(())
    }

    /// The record at `index` of the report.
    pub(super) fn record(&self, index: usize) -> Option<&ResultRecord> {
        self.rec.results().get(index)
    }

    /// The first of `points` that `pick` takes.
    pub(super) fn find(
        &self,
        points: &[usize],
        pick: impl Fn(&ResultRecord) -> bool,
    ) -> Option<usize> {
        points
            .iter()
            .copied()
            .find(|i| self.record(*i).is_some_and(&pick))
    }

    /// Adds a check, says it on standard error and stores the checks so far (an interrupted
    /// run keeps them).
    pub(super) fn push(&mut self, check: Check) -> anyhow::Result<()> {
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

    /// Adds the checks `tried` kept ([`twice_all`]), then ends as it did.
    pub(super) fn push_tried(&mut self, (checks, outcome): Tried) -> anyhow::Result<()> {
        for check in checks {
            self.push(check)?;
        }
        outcome
    }

    /// The duration (option `key`: `duration`, `runtime`) and repetitions of every benchmark.
    pub(super) fn timing(&self, key: &'static str) -> [Setting; 2] {
        self.timing_at_least(key, Duration::ZERO)
    }

    /// [`Checks::timing`] with each repetition `least` long at least.
    pub(super) fn timing_at_least(&self, key: &'static str, least: Duration) -> [Setting; 2] {
        timing(key, self.opts.duration.max(least), self.opts.repeat)
    }
}

/// A check not run, with the reason.
pub(super) fn skipped(
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
pub(super) struct Judge {
    pub(super) expected: f64,
    pub(super) tolerance: f64,
    pub(super) tolerance_text: String,
    /// How the expected figure follows from what was imposed.
    pub(super) reason: String,
}

/// A check that measured: `measured` is the mean of record `point` (None: the benchmark gave
/// no such record), judged by `judge`.
pub(super) fn judged(
    base: Check,
    bench: &Benchmark,
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
        commands: vec![command_line(bench)],
        points,
        ..base
    }
}

/// What [`twice_all`] gives: the checks to add to the run, and how it ended (an error, such
/// as the user's Ctrl-C, after the checks it keeps).
pub(super) type Tried = (Vec<Check>, anyhow::Result<()>);

/// `attempt`'s checks, measured once more where one failed with a figure: a shared host's
/// rate can move during one try (a neighbour's burst, a vCPU stalled for 50 ms of a 1.5 s
/// window), and the second try is the verdict, each check saying what its first try read
/// (`read`: "0.961 × the expected"). A fault not imposed, or imposed twice, reads the same both
/// times. Checks without a figure (their benchmark failed, they were skipped) are not tried
/// again, nor those of a run the user stopped; a second try cut short (Ctrl-C) leaves the
/// first try's verdict, saying so.
pub(super) fn twice_all<C>(
    ctx: &mut C,
    read: impl Fn(&Check) -> String,
    mut attempt: impl FnMut(&mut C) -> anyhow::Result<Vec<Check>>,
) -> Tried {
    let off = |c: &Check| c.status == Status::Fail && c.measured.is_some();
    let first = match attempt(ctx) {
        Ok(first) => first,
        Err(e) => return (Vec::new(), Err(e)),
    };
    if !first.iter().any(off) || crate::runner::stop::requested() {
        return (first, Ok(()));
    }
    let second = match attempt(ctx) {
        Ok(second) if second.len() == first.len() => second,
        Ok(_) => {
            let e = anyhow::anyhow!("internal: a check's two tries gave different checks");
            return (first, Err(e));
        }
        Err(e) => {
            let cut = first.into_iter().map(|c| Check {
                reason: format!("{}; its second try was cut short", c.reason),
                ..c
            });
            return (cut.collect(), Err(e));
        }
    };
    let both = first.into_iter().zip(second).map(|(first, second)| {
        let mut points = first.points.clone();
        points.extend(&second.points);
        let moved = if off(&first) && second.status == Status::Pass {
            " (the host's rate moved during it)"
        } else {
            ""
        };
        Check {
            reason: format!(
                "{}; measured twice, the first try read {}{moved}",
                second.reason,
                read(&first)
            ),
            points,
            ..second
        }
    });
    (both.collect(), Ok(()))
}

/// [`twice_all`] of one check.
pub(super) fn twice<C>(
    ctx: &mut C,
    read: impl Fn(&Check) -> String,
    mut attempt: impl FnMut(&mut C) -> anyhow::Result<Check>,
) -> Tried {
    twice_all(ctx, read, |ctx| attempt(ctx).map(|c| vec![c]))
}

/// What a try read, against what was expected ("0.961 × the expected").
pub(super) fn ratio_read(c: &Check) -> String {
    c.ratio()
        .map_or("no figure".into(), |r| format!("{r:.3} × the expected"))
}

/// A check whose benchmark failed: the error is its reason.
pub(super) fn failed(base: Check, bench: &Benchmark, e: &anyhow::Error) -> Check {
    Check {
        status: Status::Fail,
        reason: format!("the benchmark failed: {e:#}"),
        commands: vec![command_line(bench)],
        ..base
    }
}

/// Each check of `bases` as failed: `bench` ended with `e`.
pub(super) fn failed_all<const N: usize>(
    bases: [Check; N],
    bench: &Benchmark,
    e: &anyhow::Error,
) -> Vec<Check> {
    bases.map(|base| failed(base, bench, e)).into()
}

/// Each check of `bases` with `why` as its reason (not run: skipped).
pub(super) fn with_reason<const N: usize>(bases: [Check; N], why: &str) -> Vec<Check> {
    bases
        .map(|base| Check {
            reason: why.into(),
            ..base
        })
        .into()
}

/// Whether `e` is the user's Ctrl-C (which ends the run), not a check's failure.
pub(super) fn interrupted(e: &anyhow::Error) -> bool {
    e.downcast_ref::<crate::error::Interrupted>().is_some()
}

/// "peakbench net --server …", as typed.
pub(super) fn command_line(bench: &Benchmark) -> String {
    std::iter::once("peakbench".to_string())
        .chain(bench.line())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A repetition's time (option `key`, in whole milliseconds) and the repetitions.
pub(super) fn timing(key: &'static str, each: Duration, repeat: usize) -> [Setting; 2] {
    let ms = u64::try_from(each.as_millis()).unwrap_or(u64::MAX);
    [
        Setting::Time(key, Duration::from_millis(ms)),
        Setting::Repeat(repeat),
    ]
}

/// One DP thread of the CPU's kernels, the benchmark most checks slow down.
pub(super) fn dp_thread() -> Benchmark {
    use crate::workload::{Workload, cpu::CpuWorkload};
    Benchmark::new(Subsystem::Cpu).with_all([
        Setting::Workload(Workload::Cpu(CpuWorkload::Dp)),
        Setting::Count("threads", 1),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A try judged: `measured` against 100 ± 3, with its point.
    fn try_of(measured: Option<f64>, point: usize) -> Check {
        let base = skipped(
            "rate tcp",
            Group::Net,
            "tbf",
            (Subsystem::Net, Unit::BitsPerSec),
            "",
        );
        let bench = Benchmark::new(Subsystem::Net);
        let judge = Judge {
            expected: 100.0,
            tolerance: 3.0,
            tolerance_text: "±3 %".into(),
            reason: "the rate".into(),
        };
        judged(base, &bench, vec![point], measured, judge)
    }

    /// A check off its mark once is measured again, and the second try decides, saying what
    /// the first read, both tries' points kept; one on its mark, or without a figure, is
    /// measured once; one off its mark twice fails without blaming the host.
    #[test]
    fn a_check_off_its_mark_is_measured_once_more() {
        let tries = |figures: &[Option<f64>]| {
            let mut at = 0;
            let (mut checks, outcome) = twice(&mut at, ratio_read, |at: &mut usize| {
                *at += 1;
                Ok(try_of(figures[*at - 1], *at))
            });
            outcome.unwrap();
            assert_eq!(checks.len(), 1);
            (checks.remove(0), at)
        };
        let (c, n) = tries(&[Some(101.0)]);
        assert_eq!(
            (c.status, n, c.reason.as_str()),
            (Status::Pass, 1, "the rate")
        );
        let (c, n) = tries(&[None]);
        assert_eq!((c.status, n), (Status::Fail, 1));
        let (c, n) = tries(&[Some(90.0), Some(99.0)]);
        assert_eq!((c.status, n, c.measured), (Status::Pass, 2, Some(99.0)));
        assert_eq!(c.points, [1, 2]);
        assert_eq!(
            c.reason,
            "the rate; measured twice, the first try read 0.900 × the expected (the host's rate moved during it)"
        );
        let (c, n) = tries(&[Some(50.0), Some(51.0)]);
        assert_eq!((c.status, n, c.measured), (Status::Fail, 2, Some(51.0)));
        assert_eq!(
            c.reason,
            "the rate; measured twice, the first try read 0.500 × the expected"
        );
        // A group of checks measured at once is measured again as a whole, each saying what
        // its own first try read.
        let mut at = 0;
        let figures = [[Some(100.0), Some(80.0)], [Some(98.0), Some(101.0)]];
        let (group, outcome) = twice_all(&mut at, ratio_read, |at: &mut usize| {
            *at += 1;
            Ok(figures[*at - 1].iter().map(|f| try_of(*f, *at)).collect())
        });
        outcome.unwrap();
        assert_eq!(at, 2);
        assert!(
            group
                .iter()
                .all(|c| c.status == Status::Pass && c.points == [1, 2])
        );
        assert!(
            group[0]
                .reason
                .ends_with("first try read 1.000 × the expected")
        );
        assert!(
            group[1]
                .reason
                .ends_with("0.800 × the expected (the host's rate moved during it)")
        );
        // A second try cut short (Ctrl-C) keeps the first try's verdict and ends as it did;
        // a first try cut short keeps nothing.
        let mut at = 0;
        let (kept, outcome) = twice(&mut at, ratio_read, |at: &mut usize| {
            *at += 1;
            match *at {
                1 => Ok(try_of(Some(80.0), 1)),
                _ => Err(anyhow::anyhow!("interrupted")),
            }
        });
        assert_eq!(outcome.unwrap_err().to_string(), "interrupted");
        assert_eq!((kept.len(), kept[0].status), (1, Status::Fail));
        assert_eq!(kept[0].reason, "the rate; its second try was cut short");
        let (kept, outcome) = twice(&mut 0, ratio_read, |_: &mut i32| -> anyhow::Result<Check> {
            Err(anyhow::anyhow!("interrupted"))
        });
        assert!(kept.is_empty() && outcome.is_err());
    }
}
