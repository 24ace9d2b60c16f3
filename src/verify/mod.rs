//! `peakbench verify`: ceilings imposed on purpose, each measured by the normal benchmarks and
//! judged against the figure it implies within a stated tolerance. In a network namespace pair
//! of its own (a veth pair shaped by tc tbf, a TUN delay line, datagrams dropped by iptables'
//! statistic match), on a loop device over a tmpfs of its own capped by the block I/O
//! controller, and under a CPU quota of a control group of its own. Everything is made for the
//! run and removed after it, also on Ctrl-C, SIGTERM and SIGHUP (which cut the check under way
//! short) and on failure; a check the machine cannot impose is skipped with the reason. What a
//! run could not remove (a second Ctrl-C, SIGKILL) `verify --cleanup` finds by its names
//! ([`names`]) and removes.

mod burst;
mod cgroups;
mod checks;
mod cleanup;
mod cpu;
mod delay_line;
mod diagnose;
mod disk;
mod gate;
mod hog;
mod loop_disk;
mod names;
mod net;
mod sandbox;

pub use checks::{Build, Group, VerifyOptions};
pub use cleanup::{Outcome as CleanupOutcome, run_cleanup};

use crate::app::Recorder;
use crate::results::verify::Status;
use checks::Checks;

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
    for group in [
        Group::Net,
        Group::Disk,
        Group::Cpu,
        Group::Diagnose,
        Group::Burst,
        Group::Gate,
    ] {
        if !opts.groups.contains(&group) {
            continue;
        }
        if crate::runner::stop::requested() {
            return Err(crate::error::Interrupted.into());
        }
        match group {
            Group::Net => net::checks(&mut checks)?,
            Group::Disk => disk::disk(&mut checks)?,
            Group::Cpu => cpu::cpu(&mut checks)?,
            Group::Diagnose => diagnose::diagnose(&mut checks)?,
            Group::Burst => burst::checks(&mut checks)?,
            Group::Gate => gate::checks(&mut checks)?,
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
