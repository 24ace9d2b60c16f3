//! `peakbench verify`.

use super::common::{OutputArgs, UsageError, parse_duration, parse_repeat};
use crate::app::Recorder;
use crate::verify::{Group, VerifyOptions};
use clap::Args;

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Only these groups of checks (a list): net (a link's rate for TCP and UDP, a delay, a
    /// loss rate), disk (IOPS and bandwidth caps on a loop device), cpu (a CPU quota),
    /// diagnose (faults imposed on purpose: a busy process, a quota, a narrower ISA, a small
    /// LINPACK, a TCP window below the bandwidth-delay product; each faulted point's diagnosis against the effect measured without the fault),
    /// burst (a token bucket's burst on a link, found in the point's phases: its volume and the rate after it),
    /// gate (slowdowns of 3, 5 and 10 % imposed on a CPU, a network and a disk point, each judged by `compare --gate`'s test; not run unless asked: about 10 minutes).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [Group::Net, Group::Disk, Group::Cpu, Group::Diagnose, Group::Burst])]
    pub only: Vec<Group>,
    /// With gate: the trials of each point (each a baseline run, an unchanged one and one
    /// under each slowdown), after its 8 calibration runs (1 to 100).
    #[arg(long, value_name = "N", default_value = "10", value_parser = parse_trials)]
    pub trials: usize,
    /// Measured time of each repetition of each check's benchmark, at least 100ms (the
    /// network's after a 1 s warm-up, the disk's after a 1 s ramp, its bandwidth's 3 s at
    /// least; the CPU quota's 1 s at least: ten of its 100 ms periods).
    #[arg(long, value_parser = parse_measured, default_value = "2s")]
    pub duration: std::time::Duration,
    /// Repetitions of each check's benchmark.
    #[arg(long, default_value = "3", value_parser = parse_repeat)]
    pub repeat: usize,
    /// Run no check: remove what earlier verify runs left behind (after a second Ctrl-C, a
    /// SIGKILL or a crash), found by its names — network namespaces pbv<pid>s and pbv<pid>c,
    /// loop devices over peakbench-verify-<pid>-* temporary directories, their tmpfs mounts,
    /// the directories, control groups peakbench-verify-<pid> — where <pid> is no running
    /// peakbench; a line for each, then a summary.
    #[arg(long)]
    pub cleanup: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The gate's runs' repetitions and their measured time, unless given.
const GATE_DURATION: std::time::Duration = std::time::Duration::from_millis(500);
const GATE_REPEAT: usize = 4;

fn parse_trials(s: &str) -> Result<usize, String> {
    super::common::count_in(s, 1, 100)
}

/// A measured time of at least 100 ms (the caps and the loss rate need whole periods of it).
fn parse_measured(s: &str) -> Result<std::time::Duration, String> {
    let d = parse_duration(s)?;
    if d < std::time::Duration::from_millis(100) {
        return Err(format!(
            "'{s}' is too short to judge a ceiling by: give 100ms or more"
        ));
    }
    Ok(d)
}

pub fn run(args: VerifyArgs, argv: Vec<String>) -> anyhow::Result<()> {
    if args.cleanup {
        if let Some(other) = args.output.given.other_than("cleanup") {
            return Err(UsageError(format!("--cleanup runs no check: leave out {other}")).into());
        }
        crate::verify::refuse_unless_able()?;
        crate::verify::run_cleanup(&mut std::io::stdout().lock())?;
        return Ok(());
    }
    args.output.validate()?;
    if args.output.reference {
        return Err(UsageError(
            "verify judges each figure against a ceiling it imposes, not against a reference tool: leave out --reference".into(),
        )
        .into());
    }
    let mut groups = args.only.clone();
    groups.sort();
    groups.dedup();
    if args.output.given.has("trials") && !groups.contains(&Group::Gate) {
        return Err(UsageError(
            "--trials is the gate's: add gate to --only, or leave out --trials".into(),
        )
        .into());
    }
    crate::verify::refuse_unless_able()?;
    // The gate's runs: its own timing (4 repetitions of 500 ms, as a ci profile's point)
    // unless --duration or --repeat says otherwise.
    let given = &args.output.given;
    let gate_run = (
        if given.has("duration") {
            args.duration
        } else {
            GATE_DURATION
        },
        if given.has("repeat") {
            args.repeat
        } else {
            GATE_REPEAT
        },
    );
    let opts = VerifyOptions {
        groups,
        duration: args.duration,
        repeat: args.repeat,
        gate_run,
        trials: args.trials,
    };
    let mut rec = Recorder::new(argv, args.output.outputs());
    rec.set_in_suite();
    let sys = rec.system();
    let build = |bench: &crate::app::setting::Benchmark| super::benchmark::request_of(bench, &sys);
    let outcome = crate::verify::run(&opts, &build, &mut rec);
    rec.finish(outcome)
}
